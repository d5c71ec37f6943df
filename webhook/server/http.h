/*
 * webhook/server/http.h — one HTTP request from its headers to its answer:
 * the libmicrohttpd callbacks server.c starts the daemon with (http.c).
 */
#ifndef TW_HTTP_H
#define TW_HTTP_H

#include <microhttpd.h>
#include <stddef.h>

#include "webhook/server/server.h"

/* The libmicrohttpd callbacks; cls is the tw_server. */
enum MHD_Result tw_http_access(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_size, void **req);
void tw_http_completed(void *cls, struct MHD_Connection *c, void **req,
		       enum MHD_RequestTerminationCode toe);

#endif /* TW_HTTP_H */
