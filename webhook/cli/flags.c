/*
 * flags.c — the one table of every command's flags. The parsers of
 * cmd_*.c and serve_args.c give each flag its meaning; this table says which
 * flags there are and which take a value: tw_flags_parse reads every
 * command's argv with it, and --help, the README's synopsis and `completion`
 * are printed from it.
 */
#include <stdlib.h>
#include <string.h>

#include "policy/trainpolicy.h"
#include "webhook/cli/commands.h"
#include "webhook/cli/flags.h"
#include "webhook/cli/hints.h"

#define PROFILE { "--profile", NULL, "P", "kubeflow strict", false, false, \
		  "kubeflow: upstream's decisions exactly; strict (default): also the guides' rules" }
#define RUNTIMES { "--runtimes", NULL, "PATH", NULL, true, true, \
		   "runtimes (and PriorityClasses, TrainJobs, JobSets) the rules look up" }
#define CRDS { "--crds", NULL, "PATH", NULL, true, true, \
	       "CRDs to check with instead of the built-in ones; \"none\": no CRD at all" }
#define NO_SCHEMA { "--no-schema", NULL, NULL, NULL, false, false, \
		    "skip the schema layer (CRD or built-in schema checks)" }
#define NOW { "--now", NULL, "RFC3339", NULL, false, false, \
	      "the time defaulting writes (runtimePatches[].time), for repeatable output" }
#define KUBECONFIG { "--kubeconfig", NULL, "FILE", NULL, false, true, \
		     "read from this cluster its CRDs and what the inputs do not hold" }
#define CONTEXT { "--context", NULL, "NAME", NULL, false, false, \
		  "the kubeconfig's context to use (default: its current-context)" }
#define STRICT_ACTION { "--strict-action", NULL, "A", "deny warn", false, false, \
			"warn: allow what only the strict profile denies, with a warning" }
#define POD_SECURITY { "--pod-security", NULL, "LEVEL[:VERSION]", NULL, false, false, \
		       "Pod Security level of every namespace its labels leave unset (strict)" }
/* the releases policy/pod/fields_since.c knows, the newest the default */
_Static_assert(TP_KUBE_MINOR_OLDEST == 29 && TP_KUBE_MINOR_NEWEST == 32,
	       "--kubernetes-version's choices are the supported releases");
#define KUBERNETES_VERSION { "--kubernetes-version", NULL, "1.N", "1.29 1.30 1.31 1.32", false, \
			     false, "check the Jobs and Pods as this Kubernetes does (1.32)" }
#define END { NULL, NULL, NULL, NULL, false, false, NULL }

static const tw_flag validate_flags[] = {
	PROFILE, RUNTIMES, CRDS, KUBECONFIG, CONTEXT,
	{ "--output", "-o", "FORMAT", "text json github junit sarif", false, false,
	  "text (file:line:col: ...), json, github (workflow commands), junit or sarif" },
	{ "--quiet", "-q", NULL, NULL, false, false, "only the objects with a finding (text, json)" },
	{ "--summary", NULL, NULL, NULL, false, false, "only the summary, on one line (text, json)" },
	{ "--exclude", NULL, "GLOB", NULL, true, false, "skip files whose path or name matches" },
	{ "--skip-kinds", NULL, "K1,K2", NULL, false, false, "skip objects of these kinds" },
	NO_SCHEMA, NOW, POD_SECURITY, KUBERNETES_VERSION, END,
};

static const tw_flag review_flags[] = {
	PROFILE, RUNTIMES, CRDS, KUBECONFIG, CONTEXT,
	{ "--path", NULL, "ROUTE", NULL, false, false,
	  "answer as this route would (default: the route of request.kind)" },
	STRICT_ACTION, NO_SCHEMA, NOW, POD_SECURITY, KUBERNETES_VERSION, END,
};

