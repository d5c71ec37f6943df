/*
 * upstream.c — upstream's test objects as JSON trees (see upstream.h).
 */
#include "tests/support/upstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"

#define ANCESTOR "trainer.kubeflow.org/trainjob-ancestor-step"

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "upstream fixture: %s %s\n", what, arg ? arg : "");
	abort();
}

static cJSON *parse(const char *jsq)
{
	cJSON *v = tt_jsq(jsq);
	if (!v)
		die("bad JSON", jsq);
	return v;
}

/* One job of the default JobSet: its container mounts the initializer
 * volume at each of mounts (a single-quoted JSON list of paths). */
static cJSON *job(const char *name, const char *ancestor, const char *mount_list)
{
	char buf[2048];
	snprintf(buf, sizeof(buf),
		 "{'name':'%s','groupName':'default','template':{%s%s%s'spec':{'template':{'spec':"
		 "{'containers':[{'name':'%s','volumeMounts':[]}],'volumes':[{'name':'initializer',"
		 "'persistentVolumeClaim':{'claimName':'initializer'}}]}}}}}",
		 name, ancestor ? "'metadata':{'labels':{'" ANCESTOR "':'" : "",
		 ancestor ? ancestor : "", ancestor ? "'}}," : "", name);
	cJSON *j = parse(buf);
	cJSON *mounts = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetArrayItem((cJSON *)tp_get(j, "template.spec.template.spec.containers"), 0),
		"volumeMounts");
	cJSON *paths = parse(mount_list), *p;
	cJSON_ArrayForEach(p, paths) {
		cJSON *m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "name", "initializer");
		cJSON_AddStringToObject(m, "mountPath", p->valuestring);
		cJSON_AddItemToArray(mounts, m);
	}
	cJSON_Delete(paths);
	return j;
}

static cJSON *jobset_spec(bool labels)
{
	cJSON *spec = cJSON_CreateObject();
	cJSON *jobs = cJSON_AddArrayToObject(spec, "replicatedJobs");
	cJSON_AddItemToArray(jobs, job("dataset-initializer", labels ? "dataset-initializer" : NULL,
				       "['/workspace/dataset']"));
	cJSON_AddItemToArray(jobs, job("model-initializer", labels ? "model-initializer" : NULL,
				       "['/workspace/model']"));
	cJSON_AddItemToArray(jobs, job("node", labels ? "trainer" : NULL,
				       "['/workspace/dataset','/workspace/model']"));
	return spec;
}

cJSON *up_jobset_spec(void)
{
	return jobset_spec(true);
}

static cJSON *runtime(const char *kind, const char *ns, const char *name, bool labels)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'%s','metadata':{'name':'%s'"
		 "%s%s%s},'spec':{'template':{}}}",
		 kind, name, ns ? ",'namespace':'" : "", ns ? ns : "", ns ? "'" : "");
	cJSON *rt = parse(buf);
	cJSON_AddItemToObject((cJSON *)tp_get(rt, "spec.template"), "spec", jobset_spec(labels));
	return rt;
}

cJSON *up_training_runtime(const char *ns, const char *name)
{
	return runtime("TrainingRuntime", ns, name, true);
}

cJSON *up_cluster_training_runtime(const char *name)
{
	return runtime("ClusterTrainingRuntime", NULL, name, false);
}

cJSON *up_trainjob(const char *ns, const char *name, const char *kind, const char *rt)
{
	char buf[512];
	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		 "{'name':'%s','namespace':'%s'},'spec':{'runtimeRef':{'name':'%s',"
		 "'apiGroup':'trainer.kubeflow.org'%s%s%s}}}",
		 name, ns, rt, kind ? ",'kind':'" : "", kind ? kind : "", kind ? "'" : "");
	return parse(buf);
}

/* ------------------------------------------------------------ modifiers */

cJSON *up_jobs(cJSON *obj)
{
	cJSON *jobs = (cJSON *)tp_get(obj, "spec.template.spec.replicatedJobs");
	if (!jobs)
		jobs = (cJSON *)tp_get(obj, "replicatedJobs");
	if (!cJSON_IsArray(jobs))
		die("no replicatedJobs", NULL);
	return jobs;
}

