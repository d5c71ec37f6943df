/*
 * names.c — which names may go into a serving certificate.
 *
 * Service and namespace are Kubernetes DNS-1123 labels; extra names are
 * lowercase RFC 1123 subdomains (a "*." wildcard in front is allowed), the
 * shape Go's TLS client and GnuTLS match against.
 */
#include "certs/internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_MSG                                                                          \
	"must be a DNS-1123 label: lower case letters, digits or '-', starting and ending " \
	"with a letter or digit, at most 63 characters (e.g. 'my-name')"
#define DNS_MSG                                                                               \
	"must be a lowercase DNS name: labels of lower case letters, digits or '-' separated " \
	"by '.', each starting and ending with a letter or digit, at most 253 characters in " \
	"all (e.g. 'webhook.example.com'; '*.example.com' is allowed)"

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool label_ok(const char *s, size_t n)
{
	if (n == 0 || n > 63 || !alnum(s[0]) || !alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

const char *tw_certs_check_label(const char *s)
{
	return label_ok(s, strlen(s)) ? NULL : LABEL_MSG;
}

const char *tw_certs_check_dns(const char *s)
{
	if (!strncmp(s, "*.", 2))
		s += 2;
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return DNS_MSG;
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (!label_ok(p, len))
			return DNS_MSG;
		if (!dot)
			return NULL;
		p = dot + 1;
	}
}

bool tw_certs_is_ip(const char *s)
{
	unsigned char buf[16];
	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* "a", "a.b", "a.b.svc", ...: the forms a Service is reached by. */
static char *join(const char *a, const char *b, const char *suffix)
{
	size_t len = strlen(a) + strlen(b) + strlen(suffix) + 2;
	char *s = malloc(len);
	if (s)
		snprintf(s, len, "%s%s%s%s", a, *b ? "." : "", b, suffix);
	return s;
}

int tw_certs_service_names(const char *service, const char *ns, char *out[4])
{
	out[0] = join(service, "", "");
	out[1] = join(service, ns, "");
	out[2] = join(service, ns, ".svc");
	out[3] = join(service, ns, ".svc.cluster.local");
	for (int i = 0; i < 4; i++)
		if (!out[i]) {
			tw_certs_service_names_free(out);
			return TW_CERTS_ECRYPTO;
		}
	return TW_CERTS_OK;
}

void tw_certs_service_names_free(char *names[4])
{
	for (int i = 0; i < 4; i++) {
		free(names[i]);
		names[i] = NULL;
	}
}