static const tw_flag expand_flags[] = {
	PROFILE, RUNTIMES, CRDS, KUBECONFIG, CONTEXT,
	{ "--output", "-o", "FORMAT", "yaml json", false, false, "YAML documents or a v1 List" },
	{ "--ssh-key", NULL, "FILE", NULL, false, true,
	  "the MPI SSH key (ECDSA P-521 PEM): repeatable output" },
	{ "--curve-key", NULL, "FILE", NULL, false, true,
	  "the Flux CURVE key (X25519 PEM): repeatable output" },
	NO_SCHEMA, NOW, KUBERNETES_VERSION, END,
};

static const tw_flag serve_flags[] = {
	{ "--listen", NULL, "ADDR", NULL, false, false, "HTTPS address (default :9443)" },
	{ "--tls-cert", NULL, "FILE", NULL, false, true, "serving certificate (PEM)" },
	{ "--tls-key", NULL, "FILE", NULL, false, true, "its private key (PEM)" },
	{ "--manage-certs", NULL, NULL, NULL, false, false,
	  "keep the CA and serving pair in a Secret (needs --kube)" },
	{ "--dev", NULL, NULL, NULL, false, false,
	  "development certificates and the example runtimes, on 127.0.0.1" },
	RUNTIMES, CRDS, PROFILE, NO_SCHEMA, STRICT_ACTION,
	{ "--kube", NULL, NULL, NULL, false, false,
	  "follow the cluster (in-cluster configuration): runtimes, CRDs" },
	{ "--kube-server", NULL, "URL", NULL, false, false, "the API server outside a cluster" },
	{ "--kube-token-file", NULL, "FILE", NULL, false, true, "its bearer token" },
	{ "--kube-ca-file", NULL, "FILE", NULL, false, true, "its CA" },
	{ "--kubeconfig", NULL, "FILE", NULL, false, true,
	  "reach the API server as this kubeconfig says (outside a cluster)" },
	CONTEXT,
	{ "--namespace", NULL, "NS", NULL, false, false, "the server's namespace" },
	{ "--service", NULL, "NAME", NULL, false, false, "the Service the API server calls" },
	{ "--cert-secret", NULL, "NAME", NULL, false, false, "--manage-certs: the Secret" },
	{ "--validating-webhook", NULL, "NAME", NULL, false, false,
	  "--manage-certs: the ValidatingWebhookConfiguration" },
	{ "--mutating-webhook", NULL, "NAME", NULL, false, false,
	  "--manage-certs: the MutatingWebhookConfiguration" },
	{ "--register-webhooks", NULL, NULL, NULL, false, false,
	  "fill the shipped (empty) webhook configurations once ready (needs --kube)" },
	{ "--failure-policy", NULL, "POLICY", "Fail Ignore", false, false,
	  "--register-webhooks: every webhook's failurePolicy (Fail)" },
	{ "--webhook-timeout", NULL, "SECONDS", NULL, false, false,
	  "--register-webhooks: every webhook's timeoutSeconds, 1 to 30 (5)" },
	{ "--exempt-namespace", NULL, "NS", NULL, true, false,
	  "--register-webhooks: never send this namespace's objects" },
	{ "--ca-bundle", NULL, "FILE", NULL, false, true,
	  "with --tls-cert: the CA the API server trusts (ca.crt beside it)" },
	{ "--cert-validity", NULL, "DURATION", NULL, false, false, "serving certificate (8760h)" },
	{ "--ca-validity", NULL, "DURATION", NULL, false, false, "CA (87600h)" },
	{ "--ca-overlap", NULL, "DURATION", NULL, false, false, "a new CA is trusted this long first" },
	{ "--metrics-listen", NULL, "ADDR", NULL, false, false, "plain-HTTP /metrics (:8080)" },
	{ "--threads", NULL, "N", NULL, false, false, "connection threads (default: the CPUs)" },
	{ "--decision-threads", NULL, "N", NULL, false, false,
	  "threads that decide requests (twice --threads, at least 4)" },
	{ "--max-body", NULL, "BYTES", NULL, false, false, "largest request body" },
	{ "--memory-budget", NULL, "SIZE", NULL, false, false,
	  "memory the requests in flight and connections may hold (half the container's limit)" },
	{ "--max-connections", NULL, "N", NULL, false, false, "open connections at most" },
	{ "--max-connections-per-peer", NULL, "N", NULL, false, false, "from one address at most" },
	{ "--handshake-timeout", NULL, "SECONDS", NULL, false, false,
	  "close a connection silent this long before its first request (10)" },
	{ "--idle-timeout", NULL, "SECONDS", NULL, false, false,
	  "close a keep-alive connection silent this long (120)" },
	{ "--read-timeout", NULL, "SECONDS", NULL, false, false,
	  "a request's headers and body arrive within this, or 408 (10)" },
	{ "--shutdown-grace", NULL, "SECONDS", NULL, false, false, "drain for at most this long" },
	{ "--log-level", NULL, "LEVEL", "debug info warn error", false, false, "log level" },
	POD_SECURITY, END,
};

