/*
 * pod/members.c — one walk of an object into its struct of members
 * (pod/members.h): a switch on a member's first byte picks the few names
 * it can be, one strcmp each; a slot already filled keeps the first member
 * of its name, as tp_member returns that one.
 */
#include "policy/pod/members.h"

#include <string.h>

/* Within a switch on k[0], in a loop over the members it: it goes into
 * m->slot when k is lit and the slot is empty, and the loop moves on. */
#define TAKE(lit, slot)                   \
	if (!strcmp(k, lit)) {            \
		if (!m->slot)             \
			m->slot = it;     \
		continue;                 \
	}

#define EACH_MEMBER(o)                                                       \
	for (const cJSON *it = tp__vobj(o) ? (o)->child : NULL; it; it = it->next)       \
		for (const char *k = it->string; k; k = NULL)

void tp__pod_cm_fill(tp_pod_cm *m, const cJSON *o)
{
	memset(m, 0, sizeof(*m));
	m->self = o;
	EACH_MEMBER(o) switch (k[0]) {
	case 'a':
		TAKE("args", args);
		break;
	case 'c':
		TAKE("command", command);
		break;
	case 'e':
		TAKE("env", env);
		TAKE("envFrom", env_from);
		break;
	case 'i':
		TAKE("image", image);
		TAKE("imagePullPolicy", image_pull_policy);
		break;
	case 'l':
		TAKE("lifecycle", lifecycle);
		TAKE("livenessProbe", liveness_probe);
		break;
	case 'n':
		TAKE("name", name);
		break;
	case 'p':
		TAKE("ports", ports);
		break;
	case 'r':
		TAKE("resources", resources);
		TAKE("restartPolicy", restart_policy);
		TAKE("readinessProbe", readiness_probe);
		TAKE("resizePolicy", resize_policy);
		TAKE("restartPolicyRules", restart_policy_rules);
		break;
	case 's':
		TAKE("securityContext", security_context);
		TAKE("startupProbe", startup_probe);
		TAKE("stdin", stdin_);
		TAKE("stdinOnce", stdin_once);
		break;
	case 't':
		TAKE("terminationMessagePath", termination_message_path);
		TAKE("terminationMessagePolicy", termination_message_policy);
		TAKE("tty", tty);
		break;
	case 'v':
		TAKE("volumeMounts", volume_mounts);
		TAKE("volumeDevices", volume_devices);
		break;
	case 'w':
		TAKE("workingDir", working_dir);
		break;
	}
}

void tp__pod_sm_fill(tp_pod_sm *m, const cJSON *o)
{
	memset(m, 0, sizeof(*m));
	m->self = o;
	EACH_MEMBER(o) switch (k[0]) {
	case 'a':
		TAKE("affinity", affinity);
		TAKE("activeDeadlineSeconds", active_deadline_seconds);
		TAKE("automountServiceAccountToken", automount_service_account_token);
		break;
	case 'c':
		TAKE("containers", containers);
		break;
	case 'd':
		TAKE("dnsPolicy", dns_policy);
		TAKE("dnsConfig", dns_config);
		break;
	case 'e':
		TAKE("ephemeralContainers", ephemeral_containers);
		TAKE("enableServiceLinks", enable_service_links);
		break;
	case 'h':
		TAKE("hostNetwork", host_network);
		TAKE("hostname", hostname);
		TAKE("hostPID", host_pid);
		TAKE("hostIPC", host_ipc);
		TAKE("hostAliases", host_aliases);
		TAKE("hostUsers", host_users);
		TAKE("hostnameOverride", hostname_override);
		break;
	case 'i':
		TAKE("initContainers", init_containers);
		TAKE("imagePullSecrets", image_pull_secrets);
		break;
	case 'n':
		TAKE("nodeSelector", node_selector);
		TAKE("nodeName", node_name);
		break;
	case 'o':
		TAKE("os", os);
		TAKE("overhead", overhead);
		break;
	case 'p':
		TAKE("priorityClassName", priority_class_name);
		TAKE("priority", priority);
		TAKE("preemptionPolicy", preemption_policy);
		break;
	case 'r':
		TAKE("restartPolicy", restart_policy);
		TAKE("readinessGates", readiness_gates);
		TAKE("runtimeClassName", runtime_class_name);
		TAKE("resources", resources);
		TAKE("resourceClaims", resource_claims);
		break;
	case 's':
		TAKE("securityContext", security_context);
		TAKE("serviceAccountName", service_account_name);
		TAKE("subdomain", subdomain);
		TAKE("schedulerName", scheduler_name);
		TAKE("serviceAccount", service_account);
		TAKE("shareProcessNamespace", share_process_namespace);
		TAKE("setHostnameAsFQDN", set_hostname_as_fqdn);
		TAKE("schedulingGates", scheduling_gates);
		TAKE("schedulingGroup", scheduling_group);
		break;
	case 't':
		TAKE("terminationGracePeriodSeconds", termination_grace_period_seconds);
		TAKE("tolerations", tolerations);
		TAKE("topologySpreadConstraints", topology_spread_constraints);
		break;
	case 'v':
		TAKE("volumes", volumes);
		break;
	}
}

void tp__pod_mm_fill(tp_pod_mm *m, const cJSON *o)
{
	memset(m, 0, sizeof(*m));
	m->self = o;
	EACH_MEMBER(o) switch (k[0]) {
	case 'm':
		TAKE("mountPath", mount_path);
		TAKE("mountPropagation", mount_propagation);
		break;
	case 'n':
		TAKE("name", name);
		break;
	case 'r':
		TAKE("readOnly", read_only);
		TAKE("recursiveReadOnly", recursive_read_only);
		break;
	case 's':
		TAKE("subPath", sub_path);
		TAKE("subPathExpr", sub_path_expr);
		break;
	}
}

void tp__pod_jm_fill(tp_pod_jm *m, const cJSON *o)
{
	memset(m, 0, sizeof(*m));
	m->self = o;
	EACH_MEMBER(o) switch (k[0]) {
	case 'a':
		TAKE("activeDeadlineSeconds", active_deadline_seconds);
		break;
	case 'b':
		TAKE("backoffLimit", backoff_limit);
		TAKE("backoffLimitPerIndex", backoff_limit_per_index);
		break;
	case 'c':
		TAKE("completions", completions);
		TAKE("completionMode", completion_mode);
		break;
	case 'm':
		TAKE("maxFailedIndexes", max_failed_indexes);
		TAKE("manualSelector", manual_selector);
		TAKE("managedBy", managed_by);
		break;
	case 'p':
		TAKE("parallelism", parallelism);
		TAKE("podFailurePolicy", pod_failure_policy);
		TAKE("podReplacementPolicy", pod_replacement_policy);
		break;
	case 's':
		TAKE("selector", selector);
		TAKE("successPolicy", success_policy);
		TAKE("suspend", suspend);
		break;
	case 't':
		TAKE("template", template_);
		TAKE("ttlSecondsAfterFinished", ttl_seconds_after_finished);
		break;
	}
}

void tp__pod_tm_fill(tp_pod_tm *m, const cJSON *job_template)
{
	tp__pod_jm_fill(&m->job, tp__mobj(job_template, "spec"));
	tp__pod_sm_fill(&m->pod, tp__mobj(tp__vobj(m->job.template_), "spec"));
}
