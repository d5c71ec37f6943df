/*
 * test_watch_relist.c — what breaks a watch (webhook/cluster/watch.c) and how
 * it re-lists, against the fake API server (tests/support/fakeapi.c), in
 * process with a real store (the fixture: tests/support/watchfx.c): a 410
 * (status or ERROR event) at once, everything else after a backoff, each
 * counted by its cause; the kind stale until the re-list completes, and
 * readiness kept meanwhile. Every wait is a bounded poll.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/fakeapi.h"
#include "tests/support/testutil.h"
#include "tests/support/watchfx.h"
#include "webhook/cluster/watch.h"

enum { CTR = FA_CTR, TR = FA_TR, TJ = FA_TJ, JS = FA_JS };

/* A dropped stream may have lost events: the kind is stale and re-lists
 * (after a backoff: the API server may be in trouble). A watch the server
 * ends cleanly (its timeoutSeconds) resumes from its resourceVersion. */
static void test_drop_relists_clean_end_resumes(void **state)
{
	wf *x = *state;
	fa_set_objects(x->fa, TJ, "[]", "100");
	wf_start(x);
	wf_wait_watching(x);
	wf_put_object(x->fa, TJ, wf_obj("TrainJob", "a", "one", "1", NULL));
	wf_expect(x, TP_KIND_TRAINJOB, "a", "one", true);
	fa_drop(x->fa, TJ);
	wf_wait_watch_number(x, TJ, 2);
	fa_stats st;
	fa_get_stats(x->fa, TJ, &st);
	assert_int_equal(st.lists, 2); /* re-listed, not resumed */
	assert_string_equal(st.last_watch_rv, "1001"); /* the new list's */
	wf_expect(x, TP_KIND_TRAINJOB, "a", "one", true);
	assert_true(wf_has_metric("trainer_webhook_watch_relists_total{kind=\"TrainJob\","
			       "reason=\"watch_failed\"} 1"));
	wf_put_object(x->fa, TJ, wf_obj("TrainJob", "a", "two", "1", NULL));
	wf_expect(x, TP_KIND_TRAINJOB, "a", "two", true);
	/* A clean end after events resumes. */
	fa_end(x->fa, TJ);
	wf_wait_watch_number(x, TJ, 3);
	fa_get_stats(x->fa, TJ, &st);
	assert_string_equal(st.last_watch_rv, "1002");
	assert_int_equal(st.lists, 2);
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(x->w, s);
	assert_int_equal(s[TJ].reconnects, 1);
	assert_int_equal(s[TJ].relists, 1);
	assert_int_equal(s[TJ].backoffs, 1);
	assert_true(s[TJ].fresh);
	assert_true(wf_has_metric("trainer_webhook_watch_reconnects_total{kind=\"TrainJob\"} 1"));
}

/* Any backoff of these watches waits at least 30 s, far beyond every wait of
 * the tests that use it: a re-list seen within WF_WAIT_MS took none. */
#define BACKOFF_HUGE_MS 60000

/* A 410 re-lists at once, with no backoff, as client-go's reflector does:
 * as the HTTP status of a watch (after a clean end resumed it), or as an
 * ERROR event in the middle of a stream that the server does not end. The
 * re-list replaces what the watch missed. */
