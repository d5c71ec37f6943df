/*
 * webhook/cli/commands.h — the commands main.c's table runs (one file each
 * under webhook/cli/, cmd_<name>.c) and the exit codes they share.
 */
#ifndef TW_COMMANDS_H
#define TW_COMMANDS_H

/* Exit codes of every command (docs/design.md): allowed, denied, bad input/usage. */
enum { TW_EXIT_OK = 0, TW_EXIT_DENIED = 1, TW_EXIT_USAGE = 2 };

int tw_cmd_validate(int argc, char **argv);
int tw_cmd_review(int argc, char **argv);
int tw_cmd_expand(int argc, char **argv);
int tw_cmd_serve(int argc, char **argv);
int tw_cmd_certs(int argc, char **argv);
int tw_cmd_completion(int argc, char **argv);

#endif /* TW_COMMANDS_H */