cJSON *up_job(cJSON *obj, const char *name)
{
	cJSON *j = (cJSON *)tp_find_named(up_jobs(obj), "name", name);
	if (!j)
		die("no replicated job", name);
	return j;
}

/* Is name one of the comma-separated names? */
static bool listed(const char *names, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = names; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

static void replace(cJSON *obj, const char *member, cJSON *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, member);
	cJSON_AddItemToObject(obj, member, v);
}

void up_replicas(cJSON *obj, int n, const char *names)
{
	cJSON *j;
	cJSON_ArrayForEach(j, up_jobs(obj))
		if (listed(names, tp_get_str(j, "name")))
			replace(j, "replicas", cJSON_CreateNumber(n));
}

void up_launcher_replica(cJSON *obj)
{
	cJSON *jobs = up_jobs(obj), *node = (cJSON *)tp_find_named(jobs, "name", "node");
	if (!node)
		return;
	cJSON *launcher = parse("{'name':'launcher','groupName':'default','template':{'spec':"
				"{'template':{'spec':{'containers':[{'name':'node','command':"
				"['mpirun'],'args':['echo.sh']}]}}}}}");
	/* cJSON 1.7.15 refuses cJSON_InsertItemInArray in the middle: rebuild */
	cJSON *rest = cJSON_CreateArray();
	while (jobs->child)
		cJSON_AddItemToArray(rest, cJSON_DetachItemViaPointer(jobs, jobs->child));
	while (rest->child) {
		cJSON *c = cJSON_DetachItemViaPointer(rest, rest->child);
		if (c == node)
			cJSON_AddItemToArray(jobs, launcher);
		cJSON_AddItemToArray(jobs, c);
	}
	cJSON_Delete(rest);
}

static cJSON *pod_spec(cJSON *obj, const char *job_name)
{
	return (cJSON *)tp_get(up_job(obj, job_name), "template.spec.template.spec");
}

void up_init_container(cJSON *obj, const char *job_name, const char *name, const char *image)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "[{'name':'%s','image':'%s'}]", name, image);
	replace(pod_spec(obj, job_name), "initContainers", parse(buf));
}

static void set_fields(cJSON *c, const char *image, const char *command, const char *args,
		       const char *requests)
{
	replace(c, "image", cJSON_CreateString(image));
	if (command)
		replace(c, "command", parse(command));
	if (args)
		replace(c, "args", parse(args));
	if (requests) {
		cJSON *res = cJSON_CreateObject();
		cJSON_AddItemToObject(res, "requests", parse(requests));
		replace(c, "resources", res);
	}
}

void up_container(cJSON *obj, const char *job_name, const char *name, const char *image,
		  const char *command, const char *args, const char *requests)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(pod_spec(obj, job_name), "containers");
	cJSON *c = (cJSON *)tp_find_named(list, "name", name);
	if (!c) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "name", name);
		cJSON_AddItemToArray(list, c);
	}
	set_fields(c, image, command, args, requests);
}

void up_replace_container(cJSON *obj, const char *job_name, const char *name,
			  const char *new_name, const char *image)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(pod_spec(obj, job_name), "containers");
	cJSON *c = (cJSON *)tp_find_named(list, "name", name);
	if (!c)
		die("no container", name);
	cJSON *n = cJSON_CreateObject();
	cJSON_AddStringToObject(n, "name", new_name);
	cJSON_AddStringToObject(n, "image", image);
	cJSON_ReplaceItemViaPointer(list, c, n);
}

void up_job_label(cJSON *obj, const char *key, const char *value, const char *names)
{
	cJSON *j;
	cJSON_ArrayForEach(j, up_jobs(obj)) {
		if (!listed(names, tp_get_str(j, "name")))
			continue;
		cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "template");
		cJSON *m = cJSON_GetObjectItemCaseSensitive(t, "metadata");
		if (!m)
			m = cJSON_AddObjectToObject(t, "metadata");
		cJSON *l = cJSON_GetObjectItemCaseSensitive(m, "labels");
		if (!l)
			l = cJSON_AddObjectToObject(m, "labels");
		replace(l, key, cJSON_CreateString(value));
	}
}

