/*
 * test_pod_spec.c — the Pod-wide rules of kube-apiserver's ValidatePodSpec
 * (policy/pod/dns.c, pod_security_context.c, pod_os.c, scheduling.c,
 * spec.c) through the strict profile's own entry point: a
 * ClusterTrainingRuntime whose trainer job's Pod template breaks one rule
 * is refused at the runtime's path, in no namespace and so under no Pod
 * Security. The cases are Kubernetes v1.32's, under their names in
 * pkg/apis/core/validation/validation_test.go (TestValidatePodDNSConfig,
 * TestValidatePodSpec, TestValidatePod, TestValidateSysctls,
 * TestValidateTopologySpreadConstraints, TestValidateSchedulingGates,
 * TestValidatePodReadinessGates, TestValidateOS, TestValidateWindowsPod-
 * SecurityContext, TestValidateLinuxPodSecurityContext,
 * TestValidateOverhead), or under the Go function whose rule they hold
 * where upstream has no case for it. Upstream's cases are PodSpecs; here
 * the manifest of one, so each case has the container a Pod needs. A
 * case wants exactly its errors, in order, by type, path, value and the
 * API server's detail (what follows it is the runtime's context).
 * Upstream's cases that only fail for a Pod, not a Pod template (a
 * hostNetwork hostPort left unset), stay allowed here, as for the API
 * server.
 */
#include "tests/unit/up_cases.h"

#include <stdio.h>

#define PFX "spec.template.spec.replicatedJobs[0].template.spec.template.spec"
#define CONTEXT "the Job.batch of every TrainJob would be invalid"

typedef struct want {
	tp_field_type type;
	const char *path;   /* after PFX */
	const char *value;  /* NULL: not checked */
	const char *detail; /* the API server's; ending in "...": its start; NULL: not checked */
} want;

typedef struct row {
	const char *spec; /* the Pod spec, single-quoted JSON */
	want errs[4];     /* ends at the first with path NULL */
} row;

/* A ClusterTrainingRuntime "rt" whose trainer job's Pod spec is spec. */
static cJSON *runtime_with(const char *spec)
{
	static const char fmt[] =
		"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
		"'metadata':{'name':'rt','labels':{'trainer.kubeflow.org/framework':'torch'}},"
		"'spec':{'mlPolicy':{'numNodes':1,'torch':{}},'template':{'spec':{'replicatedJobs':"
		"[{'name':'node','template':{'metadata':{'labels':"
		"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':"
		"{'spec':%s}}}}]}}}}";
	size_t n = sizeof(fmt) + strlen(spec);
	char *buf = malloc(n);
	assert_non_null(buf);
	snprintf(buf, n, fmt, spec);
	cJSON *rt = tt_jsq(buf);
	free(buf);
	return rt;
}

/* The strict profile's review of the runtime (no namespace, no Pod
 * Security), checked against want (n of them). */
static void expect(const char *spec, const want *errs, size_t n)
{
	cJSON *rt = runtime_with(spec);
	tp_options opt = { .profile = TP_PROFILE_STRICT };
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate_runtime(&opt, TP_OP_CREATE, rt, NULL, res), TP_OK);
	if (tp_result_error_count(res) != n) {
		tt_dump(res);
		fail_msg("%zu errors, want %zu", tp_result_error_count(res), n);
	}
	for (size_t i = 0; i < n; i++) {
		const tp_field_error *e = tp_result_error_at(res, i);
		const want *w = &errs[i];
		char path[512], detail[4096];
		snprintf(path, sizeof(path), PFX "%s", w->path);
		bool ok = e->type == w->type && !strcmp(e->path, path);
		if (w->value)
			ok &= e->value && !strcmp(e->value, w->value);
		size_t dn = w->detail ? strlen(w->detail) : 0;
		if (w->detail && dn > 3 && !strcmp(w->detail + dn - 3, "...")) {
			ok &= !strncmp(e->detail, w->detail, dn - 3);
		} else if (w->detail) {
			snprintf(detail, sizeof(detail), "%s%s" CONTEXT, w->detail, *w->detail ? ": " : "");
			ok &= !strncmp(e->detail, detail, strlen(detail));
		}
		if (!ok) {
			tt_dump(res);
			fail_msg("error %zu: want %d at %s, value %s, detail %s", i, (int)w->type, path,
				 w->value ? w->value : "(any)", w->detail ? w->detail : "(any)");
		}
	}
	tp_result_free(res);
	cJSON_Delete(rt);
}

static void run_row(void **state)
{
	const row *r = *state;
	size_t n = 0;
	while (n < 4 && r->errs[n].path)
		n++;
	expect(r->spec, r->errs, n);
}

#define ROW(name, spec, ...) UP_ROW(name, run_row, (&(const row){ spec, { __VA_ARGS__ } }))
/* The Pod spec: the trainer's container, then members (",'x':..."). */
#define S(members) "{'containers':[{'name':'node','image':'pytorch'}]" members "}"
#define OK(name, members) ROW(name, S(members), { 0 })
#define BAD(name, members, ...) ROW(name, S(members), __VA_ARGS__)
#define E(type, path, value, detail) { TP_FIELD_##type, path, value, detail }

#define IP_MSG "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
#define SUBDOMAIN_MSG "a lowercase RFC 1123 subdomain must consist of..."
#define ID_RANGE "must be between 0 and 2147483647, inclusive"
#define SYSCTL_MSG                                                                    \
	"must have at most 253 characters and match regex "                             \
	"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
#define QUALIFIED_MSG                                                                          \
	"name part must consist of alphanumeric characters, '-', '_' or '.', and must start and " \
	"end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex " \
	"used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define WINDOWS "cannot be set for a windows pod"
#define NA ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
#define NA_TERM NA ".nodeSelectorTerms[0]"
#define NA_PREF ".affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
#define PA_REQ ".affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
#define PA_PREF ".affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
#define PAA_REQ ".affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
#define PAA_PREF ".affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
#define TSC ".topologySpreadConstraints[0]"
#define TSC_OK "'maxSkew':1,'topologyKey':'k8s.io/zone','whenUnsatisfiable':'DoNotSchedule'"

/* ------------------------------------------------------------------ DNS */

