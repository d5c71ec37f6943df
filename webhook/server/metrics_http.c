/*
 * webhook/server/metrics_http.c — the plain-HTTP daemon of `serve
 * --metrics-listen`: GET /metrics (the registry's rendering,
 * webhook/metrics/) and /healthz, nothing else.
 */
#include "webhook/server/metrics_http.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/trainpolicy.h"
#include "webhook/core/log.h"
#include "webhook/metrics/metrics.h"
#include "webhook/server/listen.h"

struct tw_metrics_server {
	struct MHD_Daemon *daemon;
	unsigned short port;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype,
			     char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result static_error(struct MHD_Connection *c, unsigned status, const char *json)
{
	return reply(c, status, "application/json", (char *)json, strlen(json),
		     MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result metrics_access(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_size, void **req)
{
	(void)cls, (void)version, (void)upload_data;
	if (!*req) { /* headers only: wait for (and ignore) any body */
		*req = (void *)1;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	bool health = !strcmp(url, "/healthz");
	if (strcmp(url, "/metrics") && !health)
		return static_error(c, MHD_HTTP_NOT_FOUND,
				    "{\"error\":\"not found: this port serves only GET /metrics and "
				    "/healthz\"}\n");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return static_error(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				    "{\"error\":\"method not allowed: use GET /metrics\"}\n");
	/* Liveness on the plain port: it answers before any certificate exists
	 * (a managed pair comes from the API server), so a replica waiting for
	 * one is not restarted for it. */
	if (health)
		return reply(c, MHD_HTTP_OK, "text/plain; charset=utf-8", (char *)"ok\n", 3,
			     MHD_RESPMEM_PERSISTENT);
	tp_buf b = TP_BUF_INIT((size_t)16 << 20);
	if (tw_metrics_render(&b)) {
		tp_buf_free(&b);
		return static_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    "{\"error\":\"out of memory while rendering metrics\"}\n");
	}
	return reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.data, b.len,
		     MHD_RESPMEM_MUST_FREE);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	tw_logv(TW_LOG_WARN, fmt, ap);
}

int tw_metrics_serve(const char *listen, tw_metrics_server **out, char *err, size_t errlen)
{
	int fd;
	unsigned short port;
	int rc = tw_listen_socket(listen, &fd, &port, err, errlen);
	if (rc)
		return rc;
	tw_metrics_server *m = calloc(1, sizeof(*m));
	if (!m) {
		close(fd);
		snprintf(err, errlen, "out of memory starting the metrics server");
		return TP_ENOMEM;
	}
	m->port = port;
	m->daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG, 0, NULL,
				     NULL, metrics_access, NULL, MHD_OPTION_EXTERNAL_LOGGER,
				     mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_TIMEOUT, 30u,
				     MHD_OPTION_CONNECTION_LIMIT, 64u, MHD_OPTION_END);
	if (!m->daemon) {
		close(fd);
		free(m);
		snprintf(err, errlen,
			 "libmicrohttpd could not start the metrics server on %s; see the log above",
			 listen);
		return TW_EFAILED;
	}
	*out = m;
	return 0;
}

unsigned short tw_metrics_port(const tw_metrics_server *m)
{
	return m ? m->port : 0;
}

void tw_metrics_stop(tw_metrics_server *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->daemon); /* closes the listen socket it was given */
	free(m);
}