static void relist_case(wf *x, bool as_event)
{
	char *a = wf_obj("TrainingRuntime", "ns", "old", "5", NULL);
	char *b = wf_obj("TrainingRuntime", "ns", "kept", "5", NULL);
	char items[2048];
	snprintf(items, sizeof(items), "[%s,%s]", a, b);
	free(a);
	free(b);
	fa_set_objects(x->fa, TR, items, "5");
	wf_start_backoff(x, BACKOFF_HUGE_MS, BACKOFF_HUGE_MS);
	wf_wait_watching(x);
	wf_expect(x, TP_KIND_TRAINING_RUNTIME, "ns", "old", true);
	/* Meanwhile "old" went away and "new" came, in events the watch missed. */
	b = wf_obj("TrainingRuntime", "ns", "kept", "50", NULL);
	char *c = wf_obj("TrainingRuntime", "ns", "new", "50", NULL);
	snprintf(items, sizeof(items), "[%s,%s]", b, c);
	free(b);
	free(c);
	fa_set_objects(x->fa, TR, items, "60");
	long long t0 = tt_mono_ms();
	if (as_event) {
		fa_push(x->fa, TR, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
				   "\"v1\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":410,"
				   "\"message\":\"too old resource version: 5 (50)\"}}");
	} else {
		fa_gone_next_watch(x->fa, TR);
		fa_push(x->fa, TR, "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"TrainingRuntime\","
				   "\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"metadata\":"
				   "{\"resourceVersion\":\"7\"}}}");
		fa_end(x->fa, TR);
	}
	wf_expect(x, TP_KIND_TRAINING_RUNTIME, "ns", "new", true);
	long long took = tt_mono_ms() - t0;
	wf_expect(x, TP_KIND_TRAINING_RUNTIME, "ns", "old", false);
	wf_expect(x, TP_KIND_TRAINING_RUNTIME, "ns", "kept", true);
	print_message("re-listed %lld ms after the 410 (a backoff would wait >= %d ms)\n", took,
		      BACKOFF_HUGE_MS / 2);
	fa_stats st;
	fa_get_stats(x->fa, TR, &st);
	assert_int_equal(st.lists, 2);
	assert_int_equal(st.gone, as_event ? 0 : 1);
	wf_wait_watch_number(x, TR, 2);
	fa_get_stats(x->fa, TR, &st);
	assert_string_equal(st.last_watch_rv, "60");
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(x->w, s);
	assert_int_equal(s[TR].relists, 1);
	assert_int_equal(s[TR].backoffs, 0);
	assert_true(s[TR].fresh);
	assert_true(wf_has_metric("trainer_webhook_watch_relists_total{kind=\"TrainingRuntime\","
			       "reason=\"gone\"} 1"));
	assert_true(wf_has_metric("trainer_webhook_watch_relists_total{kind=\"TrainingRuntime\","
			       "reason=\"stream_broken\"} 0"));
	assert_true(wf_has_metric("trainer_webhook_store_objects{kind=\"TrainingRuntime\"} 2"));
	assert_true(wf_has_metric("trainer_webhook_watch_stale{kind=\"TrainingRuntime\"} 0"));
	/* One true line, and none of a backoff or of an oversized event. */
	char *log = wf_log(x);
	assert_non_null(strstr(log, "watch trainingruntimes.trainer.kubeflow.org: resourceVersion "));
	assert_non_null(strstr(log, "is gone ("));
	assert_null(strstr(log, "bytes"));
	assert_null(strstr(log, "backoff"));
	free(log);
}

static void test_relist_on_410_status(void **state)
{
	relist_case(*state, false);
}

static void test_relist_on_410_error_event(void **state)
{
	relist_case(*state, true);
}

/* A line that is not {type, object}: the stream cannot be trusted; re-list
 * after a backoff, logged as what it is (not as an oversized event). */
static void test_malformed_event_relists_after_backoff(void **state)
{
	wf *x = *state;
	fa_set_objects(x->fa, TR, "[]", "5");
	wf_start(x);
	wf_wait_watching(x);
	fa_push(x->fa, TR, "{\"type\":\"ADDED\",\"object\":[1]}");
	wf_wait_watch_number(x, TR, 2);
	fa_stats st;
	fa_get_stats(x->fa, TR, &st);
	assert_int_equal(st.lists, 2);
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(x->w, s);
	assert_int_equal(s[TR].backoffs, 1);
	assert_true(wf_has_metric("trainer_webhook_watch_relists_total{kind=\"TrainingRuntime\","
			       "reason=\"stream_broken\"} 1"));
	assert_true(wf_has_metric("trainer_webhook_watch_relists_total{kind=\"TrainingRuntime\","
			       "reason=\"gone\"} 0"));
	char *log = wf_log(x);
	assert_non_null(strstr(log, "re-list after an event that is not {type, object}"));
	assert_null(strstr(log, "bytes"));
	free(log);
}

/* Another ERROR event (the API server ends the watch with, say, a 500):
 * re-list after a backoff, with its code and message in the log. */
static void test_error_event_relists_after_backoff(void **state)
{
	wf *x = *state;
	fa_set_objects(x->fa, TR, "[]", "5");
	wf_start(x);
	wf_wait_watching(x);
	fa_push(x->fa, TR, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,"
			   "\"reason\":\"InternalError\",\"message\":\"etcd is sad\"}}");
	wf_wait_watch_number(x, TR, 2);
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(x->w, s);
	assert_int_equal(s[TR].backoffs, 1);
	assert_int_equal(s[TR].relists, 1);
	assert_true(wf_has_metric("trainer_webhook_watch_relists_total{kind=\"TrainingRuntime\","
			       "reason=\"error_event\"} 1"));
	char *log = wf_log(x);
	assert_non_null(strstr(log, "re-list after an ERROR event (code 500: etcd is sad)"));
	free(log);
}