static const up_case dns[] = {
	OK("TestValidatePodDNSConfig/valid: empty DNSConfig", ",'dnsConfig':{}"),
	OK("TestValidatePodDNSConfig/valid: 1 option",
	   ",'dnsConfig':{'options':[{'name':'ndots','value':'2'}]}"),
	OK("TestValidatePodDNSConfig/valid: 1 nameserver", ",'dnsConfig':{'nameservers':['127.0.0.1']}"),
	OK("TestValidatePodDNSConfig/valid: DNSNone with 1 nameserver",
	   ",'dnsPolicy':'None','dnsConfig':{'nameservers':['127.0.0.1']}"),
	OK("TestValidatePodDNSConfig/valid: 1 search path", ",'dnsConfig':{'searches':['custom']}"),
	OK("TestValidatePodDNSConfig/valid: 1 search path with trailing period",
	   ",'dnsConfig':{'searches':['custom.']}"),
	OK("TestValidatePodDNSConfig/valid: 3 nameservers and 6 search paths(legacy)",
	   ",'dnsConfig':{'nameservers':['127.0.0.1','10.0.0.10','8.8.8.8'],'searches':['custom',"
	   "'mydomain.com','local','cluster.local','svc.cluster.local','default.svc.cluster.local.']}"),
	OK("TestValidatePodDNSConfig/valid: ipv6 nameserver",
	   ",'dnsConfig':{'nameservers':['FE80::0202:B3FF:FE1E:8329']}"),
	OK("TestValidatePodDNSConfig/valid: 7 search paths",
	   ",'dnsConfig':{'searches':['custom','mydomain.com','local','cluster.local',"
	   "'svc.cluster.local','default.svc.cluster.local','exceeded']}"),
	BAD("TestValidatePodDNSConfig/invalid: 4 nameservers",
	    ",'dnsConfig':{'nameservers':['127.0.0.1','10.0.0.10','8.8.8.8','1.2.3.4']}",
	    E(INVALID, ".dnsConfig.nameservers",
	      "[]string{\"127.0.0.1\", \"10.0.0.10\", \"8.8.8.8\", \"1.2.3.4\"}",
	      "must not have more than 3 nameservers")),
	BAD("TestValidatePodDNSConfig/invalid search path", ",'dnsConfig':{'searches':['custom?']}",
	    E(INVALID, ".dnsConfig.searches[0]", "\"custom?\"", SUBDOMAIN_MSG)),
	BAD("TestValidatePodDNSConfig/invalid nameserver", ",'dnsConfig':{'nameservers':['invalid']}",
	    E(INVALID, ".dnsConfig.nameservers[0]", "\"invalid\"", IP_MSG)),
	BAD("TestValidatePodDNSConfig/invalid empty option name",
	    ",'dnsConfig':{'options':[{'value':'2'}]}",
	    E(REQUIRED, ".dnsConfig.options[0]", NULL, "must not be empty")),
	BAD("TestValidatePodDNSConfig/invalid: DNSNone with 0 nameserver",
	    ",'dnsPolicy':'None','dnsConfig':{'searches':['custom']}",
	    E(REQUIRED, ".dnsConfig.nameservers", NULL,
	      "must provide at least one DNS nameserver when `dnsPolicy` is None")),
	/* issue 29: refused by kube-apiserver v1.32.13 */
	BAD("validatePodDNSConfig/DNSNone without dnsConfig", ",'dnsPolicy':'None'",
	    E(REQUIRED, ".dnsConfig", NULL, "must provide `dnsConfig` when `dnsPolicy` is None")),
	/* TestValidatePodSpec */
	OK("TestValidatePodSpec/populate HostAliases",
	   ",'hostAliases':[{'ip':'12.34.56.78','hostnames':['host1','host2']}]"),
	OK("TestValidatePodSpec/populate HostAliases with `foo.bar` hostnames",
	   ",'hostAliases':[{'ip':'12.34.56.78','hostnames':['host1.foo','host2.bar']}]"),
	OK("TestValidatePodSpec/populate HostAliases with HostNetwork",
	   ",'hostNetwork':true,'hostAliases':[{'ip':'12.34.56.78','hostnames':['host1.foo']}]"),
	BAD("TestValidatePodSpec/with hostAliases with invalid IP",
	    ",'hostAliases':[{'ip':'999.999.999.999','hostnames':['host1','host2']}]",
	    E(INVALID, ".hostAliases[0].ip", "\"999.999.999.999\"", IP_MSG)),
	BAD("TestValidatePodSpec/with hostAliases with invalid hostname",
	    ",'hostAliases':[{'ip':'12.34.56.78','hostnames':['@#$^#@#$']}]",
	    E(INVALID, ".hostAliases[0].hostnames[0]", "\"@#$^#@#$\"", SUBDOMAIN_MSG)),
	/* IsValidIP's parse (ParseIPSloppy) */
	OK("IsValidIP/IPv4 with leading zeros, IPv6 forms",
	   ",'hostAliases':[{'ip':'010.001.1.1'},{'ip':'::'},{'ip':'::1'},{'ip':'1::'},"
	   "{'ip':'::ffff:1.2.3.4'},{'ip':'1:2:3:4:5:6:1.2.3.4'},{'ip':'2001:db8::ffff'}]"),
	BAD("IsValidIP/not addresses",
	    ",'hostAliases':[{'ip':''},{'ip':'1.2.3'},{'ip':'1:2:3:4:5:6:7:8:9'},{'ip':'1::2::3'}]",
	    E(INVALID, ".hostAliases[0].ip", "\"\"", IP_MSG),
	    E(INVALID, ".hostAliases[1].ip", "\"1.2.3\"", IP_MSG),
	    E(INVALID, ".hostAliases[2].ip", "\"1:2:3:4:5:6:7:8:9\"", IP_MSG),
	    E(INVALID, ".hostAliases[3].ip", "\"1::2::3\"", IP_MSG)),
	BAD("IsValidIP/CIDR, zone, brackets",
	    ",'hostAliases':[{'ip':'1.2.3.4/32'},{'ip':'fe80::1%eth0'},{'ip':'[::1]'}]",
	    E(INVALID, ".hostAliases[0].ip", "\"1.2.3.4/32\"", IP_MSG),
	    E(INVALID, ".hostAliases[1].ip", "\"fe80::1%eth0\"", IP_MSG),
	    E(INVALID, ".hostAliases[2].ip", "\"[::1]\"", IP_MSG)),
};

/* A dnsConfig with n search domains of len characters each, the first
 * first_len. */
static char *searches(int n, size_t first_len, size_t len)
{
	size_t cap = 64 + (size_t)n * (len + 4) + first_len;
	char *s = malloc(cap), *p = s;
	assert_non_null(s);
	p += sprintf(p, ",'dnsConfig':{'searches':[");
	for (int i = 0; i < n; i++) {
		size_t l = i ? len : first_len;
		*p++ = i ? ',' : ' ';
		*p++ = '\'';
		memset(p, 'a', l);
		p += l;
		*p++ = '\'';
	}
	strcpy(p, "]}");
	return s;
}

static void expect_members(const char *members, const want *errs, size_t n)
{
	size_t cap = strlen(members) + 128;
	char *spec = malloc(cap);
	assert_non_null(spec);
	snprintf(spec, cap, "{'containers':[{'name':'node','image':'pytorch'}]%s}", members);
	expect(spec, errs, n);
	free(spec);
}

/* searches(n, first_ok, len) allowed, searches(n + more, first_bad, len)
 * refused for detail at dnsConfig.searches. */
static void search_limit(int n, size_t first_ok, int more, size_t first_bad, size_t len,
			 const char *detail)
{
	char *s = searches(n, first_ok, len);
	expect_members(s, NULL, 0);
	free(s);
	s = searches(n + more, first_bad, len);
	want w = { TP_FIELD_INVALID, ".dnsConfig.searches", NULL, detail };
	expect_members(s, &w, 1);
	free(s);
}

/* TestValidatePodDNSConfig: "valid: 3 nameservers and 32 search paths"
 * (without the nameservers), "invalid: 33 search paths" */
static void search_paths_32_and_33(void **state)
{
	(void)state;
	search_limit(32, 1, 1, 1, 1, "must not have more than 32 search paths");
}

/* TestValidatePodDNSConfig: "valid: 2048 characters in search path list",
 * "invalid: 2049 characters in search path list" */
static void search_list_2048_and_2049(void **state)
{
	(void)state;
	search_limit(32, 64, 0, 65, 63,
		     "must not have more than 2048 characters (including spaces) in the search list");
}

/* ---------------------------------------------------- securityContext */