void up_env(cJSON *obj, const char *job_name, const char *container, const char *envs)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(pod_spec(obj, job_name), "containers");
	cJSON *c = (cJSON *)tp_find_named(list, "name", container);
	if (!c)
		die("no container", container);
	cJSON *env = cJSON_GetObjectItemCaseSensitive(c, "env");
	if (!env)
		env = cJSON_AddArrayToObject(c, "env");
	cJSON *add = parse(envs);
	while (add->child)
		cJSON_AddItemToArray(env, cJSON_DetachItemViaPointer(add, add->child));
	cJSON_Delete(add);
}

void up_set(cJSON *obj, const char *path, const char *value)
{
	char key[128];
	cJSON *at = obj;
	for (const char *p = path;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (n >= sizeof(key))
			die("path too long", path);
		memcpy(key, p, n);
		key[n] = '\0';
		if (!dot) {
			if (value)
				replace(at, key, parse(value));
			else
				cJSON_DeleteItemFromObjectCaseSensitive(at, key);
			return;
		}
		cJSON *next = cJSON_GetObjectItemCaseSensitive(at, key);
		if (!next)
			next = cJSON_AddObjectToObject(at, key);
		at = next;
		p = dot + 1;
	}
}

void up_label(cJSON *obj, const char *key, const char *value)
{
	cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	cJSON *l = cJSON_GetObjectItemCaseSensitive(m, "labels");
	if (!l)
		l = cJSON_AddObjectToObject(m, "labels");
	replace(l, key, cJSON_CreateString(value));
}

/* ------------------------------------------------------------ drivers */

/* The store as a lookup that cannot answer for one kind, as a client error
 * would leave upstream's webhook. */
struct failing {
	const tp_store *store;
	tp_kind fail;
};

static int failing_get(void *ctx, tp_kind k, const char *ns, const char *name, const cJSON **out,
		       char *why, size_t whylen)
{
	struct failing *f = ctx;
	if (k == f->fail) {
		snprintf(why, whylen, "client error");
		return TP_EUNAVAILABLE;
	}
	*out = tp_store_get(f->store, k, ns, name);
	return *out ? TP_OK : TP_ENOTFOUND;
}

tp_result *up_validate_failing(tp_profile p, tp_operation op, const cJSON *obj, const cJSON *old,
			       cJSON *const *cluster, tp_kind fail, bool webhook_only)
{
	tp_store *s = NULL;
	tp_result *r = NULL;
	if (tp_store_new(&s) || tp_result_new(&r))
		die("out of memory", NULL);
	for (cJSON *const *c = cluster; c && *c; c++)
		if (tp_store_put(s, cJSON_Duplicate(*c, 1)))
			die("the store refused a fixture", tp_get_str(*c, "metadata.name"));
	struct failing f = { s, fail };
	tp_lookup l = { failing_get, NULL, &f };
	tp_options opt = { .profile = p, .store = s, .lookup = fail ? &l : NULL,
			   .no_schema = webhook_only };
	tp_store_rdlock(s);
	int rc = tp_validate(&opt, op, obj, old, r);
	tp_store_unlock(s);
	tp_store_free(s);
	if (rc)
		die("tp_validate failed:", tp_strerror(rc));
	return r;
}

tp_result *up_validate(tp_profile p, tp_operation op, const cJSON *obj, const cJSON *old,
		       cJSON *const *cluster)
{
	return up_validate_failing(p, op, obj, old, cluster, TP_KIND_UNKNOWN, false);
}

const char *up_text(const tp_result *r)
{
	static char text[8192];
	tp_buf b = TP_BUF_INIT(0);
	tp_result_format(r, &b);
	snprintf(text, sizeof(text), "%s", b.data ? b.data : "");
	tp_buf_free(&b);
	return text;
}
