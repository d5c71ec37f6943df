/*
 * pod/defaults.c — a replicated job as kube-apiserver validates the Job
 * made from it and as Pod Security sees its Pods: what JobSet writes into
 * it (jobset 08dfbdfd: pkg/webhooks/jobset_webhook.go Default, then
 * pkg/controllers/jobset_controller.go constructJob), then what the API
 * server's defaulting writes into the Job (pkg/apis/batch/v1
 * zz_generated.defaults.go SetObjectDefaults_Job, v1.32) and what the Job
 * strategy's PrepareForCreate drops for the feature gates v1.32 has off by
 * default (pkg/api/pod/util.go DropDisabledTemplateFields), in that order,
 * so that the core checks and Pod Security see the object the API server
 * sees.
 *
 * Only what a verdict depends on is written: a template with none of it
 * (every shipped runtime) is checked where it is, not copied. A default
 * that only fills in a value the checks already read as filled in ("" or
 * unset is what the default makes it, pod.h) is left to them. Step by step
 * ("written": the pass writes it; "left": why no verdict depends on it):
 *
 * JobSet's webhook (Default): completionMode Indexed and restartPolicy
 *   OnFailure when unset: left, read so by pod/job.c (and "" by
 *   pod/spec.c); the rest of it is JobSet's own spec.
 * JobSet's controller (constructJob): subdomain, written over a template's
 *   own when DNS hostnames are on (network.enableDNSHostnames unset or
 *   true): network.subdomain, else the JobSet's name (the TrainJob's);
 *   dropped when neither is known (a runtime's own check: the name is each
 *   TrainJob's). Where the template has none it is left: JobSet's own
 *   checks (admission/jobset.c) hold network.subdomain and the name to a
 *   DNS-1035 label, which the Pod's DNS-1123 label rule passes. The
 *   jobset.sigs.k8s.io labels and annotations: left, valid values (names
 *   JobSet's checks hold, numbers, a hash); a template's own label of one
 *   of those keys, which they replace, is not looked for. suspend: left,
 *   no rule reads it. volumeClaimPolicies' volumes: read by
 *   pod/claims.c; exclusive placement's nodeSelector and toleration: left
 *   (only with its annotations; its nodeSelector value "<namespace>_<job>"
 *   can pass 63 characters, a denial this pass would add, not take away).
 * SetDefaults_Job: parallelism and completions are the trainer's builder's
 *   (tp_podv.pods). backoffLimit 6 (MaxInt32 with backoffLimitPerIndex),
 *   podReplacementPolicy, manualSelector, suspend: left, validateJobSpec
 *   accepts each default and holds only a set value to its rule.
 *   completionMode NonIndexed: never reached (JobSet's Indexed is first).
 *   A podFailurePolicy's onPodConditions status True: written (Required
 *   when "").
 * SetDefaults_PodSpec: dnsPolicy, restartPolicy: left, read as filled in.
 *   securityContext {}: left, nothing tells none from {}. schedulerName:
 *   left, no rule. terminationGracePeriodSeconds 30: written under a
 *   lifecycle sleep action (validateSleepAction bounds it by it), left
 *   elsewhere (its Required rule is read as filled in).
 * SetDefaults_Volume: emptyDir for a volume without a source: written
 *   (ValidateVolumes "must specify a volume type", Pod Security's
 *   restricted volume type "unknown"). An image volume's pullPolicy:
 *   ImageVolume is off (below).
 * SetDefaults_HostPathVolumeSource (type ""): the same value.
 * SetDefaults_{Secret,ConfigMap,DownwardAPI,Projected}VolumeSource
 *   (defaultMode 0644): left, inside 0..0777, and only a set mode is
 *   checked.
 * The iSCSI, RBD, azureDisk and scaleIO literals, SetDefaults_
 *   PersistentVolumeClaimSpec and SetDefaults_ResourceList of an ephemeral
 *   volume's claim: left, those sources' inner rules are not checked here
 *   (pod/volumes.c), and restricted Pod Security refuses the four.
 * SetDefaults_ObjectFieldSelector apiVersion v1: written in env,
 *   downwardAPI and projected volumes (validateObjectFieldSelector:
 *   Required, and the fieldPath is converted by it).
 * SetDefaults_ServiceAccountTokenProjection expirationSeconds 3600:
 *   written (unset is 0: "may not specify a duration less than 10
 *   minutes").
 * SetDefaults_Container: imagePullPolicy, terminationMessagePath and
 *   -Policy: left, read as filled in (Required when ""), no other rule
 *   reads them. A port's protocol TCP: written (Required when ""; the host
 *   ports' uniqueness compares it).
 * SetDefaults_ResourceList of a container's limits and requests, each
 *   rounded up to 1m: written for a quantity finer than that (a request
 *   0.1m over its limit is not over it once both are rounded).
 * SetDefaults_Probe: successThreshold 1: written in liveness and startup
 *   probes ("must be 1"); timeoutSeconds, periodSeconds, failureThreshold
 *   and a readiness probe's successThreshold: left, only held to >= 0,
 *   which 0 and their defaults both are.
 * SetDefaults_HTTPGetAction path "/", scheme HTTP: written in probes and
 *   lifecycle handlers (Required, Unsupported when ""). A gRPC probe's
 *   service "": left, no rule.
 * SetDefaults_EphemeralContainer: left, a template's ephemeral containers
 *   are refused whatever they hold.
 * Overhead and the Pod's resources: RuntimeClass admission's; the Pod's
 *   resources are dropped (below).
 * SetDefaults_Pod (requests from limits, enableServiceLinks, hostNetwork's
 *   host ports) is the Pod's, not the Job's: not applied, the Job's
 *   validation must not see it, and of Pod Security only hostPorts reads
 *   it, of a Pod hostNetwork already puts over the same level.
 *
 * Dropped as v1.32's registry drops them (dropDisabledFields, gates off by
 * default): hostUsers (UserNamespacesSupport), supplementalGroupsPolicy
 * (SupplementalGroupsPolicy), seLinuxChangePolicy (SELinuxChangePolicy),
 * the Pod's resources (PodLevelResources), resourceClaims and the
 * containers' resources.claims (DynamicResourceAllocation), resizePolicy
 * (InPlacePodVerticalScaling), a projection's clusterTrustBundle
 * (ClusterTrustBundleProjection), image volumes with their mounts
 * (ImageVolume); a procMount that is set becomes "Default" (ProcMountType).
 * The gates v1.32 has on (SidecarContainers, RecursiveReadOnlyMounts,
 * PodLifecycleSleepAction, the topology spread and affinity ones) drop
 * nothing.
 *
 * Cost: one read-only walk of a template the check would not copy (a copy
 * only when something is to be written), one writing walk of a copy it
 * makes anyway; callgrind, make bench's TrainJob review: 1,750
 * instructions of 98,600.
 */