static const up_case security[] = {
	OK("TestValidatePodSpec/populate HostNetwork",
	   ",'hostNetwork':true,'containers':[{'name':'node','image':'pytorch','ports':"
	   "[{'hostPort':8080,'containerPort':8080,'protocol':'TCP'}]}]"),
	/* a failure for a Pod (ResourceIsPod), not for a template */
	OK("TestValidatePodSpec/with hostNetwork hostPort unspecified",
	   ",'hostNetwork':true,'containers':[{'name':'node','image':'pytorch','ports':"
	   "[{'containerPort':2600,'protocol':'TCP'}]}]"),
	ROW("TestValidatePodSpec/with hostNetwork hostPort not equal to containerPort",
	    "{'hostNetwork':true,'containers':[{'name':'node','image':'pytorch','ports':"
	    "[{'hostPort':8080,'containerPort':2600,'protocol':'TCP'}]}]}",
	    E(INVALID, ".containers[0].ports[0].hostPort", "8080",
	      "must match `containerPort` when `hostNetwork` is true")),
	OK("TestValidatePodSpec/populate RunAsUser SupplementalGroups FSGroup with minID 0",
	   ",'securityContext':{'supplementalGroups':[0],'runAsUser':0,'fsGroup':0}"),
	OK("TestValidatePodSpec/populate RunAsUser SupplementalGroups FSGroup with maxID 2147483647",
	   ",'securityContext':{'supplementalGroups':[2147483647],'runAsUser':2147483647,"
	   "'fsGroup':2147483647}"),
	OK("TestValidatePodSpec/populate HostIPC", ",'hostIPC':true"),
	OK("TestValidatePodSpec/populate HostPID", ",'hostPID':true"),
	OK("TestValidatePodSpec/populate ShareProcessNamespace", ",'shareProcessNamespace':true"),
	OK("TestValidatePodSpec/populate FSGroupChangePolicy",
	   ",'securityContext':{'fsGroupChangePolicy':'Always'}"),
	BAD("TestValidatePodSpec/bad supplementalGroups large than math.MaxInt32",
	    ",'securityContext':{'supplementalGroups':[2147483648,1234]}",
	    E(INVALID, ".securityContext.supplementalGroups[0]", "2147483648", ID_RANGE)),
	BAD("TestValidatePodSpec/bad supplementalGroups less than 0",
	    ",'securityContext':{'supplementalGroups':[1234,-1]}",
	    E(INVALID, ".securityContext.supplementalGroups[1]", "-1", ID_RANGE)),
	BAD("TestValidatePodSpec/bad runAsUser large than math.MaxInt32",
	    ",'securityContext':{'runAsUser':2147483648}",
	    E(INVALID, ".securityContext.runAsUser", "2147483648", ID_RANGE)),
	BAD("TestValidatePodSpec/bad runAsUser less than 0", ",'securityContext':{'runAsUser':-1}",
	    E(INVALID, ".securityContext.runAsUser", "-1", ID_RANGE)),
	BAD("TestValidatePodSpec/bad fsGroup large than math.MaxInt32",
	    ",'securityContext':{'fsGroup':2147483648}",
	    E(INVALID, ".securityContext.fsGroup", "2147483648", ID_RANGE)),
	BAD("TestValidatePodSpec/bad fsGroup less than 0", ",'securityContext':{'fsGroup':-1}",
	    E(INVALID, ".securityContext.fsGroup", "-1", ID_RANGE)),
	BAD("validatePodSpecSecurityContext/runAsGroup less than 0",
	    ",'securityContext':{'runAsGroup':-5}",
	    E(INVALID, ".securityContext.runAsGroup", "-5", ID_RANGE)),
	BAD("TestValidatePodSpec/ShareProcessNamespace and HostPID both set",
	    ",'hostPID':true,'shareProcessNamespace':true",
	    E(INVALID, ".securityContext.shareProcessNamespace", "true",
	      "ShareProcessNamespace and HostPID cannot both be enabled")),
	BAD("TestValidatePodSpec/bad empty fsGroupchangepolicy",
	    ",'securityContext':{'fsGroupChangePolicy':''}",
	    E(UNSUPPORTED, ".securityContext.fsGroupChangePolicy", "\"\"",
	      "supported values: \"Always\", \"OnRootMismatch\"")),
	BAD("TestValidatePodSpec/bad invalid fsgroupchangepolicy",
	    ",'securityContext':{'fsGroupChangePolicy':'invalid'}",
	    E(UNSUPPORTED, ".securityContext.fsGroupChangePolicy", "\"invalid\"",
	      "supported values: \"Always\", \"OnRootMismatch\"")),
	/* TestValidateSysctls */
	OK("TestValidateSysctls/valid",
	   ",'securityContext':{'sysctls':[{'name':'net.foo.bar','value':'1'},{'name':'kernel.shmmax',"
	   "'value':'1'},{'name':'net.ipv4.conf.enp3s0/200.forwarding','value':'1'},"
	   "{'name':'net/ipv4/conf/enp3s0.200/forwarding','value':'1'}]}"),
	BAD("TestValidateSysctls/invalid",
	    ",'securityContext':{'sysctls':[{'name':'i..nvalid'},{'name':'_invalid'}]}",
	    E(INVALID, ".securityContext.sysctls[0].name", "\"i..nvalid\"", SYSCTL_MSG),
	    E(INVALID, ".securityContext.sysctls[1].name", "\"_invalid\"", SYSCTL_MSG)),
	BAD("TestValidateSysctls/duplicates",
	    ",'securityContext':{'sysctls':[{'name':'kernel.shmmax'},{'name':'kernel.shmmax'}]}",
	    E(DUPLICATE, ".securityContext.sysctls[1].name", "\"kernel.shmmax\"", "")),
	BAD("TestValidateSysctls/invalidWithHostNet",
	    ",'hostNetwork':true,'securityContext':{'sysctls':[{'name':"
	    "'net.ipv4.conf.enp3s0/200.forwarding'},{'name':'net/ipv4/conf/enp3s0.200/forwarding'}]}",
	    E(INVALID, ".securityContext.sysctls[0].name", "\"net.ipv4.conf.enp3s0/200.forwarding\"",
	      "may not be specified when 'hostNetwork' is true"),
	    E(INVALID, ".securityContext.sysctls[1].name", "\"net/ipv4/conf/enp3s0.200/forwarding\"",
	      "may not be specified when 'hostNetwork' is true")),
	BAD("TestValidateSysctls/invalidWithHostIPC",
	    ",'hostIPC':true,'securityContext':{'sysctls':[{'name':'kernel.shmmax'},"
	    "{'name':'kernel.msgmax'}]}",
	    E(INVALID, ".securityContext.sysctls[0].name", "\"kernel.shmmax\"",
	      "may not be specified when 'hostIPC' is true"),
	    E(INVALID, ".securityContext.sysctls[1].name", "\"kernel.msgmax\"",
	      "may not be specified when 'hostIPC' is true")),
	OK("ValidateHostSysctl/host namespaces with sysctls of other namespaces",
	   ",'hostNetwork':true,'hostIPC':true,'securityContext':{'sysctls':[{'name':'kernel.pid_max'},"
	   "{'name':'vm.swappiness'}]}"),
	BAD("validateSysctls/empty name", ",'securityContext':{'sysctls':[{'name':'','value':'1'}]}",
	    E(REQUIRED, ".securityContext.sysctls[0].name", NULL, "")),
	BAD("IsValidSysctlName/invalid names",
	    ",'securityContext':{'sysctls':[{'name':'a.'},{'name':'a*b'},{'name':'Abc'},{'name':'/a'}]}",
	    E(INVALID, ".securityContext.sysctls[0].name", "\"a.\"", SYSCTL_MSG),
	    E(INVALID, ".securityContext.sysctls[1].name", "\"a*b\"", SYSCTL_MSG),
	    E(INVALID, ".securityContext.sysctls[2].name", "\"Abc\"", SYSCTL_MSG),
	    E(INVALID, ".securityContext.sysctls[3].name", "\"/a\"", SYSCTL_MSG)),
	OK("IsValidSysctlName/valid names",
	   ",'securityContext':{'sysctls':[{'name':'a.b.c.d'},{'name':'a'},{'name':'a_b'},"
	   "{'name':'a-b'},{'name':'abc.def'},{'name':'a/b/c/d'},{'name':'a/b.c'}]}"),
	/* validateSeccompProfileField (issue 29: Localhost without its profile) */
	OK("TestValidatePod/runtime default seccomp profile for a pod",
	   ",'securityContext':{'seccompProfile':{'type':'RuntimeDefault'}}"),
	OK("TestValidatePod/unconfined seccomp profile for a pod",
	   ",'securityContext':{'seccompProfile':{'type':'Unconfined'}}"),
	OK("TestValidatePod/localhost seccomp profile for a pod",
	   ",'securityContext':{'seccompProfile':{'type':'Localhost','localhostProfile':"
	   "'filename.json'}}"),
	BAD("validateSeccompProfileField/Localhost without localhostProfile",
	    ",'securityContext':{'seccompProfile':{'type':'Localhost'}}",
	    E(REQUIRED, ".securityContext.seccompProfile.localhostProfile", NULL,
	      "must be set when seccomp type is Localhost")),
	BAD("validateSeccompProfileField/type missing", ",'securityContext':{'seccompProfile':{}}",
	    E(REQUIRED, ".securityContext.seccompProfile.type", NULL,
	      "type is required when seccompProfile is set")),
	BAD("validateSeccompProfileField/unsupported type",
	    ",'securityContext':{'seccompProfile':{'type':'docker/default'}}",
	    E(UNSUPPORTED, ".securityContext.seccompProfile.type", "\"docker/default\"",
	      "supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\"")),
	BAD("validateSeccompProfileField/localhostProfile with another type",
	    ",'securityContext':{'seccompProfile':{'type':'RuntimeDefault','localhostProfile':'a.json'}}",
	    E(INVALID, ".securityContext.seccompProfile.localhostProfile", NULL,
	      "can only be set when seccomp type is Localhost")),
	BAD("TestValidatePod/must not start with '../'",
	    ",'securityContext':{'seccompProfile':{'type':'Localhost','localhostProfile':'../a.json'}}",
	    E(INVALID, ".securityContext.seccompProfile.localhostProfile", "\"../a.json\"",
	      "must not contain '..'")),
	BAD("TestValidatePod/must be a relative path in a node-local seccomp profile",
	    ",'securityContext':{'seccompProfile':{'type':'Localhost','localhostProfile':'/a.json'}}",
	    E(INVALID, ".securityContext.seccompProfile.localhostProfile", "\"/a.json\"",
	      "must be a relative path")),
	/* ValidateAppArmorProfileField */
	OK("TestValidatePod/runtime default AppArmor profile for a pod",
	   ",'securityContext':{'appArmorProfile':{'type':'RuntimeDefault'}}"),
	OK("TestValidatePod/unconfined AppArmor profile for a pod",
	   ",'securityContext':{'appArmorProfile':{'type':'Unconfined'}}"),
	OK("TestValidatePod/localhost AppArmor profile for a pod",
	   ",'securityContext':{'appArmorProfile':{'type':'Localhost','localhostProfile':"
	   "'example-org/application-foo'}}"),
	BAD("TestValidatePod/unsupported pod AppArmor profile type",
	    ",'securityContext':{'appArmorProfile':{'type':'test'}}",
	    E(UNSUPPORTED, ".securityContext.appArmorProfile.type", "\"test\"",
	      "supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\"")),
	BAD("TestValidatePod/missing pod AppArmor profile type",
	    ",'securityContext':{'appArmorProfile':{'type':''}}",
	    E(REQUIRED, ".securityContext.appArmorProfile.type", NULL,
	      "type is required when appArmorProfile is set")),
	BAD("TestValidatePod/missing AppArmor localhost profile",
	    ",'securityContext':{'appArmorProfile':{'type':'Localhost'}}",
	    E(REQUIRED, ".securityContext.appArmorProfile.localhostProfile", NULL,
	      "must be set when AppArmor type is Localhost")),
	BAD("TestValidatePod/empty AppArmor localhost profile",
	    ",'securityContext':{'appArmorProfile':{'type':'Localhost','localhostProfile':''}}",
	    E(REQUIRED, ".securityContext.appArmorProfile.localhostProfile", NULL,
	      "must be set when AppArmor type is Localhost")),
	BAD("TestValidatePod/invalid AppArmor localhost profile type",
	    ",'securityContext':{'appArmorProfile':{'type':'RuntimeDefault','localhostProfile':"
	    "'foo-bar'}}",
	    E(INVALID, ".securityContext.appArmorProfile.localhostProfile", "\"foo-bar\"",
	      "can only be set when AppArmor type is Localhost")),
	BAD("TestValidatePod/invalid AppArmor localhost profile",
	    ",'securityContext':{'appArmorProfile':{'type':'Localhost','localhostProfile':'foo-bar '}}",
	    E(INVALID, ".securityContext.appArmorProfile.localhostProfile", "\"foo-bar \"",
	      "must not be padded with whitespace")),
};

