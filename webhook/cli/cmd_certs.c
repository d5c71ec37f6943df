/*
 * cmd_certs.c — `trainer-webhook certs generate|check`: the self-signed
 * bootstrap of docs/admission-protocol.md §5.2 from a shell, and a check of any pair before it is
 * mounted. All the work is in certs/; this file is flags and output.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "certs/certs.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/flags.h"

#define MAX_LIST 64

static const char generate_text[] =
	"Make a CA (ca.crt, ca.key; ECDSA P-256, 10 years) and a serving pair signed by\n"
	"it (tls.crt, tls.key) for NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local\n"
	"and each --dns / --ip, valid for N days (default 365, at most 3650). DIR is\n"
	"created (mode 0700) when missing; keys are written 0600. Prints the caBundle\n"
	"(base64 of ca.crt, one line) on stdout and the files written on stderr.\n"
	"Existing files are never overwritten without --force; with --force all four\n"
	"are replaced atomically. --service, --namespace and --out are required.\n";

static const char check_text[] =
	"Check that the key belongs to the certificate, that it is valid now, that\n"
	"it chains to --ca for TLS server use, and that its subjectAltName covers\n"
	"each --dns name and --ip address. Prints \"ok: ...\" or the reason.\n"
	"--tls-cert and --tls-key are required.\n";

static const char exit_text[] =
	"\nexit status:\n"
	"  generate: 0 written; 1 refused because a file exists (pass --force);\n"
	"            2 bad flags or a file/folder that cannot be written\n"
	"  check:    0 usable; 1 unusable (the reason is on stderr);\n"
	"            2 bad flags or a file that cannot be read\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "trainer-webhook certs: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nrun \"trainer-webhook certs --help\" for the flags\n");
	return TW_EXIT_USAGE;
}

/* The flags of both subcommands; each subcommand rejects the ones it lacks. */
struct flags {
	const char *service, *namespace_, *out, *days, *cert, *key, *ca;
	const char *dns[MAX_LIST], *ips[MAX_LIST];
	size_t ndns, nips;
	bool force;
	const char *sub; /* "generate" or "check", for messages */
};

static int push(const char **list, size_t *n, const char *v, const char *flag)
{
	if (*n == MAX_LIST)
		return usage_error("too many %s flags (at most 64)", flag);
	list[(*n)++] = v;
	return 0;
}

static int on_flag(void *ctx, const char *as, const tw_flag *fl, const char *v)
{
	static const struct {
		const char *name;
		size_t off;
	} single[] = {
		{ "--service", offsetof(struct flags, service) },
		{ "--namespace", offsetof(struct flags, namespace_) },
		{ "--out", offsetof(struct flags, out) },
		{ "--days", offsetof(struct flags, days) },
		{ "--tls-cert", offsetof(struct flags, cert) },
		{ "--tls-key", offsetof(struct flags, key) },
		{ "--ca", offsetof(struct flags, ca) },
	};
	struct flags *f = ctx;
	(void)as;
	if (!fl->arg)
		return f->force = true, 0; /* --force, the one switch */
	if (!v)
		return usage_error("%s needs a value", fl->name);
	for (size_t k = 0; k < sizeof(single) / sizeof(single[0]); k++)
		if (!strcmp(fl->name, single[k].name)) {
			*(const char **)((char *)f + single[k].off) = v;
			return 0;
		}
	if (!strcmp(fl->name, "--dns"))
		return push(f->dns, &f->ndns, v, "--dns");
	return push(f->ips, &f->nips, v, "--ip");
}

static int on_other(void *ctx, const char *arg)
{
	struct flags *f = ctx;
	return usage_error("unknown flag or argument \"%s\" for certs %s", arg, f->sub);
}

/* argv[0] is the subcommand; tw_cmd_certs answered --help already. */
static int parse(int argc, char **argv, struct flags *f)
{
	char command[32];
	snprintf(command, sizeof(command), "certs %s", argv[0]);
	f->sub = argv[0];
	tw_argv p = { command, f, on_flag, on_other, on_other, NULL, true };
	return tw_flags_parse(&p, argc, argv);
}

static int parse_days(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > TW_CERTS_MAX_DAYS)
		return usage_error("--days \"%s\" must be a whole number of days from 1 to %d", s,
				   TW_CERTS_MAX_DAYS);
	*out = (int)v;
	return 0;
}

