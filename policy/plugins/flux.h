/*
 * plugins/flux.h — what the Flux plugin (flux.c) and its scripts
 * (flux_scripts.c) share, and the pieces its tests call.
 */
#ifndef TP_FLUX_H
#define TP_FLUX_H

#include "policy/plugins/plugin.h"

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
