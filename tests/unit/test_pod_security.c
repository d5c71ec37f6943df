/*
 * test_pod_security.c — Pod Security Admission, ported from
 * k8s.io/pod-security-admission v1.32: every check's cases of
 * policy/check_*_test.go under their upstream names (each check called at
 * the version the upstream test calls), api/helpers_test.go's
 * TestPolicyToEvaluate, and the registry's order, overrides and versions as
 * tp_psa_check_template applies them. Cases that need the
 * UserNamespacesPodSecurityStandards gate (off by default, and off here)
 * are not ported.
 */
#include "tests/unit/up_cases.h"

#include "policy/pod/psa.h"

#include <stdio.h>

typedef struct psa_row {
	tp__psa_check_fn fn;
	int variant;         /* the index of the version the upstream test calls */
	const char *pod;     /* {metadata, spec}, single-quoted JSON */
	bool allowed;
	const char *reason;
	const char *detail;
} psa_row;

static void run_check(void **state)
{
	const psa_row *r = *state;
	tp_arena *a;
	assert_int_equal(tp_arena_new(&a, 0), TP_OK);
	cJSON *pod = tt_jsq(r->pod);
	psa_ctx c;
	assert_int_equal(tp__psa_ctx_init(&c, tp_get(pod, "metadata"), tp_get(pod, "spec"), a), TP_OK);
	tp_psa_verdict out = { true, NULL, NULL };
	bool ok = r->fn(&c, r->variant, &out);
	assert_int_equal(c.rc, TP_OK);
	if (ok != r->allowed)
		fail_msg("allowed %d, want %d (%s: %s)", ok, r->allowed, out.reason ? out.reason : "",
			 out.detail ? out.detail : "");
	if (!r->allowed) {
		assert_string_equal(out.reason, r->reason);
		assert_string_equal(out.detail, r->detail);
	}
	cJSON_Delete(pod);
	tp_arena_free(a);
}

