/*
 * pod/containers.c — spec.containers and spec.initContainers as
 * kube-apiserver checks them (pkg/apis/core/validation validateContainers,
 * validateInitContainers, validateContainerCommon; v1.32, same texts in
 * v1.26 less the sidecar rules): at least one container, names that are
 * DNS-1123 labels and unique across both lists, an image, the enumerations
 * the API server's defaulting leaves alone when they are set, and what only
 * one kind of container may carry (probes and lifecycle for init containers
 * only with restartPolicy Always; restartPolicy for init containers only),
 * host ports unique across the regular containers (checkHostPortConflicts)
 * and, as the Job's Pods are checked (validateContainerOnlyForPod), an
 * image without leading or trailing whitespace.
 */
#include "policy/pod/members.h"

#include <ctype.h>
#include <string.h>

#define NAME_HINT "use a lower-case DNS-1123 label (\"node\", \"dataset-initializer\")"
#define INIT_ONLY "may not be set for init containers without restartPolicy=Always"

/* What the checks of one container need of the Pod spec. */
typedef struct pod_facts {
	const tp_pod_sm *spec;
	const tp_nameset *volumes; /* the valid volumes' names */
	bool host_network; /* the Pod's defaulting makes a hostPort of 0 its containerPort */
	long long grace;   /* terminationGracePeriodSeconds, bound of a sleep hook */
	tp_nameset sources; /* spec.volumes by name, filed for the first volumeDevices */
	bool sources_filed;
} pod_facts;

/* The Pod's volumes by name with their JSON, filed once (first wins). */
static const tp_nameset *sources_of(tp_podv *v, pod_facts *pf)
{
	if (pf->sources_filed)
		return &pf->sources;
	pf->sources_filed = true;
	tp__nameset_init(&pf->sources, v->arena);
	const cJSON *vols = tp__varr(pf->spec->volumes);
	for (const cJSON *vol = vols ? vols->child : NULL; vol; vol = vol->next)
		if (tp__nameset_put(&pf->sources, tp__mstr(vol, "name"), vol))
			v->rc = TP_ENOMEM;
	return &pf->sources;
}

static void enter(tp_podv *v, tp_pod_list list, const char *name)
{
	v->list = list;
	v->container = name;
	v->container_len = v->len;
}

static void leave(tp_podv *v)
{
	v->list = TP_POD_NONE;
	v->container = NULL;
	v->container_len = 0;
}

/* An enumeration the API server defaults when unset or "": only a value
 * outside the list is an error. m: the container's member of that name. */
static void check_enum(tp_podv *v, const cJSON *m, const char *member, const char *const *ok,
		       const char *supported)
{
	const char *s = tp__vstr(m);
	if (!s || !*s)
		return;
	for (; *ok; ok++)
		if (!strcmp(s, *ok))
			return;
	tp__podv_add(v, TP_FIELD_UNSUPPORTED, tp__podv_printf(v, ".%s", member),
		     tp__podv_quote(v, s), NULL, "supported values: %s", supported);
}

static void check_name(tp_podv *v, const char *name)
{
	if (!name || !*name) {
		tp__podv_add(v, TP_FIELD_REQUIRED, ".name", NULL, "name the container", "%s", "");
		return;
	}
	tp__pod_dns_label(v, ".name", name, NAME_HINT);
}

/* validateContainerOnlyForPod: not a rule of the template the Job holds,
 * but of each Pod the Job controller creates from it, so every one of them
 * would be refused. */
static void check_image_space(tp_podv *v, const char *image)
{
	size_t n = strlen(image);
	if (n && (isspace((unsigned char)image[0]) || isspace((unsigned char)image[n - 1])))
		tp__podv_add(v, TP_FIELD_INVALID, ".image", tp__podv_quote(v, image),
			     "write the image reference without surrounding spaces",
			     "must not have leading or trailing whitespace");
}

static void check_image(tp_podv *v, const char *image)
{
	if (!image || !*image)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".image", NULL, "give the container an image", "%s",
			     "");
	else
		check_image_space(v, image);
}

void tp__pod_check_container_image(tp_podv *v, const cJSON *c)
{
	check_image(v, tp__mstr(c, "image"));
}

static void check_resources(tp_podv *v, const cJSON *res)
{
	if (res) {
		size_t mark = tp__podv_push(v, ".resources");
		tp__pod_check_resources(v, res);
		tp__podv_pop(v, mark);
	}
}

void tp__pod_check_container_resources(tp_podv *v, const cJSON *c)
{
	check_resources(v, tp__mobj(c, "resources"));
}

/* validateContainerCommon. The parts a TrainJob's trainer settings rewrite
 * are marked for pod/plan.c. */