/* TestValidatePod: "too long AppArmor localhost profile" */
static void apparmor_profile_too_long(void **state)
{
	(void)state;
	char members[4200];
	int n = snprintf(members, sizeof(members),
			 ",'securityContext':{'appArmorProfile':{'type':'Localhost','localhostProfile':'");
	memset(members + n, 'a', 4096);
	strcpy(members + n + 4096, "'}}");
	want w = { TP_FIELD_TOO_LONG, ".securityContext.appArmorProfile.localhostProfile", NULL,
		   "may not be more than 4095 bytes" };
	expect_members(members, &w, 1);
	members[n + 4095] = '\'';
	strcpy(members + n + 4096, "}}");
	expect_members(members, NULL, 0);
}

/* ------------------------------------------------------------------ os */

static const up_case os[] = {
	OK("TestValidateOS/OS field, featuregate, valid OS (linux)", ",'os':{'name':'linux'}"),
	OK("TestValidateOS/OS field, featuregate, valid OS (windows)", ",'os':{'name':'windows'}"),
	BAD("TestValidateOS/empty OS field, featuregate", ",'os':{}",
	    E(REQUIRED, ".os.name", NULL, "cannot be empty")),
	BAD("TestValidateOS/OS field, featuregate, empty OS", ",'os':{'name':''}",
	    E(REQUIRED, ".os.name", NULL, "cannot be empty")),
	BAD("TestValidateOS/OS field, featuregate, invalid OS", ",'os':{'name':'dummyOS'}",
	    E(UNSUPPORTED, ".os", "\"dummyOS\"", "supported values: \"linux\", \"windows\"")),
	OK("TestValidateWindowsPodSecurityContext/valid SC, windows, no error",
	   ",'os':{'name':'windows'},'securityContext':{'windowsOptions':{'runAsUserName':'dummy'}}"),
	BAD("TestValidateWindowsPodSecurityContext/invalid SC, windows, error",
	    ",'os':{'name':'windows'},'securityContext':{'seLinuxOptions':{'role':'dummyRole'}}",
	    E(FORBIDDEN, ".securityContext.seLinuxOptions", NULL, WINDOWS)),
	OK("TestValidateLinuxPodSecurityContext/valid SC, linux, no error",
	   ",'os':{'name':'linux'},'securityContext':{'seLinuxOptions':{'user':'user','role':'role',"
	   "'type':'type','level':'level'},'runAsUser':1}"),
	BAD("TestValidateLinuxPodSecurityContext/invalid SC, linux, error",
	    ",'os':{'name':'linux'},'securityContext':{'windowsOptions':{'runAsUserName':'myUser'}}",
	    E(FORBIDDEN, ".securityContext.windowsOptions", NULL,
	      "windows options cannot be set for a linux pod")),
	ROW("validateLinux/a container's windowsOptions",
	    "{'os':{'name':'linux'},'containers':[{'name':'node','image':'pytorch','securityContext':"
	    "{'windowsOptions':{'runAsUserName':'u'}}}]}",
	    E(FORBIDDEN, ".containers[0].securityContext.windowsOptions", NULL,
	      "windows options cannot be set for a linux pod")),
	/* issue 29: os.name windows with Linux-only fields */
	ROW("validateWindows/the Pod's Linux-only fields",
	    "{'os':{'name':'windows'},'hostPID':true,'shareProcessNamespace':false,"
	    "'securityContext':{'fsGroup':1000,'runAsUser':1000},"
	    "'containers':[{'name':'node','image':'pytorch'}]}",
	    E(FORBIDDEN, ".hostPID", NULL, WINDOWS),
	    E(FORBIDDEN, ".securityContext.fsGroup", NULL, WINDOWS),
	    E(FORBIDDEN, ".shareProcessNamespace", NULL, WINDOWS),
	    E(FORBIDDEN, ".securityContext.runAsUser", NULL, WINDOWS)),
	ROW("validateWindows/more of the Pod's Linux-only fields",
	    "{'os':{'name':'windows'},'hostIPC':true,'securityContext':{'seccompProfile':"
	    "{'type':'RuntimeDefault'},'sysctls':[{'name':'kernel.pid_max','value':'1'}],"
	    "'supplementalGroups':[1000]},'containers':[{'name':'node','image':'pytorch'}]}",
	    E(FORBIDDEN, ".hostIPC", NULL, WINDOWS),
	    E(FORBIDDEN, ".securityContext.seccompProfile", NULL, WINDOWS),
	    E(FORBIDDEN, ".securityContext.sysctls", NULL, WINDOWS),
	    E(FORBIDDEN, ".securityContext.supplementalGroups", NULL, WINDOWS)),
	ROW("validateWindows/containers' Linux-only fields, init containers first",
	    "{'os':{'name':'windows'},'containers':[{'name':'node','image':'pytorch','securityContext':"
	    "{'privileged':false,'capabilities':{}}}],'initContainers':[{'name':'init','image':'i',"
	    "'securityContext':{'runAsGroup':1,'procMount':'Default'}}]}",
	    E(FORBIDDEN, ".initContainers[0].securityContext.procMount", NULL, WINDOWS),
	    E(FORBIDDEN, ".initContainers[0].securityContext.runAsGroup", NULL, WINDOWS),
	    E(FORBIDDEN, ".containers[0].securityContext.capabilities", NULL, WINDOWS),
	    E(FORBIDDEN, ".containers[0].securityContext.privileged", NULL, WINDOWS)),
};

/* ------------------------------------------------------------ Windows */

