/*
 * cmd_completion.c — `trainer-webhook completion bash|zsh`: a shell script
 * that completes the commands and each command's own flags, with the values
 * of those that take a fixed set (-o's formats, --profile's profiles) and
 * file names for those that take a path. Written from the flags' table
 * (flags.c), so it offers exactly what each parser takes.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/cli/commands.h"
#include "webhook/cli/flags.h"

static const char completion_text[] =
	"Prints a completion script for the shell:\n"
	"  source <(trainer-webhook completion bash)     (in ~/.bashrc)\n"
	"  source <(trainer-webhook completion zsh)      (in ~/.zshrc, after compinit)\n";

/* ------------------------------------------------------------ bash */

static void bash_command(const tw_command_flags *c, FILE *out)
{
	fprintf(out, "    '%s')\n      case \"$prev\" in\n", c->command);
	for (const tw_flag *f = c->flags; f->name; f++) {
		if (!f->arg)
			continue;
		fprintf(out, "        %s%s%s) ", f->alias ? f->alias : "", f->alias ? "|" : "", f->name);
		if (f->choices)
			fprintf(out, "COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", f->choices);
		else if (f->path)
			fputs("COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", out);
		else
			fputs("return ;;\n", out);
	}
	fputs("      esac\n      flags='", out);
	for (const tw_flag *f = c->flags; f->name; f++)
		fprintf(out, "%s%s%s%s", f == c->flags ? "" : " ", f->name, f->alias ? " " : "",
			f->alias ? f->alias : "");
	fputs(" --help' ;;\n", out);
}

static void bash(FILE *out)
{
	fputs("# trainer-webhook bash completion: source <(trainer-webhook completion bash)\n"
	      "_trainer_webhook() {\n"
	      "  local cur prev cmd flags\n"
	      "  cur=\"${COMP_WORDS[COMP_CWORD]}\"; prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
	      "  cmd=\"${COMP_WORDS[1]}\"\n"
	      "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "    COMPREPLY=($(compgen -W 'validate review expand serve certs completion --version "
	      "--help' -- \"$cur\")); return\n"
	      "  fi\n"
	      "  if [ \"$cmd\" = certs ]; then\n"
	      "    if [ \"$COMP_CWORD\" -eq 2 ]; then\n"
	      "      COMPREPLY=($(compgen -W 'generate check' -- \"$cur\")); return\n"
	      "    fi\n"
	      "    cmd=\"certs ${COMP_WORDS[2]}\"\n"
	      "  fi\n"
	      "  case \"$cmd\" in\n", out);
	for (size_t i = 0; tw_commands_at(i); i++) {
		const tw_command_flags *c = tw_commands_at(i);
		if (!strcmp(c->command, "completion"))
			fputs("    completion) COMPREPLY=($(compgen -W 'bash zsh --help' -- \"$cur\")); "
			      "return ;;\n", out);
		else
			bash_command(c, out);
	}
	fputs("    *) return ;;\n"
	      "  esac\n"
	      "  case \"$cur\" in\n"
	      "    -*) COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")) ;;\n"
	      "    *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	      "  esac\n"
	      "}\n"
	      "complete -o filenames -F _trainer_webhook trainer-webhook\n", out);
}

/* ------------------------------------------------------------ zsh */

/* A help line inside _arguments' '[...]': no quote, bracket or colon. */
static void zsh_text(const char *s, FILE *out)
{
	for (; *s; s++)
		fputc(strchr("'[]:\\", *s) ? ' ' : *s, out);
}

static void zsh_command(const tw_command_flags *c, FILE *out)
{
	fprintf(out, "    '%s') _arguments", c->command);
	for (const tw_flag *f = c->flags; f->name; f++) {
		fputs(" \\\n      ", out);
		if (f->alias)
			fprintf(out, "'(%s %s)'{%s,%s}'[", f->alias, f->name, f->alias, f->name);
		else
			fprintf(out, "'%s%s[", f->many ? "*" : "", f->name);
		zsh_text(f->help, out);
		fputc(']', out);
		if (f->arg) {
			fprintf(out, ":%s:", f->arg);
			if (f->choices)
				fprintf(out, "(%s)", f->choices);
			else if (f->path)
				fputs("_files", out);
			else
				fputs(" ", out);
		}
		fputc('\'', out);
	}
	fputs(" \\\n      '*:file:_files' ;;\n", out);
}

static void zsh(FILE *out)
{
	fputs("#compdef trainer-webhook\n"
	      "# trainer-webhook zsh completion: source <(trainer-webhook completion zsh)\n"
	      "_trainer_webhook() {\n"
	      "  local -a commands\n"
	      "  commands=(validate review expand serve certs completion)\n"
	      "  if (( CURRENT == 2 )); then\n"
	      "    _describe 'command' commands\n"
	      "    return\n"
	      "  fi\n"
	      "  local cmd=$words[2]\n"
	      "  if [[ $cmd == certs ]]; then\n"
	      "    if (( CURRENT == 3 )); then _values 'subcommand' generate check; return; fi\n"
	      "    cmd=\"certs $words[3]\"\n"
	      "  fi\n"
	      "  case $cmd in\n", out);
	for (size_t i = 0; tw_commands_at(i); i++) {
		const tw_command_flags *c = tw_commands_at(i);
		if (!strcmp(c->command, "completion"))
			fputs("    completion) _values 'shell' bash zsh ;;\n", out);
		else
			zsh_command(c, out);
	}
	fputs("  esac\n"
	      "}\n"
	      "if [ \"$funcstack[1]\" = \"_trainer_webhook\" ]; then _trainer_webhook \"$@\"; "
	      "else compdef _trainer_webhook trainer-webhook; fi\n", out);
}

static int usage(void *ctx, const char *arg)
{
	(void)ctx, (void)arg;
	fprintf(stderr, "usage: trainer-webhook completion bash|zsh (see trainer-webhook completion "
			"--help)\n");
	return TW_EXIT_USAGE;
}

static int on_shell(void *ctx, const char *arg)
{
	const char **shell = ctx;
	if (*shell)
		return usage(ctx, arg);
	*shell = arg;
	return 0;
}

int tw_cmd_completion(int argc, char **argv)
{
	if (tw_flags_help_asked(argc, argv)) {
		tw_flags_help("completion", completion_text, stdout);
		return TW_EXIT_OK;
	}
	/* the table gives completion no flag: a dash argument is a usage error */
	const char *shell = NULL;
	tw_argv p = { "completion", &shell, NULL, on_shell, usage, NULL, false };
	int rc = tw_flags_parse(&p, argc, argv);
	if (rc)
		return rc;
	if (shell && !strcmp(shell, "bash")) {
		bash(stdout);
		return TW_EXIT_OK;
	}
	if (shell && !strcmp(shell, "zsh")) {
		zsh(stdout);
		return TW_EXIT_OK;
	}
	return usage(NULL, NULL);
}