static int generate(int argc, char **argv)
{
	struct flags f = { 0 };
	int rc = parse(argc, argv, &f);
	if (rc)
		return rc;
	if (f.cert || f.key || f.ca)
		return usage_error("--tls-cert, --tls-key and --ca belong to certs check, not "
				   "certs generate");
	if (!f.service || !f.namespace_)
		return usage_error("%s is required (the webhook's Service%s)",
				   f.service ? "--namespace" : "--service",
				   f.service ? " namespace" : " name");
	if (!f.out)
		return usage_error("--out DIR is required (the folder for ca.crt, ca.key, tls.crt "
				   "and tls.key)");
	tw_certs_gen_opts o = {
		.service = f.service, .namespace_ = f.namespace_,
		.dns = f.dns, .ndns = f.ndns, .ips = f.ips, .nips = f.nips, .force = f.force,
	};
	if (f.days && (rc = parse_days(f.days, &o.days)))
		return rc;
	char err[1024] = "", *bundle = NULL;
	rc = tw_certs_generate(f.out, &o, &bundle, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "trainer-webhook certs generate: %s\n", err);
		return rc == TW_CERTS_EEXIST ? TW_EXIT_DENIED : TW_EXIT_USAGE;
	}
	printf("%s\n", bundle);
	fflush(stdout);
	free(bundle);
	static const char *const names[] = { "ca.crt", "ca.key", "tls.crt", "tls.key" };
	for (size_t i = 0; i < 4; i++)
		fprintf(stderr, "wrote %s/%s\n", f.out, names[i]);
	return TW_EXIT_OK;
}

static void print_ok(const tw_certs_report *rep, const char *cert)
{
	printf("ok: %s, %lld days left, names: %s\n", rep->subject, (long long)rep->days_left,
	       rep->names);
	fflush(stdout);
	if (rep->expiring_soon) {
		char when[40];
		struct tm tm;
		time_t t = (time_t)rep->not_after;
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		fprintf(stderr, "warning: %s expires on %s, in %lld days: renew it soon\n", cert,
			when, (long long)rep->days_left);
	}
}

static int check(int argc, char **argv)
{
	struct flags f = { 0 };
	int rc = parse(argc, argv, &f);
	if (rc)
		return rc;
	if (f.service || f.namespace_ || f.out || f.days || f.force)
		return usage_error("--service, --namespace, --out, --days and --force belong to "
				   "certs generate, not certs check");
	if (!f.cert || !f.key)
		return usage_error("%s is required (the %s file, PEM)",
				   f.cert ? "--tls-key" : "--tls-cert",
				   f.cert ? "private key" : "certificate");
	for (size_t i = 0; i < f.nips; i++)
		if (!tw_certs_is_ip(f.ips[i]))
			return usage_error("--ip \"%s\" is not an IPv4 or IPv6 address", f.ips[i]);
	/* --dns and --ip are both "names the SAN must cover"; the check tells
	 * them apart by their shape. */
	const char *names[2 * MAX_LIST];
	size_t n = 0;
	for (size_t i = 0; i < f.ndns; i++)
		names[n++] = f.dns[i];
	for (size_t i = 0; i < f.nips; i++)
		names[n++] = f.ips[i];
	tw_certs_check_opts o = { .cert_path = f.cert, .key_path = f.key, .ca_path = f.ca,
				  .names = names, .nnames = n };
	tw_certs_report rep;
	rc = tw_certs_check(&o, &rep);
	if (rc == TW_CERTS_OK) {
		print_ok(&rep, f.cert);
		return TW_EXIT_OK;
	}
	fprintf(stderr, "trainer-webhook certs check: %s\n", rep.reason);
	return rc == TW_CERTS_EBAD ? TW_EXIT_DENIED : TW_EXIT_USAGE;
}

int tw_cmd_certs(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("a subcommand is required: generate or check");
	const char *sub = argv[1];
	if (tw_flags_help_asked(argc, argv) || !strcmp(sub, "help")) {
		tw_flags_help("certs generate", generate_text, stdout);
		fputc('\n', stdout);
		tw_flags_help("certs check", check_text, stdout);
		fputs(exit_text, stdout);
		return TW_EXIT_OK;
	}
	if (!strcmp(sub, "generate"))
		return generate(argc - 1, argv + 1);
	if (!strcmp(sub, "check"))
		return check(argc - 1, argv + 1);
	return usage_error("unknown subcommand \"%s\": use generate or check", sub);
}
