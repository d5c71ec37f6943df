/*
 * apiclient.c — see apiclient.h.
 */
#include "tests/support/apiclient.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "tests/support/server_proc.h"
#include "webhook/metrics/metrics.h"

void tt_apiclient_open(tt_apiclient *c)
{
	assert_int_equal(fa_start(&c->fa), 0);
	char url[64], err[256];
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", fa_port(c->fa));
	assert_int_equal(tw_kube_config_explicit(&c->kc, url, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(tw_kubeapi_new(&c->kc, &c->api, err, sizeof(err)), 0);
	assert_int_equal(tp_store_new(&c->store), 0);
	assert_int_equal(tp_arena_new(&c->arena, 0), 0);
	tw_metrics_reset();
}

void tt_apiclient_close(tt_apiclient *c)
{
	fa_stop(c->fa);
	tp_arena_free(c->arena);
	tp_store_free(c->store);
	tw_kubeapi_free(c->api);
	tw_kube_config_free(&c->kc);
}

int tt_apiclient_setup(void **state)
{
	tt_apiclient *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	tt_apiclient_open(c);
	*state = c;
	return 0;
}

int tt_apiclient_teardown(void **state)
{
	tt_apiclient_close(*state);
	free(*state);
	return 0;
}

void tt_apiclient_kubeconfig(const tt_apiclient *c, const char *dir)
{
	char *kc = NULL;
	assert_true(asprintf(&kc,
			     "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
			     "clusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:%u\n"
			     "users:\n- name: u\n  user:\n    token: t\n"
			     "contexts:\n- name: c\n  context:\n    cluster: fake\n    user: u\n",
			     fa_port(c->fa)) > 0);
	assert_int_equal(sp_write(dir, "kubeconfig", kc), 0);
	free(kc);
}
