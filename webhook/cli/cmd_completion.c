/*
 * cmd_completion.c — `trainer-webhook completion bash|zsh`: a shell script
 * that completes the commands, their options and -o's formats.
 */
#include <stdio.h>
#include <string.h>

#include "webhook/cli/commands.h"

static const char bash_script[] =
	"# trainer-webhook bash completion: source <(trainer-webhook completion bash)\n"
	"_trainer_webhook() {\n"
	"  local cur prev cmd\n"
	"  cur=\"${COMP_WORDS[COMP_CWORD]}\"; prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
	"  cmd=\"${COMP_WORDS[1]}\"\n"
	"  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	"    COMPREPLY=($(compgen -W 'serve validate review expand certs completion --version --help' -- \"$cur\"))\n"
	"    return\n"
	"  fi\n"
	"  case \"$prev\" in\n"
	"    -o|--output)\n"
	"      case \"$cmd\" in\n"
	"        validate) COMPREPLY=($(compgen -W 'text json github junit sarif' -- \"$cur\")) ;;\n"
	"        expand) COMPREPLY=($(compgen -W 'yaml json' -- \"$cur\")) ;;\n"
	"      esac; return ;;\n"
	"    --profile) COMPREPLY=($(compgen -W 'strict kubeflow' -- \"$cur\")); return ;;\n"
	"    completion) COMPREPLY=($(compgen -W 'bash zsh' -- \"$cur\")); return ;;\n"
	"    --runtimes|--crds|--exclude|--tls-cert|--tls-key|--kubeconfig)\n"
	"      COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
	"  esac\n"
	"  case \"$cur\" in\n"
	"    -*) COMPREPLY=($(compgen -W '--profile --runtimes --crds --no-schema --now -o --output"
	" --quiet --exclude --skip-kinds --help' -- \"$cur\")) ;;\n"
	"    *) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	"  esac\n"
	"}\n"
	"complete -o filenames -F _trainer_webhook trainer-webhook\n";

static const char zsh_script[] =
	"#compdef trainer-webhook\n"
	"# trainer-webhook zsh completion: source <(trainer-webhook completion zsh)\n"
	"_trainer_webhook() {\n"
	"  local -a commands\n"
	"  commands=(serve validate review expand certs completion)\n"
	"  if (( CURRENT == 2 )); then\n"
	"    _describe 'command' commands\n"
	"    return\n"
	"  fi\n"
	"  _arguments '*--profile[rule profile]:profile:(strict kubeflow)' \\\n"
	"    '*--runtimes[runtimes to resolve]:path:_files' \\\n"
	"    '*--crds[CustomResourceDefinitions]:path:_files' \\\n"
	"    '(-o --output)'{-o,--output}'[output format]:format:(text json github junit sarif yaml)' \\\n"
	"    '--quiet[problems only]' '--no-schema[skip the schema layer]' \\\n"
	"    '*--exclude[skip paths matching]:glob:' '--skip-kinds[skip kinds]:kinds:' \\\n"
	"    '*:file:_files'\n"
	"}\n"
	"if [ \"$funcstack[1]\" = \"_trainer_webhook\" ]; then _trainer_webhook \"$@\"; "
	"else compdef _trainer_webhook trainer-webhook; fi\n";

int tw_cmd_completion(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "bash")) {
		fputs(bash_script, stdout);
		return TW_EXIT_OK;
	}
	if (argc == 2 && !strcmp(argv[1], "zsh")) {
		fputs(zsh_script, stdout);
		return TW_EXIT_OK;
	}
	fprintf(stderr, "usage: trainer-webhook completion bash|zsh\n");
	return TW_EXIT_USAGE;
}