static const tw_flag certs_generate_flags[] = {
	{ "--service", NULL, "NAME", NULL, false, false, "the webhook's Service", true },
	{ "--namespace", NULL, "NS", NULL, false, false, "its namespace", true },
	{ "--dns", NULL, "NAME", NULL, true, false, "another DNS name to cover" },
	{ "--ip", NULL, "ADDR", NULL, true, false, "an IP address to cover" },
	{ "--days", NULL, "N", NULL, false, false, "validity (365, at most 3650)" },
	{ "--out", NULL, "DIR", NULL, false, true, "where ca.crt, ca.key, tls.crt, tls.key go",
	  true },
	{ "--force", NULL, NULL, NULL, false, false, "replace existing files" },
	END,
};

static const tw_flag certs_check_flags[] = {
	{ "--tls-cert", NULL, "FILE", NULL, false, true, "the certificate", true },
	{ "--tls-key", NULL, "FILE", NULL, false, true, "its private key", true },
	{ "--ca", NULL, "FILE", NULL, false, true, "the CA it must chain to" },
	{ "--dns", NULL, "NAME", NULL, true, false, "a DNS name it must cover" },
	{ "--ip", NULL, "ADDR", NULL, true, false, "an IP address it must cover" },
	END,
};

static const tw_flag no_flags[] = { END };

static const tw_command_flags commands[] = {
	{ "validate", "PATH...", validate_flags },
	{ "review", "[FILE|-]", review_flags },
	{ "expand", "TRAINJOB", expand_flags },
	{ "serve", "", serve_flags },
	{ "certs generate", "", certs_generate_flags },
	{ "certs check", "", certs_check_flags },
	{ "completion", "bash|zsh", no_flags },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

const tw_command_flags *tw_commands_at(size_t i)
{
	return i < NCOMMANDS ? &commands[i] : NULL;
}

const tw_command_flags *tw_command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].command, name))
			return &commands[i];
	return NULL;
}

const tw_flag *tw_flag_find(const tw_command_flags *c, const char *arg)
{
	size_t n = strcspn(arg, "=");
	for (const tw_flag *f = c->flags; f->name; f++)
		if ((strlen(f->name) == n && !strncmp(f->name, arg, n)) ||
		    (f->alias && !strcmp(f->alias, arg)))
			return f;
	return NULL;
}

/* ------------------------------------------------------------ printing */

const char *tw_prog(void)
{
	const char *p = getenv("TRAINER_WEBHOOK_PROG");
	return p && *p ? p : "trainer-webhook";
}

/* "[--profile kubeflow|strict]", "[--runtimes PATH]...", "[--quiet]". */
static void item(const tw_flag *f, char *out, size_t n)
{
	char arg[128] = "";
	if (f->choices) {
		snprintf(arg, sizeof(arg), " %s", f->choices);
		for (char *p = arg + 1; *p; p++)
			if (*p == ' ')
				*p = '|';
	} else if (f->arg) {
		snprintf(arg, sizeof(arg), " %s", f->arg);
	}
	/* a value flag by its short name when it has one (-o), a switch by its long one */
	const char *name = f->alias && f->arg ? f->alias : f->name;
	if (f->required)
		snprintf(out, n, "%s%s%s", name, arg, f->many ? "..." : "");
	else
		snprintf(out, n, "[%s%s]%s", name, arg, f->many ? "..." : "");
}

