/*
 * pod/count.c — how many Pods the trainer's JobSet builder gives a
 * runtime's replicated job before any TrainJob says otherwise (pod.h). Its
 * own file because the runtime's check (pod/runtime.c), the TrainJob's
 * (pod/trainjob.c) and the generated names (pod/names.c) all read it, and
 * runtime.c calls names.c: here it is below all three.
 */
#include "policy/pod/pod.h"

#include <string.h>

long long tp__pod_runtime_count(const cJSON *ml, const cJSON *job)
{
	long long n = 1;
	const cJSON *tmpl = tp__mobj(job, "template");
	const char *ancestor = tp_meta_label(tmpl, TP_LABEL_ANCESTOR);
	if (ml && ancestor && !strcmp(ancestor, TP_ANCESTOR_TRAINER)) {
		if (!tp__mint(ml, "numNodes", &n))
			n = 1;
	} else if (!tp__mint(tp__mobj(tmpl, "spec"), "parallelism", &n)) {
		n = 1;
	}
	return n < 1 ? 1 : n;
}