#include "policy/core/quantity.h"
#include "policy/runtime/runtime.h"
#include "policy/pod/members.h"

#include <string.h>

/* One walk over a template: with write false it only learns whether
 * anything would change (the template is not touched), with write true it
 * changes it. Each rule is written once, for both. */
typedef struct pass {
	bool write;
	bool changed;
	int rc;
	bool sleep;              /* a lifecycle sleep action was seen */
	const tp_pod_jobset *js;
	tp_arena *arena;         /* for images, made at the first image volume */
	tp_nameset images;       /* the image volumes dropped, by name */
} pass;

/* A change is due: true when it is to be made now. */
static bool due(pass *p)
{
	p->changed = true;
	return p->write && !p->rc;
}

/* Nothing more to learn or to do. */
static bool done(const pass *p)
{
	return p->rc || (!p->write && p->changed);
}

static bool absent(const cJSON *v)
{
	return !v || cJSON_IsNull(v);
}

/* Unset, null or "" (a member of another type is the schema layer's). */
static bool unset_str(const cJSON *o, const char *k)
{
	const cJSON *v = tp_member(o, k);
	return absent(v) || (cJSON_IsString(v) && !*v->valuestring);
}

/* Unset, null or 0: what a Go int32 field reads as 0. */
static bool unset_int(const cJSON *o, const char *k)
{
	const cJSON *v = tp_member(o, k);
	long long n;
	return absent(v) || (tp_json_is_int(v, &n) && n == 0);
}

static void set_str(pass *p, cJSON *o, const char *k, const char *s)
{
	if (due(p))
		p->rc = tp__x_set_string(o, k, s);
}