static void check_common(tp_podv *v, const tp_pod_cm *c, pod_facts *pf)
{
	static const char *const tmp[] = { "File", "FallbackToLogsOnError", NULL };
	static const char *const pull[] = { "Always", "IfNotPresent", "Never", NULL };
	check_name(v, tp__vstr(c->name));
	tp__podv_mark(v, c->self, TP_MARK_IMAGE_BEGIN);
	check_image(v, tp__vstr(c->image));
	tp__podv_mark(v, c->self, TP_MARK_IMAGE_END);
	check_enum(v, c->termination_message_policy, "terminationMessagePolicy", tmp,
		   "\"File\", \"FallbackToLogsOnError\"");
	tp__pod_check_ports(v, c->ports);
	tp__podv_mark(v, c->self, TP_MARK_ENV_BEGIN);
	tp__pod_check_env(v, c->env);
	tp__podv_mark(v, c->self, TP_MARK_ENV_END);
	tp__pod_check_env_from(v, c->env_from);
	tp__pod_check_cm_mounts(v, c, pf->volumes);
	if (tp__varr(c->volume_devices))
		tp__pod_check_devices(v, c->self, pf->volumes, sources_of(v, pf));
	check_enum(v, c->image_pull_policy, "imagePullPolicy", pull,
		   "\"Always\", \"IfNotPresent\", \"Never\"");
	tp__podv_mark(v, c->self, TP_MARK_RES_BEGIN);
	check_resources(v, tp__vobj(c->resources));
	tp__podv_mark(v, c->self, TP_MARK_RES_END);
	tp__pod_check_security_context(v, c->security_context);
}

/* The name against those seen before: regular containers against each
 * other, init containers against all. */
static void check_unique(tp_podv *v, tp_nameset *seen, const char *name)
{
	if (!name)
		name = "";
	if (tp__nameset_has(seen, name))
		tp__podv_add(v, TP_FIELD_DUPLICATE, ".name", tp__podv_quote(v, name),
			     "give each container and init container of the Pod its own name", "%s",
			     "");
	else if (*name && tp__nameset_add(seen, name))
		v->rc = TP_ENOMEM;
}

/* AccumulateUniqueHostPorts for container c at list[i]: each non-zero
 * hostPort by protocol (TCP when unset), host IP and number, against those
 * of seen. */
static void check_host_ports(tp_podv *v, const char *list, int i, tp_pod_list kind,
			     const tp_pod_cm *c, const pod_facts *pf, tp_nameset *seen)
{
	const cJSON *ports = tp__varr(c->ports);
	if (!ports || !ports->child)
		return; /* no path to make for a container without ports */
	size_t mark = tp__podv_push_index(v, list, i);
	enter(v, kind, tp__vstr(c->name));
	int j = 0;
	for (const cJSON *p = ports ? ports->child : NULL; p; p = p->next, j++) {
		long long port = 0, cport = 0;
		tp__mint(p, "hostPort", &port);
		if (!port && pf->host_network && tp__mint(p, "containerPort", &cport))
			port = cport;
		if (!port)
			continue;
		const char *proto = tp__mstr(p, "protocol");
		const char *ip = tp__mstr(p, "hostIP");
		const char *key = tp__podv_printf(v, "%s/%s/%lld", proto && *proto ? proto : "TCP",
						  ip ? ip : "", port);
		if (!key)
			break;
		if (tp__nameset_has(seen, key))
			tp__podv_add(v, TP_FIELD_DUPLICATE,
				     tp__podv_printf(v, ".ports[%d].hostPort", j),
				     tp__podv_quote(v, key),
				     "use each host port once per protocol and host IP, or drop hostPort",
				     "%s", "");
		else if (tp__nameset_add(seen, key))
			v->rc = TP_ENOMEM;
	}
	leave(v);
	tp__podv_pop(v, mark);
}

/* seen: the names of the containers before c, which c's joins when a
 * container follows it (later). */
static void check_regular(tp_podv *v, const tp_pod_cm *c, int i, pod_facts *pf,
			  tp_nameset *seen, bool later)
{
	size_t mark = tp__podv_push_index(v, ".containers", i);
	const char *name = tp__vstr(c->name);
	enter(v, TP_POD_CONTAINERS, name);
	check_common(v, c, pf);
	/* regular containers: "" is a name like any other for uniqueness */
	if (tp__nameset_has(seen, name ? name : ""))
		tp__podv_add(v, TP_FIELD_DUPLICATE, ".name", tp__podv_quote(v, name ? name : ""),
			     "give each container of the Pod its own name", "%s", "");
	else if (later && tp__nameset_add(seen, name ? name : ""))
		v->rc = TP_ENOMEM;
	tp__pod_check_cm_probes(v, c, pf->grace);
	if (tp__vset(c->restart_policy))
		tp__podv_add(v, TP_FIELD_FORBIDDEN, ".restartPolicy", NULL,
			     "set restartPolicy on init containers only",
			     "may not be set for non-init containers");
	leave(v);
	tp__podv_pop(v, mark);
}

