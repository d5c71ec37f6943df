/*
 * test_pod_plugins.c — what the ML policy's plugin adds to a TrainJob's
 * Pods, as the strict profile checks it (the plugins' pod_parts phase,
 * plugins/plugin.h): Flux's flux-installer init container under Pod
 * Security and without an image, the volume Flux names after the TrainJob,
 * and a runtime mount where MPI mounts its SSH keys or hostfile. Each was
 * admitted before the phase (the look ahead saw the runtime's template
 * with the TrainJob's settings, not what the plugins add).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/core/internal.h"
#include "tests/support/testutil.h"

/* A Flux runtime "flux": one trainer job "node" whose node container
 * (members container) passes Pod Security's restricted level. */
#define FLUX_RT(container)                                                                 \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"   \
	"'metadata':{'name':'flux','labels':{'trainer.kubeflow.org/framework':'flux'}},"     \
	"'spec':{'mlPolicy':{'numNodes':1,'flux':{'numProcPerNode':1}},'template':{'spec':" \
	"{'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"               \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"    \
	"{'spec':{'containers':[{'name':'node','image':'lammps'," RESTRICTED container      \
	"}]}}}}}]}}}}"
#define RESTRICTED                                                                         \
	"'securityContext':{'allowPrivilegeEscalation':false,'runAsNonRoot':true,"           \
	"'capabilities':{'drop':['ALL']},'seccompProfile':{'type':'RuntimeDefault'}}"

/* An MPI runtime "mpi" as upstream's deepspeed-distributed: a node job and
 * a trainer launcher job, with runLauncherAsNode; node and launcher give
 * their node containers the members node and launcher. */
#define MPI_RT(node, launcher)                                                             \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"   \
	"'metadata':{'name':'mpi','labels':{'trainer.kubeflow.org/framework':'deepspeed'}}," \
	"'spec':{'mlPolicy':{'numNodes':1,'mpi':{'numProcPerNode':1,'sshAuthMountPath':"     \
	"'/home/mpiuser/.ssh','runLauncherAsNode':true}},'template':{'spec':"               \
	"{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':"          \
	"{'volumes':[{'name':'keys','secret':{'secretName':'mine'}}],'containers':"          \
	"[{'name':'node','image':'ds'" node "}]}}}}},{'name':'launcher','template':"          \
	"{'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},"  \
	"'spec':{'template':{'spec':{'volumes':[{'name':'keys','secret':"                   \
	"{'secretName':'mine'}}],'containers':[{'name':'node','image':'ds'" launcher        \
	"}]}}}}}]}}}}"

/* TrainJob name in team-a of runtime rt with spec.trainer trainer and more
 * spec members (each may be ""). */
static cJSON *trainjob(const char *name, const char *rt, const char *trainer, const char *more)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'%s','namespace':'team-a'},'spec':{'runtimeRef':{'name':'%s'},"
		 "'trainer':{'numNodes':2%s}%s}}",
		 name, rt, trainer, more);
	return tt_jsq(buf);
}

/* The strict (or kubeflow) review of tj with runtime rt (single-quoted JSON)
 * in the store, and namespace team-a labelled enforce=level (NULL: no
 * Namespace). */
static tp_result *review_in(tp_profile p, const char *rt, const char *level, cJSON *tj)
{
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	assert_int_equal(tp_store_put(store, tt_jsq(rt)), TP_OK);
	if (level) {
		char ns[256];
		snprintf(ns, sizeof(ns), "{'apiVersion':'v1','kind':'Namespace','metadata':{'name':"
			 "'team-a','labels':{'pod-security.kubernetes.io/enforce':'%s'}}}", level);
		assert_int_equal(tp_store_put(store, tt_jsq(ns)), TP_OK);
	}
	tp_options opt = { .profile = p, .store = store };
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_store_rdlock(store);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, res), TP_OK);
	tp_store_unlock(store);
	tt_dump(res);
	tp_store_free(store);
	cJSON_Delete(tj);
	return res;
}