static void set_num(pass *p, cJSON *o, const char *k, double n)
{
	if (due(p))
		p->rc = tp__x_set_number(o, k, n);
}

/* Drop o's member k, m when it was read already (tp_member(o, k)). */
static void drop_read(pass *p, cJSON *o, const char *k, const cJSON *m)
{
	if (!absent(m) && due(p))
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
}

static void drop(pass *p, cJSON *o, const char *k)
{
	drop_read(p, o, k, tp_member(o, k));
}

/* The members by one name, writable (the pass casts a template it only
 * reads: with write false nothing is written). */
static cJSON *obj(const cJSON *o, const char *k)
{
	return (cJSON *)tp__mobj(o, k);
}

static cJSON *items(const cJSON *o, const char *k)
{
	const cJSON *a = tp__marr(o, k);
	return a ? a->child : NULL;
}

/* ------------------------------------------------------------ handlers */

static void http_get(pass *p, const cJSON *handler)
{
	cJSON *h = obj(handler, "httpGet");
	if (!h)
		return;
	if (unset_str(h, "path"))
		set_str(p, h, "path", "/");
	if (unset_str(h, "scheme"))
		set_str(p, h, "scheme", "HTTP");
}

/* A probe; one: its successThreshold must be 1 (liveness, startup). */
static void probe(pass *p, const cJSON *m, bool one)
{
	cJSON *pr = (cJSON *)tp__vobj(m);
	if (!pr)
		return;
	if (one && unset_int(pr, "successThreshold"))
		set_num(p, pr, "successThreshold", 1);
	http_get(p, pr);
}

static void lifecycle(pass *p, const cJSON *m)
{
	static const char *const hooks[] = { "postStart", "preStop" };
	const cJSON *lc = tp__vobj(m);
	for (int k = 0; lc && k < 2; k++) {
		const cJSON *h = tp__mobj(lc, hooks[k]);
		http_get(p, h);
		p->sleep |= tp__mobj(h, "sleep") != NULL;
	}
}

/* ------------------------------------------------------------ containers */

static void field_ref(pass *p, const cJSON *holder)
{
	cJSON *f = obj(holder, "fieldRef");
	if (f && unset_str(f, "apiVersion"))
		set_str(p, f, "apiVersion", "v1");
}

/* Quantity.RoundUp(-3): to a whole milli, away from zero. */
static bool round_milli(tp_quantity *q)
{
	if (q->scale >= -3)
		return false;
	int64_t div = 1;
	for (int32_t s = q->scale; s < -3; s++)
		div *= 10;
	int64_t v = q->value / div;
	if (q->value % div)
		v += q->value > 0 ? 1 : -1;
	q->value = v;
	q->scale = -3;
	return true;
}

/* Could the quantity be finer than 1m? Only with a fraction, an exponent
 * or a micro or nano suffix: the others are not parsed (the common case). */
static bool maybe_fine(const cJSON *it)
{
	/* from 2^53 on every double is whole (and would not fit the cast) */
	double d = it->valuedouble;
	if (cJSON_IsNumber(it))
		return d > -9007199254740992.0 && d < 9007199254740992.0 && d != (double)(long long)d;
	return cJSON_IsString(it) && strpbrk(it->valuestring, ".eEun");
}

static void round_list(pass *p, const cJSON *list)
{
	cJSON *next;
	for (cJSON *it = list ? list->child : NULL; it && !done(p); it = next) {
		next = it->next;
		tp_quantity q;
		char text[TP_QUANTITY_MAX_TEXT];
		if (!maybe_fine(it) || tp__quantity_from_json(it, &q) || !round_milli(&q) || !due(p))
			continue;
		if (!tp__quantity_format(&q, text, sizeof(text)))
			p->rc = tp__x_set_string((cJSON *)list, it->string, text);
	}
}

static void resources(pass *p, const cJSON *m)
{
	cJSON *r = (cJSON *)tp__vobj(m);
	round_list(p, tp__mobj(r, "limits"));
	round_list(p, tp__mobj(r, "requests"));
	drop(p, r, "claims"); /* DynamicResourceAllocation */
}