#define ROW(name, fn, variant, pod, allowed, reason, detail)                                  \
	UP_ROW(name, run_check,                                                               \
	       (&(const psa_row){ tp__psa_##fn, variant, pod, allowed, reason, detail }))
#define FORBID(name, fn, variant, pod, reason, detail) ROW(name, fn, variant, pod, false, reason, detail)
#define ALLOW(name, fn, variant, pod) ROW(name, fn, variant, pod, true, NULL, NULL)

#define C(name, sc) "{'name':'" name "','securityContext':" sc "}"
#define SPEC(x) "{'spec':{" x "}}"

static const up_case checks[] = {
	/* check_allowPrivilegeEscalation_test.go */
	FORBID("TestAllowPrivilegeEscalation_1_25/multiple containers", allow_privilege_escalation, 1,
	       SPEC("'containers':[{'name':'a'}," C("b", "{}") "," C("c", "{'allowPrivilegeEscalation':true}")
		    "," C("d", "{'allowPrivilegeEscalation':false}") "]"),
	       "allowPrivilegeEscalation != false",
	       "containers \"a\", \"b\", \"c\" must set securityContext.allowPrivilegeEscalation=false"),
	ALLOW("TestAllowPrivilegeEscalation_1_25/windows pod, admit without checking privilegeEscalation",
	      allow_privilege_escalation, 1, SPEC("'os':{'name':'windows'},'containers':[{'name':'a'}]")),
	FORBID("TestAllowPrivilegeEscalation_1_25/linux pod, reject if security context is not set",
	       allow_privilege_escalation, 1, SPEC("'os':{'name':'linux'},'containers':[{'name':'a'}]"),
	       "allowPrivilegeEscalation != false",
	       "container \"a\" must set securityContext.allowPrivilegeEscalation=false"),
	FORBID("TestAllowPrivilegeEscalation_1_8/multiple containers", allow_privilege_escalation, 0,
	       SPEC("'os':{'name':'windows'},'containers':[{'name':'a'}," C("b", "{}") ","
		    C("c", "{'allowPrivilegeEscalation':true}") "," C("d", "{'allowPrivilegeEscalation':false}") "]"),
	       "allowPrivilegeEscalation != false",
	       "containers \"a\", \"b\", \"c\" must set securityContext.allowPrivilegeEscalation=false"),
	/* check_appArmorProfile_test.go */
	ALLOW("TestCheckAppArmor_Allowed/container with default AppArmor + extra annotations", app_armor, 0,
	      "{'metadata':{'annotations':{'container.apparmor.security.beta.kubernetes.io/test':"
	      "'runtime/default','env':'prod'}},'spec':{}}"),
	ALLOW("TestCheckAppArmor_Allowed/container with local AppArmor + extra annotations", app_armor, 0,
	      "{'metadata':{'annotations':{'container.apparmor.security.beta.kubernetes.io/test':"
	      "'localhost/sec-profile01','env':'dev'}},'spec':{}}"),
	ALLOW("TestCheckAppArmor_Allowed/container with no AppArmor annotations", app_armor, 0,
	      "{'metadata':{'annotations':{'env':'dev'}},'spec':{}}"),
	ALLOW("TestCheckAppArmor_Allowed/container with no annotations", app_armor, 0, "{'spec':{}}"),
	ALLOW("TestCheckAppArmor_Allowed/pod with runtime default", app_armor, 0,
	      SPEC("'securityContext':{'appArmorProfile':{'type':'RuntimeDefault'}}")),
	ALLOW("TestCheckAppArmor_Allowed/container with localhost profile", app_armor, 0,
	      SPEC("'containers':[" C("foo", "{'appArmorProfile':{'type':'RuntimeDefault'}}") "]")),
	FORBID("TestCheckAppArmor_Forbidden/unconfined pod", app_armor, 0,
	       SPEC("'securityContext':{'appArmorProfile':{'type':'Unconfined'}}"),
	       "forbidden AppArmor profile", "pod must not set AppArmor profile type to \"Unconfined\""),
	FORBID("TestCheckAppArmor_Forbidden/unconfined container", app_armor, 0,
	       SPEC("'securityContext':{'appArmorProfile':{'type':'RuntimeDefault'}},'containers':["
		    C("foo", "{'appArmorProfile':{'type':'Unconfined'}}") "]"),
	       "forbidden AppArmor profile",
	       "container \"foo\" must not set AppArmor profile type to \"Unconfined\""),
	FORBID("TestCheckAppArmor_Forbidden/unconfined init container", app_armor, 0,
	       SPEC("'securityContext':{'appArmorProfile':{'type':'RuntimeDefault'}},'containers':"
		    "[{'name':'foo'}],'initContainers':[" C("bar", "{'appArmorProfile':{'type':'Unconfined'}}") "]"),
	       "forbidden AppArmor profile",
	       "container \"bar\" must not set AppArmor profile type to \"Unconfined\""),
	FORBID("TestCheckAppArmor_Forbidden/multiple containers", app_armor, 0,
	       "{'metadata':{'annotations':{"
	       "'container.apparmor.security.beta.kubernetes.io/':'bogus',"
	       "'container.apparmor.security.beta.kubernetes.io/a':'',"
	       "'container.apparmor.security.beta.kubernetes.io/b':'runtime/default',"
	       "'container.apparmor.security.beta.kubernetes.io/c':'localhost/',"
	       "'container.apparmor.security.beta.kubernetes.io/d':'localhost/foo',"
	       "'container.apparmor.security.beta.kubernetes.io/e':'unconfined',"
	       "'container.apparmor.security.beta.kubernetes.io/f':'unknown'}},'spec':{}}",
	       "forbidden AppArmor profiles",
	       "annotations must not set AppArmor profile type to "
	       "\"container.apparmor.security.beta.kubernetes.io/=\"bogus\"\", "
	       "\"container.apparmor.security.beta.kubernetes.io/e=\"unconfined\"\", "
	       "\"container.apparmor.security.beta.kubernetes.io/f=\"unknown\"\""),
	/* check_capabilities_baseline_test.go */
	FORBID("TestCapabilitiesBaseline/multiple containers", capabilities_baseline, 0,
	       SPEC("'containers':[" C("a", "{'capabilities':{'add':['FOO','BAR']}}") ","
		    C("b", "{'capabilities':{'add':['BAR','BAZ']}}") "]"),
	       "non-default capabilities",
	       "containers \"a\", \"b\" must not include \"BAR\", \"BAZ\", \"FOO\" in "
	       "securityContext.capabilities.add"),
	/* check_capabilities_restricted_test.go */
	FORBID("TestCapabilitiesRestricted_1_25/multiple containers", capabilities_restricted, 1,
	       SPEC("'containers':[" C("a", "{'capabilities':{'add':['FOO','BAR']}}") ","
		    C("b", "{'capabilities':{'add':['BAR','BAZ']}}") ","
		    C("c", "{'capabilities':{'add':['NET_BIND_SERVICE','CHOWN'],'drop':['ALL','FOO']}}") "]"),
	       "unrestricted capabilities",
	       "containers \"a\", \"b\" must set securityContext.capabilities.drop=[\"ALL\"]; containers "
	       "\"a\", \"b\", \"c\" must not include \"BAR\", \"BAZ\", \"CHOWN\", \"FOO\" in "
	       "securityContext.capabilities.add"),
	ALLOW("TestCapabilitiesRestricted_1_25/windows pod, admit without checking capabilities",
	      capabilities_restricted, 1, SPEC("'os':{'name':'windows'},'containers':[{'name':'a'}]")),
	FORBID("TestCapabilitiesRestricted_1_25/linux pod, reject if security context is not set",
	       capabilities_restricted, 1, SPEC("'os':{'name':'linux'},'containers':[{'name':'a'}]"),
	       "unrestricted capabilities",
	       "container \"a\" must set securityContext.capabilities.drop=[\"ALL\"]"),
	FORBID("TestCapabilitiesRestricted_1_22/multiple containers", capabilities_restricted, 0,
	       SPEC("'containers':[" C("a", "{'capabilities':{'add':['FOO','BAR']}}") ","
		    C("b", "{'capabilities':{'add':['BAR','BAZ']}}") ","
		    C("c", "{'capabilities':{'add':['NET_BIND_SERVICE','CHOWN'],'drop':['ALL','FOO']}}") "]"),
	       "unrestricted capabilities",
	       "containers \"a\", \"b\" must set securityContext.capabilities.drop=[\"ALL\"]; containers "
	       "\"a\", \"b\", \"c\" must not include \"BAR\", \"BAZ\", \"CHOWN\", \"FOO\" in "
	       "securityContext.capabilities.add"),
	/* check_hostNamespaces_test.go */
	FORBID("TestHostNamespaces/multiple host namespaces", host_namespaces, 0,
	       SPEC("'hostNetwork':true,'hostIPC':true,'hostPID':true"), "host namespaces",
	       "hostNetwork=true, hostPID=true, hostIPC=true"),
	/* check_hostPathVolumes_test.go */
	FORBID("TestHostPathVolumes/host path volumes", host_path_volumes, 0,
	       SPEC("'volumes':[{'name':'a','hostPath':{}},{'name':'b','hostPath':{}},"
		    "{'name':'c','emptyDir':{}}]"),
	       "hostPath volumes", "volumes \"a\", \"b\""),
	/* check_hostPorts_test.go */
	FORBID("TestHostPort/one container, one host port", host_ports, 0,
	       SPEC("'containers':[{'name':'a','ports':[{'hostPort':0}]},"
		    "{'name':'b','ports':[{'hostPort':0},{'hostPort':20}]}]"),
	       "hostPort", "container \"b\" uses hostPort 20"),
	FORBID("TestHostPort/multiple containers, multiple host port", host_ports, 0,
	       SPEC("'containers':[{'name':'a','ports':[{'hostPort':0}]},"
		    "{'name':'b','ports':[{'hostPort':0},{'hostPort':10},{'hostPort':20}]},"
		    "{'name':'c','ports':[{'hostPort':0},{'hostPort':10},{'hostPort':30}]}]"),
	       "hostPort", "containers \"b\", \"c\" use hostPorts 10, 20, 30"),
	/* check_privileged_test.go */
	FORBID("TestPrivileged/privileged", privileged, 0,
	       SPEC("'containers':[{'name':'a'}," C("b", "{}") "," C("c", "{'privileged':false}") ","
		    C("d", "{'privileged':true}") "," C("e", "{'privileged':true}") "]"),
	       "privileged", "containers \"d\", \"e\" must not set securityContext.privileged=true"),
	/* check_procMount_test.go (the case without the user-namespace relaxation) */
	FORBID("TestProcMount/procMount", proc_mount, 0,
	       SPEC("'hostUsers':false,'containers':[{'name':'a'}," C("b", "{}") ","
		    C("c", "{'procMount':'Default'}") "," C("d", "{'procMount':'Unmasked'}") ","
		    C("e", "{'procMount':'other'}") "]"),
	       "procMount",
	       "containers \"d\", \"e\" must not set securityContext.procMount to \"Unmasked\", \"other\""),
	/* check_restrictedVolumes_test.go */
	FORBID("TestRestrictedVolumes/host path volumes", restricted_volumes, 0,
	       SPEC("'volumes':[{'name':'a1','emptyDir':{}},{'name':'a2','secret':{}},"
		    "{'name':'a3','persistentVolumeClaim':{}},{'name':'a4','downwardAPI':{}},"
		    "{'name':'a5','configMap':{}},{'name':'a6','projected':{}},{'name':'a7','csi':{}},"
		    "{'name':'a8','ephemeral':{}},{'name':'b1','hostPath':{}},"
		    "{'name':'b2','gcePersistentDisk':{}},{'name':'b3','awsElasticBlockStore':{}},"
		    "{'name':'b4','gitRepo':{}},{'name':'b5','nfs':{}},{'name':'b6','iscsi':{}},"
		    "{'name':'b7','glusterfs':{}},{'name':'b8','rbd':{}},{'name':'b9','flexVolume':{}},"
		    "{'name':'b10','cinder':{}},{'name':'b11','cephfs':{}},{'name':'b12','flocker':{}},"
		    "{'name':'b13','fc':{}},{'name':'b14','azureFile':{}},{'name':'b15','vsphereVolume':{}},"
		    "{'name':'b16','quobyte':{}},{'name':'b17','azureDisk':{}},"
		    "{'name':'b18','photonPersistentDisk':{}},{'name':'b19','portworxVolume':{}},"
		    "{'name':'b20','scaleIO':{}},{'name':'b21','storageos':{}},{'name':'c1'}]"),
	       "restricted volume types",
	       "volumes \"b1\", \"b2\", \"b3\", \"b4\", \"b5\", \"b6\", \"b7\", \"b8\", \"b9\", \"b10\", "
	       "\"b11\", \"b12\", \"b13\", \"b14\", \"b15\", \"b16\", \"b17\", \"b18\", \"b19\", \"b20\", "
	       "\"b21\", \"c1\" use restricted volume types \"awsElasticBlockStore\", \"azureDisk\", "
	       "\"azureFile\", \"cephfs\", \"cinder\", \"fc\", \"flexVolume\", \"flocker\", "
	       "\"gcePersistentDisk\", \"gitRepo\", \"glusterfs\", \"hostPath\", \"iscsi\", \"nfs\", "
	       "\"photonPersistentDisk\", \"portworxVolume\", \"quobyte\", \"rbd\", \"scaleIO\", "
	       "\"storageos\", \"unknown\", \"vsphereVolume\""),
	/* check_runAsNonRoot_test.go */
	FORBID("TestRunAsNonRoot/no explicit runAsNonRoot", run_as_non_root, 0,
	       SPEC("'containers':[{'name':'a'}]"), "runAsNonRoot != true",
	       "pod or container \"a\" must set securityContext.runAsNonRoot=true"),
	FORBID("TestRunAsNonRoot/pod runAsNonRoot=false", run_as_non_root, 0,
	       SPEC("'securityContext':{'runAsNonRoot':false},'containers':[{'name':'a'}]"),
	       "runAsNonRoot != true", "pod must not set securityContext.runAsNonRoot=false"),
	FORBID("TestRunAsNonRoot/containers runAsNonRoot=false", run_as_non_root, 0,
	       SPEC("'securityContext':{'runAsNonRoot':true},'containers':[{'name':'a'}," C("b", "{}")
		    "," C("c", "{'runAsNonRoot':false}") "," C("d", "{'runAsNonRoot':false}") ","
		    C("e", "{'runAsNonRoot':true}") "," C("f", "{'runAsNonRoot':true}") "]"),
	       "runAsNonRoot != true",
	       "containers \"c\", \"d\" must not set securityContext.runAsNonRoot=false"),
	FORBID("TestRunAsNonRoot/pod nil, container fallthrough", run_as_non_root, 0,
	       SPEC("'containers':[{'name':'a'}," C("b", "{}") "," C("d", "{'runAsNonRoot':true}") ","
		    C("e", "{'runAsNonRoot':true}") "]"),
	       "runAsNonRoot != true",
	       "pod or containers \"a\", \"b\" must set securityContext.runAsNonRoot=true"),
	/* check_runAsUser_test.go */
	FORBID("TestRunAsUser/pod runAsUser=0", run_as_user, 0,
	       SPEC("'securityContext':{'runAsUser':0},'containers':[{'name':'a'}]"), "runAsUser=0",
	       "pod must not set runAsUser=0"),
	ALLOW("TestRunAsUser/pod runAsUser=non-zero", run_as_user, 0,
	      SPEC("'securityContext':{'runAsUser':1000},'containers':[{'name':'a'}]")),
	ALLOW("TestRunAsUser/pod runAsUser=nil", run_as_user, 0,
	      SPEC("'securityContext':{},'containers':[{'name':'a'}]")),
	FORBID("TestRunAsUser/containers runAsUser=0", run_as_user, 0,
	       SPEC("'securityContext':{'runAsUser':1000},'containers':[{'name':'a'}," C("b", "{}") ","
		    C("c", "{'runAsUser':0}") "," C("d", "{'runAsUser':0}") "," C("e", "{'runAsUser':1}")
		    "," C("f", "{'runAsUser':1}") "]"),
	       "runAsUser=0", "containers \"c\", \"d\" must not set runAsUser=0"),
	ALLOW("TestRunAsUser/containers runAsUser=non-zero", run_as_user, 0,
	      SPEC("'containers':[" C("c", "{'runAsUser':1}") "," C("d", "{'runAsUser':2}") "]")),
	/* check_seLinuxOptions_test.go (v1.31's list, as the test's pods use) */
	FORBID("TestSELinuxOptions/invalid pod and containers", se_linux, 1,
	       SPEC("'securityContext':{'seLinuxOptions':{'type':'foo','user':'bar','role':'baz'}},"
		    "'containers':[" C("a", "{'seLinuxOptions':{'type':'container_t'}}") ","
		    C("b", "{'seLinuxOptions':{'type':'container_init_t'}}") ","
		    C("c", "{'seLinuxOptions':{'type':'container_kvm_t'}}") ","
		    C("d", "{'seLinuxOptions':{'type':'container_engine_t'}}") ","
		    C("e", "{'seLinuxOptions':{'type':'bar'}}") "," C("f", "{'seLinuxOptions':{'user':'bar'}}")
		    "," C("g", "{'seLinuxOptions':{'role':'baz'}}") "]"),
	       "seLinuxOptions",
	       "pod and containers \"e\", \"f\", \"g\" set forbidden securityContext.seLinuxOptions: "
	       "types \"bar\", \"foo\"; user may not be set; role may not be set"),
	FORBID("TestSELinuxOptions/invalid pod", se_linux, 1,
	       SPEC("'securityContext':{'seLinuxOptions':{'type':'foo','user':'bar','role':'baz'}},"
		    "'containers':[" C("a", "{'seLinuxOptions':{'type':'container_t'}}") ","
		    C("d", "{'seLinuxOptions':{'type':'container_engine_t'}}") "]"),
	       "seLinuxOptions",
	       "pod set forbidden securityContext.seLinuxOptions: type \"foo\"; user may not be set; "
	       "role may not be set"),
	FORBID("TestSELinuxOptions/invalid containers", se_linux, 1,
	       SPEC("'securityContext':{'seLinuxOptions':{}},'containers':["
		    C("a", "{'seLinuxOptions':{'type':'container_t'}}") ","
		    C("e", "{'seLinuxOptions':{'type':'bar'}}") "," C("f", "{'seLinuxOptions':{'user':'bar'}}")
		    "," C("g", "{'seLinuxOptions':{'role':'baz'}}") "]"),
	       "seLinuxOptions",
	       "containers \"e\", \"f\", \"g\" set forbidden securityContext.seLinuxOptions: type \"bar\"; "
	       "user may not be set; role may not be set"),
	FORBID("TestSELinuxOptions/bad type", se_linux, 1,
	       SPEC("'securityContext':{'seLinuxOptions':{'type':'bad'}}"), "seLinuxOptions",
	       "pod set forbidden securityContext.seLinuxOptions: type \"bad\""),
	FORBID("TestSELinuxOptions/bad user", se_linux, 1,
	       SPEC("'securityContext':{'seLinuxOptions':{'user':'bad'}}"), "seLinuxOptions",
	       "pod set forbidden securityContext.seLinuxOptions: user may not be set"),
	FORBID("TestSELinuxOptions/bad role", se_linux, 1,
	       SPEC("'securityContext':{'seLinuxOptions':{'role':'bad'}}"), "seLinuxOptions",
	       "pod set forbidden securityContext.seLinuxOptions: role may not be set"),
	/* check_seccompProfile_baseline_test.go */
	FORBID("TestSeccompProfileBaseline_1_19/pod seccomp invalid", seccomp_baseline, 1,
	       SPEC("'securityContext':{'seccompProfile':{'type':'Unconfined'}}"), "seccompProfile",
	       "pod must not set securityContext.seccompProfile.type to \"Unconfined\""),
	FORBID("TestSeccompProfileBaseline_1_19/containers seccomp invalid", seccomp_baseline, 1,
	       SPEC("'containers':[{'name':'a'}," C("b", "{}") ","
		    C("c", "{'seccompProfile':{'type':'Unconfined'}}") ","
		    C("d", "{'seccompProfile':{'type':'Unconfined'}}") ","
		    C("e", "{'seccompProfile':{'type':'RuntimeDefault'}}") ","
		    C("f", "{'seccompProfile':{'type':'Localhost'}}") "]"),
	       "seccompProfile",
	       "containers \"c\", \"d\" must not set securityContext.seccompProfile.type to \"Unconfined\""),
	FORBID("TestSeccompProfileBaseline_1_0/pod seccomp invalid", seccomp_baseline, 0,
	       "{'metadata':{'annotations':{'seccomp.security.alpha.kubernetes.io/pod':'unconfined'}},"
	       "'spec':{}}",
	       "seccompProfile",
	       "forbidden annotation seccomp.security.alpha.kubernetes.io/pod=\"unconfined\""),
	FORBID("TestSeccompProfileBaseline_1_0/containers seccomp invalid", seccomp_baseline, 0,
	       "{'metadata':{'annotations':{'container.seccomp.security.alpha.kubernetes.io/a':'unconfined',"
	       "'container.seccomp.security.alpha.kubernetes.io/b':'unknown'}},"
	       "'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
	       "seccompProfile",
	       "forbidden annotations container.seccomp.security.alpha.kubernetes.io/a=\"unconfined\", "
	       "container.seccomp.security.alpha.kubernetes.io/b=\"unknown\""),
	FORBID("TestSeccompProfileBaseline_1_0/pod and containers seccomp invalid", seccomp_baseline, 0,
	       "{'metadata':{'annotations':{'seccomp.security.alpha.kubernetes.io/pod':'unconfined',"
	       "'container.seccomp.security.alpha.kubernetes.io/a':'unconfined',"
	       "'container.seccomp.security.alpha.kubernetes.io/b':'unknown'}},"
	       "'spec':{'containers':[{'name':'a'},{'name':'b'},{'name':'c'}]}}",
	       "seccompProfile",
	       "forbidden annotations container.seccomp.security.alpha.kubernetes.io/a=\"unconfined\", "
	       "container.seccomp.security.alpha.kubernetes.io/b=\"unknown\", "
	       "seccomp.security.alpha.kubernetes.io/pod=\"unconfined\""),
	/* check_seccompProfile_restricted_test.go */
	FORBID("TestSeccompProfileRestricted_1_25/no explicit seccomp", seccomp_restricted, 1,
	       SPEC("'containers':[{'name':'a'}]"), "seccompProfile",
	       "pod or container \"a\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" "
	       "or \"Localhost\""),
	FORBID("TestSeccompProfileRestricted_1_25/pod seccomp invalid", seccomp_restricted, 1,
	       SPEC("'securityContext':{'seccompProfile':{'type':'Unconfined'}},'containers':[{'name':'a'}]"),
	       "seccompProfile", "pod must not set securityContext.seccompProfile.type to \"Unconfined\""),
	FORBID("TestSeccompProfileRestricted_1_25/containers seccomp invalid", seccomp_restricted, 1,
	       SPEC("'securityContext':{'seccompProfile':{'type':'RuntimeDefault'}},'containers':["
		    "{'name':'a'}," C("b", "{}") "," C("c", "{'seccompProfile':{'type':'Unconfined'}}") ","
		    C("d", "{'seccompProfile':{'type':'Unconfined'}}") ","
		    C("e", "{'seccompProfile':{'type':'RuntimeDefault'}}") "]"),
	       "seccompProfile",
	       "containers \"c\", \"d\" must not set securityContext.seccompProfile.type to \"Unconfined\""),
	FORBID("TestSeccompProfileRestricted_1_25/pod nil, container fallthrough", seccomp_restricted, 1,
	       SPEC("'containers':[{'name':'a'}," C("b", "{}") ","
		    C("d", "{'seccompProfile':{'type':'RuntimeDefault'}}") "]"),
	       "seccompProfile",
	       "pod or containers \"a\", \"b\" must set securityContext.seccompProfile.type to "
	       "\"RuntimeDefault\" or \"Localhost\""),
	ALLOW("TestSeccompProfileRestricted_1_25/no explicit seccomp, windows Pod",
	      seccomp_restricted, 1, SPEC("'os':{'name':'windows'},'containers':[{'name':'a'}]")),
	FORBID("TestSeccompProfileRestricted_1_25/no explicit seccomp, linux pod", seccomp_restricted, 1,
	       SPEC("'os':{'name':'linux'},'containers':[{'name':'a'}]"), "seccompProfile",
	       "pod or container \"a\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" "
	       "or \"Localhost\""),
	FORBID("TestSeccompProfileRestricted_1_19/no explicit seccomp", seccomp_restricted, 0,
	       SPEC("'containers':[{'name':'a'}]"), "seccompProfile",
	       "pod or container \"a\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" "
	       "or \"Localhost\""),
	/* check_sysctls_test.go */
	FORBID("TestSysctls/forbidden sysctls", sysctls, 0,
	       SPEC("'securityContext':{'sysctls':[{'name':'a'},{'name':'b'}]}"), "forbidden sysctls",
	       "a, b"),
	FORBID("TestSysctls/new supported sysctls not supported: net.ipv4.ip_local_reserved_ports",
	       sysctls, 0,
	       SPEC("'securityContext':{'sysctls':[{'name':'net.ipv4.ip_local_reserved_ports','value':'1024-4999'}]}"),
	       "forbidden sysctls", "net.ipv4.ip_local_reserved_ports"),
	FORBID("TestSysctls/new supported sysctls not supported: net.ipv4.tcp_keepalive_time", sysctls,
	       0, SPEC("'securityContext':{'sysctls':[{'name':'net.ipv4.tcp_keepalive_time','value':'7200'}]}"),
	       "forbidden sysctls", "net.ipv4.tcp_keepalive_time"),
	FORBID("TestSysctls/new supported sysctls not supported: net.ipv4.tcp_rmem", sysctls, 0,
	       SPEC("'securityContext':{'sysctls':[{'name':'net.ipv4.tcp_rmem','value':'4096 87380 16777216'}]}"),
	       "forbidden sysctls", "net.ipv4.tcp_rmem"),
	FORBID("TestSysctls_1_27/forbidden sysctls", sysctls, 1,
	       SPEC("'securityContext':{'sysctls':[{'name':'a'},{'name':'b'}]}"), "forbidden sysctls",
	       "a, b"),
	ALLOW("TestSysctls_1_27/new supported sysctls", sysctls, 1,
	      SPEC("'securityContext':{'sysctls':[{'name':'net.ipv4.ip_local_reserved_ports','value':'1024-4999'}]}")),
	ALLOW("TestSysctls_1_29/new supported sysctls: net.ipv4.tcp_fin_timeout", sysctls, 2,
	      SPEC("'securityContext':{'sysctls':[{'name':'net.ipv4.tcp_fin_timeout','value':'60'}]}")),
	ALLOW("TestSysctls_1_32/new supported sysctls: net.ipv4.tcp_rmem", sysctls, 3,
	      SPEC("'securityContext':{'sysctls':[{'name':'net.ipv4.tcp_rmem','value':'4096 87380 16777216'}]}")),
	ALLOW("TestSysctls_1_32/new supported sysctls: net.ipv4.tcp_wmem", sysctls, 3,
	      SPEC("'securityContext':{'sysctls':[{'name':'net.ipv4.tcp_wmem','value':'4096 65536 16777216'}]}")),
	/* check_windowsHostProcess_test.go */
	FORBID("TestWindowsHostProcess/host process", windows_host_process, 0,
	       SPEC("'securityContext':{'windowsOptions':{'hostProcess':true}},'containers':[{'name':'a'},"
		    C("b", "{}") "," C("c", "{'windowsOptions':{}}") ","
		    C("d", "{'windowsOptions':{'hostProcess':false}}") ","
		    C("e", "{'windowsOptions':{'hostProcess':true}}") ","
		    C("f", "{'windowsOptions':{'hostProcess':true}}") "]"),
	       "hostProcess",
	       "pod and containers \"e\", \"f\" must not set securityContext.windowsOptions.hostProcess=true"),
};

/* ------------------------------------------------------ PolicyToEvaluate */

typedef struct policy_row {
	const char *labels; /* single-quoted JSON object of pod-security labels, short keys */
	const char *enforce, *warn, *audit; /* "restricted:latest", ... */
	bool err;
} policy_row;

static void lv_is(const tp_psa_lv *lv, const char *want)
{
	char buf[64];
	assert_int_equal(tp_psa_format(lv, buf, sizeof(buf)), TP_OK);
	assert_string_equal(buf, want);
}

static void run_policy(void **state)
{
	const policy_row *r = *state;
	/* short keys ("enforce") become pod-security.kubernetes.io/enforce */
	cJSON *short_labels = tt_jsq(r->labels), *labels = cJSON_CreateObject();
	for (const cJSON *l = short_labels->child; l; l = l->next) {
		char key[96];
		snprintf(key, sizeof(key), "pod-security.kubernetes.io/%s", l->string);
		cJSON_AddStringToObject(labels, key, l->valuestring);
	}
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	tp_psa_policy p;
	assert_int_equal(tp_psa_policy_of(labels, NULL, "ns", &p, res), TP_OK);
	lv_is(&p.enforce, r->enforce);
	lv_is(&p.warn, r->warn);
	lv_is(&p.audit, r->audit);
	assert_int_equal(tp_result_warning_count(res) > 0, r->err);
	tp_result_free(res);
	cJSON_Delete(labels);
	cJSON_Delete(short_labels);
}

#define P(name, labels, e, w, a, err)                                                          \
	UP_ROW("TestPolicyToEvaluate/" name, run_policy,                                       \
	       (&(const policy_row){ labels, e, w, a, err }))
#define PRIV "privileged:latest"

static const up_case policies[] = {
	P("simple enforce", "{'enforce':'baseline'}", "baseline:latest", "baseline:latest", PRIV, false),
	P("simple warn", "{'warn':'restricted'}", PRIV, "restricted:latest", PRIV, false),
	P("simple audit", "{'audit':'baseline'}", PRIV, PRIV, "baseline:latest", false),
	P("enforce & warn", "{'enforce':'baseline','warn':'restricted'}", "baseline:latest",
	  "restricted:latest", PRIV, false),
	P("enforce version", "{'enforce':'baseline','enforce-version':'v1.22'}", "baseline:v1.22",
	  "baseline:v1.22", PRIV, false),
	P("enforce version & warn-version",
	  "{'enforce':'baseline','enforce-version':'v1.22','warn-version':'latest'}", "baseline:v1.22",
	  "baseline:latest", PRIV, false),
	P("enforce & warn-version", "{'enforce':'baseline','warn-version':'v1.23'}", "baseline:latest",
	  "baseline:v1.23", PRIV, false),
	P("fully specd",
	  "{'enforce':'baseline','enforce-version':'v1.20','warn':'restricted','warn-version':'v1.21',"
	  "'audit':'restricted','audit-version':'v1.22'}",
	  "baseline:v1.20", "restricted:v1.21", "restricted:v1.22", false),
	P("enforce no warn", "{'enforce':'baseline','warn':'privileged'}", "baseline:latest", PRIV, PRIV,
	  false),
	P("enforce warn error", "{'enforce':'baseline','warn':'foo'}", "baseline:latest", PRIV, PRIV,
	  true),
	P("enforce error", "{'enforce':'foo'}", "restricted:latest", PRIV, PRIV, true),
};

/* ------------------------------------------------ registry and versions */

static const char *evaluate(const char *lv_text, const char *pod)
{
	static char out[4096];
	tp_psa_lv lv;
	char why[128];
	assert_int_equal(tp_psa_parse(lv_text, &lv, why, sizeof(why)), TP_OK);
	cJSON *p = tt_jsq(pod);
	tp_buf detail = TP_BUF_INIT(0);
	bool allowed;
	assert_int_equal(tp_psa_check_template(&lv, p, &detail, &allowed), TP_OK);
	snprintf(out, sizeof(out), "%s", allowed ? "allowed" : detail.data);
	tp_buf_free(&detail);
	cJSON_Delete(p);
	return out;
}

#define RESTRICTED_OK "{'name':'a','securityContext':{'allowPrivilegeEscalation':false," \
		      "'runAsNonRoot':true,'seccompProfile':{'type':'RuntimeDefault'},"     \
		      "'capabilities':{'drop':['ALL']}}}"

/* The message kube-apiserver gives for a plain container at restricted:latest:
 * baseline's checks first, then restricted's, each by ID. */
static void restricted_latest_order(void **state)
{
	(void)state;
	assert_string_equal(
		evaluate("restricted", "{'spec':{'hostNetwork':true,'containers':[{'name':'x'}]}}"),
		"host namespaces (hostNetwork=true), allowPrivilegeEscalation != false (container \"x\" "
		"must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
		"(container \"x\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != "
		"true (pod or container \"x\" must set securityContext.runAsNonRoot=true), "
		"seccompProfile (pod or container \"x\" must set securityContext.seccompProfile.type to "
		"\"RuntimeDefault\" or \"Localhost\")");
	assert_string_equal(evaluate("restricted:latest", "{'spec':{'containers':[" RESTRICTED_OK "]}}"),
			    "allowed");
	assert_string_equal(evaluate("privileged", "{'spec':{'hostPID':true}}"), "allowed");
}

/* restricted overrides capabilities_baseline from v1.22 and seccomp_baseline
 * from v1.19, and replaces hostPathVolumes by restrictedVolumes always. */
static void restricted_overrides(void **state)
{
	(void)state;
	const char *pod = "{'spec':{'volumes':[{'name':'h','hostPath':{'path':'/x'}}],"
			  "'containers':[{'name':'a','securityContext':{'allowPrivilegeEscalation':false,"
			  "'runAsNonRoot':true,'seccompProfile':{'type':'RuntimeDefault'},"
			  "'capabilities':{'add':['SYS_TIME'],'drop':['ALL']}}}]}}";
	assert_string_equal(evaluate("restricted:v1.22", pod),
			    "unrestricted capabilities (container \"a\" must not include \"SYS_TIME\" in "
			    "securityContext.capabilities.add), restricted volume types (volume \"h\" uses "
			    "restricted volume type \"hostPath\")");
	/* v1.21: capabilities_restricted did not exist, the baseline check speaks */
	assert_string_equal(evaluate("restricted:v1.21", pod),
			    "non-default capabilities (container \"a\" must not include \"SYS_TIME\" in "
			    "securityContext.capabilities.add), restricted volume types (volume \"h\" uses "
			    "restricted volume type \"hostPath\")");
	/* by ID: capabilities_baseline before hostPathVolumes */
	assert_string_equal(evaluate("baseline", pod),
			    "non-default capabilities (container \"a\" must not include \"SYS_TIME\" in "
			    "securityContext.capabilities.add), hostPath volumes (volume \"h\")");
}

/* A pinned version past the newest check evaluates as the newest; an old one
 * misses the checks that came later. */
static void versions_pin_checks(void **state)
{
	(void)state;
	const char *sysctl = "{'spec':{'securityContext':{'sysctls':[{'name':'net.ipv4.tcp_rmem'}]}}}";
	assert_string_equal(evaluate("baseline:v1.31", sysctl), "forbidden sysctls (net.ipv4.tcp_rmem)");
	assert_string_equal(evaluate("baseline:v1.32", sysctl), "allowed");
	assert_string_equal(evaluate("baseline:v1.99", sysctl), "allowed");
	const char *root = "{'spec':{'securityContext':{'runAsUser':0,'runAsNonRoot':true,"
			   "'seccompProfile':{'type':'RuntimeDefault'}},'containers':[{'name':'a',"
			   "'securityContext':{'allowPrivilegeEscalation':false,"
			   "'capabilities':{'drop':['ALL']}}}]}}";
	assert_string_equal(evaluate("restricted:v1.22", root), "allowed");
	assert_string_equal(evaluate("restricted:v1.23", root),
			    "runAsUser=0 (pod must not set runAsUser=0)");
}

static void parse_levels(void **state)
{
	(void)state;
	tp_psa_lv lv;
	char why[128];
	assert_int_equal(tp_psa_parse("baseline:v1.30", &lv, why, sizeof(why)), TP_OK);
	assert_int_equal(lv.level, TP_PSA_BASELINE);
	assert_int_equal(lv.minor, 30);
	assert_int_equal(tp_psa_parse("strict", &lv, why, sizeof(why)), TP_EINVAL);
	assert_string_equal(why, "level \"strict\": must be one of privileged, baseline, restricted");
	assert_int_equal(tp_psa_parse("restricted:1.30", &lv, why, sizeof(why)), TP_EINVAL);
	assert_string_equal(why, "version \"1.30\": must be \"latest\" or \"v1.x\"");
	assert_int_equal(tp_psa_parse("restricted:v1.01", &lv, why, sizeof(why)), TP_EINVAL);
	assert_int_equal(tp_psa_parse("restricted:v2.1", &lv, why, sizeof(why)), TP_EINVAL);
}

/* An invalid label is said as PSA's field error, as a warning naming the
 * namespace; the defaults stand for the modes without labels. */
static void bad_label_warning_and_defaults(void **state)
{
	(void)state;
	cJSON *labels = tt_jsq("{'pod-security.kubernetes.io/enforce-version':'1.30',"
			       "'pod-security.kubernetes.io/audit':'loose'}");
	tp_psa_policy defaults = { { TP_PSA_BASELINE, 28 }, { TP_PSA_BASELINE, 28 },
				   { TP_PSA_BASELINE, 28 } }, p;
	tp_result *res;
	assert_int_equal(tp_result_new(&res), TP_OK);
	assert_int_equal(tp_psa_policy_of(labels, &defaults, "team-a", &p, res), TP_OK);
	lv_is(&p.enforce, "baseline:latest");
	lv_is(&p.audit, "privileged:v1.28");
	lv_is(&p.warn, "baseline:v1.28");
	assert_true(tt_has_warning(res, "Namespace \"team-a\": metadata.labels[pod-security.kubernetes."
				        "io/enforce-version]: Invalid value: \"1.30\": must be \"latest\" "
				        "or \"v1.x\""));
	assert_true(tt_has_warning(res, "metadata.labels[pod-security.kubernetes.io/audit]: Invalid "
				        "value: \"loose\": must be one of privileged, baseline, restricted"));
	tp_result_free(res);
	cJSON_Delete(labels);
}

int main(void)
{
	const struct CMUnitTest own[] = {
		cmocka_unit_test(restricted_latest_order),
		cmocka_unit_test(restricted_overrides),
		cmocka_unit_test(versions_pin_checks),
		cmocka_unit_test(parse_levels),
		cmocka_unit_test(bad_label_warning_and_defaults),
	};
	int failed = UP_RUN("pod-security-admission policy checks", checks);
	failed += UP_RUN("pod-security-admission api", policies);
	failed += cmocka_run_group_tests(own, NULL, NULL);
	return failed;
}
