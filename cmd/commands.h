/*
 * commands.h: the subcommands main.c dispatches to, each defined in the
 * file of its name (index.c, get.c, sample.c, bench.c, pin_test.c): argv[0]
 * is the subcommand's name; the return is the exit status (cli.h).
 */
#ifndef DX_COMMANDS_H
#define DX_COMMANDS_H

typedef int (*cmd_fn)(int argc, char **argv);

int cmd_index(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_sample(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_pin_test(int argc, char **argv);

#endif