static tp_result *review(const char *rt, const char *level, cJSON *tj)
{
	return review_in(TP_PROFILE_STRICT, rt, level, tj);
}

static const tp_field_error *only_error(const tp_result *r)
{
	if (tp_result_error_count(r) != 1)
		fail_msg("%zu errors, want 1", tp_result_error_count(r));
	return tp_result_error_at(r, 0);
}

/* -------------------------------------------------------------- Flux */

/* The installer sets no securityContext: restricted refuses the Pods of
 * every Flux TrainJob, whatever its runtime's own containers set. */
static void flux_installer_under_restricted(void **state)
{
	(void)state;
	tp_result *r = review(FLUX_RT(""), "restricted", trainjob("lammps", "flux", "", ""));
	const tp_field_error *e = only_error(r);
	assert_int_equal(e->type, TP_FIELD_FORBIDDEN);
	assert_string_equal(e->path, "metadata.namespace");
	assert_non_null(strstr(e->detail,
			       "violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation "
			       "!= false (container \"flux-installer\" must set "
			       "securityContext.allowPrivilegeEscalation=false), unrestricted "
			       "capabilities (container \"flux-installer\" must set "
			       "securityContext.capabilities.drop=[\"ALL\"])"));
	assert_non_null(strstr(e->detail, "the init container \"flux-installer\" that mlPolicy.flux "
					  "adds to replicated job \"node\" sets no securityContext"));
	/* the runtime's own Pod template is not what to change */
	assert_null(strstr(e->detail, "change the Pod template"));
	tp_result_free(r);

	/* baseline admits the installer; the kubeflow profile does not look */
	r = review(FLUX_RT(""), "baseline", trainjob("lammps", "flux", "", ""));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
	r = review_in(TP_PROFILE_KUBEFLOW, FLUX_RT(""), "restricted",
		      trainjob("lammps", "flux", "", ""));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* FLUX_VIEW_IMAGE "" leaves the installer without an image: at the
 * TrainJob's env when it says so, else at its runtimeRef. */
static void flux_view_image_empty(void **state)
{
	(void)state;
	tp_result *r = review(FLUX_RT(""), NULL,
			      trainjob("lammps", "flux", ",'env':[{'name':'FLUX_VIEW_IMAGE','value':''}]",
				       ""));
	const tp_field_error *e = only_error(r);
	assert_int_equal(e->type, TP_FIELD_REQUIRED);
	assert_string_equal(e->path, "spec.trainer.env");
	assert_string_equal(e->detail, "Job.batch \"lammps-node-0\" would be invalid at "
				       "spec.template.spec.initContainers[0].image (replicated job "
				       "\"node\", init container \"flux-installer\"); set "
				       "FLUX_VIEW_IMAGE to a Flux view image, or leave it out for "
				       "the default");
	tp_result_free(r);

	r = review(FLUX_RT(",'env':[{'name':'FLUX_VIEW_IMAGE','value':''}]"), NULL,
		   trainjob("lammps", "flux", "", ""));
	assert_string_equal(only_error(r)->path, "spec.runtimeRef");
	tp_result_free(r);

	/* a view image of the TrainJob's own, or none named: admitted */
	r = review(FLUX_RT(""), NULL,
		   trainjob("lammps", "flux", ",'env':[{'name':'FLUX_VIEW_IMAGE','value':'v:1'}]", ""));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* Flux names a volume "<name>-flux-entrypoint": a TrainJob name of 48
 * characters makes it 64, which no volume name may be. */
static void flux_volume_named_after_the_trainjob(void **state)
{
	(void)state;
	const char *name = "a-trainjob-name-of-forty-eight-characters-abcdef";
	assert_int_equal(strlen(name), 48);
	tp_result *r = review(FLUX_RT(""), NULL, trainjob(name, "flux", "", ""));
	assert_int_equal(tp_result_error_count(r), 3); /* the volume, and its two mounts */
	assert_true(tt_has_error(r, "metadata.name", "must be no more than 63 characters: "
						     "Job.batch"));
	assert_true(tt_has_error(r, "metadata.name", "use a name of at most 47 characters"));
	tp_result_free(r);
	char shorter[64];
	snprintf(shorter, sizeof(shorter), "%.47s", name);
	r = review(FLUX_RT(""), NULL, trainjob(shorter, "flux", "", ""));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

/* ---------------------------------------------------------------- MPI */

/* A runtime mount at sshAuthMountPath: the plugin's mount takes its place
 * (the runtime's volume is not mounted), or, spelt otherwise, the Pods get
 * two volumes at one directory. */
static void mpi_ssh_path_clash(void **state)
{
	(void)state;
	tp_result *r = review(MPI_RT("", ",'volumeMounts':[{'name':'keys','mountPath':"
					 "'/home/mpiuser/.ssh'}]"),
			      NULL, trainjob("ds", "mpi", "", ""));
	const tp_field_error *e = only_error(r);
	assert_int_equal(e->type, TP_FIELD_INVALID);
	assert_string_equal(e->path, "spec.runtimeRef");
	assert_string_equal(e->value, "\"/home/mpiuser/.ssh\"");
	assert_string_equal(e->detail,
			    "ClusterTrainingRuntime \"mpi\": container \"node\" of replicated job "
			    "\"launcher\" mounts volume \"keys\" where the MPI plugin mounts the SSH "
			    "keys (volume mpi-ssh-auth, at mlPolicy.mpi.sshAuthMountPath): the "
			    "plugin's mount takes its place, so the volume is not mounted in the "
			    "Pods; mount the volume at another path, or set "
			    "mlPolicy.mpi.sshAuthMountPath to another directory");
	tp_result_free(r);

	r = review(MPI_RT(",'volumeMounts':[{'name':'keys','mountPath':'/home/mpiuser//.ssh/'}]", ""),
		   NULL, trainjob("ds", "mpi", "", ""));
	assert_true(tt_has_error(r, "spec.runtimeRef", "container \"node\" of replicated job \"node\" "
				 "mounts volume \"keys\" where the MPI plugin mounts the SSH keys"));
	assert_true(tt_has_error(r, "spec.runtimeRef", "the Pods would have two volumes mounted at "
				 "one directory"));
	tp_result_free(r);

	/* the launcher's hostfile, brought by the TrainJob's runtimePatches */
	r = review(MPI_RT("", ""), NULL,
		   trainjob("ds", "mpi", "",
			    ",'runtimePatches':[{'manager':'example.com/m','trainingRuntimeSpec':"
			    "{'template':{'spec':{'replicatedJobs':[{'name':'launcher','template':"
			    "{'spec':{'template':{'spec':{'containers':[{'name':'node',"
			    "'volumeMounts':[{'name':'keys','mountPath':'/etc/mpi'}]}]}}}}}]}}}}]"));
	e = only_error(r);
	assert_string_equal(e->path, "spec.runtimePatches");
	assert_non_null(strstr(e->detail, "the patched template: container \"node\" of replicated job "
					  "\"launcher\" mounts volume \"keys\" where the MPI plugin "
					  "mounts the hostfile (volume mpi-hostfile, at /etc/mpi)"));
	tp_result_free(r);

	/* mounts elsewhere, and the plugin's own volume at its path: admitted */
	r = review(MPI_RT(",'volumeMounts':[{'name':'keys','mountPath':'/home/mpiuser/.ssh/more'}]",
			  ",'volumeMounts':[{'name':'mpi-ssh-auth','mountPath':'/home/mpiuser/.ssh'}]"),
		   NULL, trainjob("ds", "mpi", "", ""));
	assert_true(tp_result_ok(r));
	tp_result_free(r);
}

int main(void)
{
	tp_json_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flux_installer_under_restricted),
		cmocka_unit_test(flux_view_image_empty),
		cmocka_unit_test(flux_volume_named_after_the_trainjob),
		cmocka_unit_test(mpi_ssh_path_clash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
