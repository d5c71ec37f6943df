/*
 * pod/count.c — how many Pods the trainer's JobSet builder gives a
 * runtime's replicated job before any TrainJob says otherwise (pod.h). Its
 * own file because the runtime's check (pod/runtime.c), the TrainJob's
 * (pod/trainjob.c) and the generated names (pod/names.c) all read it, and
 * runtime.c calls names.c: here it is below all three.
 */
#include "policy/pod/pod.h"

#include <string.h>

/* tp_meta_label's read, member by member: its dotted path was parsed for
 * each job, twice a review (callgrind). */
const char *tp__pod_step(const cJSON *job)
{
	const cJSON *meta = tp__mobj(tp__mobj(job, "template"), "metadata");
	return tp__mstr(tp__mobj(meta, "labels"), TP_LABEL_ANCESTOR);
}

long long tp__pod_runtime_count_at(const cJSON *ml, const cJSON *job, const char *step)
{
	long long n = 1;
	if (ml && step && !strcmp(step, TP_ANCESTOR_TRAINER)) {
		if (!tp__mint(ml, "numNodes", &n))
			n = 1;
	} else if (!tp__mint(tp__mobj(tp__mobj(job, "template"), "spec"), "parallelism", &n)) {
		n = 1;
	}
	return n < 1 ? 1 : n;
}

long long tp__pod_runtime_count(const cJSON *ml, const cJSON *job)
{
	return tp__pod_runtime_count_at(ml, job, tp__pod_step(job));
}