/* The mounts of the image volumes dropped go with them. */
static void image_mounts(pass *p, const tp_pod_cm *c)
{
	cJSON *mounts = (cJSON *)tp__varr(c->volume_mounts);
	cJSON *next;
	for (cJSON *m = mounts && p->arena ? mounts->child : NULL; m; m = next) {
		next = m->next;
		const char *name = tp__mstr(m, "name");
		if (name && tp__nameset_has(&p->images, name) && due(p))
			cJSON_Delete(cJSON_DetachItemViaPointer(mounts, m));
	}
}

/* What a TrainJob's trainer settings rewrite in a container: env and
 * resources (tp__pod_defaults_due). */
static void trainer_parts(pass *p, const tp_pod_cm *c)
{
	const cJSON *env = tp__varr(c->env);
	for (const cJSON *ev = env ? env->child : NULL; ev && !done(p); ev = ev->next)
		field_ref(p, tp__mobj(ev, "valueFrom"));
	resources(p, c->resources);
}

/* The container's members are read in one walk (pod/members.h); what the
 * pass writes is inside them, or a member it drops after the last read. */
static void container(pass *p, const cJSON *o)
{
	tp_pod_cm c;
	tp__pod_cm_fill(&c, o);
	const cJSON *ports = tp__varr(c.ports);
	for (const cJSON *port = ports ? ports->child : NULL; port && !done(p); port = port->next)
		if (cJSON_IsObject(port) && unset_str(port, "protocol"))
			set_str(p, (cJSON *)port, "protocol", "TCP");
	trainer_parts(p, &c);
	probe(p, c.liveness_probe, true);
	probe(p, c.startup_probe, true);
	probe(p, c.readiness_probe, false);
	lifecycle(p, c.lifecycle);
	cJSON *sc = (cJSON *)tp__vobj(c.security_context);
	const char *pm = tp__mstr(sc, "procMount");
	if (pm && strcmp(pm, "Default")) /* ProcMountType */
		set_str(p, sc, "procMount", "Default");
	/* InPlacePodVerticalScaling */
	drop_read(p, (cJSON *)o, "resizePolicy", c.resize_policy);
	image_mounts(p, &c);
}

/* ------------------------------------------------------------ volumes */

/* ptr.AllPtrFieldsNil of the source: no member but its name (a member
 * Kubernetes does not know is pruned before admission). */
static bool sourceless(const cJSON *vol)
{
	for (const cJSON *m = vol->child; m; m = m->next)
		if (strcmp(m->string, "name") && !cJSON_IsNull(m))
			return false;
	return true;
}

static void downward_items(pass *p, const cJSON *src)
{
	for (const cJSON *it = items(src, "items"); it && !done(p); it = it->next)
		field_ref(p, it);
}

static void projected(pass *p, const cJSON *src)
{
	for (const cJSON *s = items(src, "sources"); s && !done(p); s = s->next) {
		downward_items(p, tp__mobj(s, "downwardAPI"));
		cJSON *token = obj(s, "serviceAccountToken");
		if (token && absent(tp_member(token, "expirationSeconds")))
			set_num(p, token, "expirationSeconds", 3600);
		drop(p, (cJSON *)s, "clusterTrustBundle"); /* ClusterTrustBundleProjection */
	}
}

/* An image volume is dropped, its name kept for its mounts (ImageVolume). */
static void drop_image(pass *p, cJSON *vols, cJSON *vol)
{
	if (!due(p))
		return;
	if (!p->arena) {
		if (tp_arena_new(&p->arena, 0)) {
			p->rc = TP_ENOMEM;
			return;
		}
		tp__nameset_init(&p->images, p->arena);
	}
	const char *name = tp__mstr(vol, "name");
	const char *kept = name ? tp_arena_strdup(p->arena, name) : NULL;
	if (name && (!kept || tp__nameset_add(&p->images, kept)))
		p->rc = TP_ENOMEM;
	cJSON_Delete(cJSON_DetachItemViaPointer(vols, vol));
}

static void volumes(pass *p, const cJSON *list)
{
	cJSON *vols = (cJSON *)tp__varr(list);
	cJSON *next;
	for (cJSON *vol = vols ? vols->child : NULL; vol && !done(p); vol = next) {
		next = vol->next;
		if (!cJSON_IsObject(vol))
			continue;
		if (!absent(tp_member(vol, "image"))) {
			drop_image(p, vols, vol);
			continue;
		}
		if (sourceless(vol) && due(p))
			p->rc = tp__x_set(vol, "emptyDir", cJSON_CreateObject());
		downward_items(p, tp__mobj(vol, "downwardAPI"));
		projected(p, tp__mobj(vol, "projected"));
	}
}