/* lead: the columns already printed on the first line. */
static void synopsis(const tw_command_flags *c, int lead, FILE *out)
{
	enum { WIDTH = 96 };
	char head[128];
	int col = lead + snprintf(head, sizeof(head), "%s %s ", tw_prog(), c->command);
	fputs(head, out);
	int indent = col;
	bool first = true;
	for (const tw_flag *f = c->flags;; f++) {
		char it[200];
		if (f->name)
			item(f, it, sizeof(it));
		else if (*c->operands)
			snprintf(it, sizeof(it), "%s", c->operands);
		else
			break;
		int len = (int)strlen(it);
		if (!first && col + 1 + len > WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			fputc(' ', out);
			col++;
		}
		fputs(it, out);
		col += len;
		first = false;
		if (!f->name)
			break;
	}
	fputc('\n', out);
}

void tw_flags_synopsis(const tw_command_flags *c, FILE *out)
{
	synopsis(c, 0, out);
}

void tw_flags_synopses(FILE *out)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		tw_flags_synopsis(&commands[i], out);
	fprintf(out, "%s --version\n", tw_prog());
}

void tw_flags_list(const tw_command_flags *c, FILE *out)
{
	for (const tw_flag *f = c->flags; f->name; f++) {
		char left[128];
		snprintf(left, sizeof(left), "%s%s%s%s%s", f->alias ? f->alias : "",
			 f->alias ? ", " : "", f->name, f->arg ? " " : "", f->arg ? f->arg : "");
		fprintf(out, "  %-30s %s\n", left, f->help);
	}
}

void tw_flags_help(const char *command, const char *text, FILE *out)
{
	const tw_command_flags *c = tw_command_find(command);
	if (!c)
		return;
	fputs("usage: ", out);
	synopsis(c, (int)strlen("usage: "), out);
	if (text)
		fprintf(out, "\n%s", text);
	if (c->flags->name) {
		fputs("\nflags:\n", out);
		tw_flags_list(c, out);
	}
}

/* ------------------------------------------------------------ parsing */

static bool is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

static bool check(const tw_command_flags *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (a[0] != '-' || !a[1] || is_help(a))
			continue;
		const tw_flag *f = tw_flag_find(c, a);
		if (f) {
			i += f->arg && !strchr(a, '=');
			continue;
		}
		const char *near = NULL;
		for (const tw_flag *g = c->flags; g->name && !near; g++)
			if (tw_is_near(a, g->name))
				near = g->name;
		fprintf(stderr, "%s %s: unknown option \"%s\"%s%s%s (see %s %s --help)\n", tw_prog(),
			c->command, a, near ? "; did you mean \"" : "", near ? near : "",
			near ? "\"?" : "", tw_prog(), c->command);
		return false;
	}
	return true;
}

/* The flag argv[*i] is, with its value (moving *i past it); NULL when it is
 * none as written. */
static const tw_flag *flag_at(const tw_argv *p, const tw_command_flags *c, int argc,
			      char **argv, int *i, const char **v)
{
	const char *a = argv[*i];
	const tw_flag *f = tw_flag_find(c, a);
	const char *eq = strchr(a, '=');
	*v = NULL;
	if (!f || (eq && (!p->equals || !f->arg)))
		return NULL;
	if (eq)
		*v = eq + 1;
	else if (f->arg && *i + 1 < argc)
		*v = argv[++*i];
	return f;
}

bool tw_flags_help_asked(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (is_help(argv[i]))
			return true;
	return false;
}

int tw_flags_parse(const tw_argv *p, int argc, char **argv)
{
	const tw_command_flags *c = tw_command_find(p->command);
	if (c->flags->name && !check(c, argc, argv))
		return TW_EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		const tw_flag *f;
		int rc;
		if (p->help && is_help(a))
			rc = p->help(p->ctx);
		else if ((f = flag_at(p, c, argc, argv, &i, &v)))
			rc = p->flag(p->ctx, a, f, v);
		else if (a[0] == '-' && a[1])
			rc = p->unknown(p->ctx, a);
		else
			rc = p->operand(p->ctx, a);
		if (rc)
			return rc;
	}
	return 0;
}