struct fresh_is {
	wf *x;
	int res;
	bool want;
};

static bool fresh_cond(void *arg)
{
	const struct fresh_is *f = arg;
	return tw_watch_kind_fresh(f->x->w, (size_t)f->res) == f->want &&
	       tw_fresh_is(&f->x->fresh, 1u << wf_tp[f->res]) == f->want;
}

static void wait_fresh(wf *x, int res, bool want)
{
	struct fresh_is f = { x, res, want };
	if (!tt_wait_until(fresh_cond, &f, WF_WAIT_MS))
		fail_msg("kind %d never became %s", res, want ? "fresh" : "stale");
}

static bool list_failed_cond(void *arg)
{
	const struct fresh_is *f = arg;
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(f->x->w, s);
	return s[f->res].last_status == 500;
}

/* A kind is stale before its first list and from a broken watch until its
 * re-list completes, in its fresh bit, its stats and /metrics; readiness,
 * once the first lists are in, is not taken back meanwhile (watch.h). */
static void test_stale_until_relisted_ready_stays(void **state)
{
	wf *x = *state;
	fa_hold_list(x->fa, CTR, true);
	wf_start(x);
	long long end = tt_mono_ms() + WF_WAIT_MS;
	fa_stats st;
	for (fa_get_stats(x->fa, CTR, &st); !st.list_waiting; fa_get_stats(x->fa, CTR, &st)) {
		assert_true(tt_mono_ms() < end);
		tt_sleep_ms(10);
	}
	wait_fresh(x, TR, true);
	assert_false(tw_watch_kind_fresh(x->w, CTR));
	assert_false(tw_fresh_is(&x->fresh, 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME));
	assert_true(wf_has_metric("trainer_webhook_watch_stale{kind=\"ClusterTrainingRuntime\"} 1"));
	assert_false(tw_watch_ready(x->w, NULL, 0));
	fa_hold_list(x->fa, CTR, false);
	wf_wait_watching(x);
	wait_fresh(x, CTR, true);
	assert_true(tw_watch_ready(x->w, NULL, 0));
	/* The stream breaks and the API server fails the re-lists. */
	fa_set_list_status(x->fa, TR, 500);
	fa_drop(x->fa, TR);
	wait_fresh(x, TR, false);
	struct fresh_is f = { x, TR, false };
	assert_true(tt_wait_until(list_failed_cond, &f, WF_WAIT_MS));
	assert_true(tw_fresh_is(&x->fresh, 1u << TP_KIND_CLUSTER_TRAINING_RUNTIME));
	char why[512] = "x";
	assert_true(tw_watch_ready(x->w, why, sizeof(why)));
	assert_string_equal(why, "");
	assert_true(wf_has_metric("trainer_webhook_watch_stale{kind=\"TrainingRuntime\"} 1"));
	assert_true(wf_has_metric("trainer_webhook_watch_stale{kind=\"ClusterTrainingRuntime\"} 0"));
	assert_true(wf_has_metric("trainer_webhook_watch_relists_total{kind=\"TrainingRuntime\","
			       "reason=\"watch_failed\"} 1"));
	/* It answers again: listed, fresh. */
	fa_set_list_status(x->fa, TR, 0);
	wait_fresh(x, TR, true);
	assert_true(wf_has_metric("trainer_webhook_watch_stale{kind=\"TrainingRuntime\"} 0"));
	tw_watch_stat s[WF_NKINDS];
	tw_watch_stats(x->w, s);
	assert_true(s[TR].fresh);
	assert_int_equal(s[TR].relists, 1);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_drop_relists_clean_end_resumes, wf_setup,
						wf_teardown),
		cmocka_unit_test_setup_teardown(test_relist_on_410_status, wf_setup, wf_teardown),
		cmocka_unit_test_setup_teardown(test_relist_on_410_error_event, wf_setup,
						wf_teardown),
		cmocka_unit_test_setup_teardown(test_malformed_event_relists_after_backoff, wf_setup,
						wf_teardown),
		cmocka_unit_test_setup_teardown(test_error_event_relists_after_backoff, wf_setup,
						wf_teardown),
		cmocka_unit_test_setup_teardown(test_stale_until_relisted_ready_stays, wf_setup,
						wf_teardown),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