/* ------------------------------------------------------------ the Pod */

static void subdomain(pass *p, cJSON *spec, const cJSON *m)
{
	const char *own = tp__vstr(m);
	if (!p->js || !p->js->hostnames || !own || !*own)
		return;
	if (!p->js->subdomain)
		drop(p, spec, "subdomain");
	else if (strcmp(own, p->js->subdomain))
		set_str(p, spec, "subdomain", p->js->subdomain);
}

/* The Pod spec's members are read in one walk (pod/members.h): subdomain
 * is the only one the pass replaces, and read before; the ones it drops
 * are dropped after their last read. */
static void pod_spec(pass *p, cJSON *spec)
{
	tp_pod_sm s;
	tp__pod_sm_fill(&s, spec);
	subdomain(p, spec, s.subdomain);
	volumes(p, s.volumes);
	const cJSON *lists[] = { tp__varr(s.init_containers), tp__varr(s.containers) };
	for (int k = 0; k < 2; k++)
		for (const cJSON *c = lists[k] ? lists[k]->child : NULL; c && !done(p); c = c->next)
			if (cJSON_IsObject(c))
				container(p, c);
	if (p->sleep && absent(s.termination_grace_period_seconds))
		set_num(p, spec, "terminationGracePeriodSeconds", 30);
	static const char *const pod_sc[] = { "hostUsers", "supplementalGroupsPolicy",
					      "seLinuxChangePolicy" };
	cJSON *sc = (cJSON *)tp__vobj(s.security_context);
	for (int k = 0; sc && k < 3; k++)
		drop(p, sc, pod_sc[k]);
	drop_read(p, spec, "resources", s.resources);            /* PodLevelResources */
	drop_read(p, spec, "resourceClaims", s.resource_claims); /* DynamicResourceAllocation */
}

static void job_spec(pass *p, const cJSON *spec)
{
	const cJSON *pfp = tp__mobj(spec, "podFailurePolicy");
	for (const cJSON *r = items(pfp, "rules"); r && !done(p); r = r->next)
		for (const cJSON *c = items(r, "onPodConditions"); c && !done(p); c = c->next)
			if (cJSON_IsObject(c) && unset_str(c, "status"))
				set_str(p, (cJSON *)c, "status", "True");
	cJSON *pod = obj(tp__mobj(spec, "template"), "spec");
	if (pod && !done(p))
		pod_spec(p, pod);
}

/* ------------------------------------------------------------ entries */

void tp__pod_jobset_of(const cJSON *jobset_spec, const char *name, tp_pod_jobset *out)
{
	const cJSON *net = tp__mobj(jobset_spec, "network");
	const char *sub = tp__mstr(net, "subdomain");
	out->hostnames = !cJSON_IsFalse(tp_member(net, "enableDNSHostnames"));
	out->subdomain = sub && *sub ? sub : name && *name ? name : NULL;
}

static int run(cJSON *job_template, const tp_pod_jobset *js, bool write, bool *changed)
{
	pass p = { .write = write, .js = js };
	job_spec(&p, tp__mobj(job_template, "spec"));
	tp_arena_free(p.arena);
	*changed = p.changed;
	return p.rc;
}

bool tp__pod_defaults_due(const cJSON *job_template, const cJSON *container_of)
{
	pass p = { .write = false };
	if (container_of) {
		tp_pod_cm c;
		tp__pod_cm_fill(&c, container_of);
		trainer_parts(&p, &c);
	}
	else
		job_spec(&p, tp__mobj(job_template, "spec"));
	tp_arena_free(p.arena);
	return p.changed || p.rc;
}

int tp__pod_defaults(const cJSON *job_template, const tp_pod_jobset *js, cJSON **copy)
{
	bool changed;
	if (!*copy) {
		run((cJSON *)job_template, js, false, &changed);
		if (!changed)
			return TP_OK;
		if (!(*copy = cJSON_Duplicate(job_template, 1)))
			return TP_ENOMEM;
	}
	return run(*copy, js, true, &changed);
}
