/*
 * webhook/server/listen.h — binding the listening sockets of the HTTPS
 * server and of /metrics (listen.c).
 */
#ifndef TW_LISTEN_H
#define TW_LISTEN_H

#include <stddef.h>

/* Bind and listen on addr ("HOST:PORT", ":PORT", "[::1]:PORT"). Writes the
 * socket and the bound port. 0, or TW_EFAILED with the reason in err. */
int tw_listen_socket(const char *addr, int *fd, unsigned short *port, char *err,
		     size_t errlen);

#endif /* TW_LISTEN_H */
