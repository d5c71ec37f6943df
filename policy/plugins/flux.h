/*
 * plugins/flux.h — what the Flux plugin (flux.c), its Pod parts
 * (flux_parts.c) and its scripts (flux_scripts.c) share, and the pieces its
 * tests call.
 */
#ifndef TP_FLUX_H
#define TP_FLUX_H

#include "policy/plugins/plugin.h"

#define TP_FLUX_INSTALLER   "flux-installer"
#define TP_FLUX_CONFIG_PATH "/etc/flux-config"

/* FLUX_VIEW_IMAGE, FLUX_NETWORK_DEVICE, FLUX_QUEUE_POLICY (flux_parts.c):
 * the defaults, then the trainer's node container's env entries with a
 * value, then the TrainJob's trainer env (an entry without a value sets
 * ""). node may hold the TrainJob's env already (the expansion's) or not
 * (the runtime's, which the Pod check reads): the TrainJob's win either
 * way. */
typedef struct tp__flux_settings {
	const char *view_image;
	const char *network_device;
	const char *queue_policy;
} tp__flux_settings;
void tp__flux_read_settings(const cJSON *node, const cJSON *trainer, tp__flux_settings *s);

/* The ConfigMap and Secret Flux names after the TrainJob tj. */
typedef struct tp__flux_names {
	char cm[300], secret[300];
} tp__flux_names;
void tp__flux_names_of(const char *tj, tp__flux_names *n);

/* What Flux adds to the Pods of the `node` job, in the expansion and in the
 * Pod check alike: the volumes, the installer, the node container's mounts
 * (node may be NULL). TP_ECONFLICT: the Pod has a flux-installer init
 * container already. */
int tp__flux_write_parts(cJSON *pod_spec, cJSON *node, const tp__flux_settings *s,
			 const tp__flux_names *n);
/* The same parts in the Pod check's copy of the `node` job (plugin.h). */
int tp__flux_pod_parts(tp_pod_parts *pp);

/* Upstream's templates, each "%s" a slot (flux_scripts.c). */
extern const char tp__flux_broker_toml[];
extern const char tp__flux_entrypoint_sh[];
extern const char tp__flux_init_sh[];

/* tmpl with its k-th "%s" replaced by args[k], as Go's Sprintf writes it
 * (TP_EINVAL when tmpl has another number of slots than n). */
int tp__flux_fill(tp_buf *out, const char *tmpl, const char *const *args, size_t n);
/* "start" when size is 1, else "start-end" (upstream's generateRange). */
int tp__flux_range(long long size, long long start, tp_buf *out);
/* "<prefix>-node-0-[<range of size>]" (upstream's generateHostlist). */
int tp__flux_hostlist(const char *prefix, long long size, tp_buf *out);
/* The command Flux runs: command then args joined by spaces, white space
 * trimmed at both ends as Go's strings.TrimSpace does. */
int tp__flux_command_line(const cJSON *command, const cJSON *args, tp_buf *out);
/* The ZeroMQ CURVE certificate Flux reads (flux keygen's layout). */
int tp__flux_curve_cert(const char *name, const tp_curve_key *key, tp_buf *out);

#endif /* TP_FLUX_H */