#define WO(x) ",'securityContext':{'windowsOptions':" x "}"
#define RUN_AS ".securityContext.windowsOptions.runAsUserName"
#define NODE_HP(b) "{'name':'node','image':'pytorch','securityContext':{'windowsOptions':" \
		   "{'hostProcess':" b "}}}"
#define INIT_HP(b) "{'name':'init','image':'i','securityContext':{'windowsOptions':" \
		   "{'hostProcess':" b "}}}"
#define ALL_HP "If pod contains any hostProcess containers then all containers must be HostProcess containers"

static const up_case windows[] = {
	/* TestValidateWindowsSecurityContextOptions, on the Pod's securityContext */
	OK("TestValidateWindowsSecurityContextOptions/an empty struct", WO("{}")),
	OK("TestValidateWindowsSecurityContextOptions/a valid input",
	   WO("{'gmsaCredentialSpecName':'dummy-gmsa-crep-spec-name','gmsaCredentialSpec':"
	      "'dummy-gmsa-crep-spec-contents'}")),
	BAD("TestValidateWindowsSecurityContextOptions/a GMSA cred spec name that is not a valid "
	    "resource name",
	    WO("{'gmsaCredentialSpecName':'not_a-valid-gmsa-crep-spec-name'}"),
	    E(INVALID, ".securityContext.windowsOptions.gmsaCredentialSpecName",
	      "\"not_a-valid-gmsa-crep-spec-name\"", SUBDOMAIN_MSG)),
	BAD("TestValidateWindowsSecurityContextOptions/empty GMSA cred spec contents",
	    WO("{'gmsaCredentialSpec':''}"),
	    E(INVALID, ".securityContext.windowsOptions.gmsaCredentialSpec", "\"\"",
	      "gmsaCredentialSpec cannot be an empty string")),
	OK("TestValidateWindowsSecurityContextOptions/a valid RunAsUserName",
	   WO("{'runAsUserName':'Container. User'}")),
	OK("TestValidateWindowsSecurityContextOptions/a valid RunAsUserName with NetBios Domain",
	   WO("{'runAsUserName':'Network Service\\\\Container. User'}")),
	OK("TestValidateWindowsSecurityContextOptions/a valid RunAsUserName with DNS Domain",
	   WO("{'runAsUserName':'fOofOofOofOofOofOofOofOofOofOofOofOofOofOofOofOofOofOofOofOo.liSH"
	      "\\\\Container. User'}")),
	OK("TestValidateWindowsSecurityContextOptions/a valid RunAsUserName with a long single "
	   "segment DNS Domain",
	   WO("{'runAsUserName':'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\\\Container. User'}")),
	BAD("TestValidateWindowsSecurityContextOptions/an empty RunAsUserName",
	    WO("{'runAsUserName':''}"),
	    E(INVALID, RUN_AS, "\"\"", "runAsUserName cannot be an empty string")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName containing a control character",
	    WO("{'runAsUserName':'Container\\tUser'}"),
	    E(INVALID, RUN_AS, "\"Container\\tUser\"",
	      "runAsUserName cannot contain control characters")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName containing too many backslashes",
	    WO("{'runAsUserName':'Container\\\\Foo\\\\Lish'}"),
	    E(INVALID, RUN_AS, "\"Container\\\\Foo\\\\Lish\"",
	      "runAsUserName cannot contain more than one backslash")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName containing backslash but empty "
	    "Domain",
	    WO("{'runAsUserName':'\\\\User'}"),
	    E(INVALID, RUN_AS, NULL,
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName containing backslash but empty "
	    "User",
	    WO("{'runAsUserName':'Container\\u005c'}"), /* a backslash before the quote */
	    E(INVALID, RUN_AS, NULL, "runAsUserName's User cannot be empty")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName's NetBios Domain is too long",
	    WO("{'runAsUserName':'NetBios aaaaaaaa\\\\user'}"),
	    E(INVALID, RUN_AS, NULL,
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName's User cannot contain only "
	    "spaces or periods",
	    WO("{'runAsUserName':'... ...'}"),
	    E(INVALID, RUN_AS, "\"... ...\"",
	      "runAsUserName's User cannot contain only periods or spaces")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName's NetBios Domain cannot start "
	    "with a dot",
	    WO("{'runAsUserName':'.FooLish\\\\User'}"),
	    E(INVALID, RUN_AS, NULL,
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName's NetBios Domain cannot contain "
	    "invalid characters",
	    WO("{'runAsUserName':'Foo? Lish?\\\\User'}"),
	    E(INVALID, RUN_AS, NULL,
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName's DNS Domain cannot contain "
	    "invalid characters",
	    WO("{'runAsUserName':'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com-\\\\user'}"),
	    E(INVALID, RUN_AS, NULL,
	      "runAsUserName's Domain doesn't match the NetBios nor the DNS format")),
	BAD("TestValidateWindowsSecurityContextOptions/RunAsUserName's User cannot contain invalid "
	    "characters",
	    WO("{'runAsUserName':'Container/User'}"),
	    E(INVALID, RUN_AS, "\"Container/User\"",
	      "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]")),
	/* TestValidateWindowsHostProcessPod (upstream's init container is named
	 * as its container; here apart, two containers of one name being an
	 * error of their own) */
	BAD("TestValidateWindowsHostProcessPod/Spec with feature enabled, pod-wide HostProcess=true, "
	    "and HostNetwork unset should not validate",
	    WO("{'hostProcess':true}"),
	    E(INVALID, ".hostNetwork", "false",
	      "hostNetwork must be true if pod contains any hostProcess containers")),
	OK("TestValidateWindowsHostProcessPod/Spec with feature enabled, pod-wide HostProcess=ture, "
	   "and HostNetwork set should validate",
	   ",'hostNetwork':true" WO("{'hostProcess':true}")),
	ROW("TestValidateWindowsHostProcessPod/Spec with feature enabled, pod-wide HostProcess=nil, "
	    "HostNetwork set, and all containers setting HostProcess=true should validate",
	    "{'hostNetwork':true,'containers':[" NODE_HP("true") "],'initContainers':["
	    INIT_HP("true") "]}", { 0 }),
	ROW("TestValidateWindowsHostProcessPod/Pods with feature enabled, some containers setting "
	    "HostProcess=true, and others setting HostProcess=false should not validate",
	    "{'hostNetwork':true,'containers':[" NODE_HP("true") "],'initContainers':["
	    INIT_HP("false") "]}",
	    E(INVALID, "", "\"\"", ALL_HP)),
	ROW("TestValidateWindowsHostProcessPod/Spec with feature enabled, some containers setting "
	    "HostProcess=true, and other leaving HostProcess unset should not validate",
	    "{'hostNetwork':true,'containers':[" NODE_HP("true") "],'initContainers':"
	    "[{'name':'init','image':'i'}]}",
	    E(INVALID, "", "\"\"", ALL_HP)),
	ROW("TestValidateWindowsHostProcessPod/Spec with feature enabled, pod-wide HostProcess=false, "
	    "some contaienrs setting HostProccess=true should not validate",
	    "{'hostNetwork':true,'securityContext':{'windowsOptions':{'hostProcess':false}},"
	    "'containers':[" NODE_HP("true") "],'initContainers':[{'name':'init','image':'i'}]}",
	    E(INVALID, ".containers[0].securityContext.windowsOptions.hostProcess", "true",
	      "pod hostProcess value must be identical if both are specified, was false"),
	    E(INVALID, "", "\"\"", ALL_HP)),
	ROW("TestValidateWindowsHostProcessPod/Pod's HostProcess set to true but all containers "
	    "override to false should not validate",
	    "{'hostNetwork':true,'securityContext':{'windowsOptions':{'hostProcess':true}},"
	    "'containers':[" NODE_HP("false") "]}",
	    E(INVALID, ".containers[0].securityContext.windowsOptions.hostProcess", "false",
	      "pod hostProcess value must be identical if both are specified, was true")),
};

/* ------------------------------------------------------------ affinity */

static const up_case affinity[] = {
	OK("TestValidatePod/serialized node affinity requirements",
	   ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	   "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'key2','operator':'In','values':"
	   "['value1','value2']}],'matchFields':[{'key':'metadata.name','operator':'In','values':"
	   "['host1']}]}]},'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':10,"
	   "'preference':{'matchExpressions':[{'key':'foo','operator':'In','values':['bar']}]}}]}}"),
	OK("TestValidatePod/serialized node affinity requirements, II (any label value)",
	   ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	   "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'k','operator':'Gt','values':"
	   "['-1 not a label value']},{'key':'k','operator':'Exists'}]}]}}}"),
	BAD("TestValidatePod/invalid node selector requirement in node affinity, operator can't be null",
	    ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'key1'}]}]}}}",
	    E(INVALID, NA_TERM ".matchExpressions[0].operator", "\"\"",
	      "not a valid selector operator")),
	BAD("TestValidatePod/invalid node selector requirement in node affinity, key is invalid",
	    ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "{'nodeSelectorTerms':[{'matchExpressions':[{'key':'invalid key ___@#','operator':"
	    "'Exists'}]}]}}}",
	    E(INVALID, NA_TERM ".matchExpressions[0].key", "\"invalid key ___@#\"", QUALIFIED_MSG)),
	BAD("TestValidatePod/invalid node field selector requirement in node affinity, more values "
	    "for field selector",
	    ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'In','values':"
	    "['host1','host2']}]}]}}}",
	    E(REQUIRED, NA_TERM ".matchFields[0].values", NULL,
	      "must be only one value when `operator` is 'In' or 'NotIn' for node field selector")),
	BAD("TestValidatePod/invalid node field selector requirement in node affinity, invalid "
	    "operator",
	    ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'Exists'}]}]}}}",
	    E(INVALID, NA_TERM ".matchFields[0].operator", "\"Exists\"",
	      "not a valid selector operator")),
	BAD("TestValidatePod/invalid node field selector requirement in node affinity, invalid key",
	    ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.namespace','operator':'In',"
	    "'values':['ns1']}]}]}}}",
	    E(INVALID, NA_TERM ".matchFields[0].key", "\"metadata.namespace\"",
	      "not a valid field selector key")),
	BAD("TestValidatePod/invalid preferredSchedulingTerm in node affinity, weight should be in "
	    "range 1-100",
	    ",'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
	    "[{'weight':199,'preference':{'matchExpressions':[{'key':'foo','operator':'In','values':"
	    "['bar']}]}}]}}",
	    E(INVALID, NA_PREF ".weight", "199", "must be in the range 1-100")),
	/* issue 29: empty nodeSelectorTerms */
	BAD("TestValidatePod/invalid requiredDuringSchedulingIgnoredDuringExecution node selector, "
	    "nodeSelectorTerms must have at least one term",
	    ",'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "{'nodeSelectorTerms':[]}}}",
	    E(REQUIRED, NA ".nodeSelectorTerms", NULL, "must have at least one node selector term")),
	BAD("TestValidatePod/invalid weight in preferredDuringSchedulingIgnoredDuringExecution in "
	    "pod affinity annotations, weight should be in range 1-100",
	    ",'affinity':{'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
	    "[{'weight':109,'podAffinityTerm':{'labelSelector':{'matchExpressions':[{'key':'key2',"
	    "'operator':'NotIn','values':['value1','value2']}]},'namespaces':['ns'],"
	    "'topologyKey':'region'}}]}}",
	    E(INVALID, PA_PREF ".weight", "109", "must be in the range 1-100")),
	BAD("TestValidatePod/invalid labelSelector in preferredDuringSchedulingIgnoredDuringExecution "
	    "in podaffinity annotations, values should be empty if the operator is Exists",
	    ",'affinity':{'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
	    "[{'weight':10,'podAffinityTerm':{'labelSelector':{'matchExpressions':[{'key':'key2',"
	    "'operator':'Exists','values':['value1','value2']}]},'namespaces':['ns'],"
	    "'topologyKey':'region'}}]}}",
	    E(FORBIDDEN, PAA_PREF ".podAffinityTerm.labelSelector.matchExpressions[0].values", NULL,
	      "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")),
	BAD("TestValidatePod/invalid namespaceSelector in preferredDuringSchedulingIgnoredDuring"
	    "Execution in podaffinity, In operator must include Values",
	    ",'affinity':{'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
	    "[{'weight':10,'podAffinityTerm':{'namespaceSelector':{'matchExpressions':[{'key':'key2',"
	    "'operator':'In'}]},'topologyKey':'region'}}]}}",
	    E(REQUIRED, PAA_PREF ".podAffinityTerm.namespaceSelector.matchExpressions[0].values", NULL,
	      "must be specified when `operator` is 'In' or 'NotIn'")),
	BAD("TestValidatePod/invalid name space in preferredDuringSchedulingIgnoredDuringExecution in "
	    "podaffinity annotations, namespace should be valid",
	    ",'affinity':{'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
	    "[{'weight':10,'podAffinityTerm':{'labelSelector':{'matchExpressions':[{'key':'key2',"
	    "'operator':'Exists'}]},'namespaces':['INVALID_NAMESPACE'],'topologyKey':'region'}}]}}",
	    E(INVALID, PA_PREF ".podAffinityTerm.namespace", "\"INVALID_NAMESPACE\"",
	      "a lowercase RFC 1123 label must consist of...")),
	BAD("TestValidatePod/invalid hard pod affinity, empty topologyKey is not allowed for hard pod "
	    "affinity",
	    ",'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "[{'labelSelector':{'matchExpressions':[{'key':'key2','operator':'In','values':"
	    "['value1','value2']}]},'namespaces':['ns']}]}}",
	    E(REQUIRED, PA_REQ ".topologyKey", NULL, "can not be empty"),
	    E(INVALID, PA_REQ ".topologyKey", "\"\"", "name part must be non-empty"),
	    E(INVALID, PA_REQ ".topologyKey", "\"\"", QUALIFIED_MSG)),
	BAD("TestValidatePod/invalid soft pod anti-affinity, empty topologyKey is not allowed for soft "
	    "pod anti-affinity",
	    ",'affinity':{'podAntiAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
	    "[{'weight':10,'podAffinityTerm':{'labelSelector':{'matchExpressions':[{'key':'key2',"
	    "'operator':'Exists'}]},'topologyKey':''}}]}}",
	    E(REQUIRED, PAA_PREF ".podAffinityTerm.topologyKey", NULL, "can not be empty"),
	    E(INVALID, PAA_PREF ".podAffinityTerm.topologyKey", "\"\"", "name part must be non-empty"),
	    E(INVALID, PAA_PREF ".podAffinityTerm.topologyKey", "\"\"", QUALIFIED_MSG)),
	BAD("TestValidatePod/invalid hard pod affinity, key in MatchLabelKeys isn't correctly defined",
	    ",'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "[{'labelSelector':{'matchExpressions':[{'key':'key','operator':'In','values':['v']}]},"
	    "'topologyKey':'k8s.io/zone','matchLabelKeys':['/simple']}]}}",
	    E(INVALID, PA_REQ ".matchLabelKeys[0]", "\"/simple\"", "prefix part must be non-empty...")),
	BAD("TestValidatePod/invalid hard pod anti-affinity, key in MismatchLabelKeys isn't correctly "
	    "defined",
	    ",'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "[{'labelSelector':{'matchExpressions':[{'key':'key','operator':'NotIn','values':['v']}]},"
	    "'topologyKey':'k8s.io/zone','mismatchLabelKeys':['/simple']}]}}",
	    E(INVALID, PAA_REQ ".mismatchLabelKeys[0]", "\"/simple\"",
	      "prefix part must be non-empty...")),
	BAD("TestValidatePod/invalid hard pod affinity, key exists in both matchLabelKeys and "
	    "labelSelector",
	    ",'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "[{'labelSelector':{'matchExpressions':[{'key':'key','operator':'In','values':['value1']},"
	    "{'key':'key','operator':'NotIn','values':['value2']}]},'topologyKey':'k8s.io/zone',"
	    "'matchLabelKeys':['key']}]}}",
	    E(INVALID, PA_REQ "[0]", "\"key\"", "exists in both matchLabelKeys and labelSelector")),
	BAD("TestValidatePod/invalid soft pod affinity, key exists in both MatchLabelKeys and "
	    "MismatchLabelKeys",
	    ",'affinity':{'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
	    "[{'weight':10,'podAffinityTerm':{'labelSelector':{'matchExpressions':[{'key':'key',"
	    "'operator':'In','values':['value1']}]},'topologyKey':'k8s.io/zone','matchLabelKeys':"
	    "['samekey'],'mismatchLabelKeys':['samekey']}}]}}",
	    E(INVALID, PA_PREF ".podAffinityTerm.matchLabelKeys[0]", "\"samekey\"",
	      "exists in both matchLabelKeys and mismatchLabelKeys")),
	BAD("validateLabelKeys/matchLabelKeys without a labelSelector",
	    ",'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "[{'topologyKey':'k8s.io/zone','matchLabelKeys':['key']}]}}",
	    E(FORBIDDEN, PA_REQ ".matchLabelKeys", NULL,
	      "must not be specified when labelSelector is not set")),
	OK("TestValidatePod/MatchLabelKeys/MismatchLabelKeys in required PodAffinity",
	   ",'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	   "[{'labelSelector':{'matchExpressions':[{'key':'key','operator':'In','values':['value1']},"
	   "{'key':'key2','operator':'NotIn','values':['value2']}]},'topologyKey':'k8s.io/zone',"
	   "'matchLabelKeys':['key'],'mismatchLabelKeys':['key2']}]}}"),
	BAD("ValidateLabelSelector/label selector's matchLabels and values",
	    ",'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
	    "[{'labelSelector':{'matchLabels':{'a':'b c'},'matchExpressions':[{'key':'k',"
	    "'operator':'Bogus','values':['x y']}]},'topologyKey':'zone'}]}}",
	    E(INVALID, PA_REQ ".labelSelector.matchLabels", "\"b c\"",
	      "a valid label must be an empty string or consist of..."),
	    E(INVALID, PA_REQ ".labelSelector.matchExpressions[0].operator", "\"Bogus\"",
	      "not a valid selector operator"),
	    E(INVALID, PA_REQ ".labelSelector.matchExpressions[0].values[0]", "\"x y\"",
	      "a valid label must be an empty string or consist of...")),
};

/* ---------------------------------------------- topology, gates, more */

static const up_case scheduling[] = {
	OK("TestValidateTopologySpreadConstraints/all required fields ok",
	   ",'topologySpreadConstraints':[{" TSC_OK ",'minDomains':3}]"),
	/* issue 29: maxSkew 0 */
	BAD("TestValidateTopologySpreadConstraints/missing MaxSkew",
	    ",'topologySpreadConstraints':[{'topologyKey':'k8s.io/zone','whenUnsatisfiable':"
	    "'DoNotSchedule'}]",
	    E(INVALID, TSC ".maxSkew", "0", "must be greater than zero")),
	BAD("TestValidateTopologySpreadConstraints/negative MaxSkew",
	    ",'topologySpreadConstraints':[{'maxSkew':-1,'topologyKey':'k8s.io/zone',"
	    "'whenUnsatisfiable':'DoNotSchedule'}]",
	    E(INVALID, TSC ".maxSkew", "-1", "must be greater than zero")),
	OK("TestValidateTopologySpreadConstraints/can use MinDomains with ScheduleAnyway, when "
	   "MinDomains = nil",
	   ",'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k8s.io/zone',"
	   "'whenUnsatisfiable':'ScheduleAnyway'}]"),
	BAD("TestValidateTopologySpreadConstraints/negative minDomains is invalid",
	    ",'topologySpreadConstraints':[{" TSC_OK ",'minDomains':-1}]",
	    E(INVALID, TSC ".minDomains", "-1", "must be greater than zero")),
	BAD("TestValidateTopologySpreadConstraints/cannot use non-nil MinDomains with ScheduleAnyway",
	    ",'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k8s.io/zone',"
	    "'whenUnsatisfiable':'ScheduleAnyway','minDomains':10}]",
	    E(INVALID, TSC ".minDomains", "10",
	      "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway")),
	BAD("TestValidateTopologySpreadConstraints/use negative MinDomains with ScheduleAnyway(invalid)",
	    ",'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k8s.io/zone',"
	    "'whenUnsatisfiable':'ScheduleAnyway','minDomains':-1}]",
	    E(INVALID, TSC ".minDomains", "-1", "must be greater than zero"),
	    E(INVALID, TSC ".minDomains", "-1",
	      "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway")),
	BAD("TestValidateTopologySpreadConstraints/missing TopologyKey",
	    ",'topologySpreadConstraints':[{'maxSkew':1,'whenUnsatisfiable':'DoNotSchedule'}]",
	    E(REQUIRED, TSC ".topologyKey", NULL, "can not be empty")),
	BAD("TestValidateTopologySpreadConstraints/missing scheduling mode",
	    ",'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k8s.io/zone'}]",
	    E(UNSUPPORTED, TSC ".whenUnsatisfiable", "\"\"",
	      "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"")),
	BAD("TestValidateTopologySpreadConstraints/unsupported scheduling mode",
	    ",'topologySpreadConstraints':[{'maxSkew':1,'topologyKey':'k8s.io/zone',"
	    "'whenUnsatisfiable':'N/A'}]",
	    E(UNSUPPORTED, TSC ".whenUnsatisfiable", "\"N/A\"",
	      "supported values: \"DoNotSchedule\", \"ScheduleAnyway\"")),
	OK("TestValidateTopologySpreadConstraints/multiple constraints ok with all required fields",
	   ",'topologySpreadConstraints':[{" TSC_OK "},{'maxSkew':2,'topologyKey':'k8s.io/node',"
	   "'whenUnsatisfiable':'ScheduleAnyway'}]"),
	BAD("TestValidateTopologySpreadConstraints/multiple constraints missing TopologyKey on "
	    "partial ones",
	    ",'topologySpreadConstraints':[{'maxSkew':1,'whenUnsatisfiable':'ScheduleAnyway'},"
	    "{'maxSkew':2,'topologyKey':'k8s.io/zone','whenUnsatisfiable':'DoNotSchedule'}]",
	    E(REQUIRED, TSC ".topologyKey", NULL, "can not be empty")),
	BAD("TestValidateTopologySpreadConstraints/duplicate constraints",
	    ",'topologySpreadConstraints':[{" TSC_OK "},{'maxSkew':2,'topologyKey':'k8s.io/zone',"
	    "'whenUnsatisfiable':'DoNotSchedule'}]",
	    E(DUPLICATE, TSC ".{topologyKey, whenUnsatisfiable}", "\"{k8s.io/zone, DoNotSchedule}\"",
	      "")),
	OK("TestValidateTopologySpreadConstraints/supported policy name set on NodeAffinityPolicy and "
	   "NodeTaintsPolicy",
	   ",'topologySpreadConstraints':[{" TSC_OK ",'nodeAffinityPolicy':'Honor',"
	   "'nodeTaintsPolicy':'Ignore'}]"),
	BAD("TestValidateTopologySpreadConstraints/unsupported policy name set on NodeAffinityPolicy",
	    ",'topologySpreadConstraints':[{" TSC_OK ",'nodeAffinityPolicy':'Unknown',"
	    "'nodeTaintsPolicy':'Ignore'}]",
	    E(UNSUPPORTED, TSC ".nodeAffinityPolicy", "\"Unknown\"",
	      "supported values: \"Honor\", \"Ignore\"")),
	BAD("TestValidateTopologySpreadConstraints/unsupported policy name set on NodeTaintsPolicy",
	    ",'topologySpreadConstraints':[{" TSC_OK ",'nodeAffinityPolicy':'Honor',"
	    "'nodeTaintsPolicy':'Unknown'}]",
	    E(UNSUPPORTED, TSC ".nodeTaintsPolicy", "\"Unknown\"",
	      "supported values: \"Honor\", \"Ignore\"")),
	BAD("TestValidateTopologySpreadConstraints/key in MatchLabelKeys isn't correctly defined",
	    ",'topologySpreadConstraints':[{" TSC_OK ",'labelSelector':{},'matchLabelKeys':"
	    "['/simple']}]",
	    E(INVALID, TSC ".matchLabelKeys[0]", "\"/simple\"", "prefix part must be non-empty...")),
	BAD("TestValidateTopologySpreadConstraints/key exists in both matchLabelKeys and "
	    "labelSelector",
	    ",'topologySpreadConstraints':[{" TSC_OK ",'matchLabelKeys':['foo'],'labelSelector':"
	    "{'matchExpressions':[{'key':'foo','operator':'NotIn','values':['value1','value2']}]}}]",
	    E(INVALID, TSC ".matchLabelKeys[0]", "\"foo\"",
	      "exists in both matchLabelKeys and labelSelector")),
	BAD("TestValidateTopologySpreadConstraints/key in MatchLabelKeys is forbidden to be specified "
	    "when labelSelector is not set",
	    ",'topologySpreadConstraints':[{" TSC_OK ",'matchLabelKeys':['foo']}]",
	    E(FORBIDDEN, TSC ".matchLabelKeys", NULL,
	      "must not be specified when labelSelector is not set")),
	BAD("TestValidateTopologySpreadConstraints/invalid matchLabels set on labelSelector when "
	    "AllowInvalidTopologySpreadConstraintLabelSelector is false",
	    ",'topologySpreadConstraints':[{" TSC_OK ",'labelSelector':{'matchLabels':"
	    "{'NoUppercaseOrSpecialCharsLike=Equals':'foo'}}}]",
	    E(INVALID, TSC ".labelSelector.matchLabels", "\"NoUppercaseOrSpecialCharsLike=Equals\"",
	      QUALIFIED_MSG)),
	OK("TestValidateTopologySpreadConstraints/valid matchLabels set on labelSelector when "
	   "AllowInvalidTopologySpreadConstraintLabelSelector is false",
	   ",'topologySpreadConstraints':[{" TSC_OK ",'labelSelector':{'matchLabels':{'foo':'foo'}}}]"),
	/* TestValidateSchedulingGates */
	BAD("TestValidateSchedulingGates/empty string in gates",
	    ",'schedulingGates':[{'name':'foo'},{'name':''}]",
	    E(INVALID, ".schedulingGates[1]", "\"\"", "name part must be non-empty"),
	    E(INVALID, ".schedulingGates[1]", "\"\"", QUALIFIED_MSG)),
	OK("TestValidateSchedulingGates/legal gates", ",'schedulingGates':[{'name':'foo'},{'name':'bar'}]"),
	BAD("TestValidateSchedulingGates/illegal gates",
	    ",'schedulingGates':[{'name':'foo'},{'name':'\\nbar'}]",
	    E(INVALID, ".schedulingGates[1]", "\"\\nbar\"", QUALIFIED_MSG)),
	BAD("TestValidateSchedulingGates/duplicated gates (single duplication)",
	    ",'schedulingGates':[{'name':'foo'},{'name':'bar'},{'name':'bar'}]",
	    E(DUPLICATE, ".schedulingGates[2]", "\"bar\"", "")),
	BAD("TestValidateSchedulingGates/duplicated gates (multiple duplications)",
	    ",'schedulingGates':[{'name':'foo'},{'name':'bar'},{'name':'foo'},{'name':'baz'},"
	    "{'name':'foo'},{'name':'bar'}]",
	    E(DUPLICATE, ".schedulingGates[2]", "\"foo\"", ""),
	    E(DUPLICATE, ".schedulingGates[4]", "\"foo\"", ""),
	    E(DUPLICATE, ".schedulingGates[5]", "\"bar\"", "")),
	/* TestValidatePodReadinessGates */
	OK("TestValidatePodReadinessGates/single readiness gate",
	   ",'readinessGates':[{'conditionType':'example.com/condition'}]"),
	OK("TestValidatePodReadinessGates/multiple readiness gates",
	   ",'readinessGates':[{'conditionType':'example.com/condition1'},"
	   "{'conditionType':'example.com/condition2'}]"),
	BAD("TestValidatePodReadinessGates/invalid condition type",
	    ",'readinessGates':[{'conditionType':'invalid/condition/type'}]",
	    E(INVALID, ".readinessGates[0].conditionType", "\"invalid/condition/type\"", NULL)),
	/* TestValidatePodSpec: runtimeClassName (issue 29) */
	OK("TestValidatePodSpec/populate RuntimeClassName", ",'runtimeClassName':'valid-sandbox'"),
	BAD("TestValidatePodSpec/bad RuntimeClassName", ",'runtimeClassName':'invalid/sandbox'",
	    E(INVALID, ".runtimeClassName", "\"invalid/sandbox\"", SUBDOMAIN_MSG)),
	BAD("ValidateRuntimeClassName/empty", ",'runtimeClassName':''",
	    E(INVALID, ".runtimeClassName", "\"\"", SUBDOMAIN_MSG)),
	/* ValidatePreemptionPolicy */
	OK("ValidatePreemptionPolicy/Never", ",'preemptionPolicy':'Never'"),
	OK("ValidatePreemptionPolicy/PreemptLowerPriority", ",'preemptionPolicy':'PreemptLowerPriority'"),
	BAD("ValidatePreemptionPolicy/empty", ",'preemptionPolicy':''",
	    E(REQUIRED, ".preemptionPolicy", NULL, "")),
	BAD("ValidatePreemptionPolicy/unsupported", ",'preemptionPolicy':'Always'",
	    E(UNSUPPORTED, ".preemptionPolicy", "\"Always\"",
	      "supported values: \"PreemptLowerPriority\", \"Never\"")),
	/* TestValidateOverhead */
	OK("TestValidateOverhead/Valid Overhead for CPU + Memory",
	   ",'overhead':{'cpu':'10','memory':'10G'}"),
	BAD("TestValidateOverhead/Invalid Overhead Resources", ",'overhead':{'my.org':'10m'}",
	    E(INVALID, ".overhead.limits[my.org]", "\"my.org\"",
	      "must be a standard resource type or fully qualified"),
	    E(INVALID, ".overhead.limits[my.org]", "\"my.org\"",
	      "must be a standard resource for containers")),
};

/* The same rules reach a TrainJob's runtimePatches (issue 29: kube-apiserver
 * refused such Pods in every namespace): validatePodDNSConfig's DNSNone
 * without dnsConfig, shown at the patches, in a namespace without Pod
 * Security labels. */
static void runtime_patches_dns_none(void **state)
{
	(void)state;
	tp_store *store;
	assert_int_equal(tp_store_new(&store), TP_OK);
	cJSON *rt = runtime_with(S(""));
	cJSON *ns = tt_jsq("{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'team-a'}}");
	assert_int_equal(tp_store_put(store, rt), TP_OK);
	assert_int_equal(tp_store_put(store, ns), TP_OK);
	cJSON *tj = tt_jsq(
		"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':"
		"{'name':'train','namespace':'team-a'},'spec':{'runtimeRef':{'name':'rt'},"
		"'runtimePatches':[{'manager':'kueue.x-k8s.io/m','trainingRuntimeSpec':"
		"{'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':"
		"{'template':{'spec':{'dnsPolicy':'None'}}}}}]}}}}]}}");
	tp_options opt = { .profile = TP_PROFILE_STRICT, .store = store };
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_validate_trainjob(&opt, TP_OP_CREATE, tj, NULL, res), TP_OK);
	if (tp_result_error_count(res) != 1) {
		tt_dump(res);
		fail_msg("%zu errors, want 1", tp_result_error_count(res));
	}
	const tp_field_error *e = tp_result_error_at(res, 0);
	assert_int_equal(e->type, TP_FIELD_REQUIRED);
	assert_string_equal(e->path, "spec.runtimePatches");
	assert_non_null(strstr(e->detail, "must provide `dnsConfig` when `dnsPolicy` is None: the "
					  "patched template makes Job.batch \"train-node-0\" invalid "
					  "at spec.template.spec.dnsConfig"));
	tp_result_free(res);
	cJSON_Delete(tj);
	tp_store_free(store); /* it owns rt and ns */
}

static const up_case big[] = {
	UP_CASE("TestValidatePodDNSConfig/32 and 33 search paths", search_paths_32_and_33),
	UP_CASE("TestValidatePodDNSConfig/2048 and 2049 characters in search path list",
		search_list_2048_and_2049),
	UP_CASE("TestValidatePod/too long AppArmor localhost profile", apparmor_profile_too_long),
	UP_CASE("validatePodDNSConfig/DNSNone without dnsConfig in runtimePatches",
		runtime_patches_dns_none),
};

int main(void)
{
	int rc = UP_RUN("dns and host aliases", dns);
	rc |= UP_RUN("the Pod's securityContext", security);
	rc |= UP_RUN("os", os);
	rc |= UP_RUN("windows", windows);
	rc |= UP_RUN("affinity", affinity);
	rc |= UP_RUN("spreading, gates and the rest", scheduling);
	rc |= UP_RUN("long lists", big);
	return rc;
}
