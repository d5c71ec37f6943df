/*
 * decide.c — `make bench`'s cost of one decision, without the network:
 * tw_admission_handle (the function the server calls for every review:
 * parse, decide, write the answer) run in a loop on one AdmissionReview.
 *
 *   decide ROUTE FILE N [--runtimes PATH] [--crds PATH]
 *
 * Prints the wall-clock microseconds per request. Under callgrind (make
 * bench does so when valgrind is installed) the instruction count per
 * request is the figure to compare across changes: unlike time it does not
 * move with the machine's load. Exit 1 when an answer is not a 200.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "webhook/cli/cli.h"
#include "webhook/core/files.h"
#include "webhook/admission/admission.h"

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: decide ROUTE FILE N [--runtimes PATH] [--crds PATH]\n");
		return 2;
	}
	tw_cli c;
	tw_cli_init(&c, "decide", "");
	/* validate's row of the flag table names --runtimes and --crds */
	const tw_command_flags *flags = tw_command_find("validate");
	for (int i = 4; i < argc; i++) {
		const char *a = argv[i];
		const tw_flag *f = tw_flag_find(flags, a);
		if (!f || tw_cli_flag(&c, a, f, f->arg && i + 1 < argc ? argv[++i] : NULL)) {
			fprintf(stderr, "decide: unknown option %s\n", a);
			return 2;
		}
	}
	const tw_route *route = tw_route_find(argv[1]);
	tp_buf body = TP_BUF_INIT(0);
	int n = atoi(argv[3]);
	if (!route || n < 1 || tw_read_file(argv[2], TW_DEFAULT_MAX_BODY, &body) ||
	    tw_cli_load_store(&c) || tw_cli_load_crds(&c)) {
		fprintf(stderr, "decide: bad route, count, file, --runtimes or --crds\n");
		return 2;
	}
	tp_arena *arena = NULL;
	if (tp_arena_new(&arena, 0))
		return 1;
	tw_config cfg = { .opt = c.opt, .store = c.store, .max_body = TW_DEFAULT_MAX_BODY };
	tp_buf out = TP_BUF_INIT(0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		tw_outcome oc;
		tp_buf_reset(&out);
		if (tw_admission_handle(&cfg, route, body.data, body.len, arena, &out, &oc) ||
		    oc.http_status != 200)
			rc = 1;
		tp_arena_reset(arena);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3;
	if (rc)
		fprintf(stderr, "decide: %s: not a 200 answer\n", argv[2]);
	else
		printf("%.2f us/request\n", us / n);
	tp_buf_free(&out);
	tp_buf_free(&body);
	tp_arena_free(arena);
	tw_cli_free(&c);
	return rc;
}
