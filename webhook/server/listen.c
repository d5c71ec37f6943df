/*
 * webhook/server/listen.c — a listening TCP socket from "HOST:PORT", for the
 * HTTPS server and the metrics endpoint: IPv6 dual-stack for ":PORT", errors
 * that say what to change.
 */
#include "webhook/server/listen.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/trainpolicy.h"

/* Split "HOST:PORT", ":PORT" or "[V6]:PORT" into host (NULL: any) and port. */
static int split_addr(const char *addr, char *host, size_t hn, char *port, size_t pn)
{
	const char *colon = strrchr(addr, ':');
	if (!colon || !colon[1] || strlen(colon + 1) >= pn)
		return TP_EINVAL;
	snprintf(port, pn, "%s", colon + 1);
	size_t len = (size_t)(colon - addr);
	if (len >= 2 && addr[0] == '[' && addr[len - 1] == ']') {
		addr++;
		len -= 2;
	}
	if (len >= hn)
		return TP_EINVAL;
	memcpy(host, addr, len);
	host[len] = '\0';
	return 0;
}

/* The first of ai that binds and listens; TW_EFAILED with the last errno in
 * *eno when none does. */
static int bind_first(struct addrinfo *ai, int *fd_out, int *eno)
{
	for (; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
				ai->ai_protocol);
		if (fd < 0) {
			*eno = errno;
			continue;
		}
		int one = 1, zero = 0;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6) /* ":PORT" serves IPv4 too */
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		/* Inherited by every accepted socket (Linux): no write of a
		 * handshake, or before libmicrohttpd's first answer sets it
		 * (tls_record.c), waits for the peer's delayed ACK. */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0) {
			*fd_out = fd;
			return 0;
		}
		*eno = errno;
		close(fd);
	}
	return TW_EFAILED;
}

int tw_listen_socket(const char *addr, int *fd, unsigned short *port, char *err, size_t errlen)
{
	char host[256], serv[16];
	if (!addr || split_addr(addr, host, sizeof(host), serv, sizeof(serv)))
		return snprintf(err, errlen,
				"listen address \"%s\" is not HOST:PORT (examples: :9443, "
				"127.0.0.1:9443, [::1]:9443)",
				addr ? addr : ""),
		       TW_EFAILED;
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				  .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	int gai = getaddrinfo(host[0] ? host : NULL, serv, &hints, &res);
	if (gai)
		return snprintf(err, errlen, "cannot listen on %s: %s", addr, gai_strerror(gai)),
		       TW_EFAILED;
	/* For a wildcard host, try the IPv6 (dual-stack) entry first. */
	if (!host[0] && res->ai_next && res->ai_family != AF_INET6 &&
	    res->ai_next->ai_family == AF_INET6) {
		struct addrinfo *v6 = res->ai_next;
		res->ai_next = v6->ai_next;
		v6->ai_next = res;
		res = v6;
	}
	int eno = 0, rc = bind_first(res, fd, &eno);
	freeaddrinfo(res);
	if (rc)
		return snprintf(err, errlen,
				"cannot listen on %s: %s; stop whatever holds that port or choose "
				"another address",
				addr, strerror(eno)),
		       TW_EFAILED;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getsockname(*fd, (struct sockaddr *)&ss, &sl);
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}