/* What only a sidecar (restartPolicy Always) may carry, checked as a
 * regular container's; forbidden to any other init container. */
static void check_init_hooks(tp_podv *v, const tp_pod_cm *c, bool always, long long grace)
{
	static const char *const only_always[] = { "lifecycle", "livenessProbe", "readinessProbe",
						   "startupProbe" };
	if (always) {
		tp__pod_check_cm_probes(v, c, grace);
		return;
	}
	const cJSON *const members[] = { c->lifecycle, c->liveness_probe, c->readiness_probe,
					 c->startup_probe };
	for (int k = 0; k < 4; k++)
		if (tp__vset(members[k]))
			tp__podv_add(v, TP_FIELD_FORBIDDEN, tp__podv_printf(v, ".%s", only_always[k]),
				     NULL,
				     "drop it, or make the init container a sidecar "
				     "(restartPolicy: Always)",
				     INIT_ONLY);
}

static void check_init(tp_podv *v, const cJSON *item, int i, pod_facts *pf, tp_nameset *seen)
{
	tp_pod_cm m, *c = &m;
	tp__pod_cm_fill(c, item);
	size_t mark = tp__podv_push_index(v, ".initContainers", i);
	const char *name = tp__vstr(c->name);
	enter(v, TP_POD_INIT, name);
	check_common(v, c, pf);
	bool always = false;
	const char *rp = tp__vstr(c->restart_policy);
	if (rp) {
		always = !strcmp(rp, "Always");
		if (!always)
			tp__podv_add(v, TP_FIELD_UNSUPPORTED, ".restartPolicy", tp__podv_quote(v, rp),
				     NULL, "supported values: \"Always\"");
	}
	check_unique(v, seen, name);
	leave(v);
	tp__podv_pop(v, mark);
	/* init containers run one at a time: each against itself only, and at
	 * index 0 whichever it is (upstream hands checkHostPortConflicts a
	 * one-container list with the list's path) */
	tp_nameset own;
	tp__nameset_init(&own, v->arena);
	check_host_ports(v, ".initContainers", 0, TP_POD_INIT, c, pf, &own);
	mark = tp__podv_push_index(v, ".initContainers", i);
	enter(v, TP_POD_INIT, name);
	check_init_hooks(v, c, always, pf->grace);
	leave(v);
	tp__podv_pop(v, mark);
}

int tp__pod_check_containers(tp_podv *v, const cJSON *spec, const tp_nameset *volumes)
{
	tp_pod_sm s;
	tp__pod_sm_fill(&s, spec);
	return tp__pod_check_sm_containers(v, &s, volumes);
}

int tp__pod_check_sm_containers(tp_podv *v, const tp_pod_sm *s, const tp_nameset *volumes)
{
	pod_facts pf = { .spec = s,
			 .volumes = volumes,
			 .host_network = cJSON_IsTrue(s->host_network),
			 .grace = tp__pod_grace_period(s->self) };
	const cJSON *cs = tp__varr(s->containers);
	tp_nameset regular, all;
	tp__nameset_init(&regular, v->arena);
	tp__nameset_init(&all, v->arena);
	if (!cs || !cs->child)
		tp__podv_add(v, TP_FIELD_REQUIRED, ".containers", NULL,
			     "give the Pod template at least one container", "%s", "");
	/* the sets of names are made only for the containers that look them
	 * up: the regular ones after each, the init containers (a set's first
	 * name made its table: 350 instructions a Pod of one container) */
	const cJSON *init = tp__varr(s->init_containers);
	bool inits = init && init->child;
	int i = 0;
	for (const cJSON *item = cs ? cs->child : NULL; item; item = item->next, i++) {
		tp_pod_cm c;
		tp__pod_cm_fill(&c, item);
		check_regular(v, &c, i, &pf, &regular, item->next != NULL);
		const char *name = tp__vstr(c.name);
		if (inits && name && tp__nameset_add(&all, name))
			v->rc = TP_ENOMEM;
	}
	tp_nameset host;
	tp__nameset_init(&host, v->arena);
	i = 0;
	for (const cJSON *item = cs ? cs->child : NULL; item; item = item->next, i++) {
		/* only its ports, and its name when it has some: lookups cost
		 * less than a walk */
		const cJSON *ports = tp_member(item, "ports");
		if (!tp__varr(ports) || !ports->child)
			continue;
		tp_pod_cm c = { .self = item, .name = tp_member(item, "name"), .ports = ports };
		check_host_ports(v, ".containers", i, TP_POD_CONTAINERS, &c, &pf, &host);
	}
	i = 0;
	for (const cJSON *c = init ? init->child : NULL; c; c = c->next, i++)
		check_init(v, c, i, &pf, &all);
	return v->rc;
}
