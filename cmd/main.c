/*
 * main.c: the docdex command.  A table of subcommands drives dispatch,
 * "docdex help CMD" and the hint for a mistyped name.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "version.h"

static const struct subcommand {
	const char *name;
	cmd_fn fn;
	const char *summary;
} commands[] = {
	{ "index", cmd_index, "build an index over corpus files (or show or verify one)" },
	{ "get", cmd_get, "print documents by id, by position or at random" },
	{ "sample", cmd_sample, "training triples from queries, qrels and runs" },
	{ "bench", cmd_bench, "throughput and memory of the loading strategies" },
	{ "pin-test", cmd_pin_test, "what pinned memory, workers and a RAM disk do for loading" },
};

#define NCOMMANDS (sizeof commands / sizeof *commands)

/* The options that come before a command, for the hint to a misspelt one. */
static const char *const global_options[] = { "--version", "--help" };

#define NGLOBAL (sizeof global_options / sizeof *global_options)

static void usage(FILE *f)
{
	fprintf(f, "usage: docdex [-V | --version] [-h | --help] COMMAND [ARGS]\n\n"
	           "Index IR corpora (MS MARCO, BEIR, TREC; plain, gzip or BGZF files)\n"
	           "and serve documents out of them.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'docdex help COMMAND' or 'docdex COMMAND --help' shows a command's options.\n");
}

static const struct subcommand *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Edit distance, for "did you mean". Names are short. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];
	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static int unknown(const char *name)
{
	char shown[CLI_SUBJECT_MAX];
	const char *best = NULL;
	size_t bd = 3;
	for (size_t i = 0; i < NCOMMANDS; i++) {
		size_t d = distance(name, commands[i].name);
		if (d < bd || (strlen(name) >= 2 && strncmp(commands[i].name, name, strlen(name)) == 0 && d < 99)) {
			bd = d < bd ? d : bd;
			best = commands[i].name;
		}
	}
	/* "docdex version", as some tools spell it, is the option --version:
	 * a global option's name without its dashes is pointed to it. */
	for (size_t i = 0; i < NGLOBAL && !best; i++)
		if (distance(name, global_options[i] + 2) < 3)
			best = global_options[i];
	if (best)
		fprintf(stderr, "docdex: '%s' is not a docdex command, did you mean '%s'? (see docdex --help)\n",
		        dx_escape(name, strlen(name), shown, sizeof shown), best);
	else
		fprintf(stderr, "docdex: '%s' is not a docdex command (see docdex --help)\n",
		        dx_escape(name, strlen(name), shown, sizeof shown));
	return EXIT_USAGE;
}

/* An unknown option before the command, with the global option closest to
 * it ("--verison"), as unknown() does for a command. */
static int unknown_option(const char *name)
{
	char shown[CLI_SUBJECT_MAX];
	const char *best = NULL;
	size_t bd = 3;
	for (size_t i = 0; i < NGLOBAL; i++) {
		size_t d = distance(name, global_options[i]);
		if (d < bd) {
			bd = d;
			best = global_options[i];
		}
	}
	dx_escape(name, strlen(name), shown, sizeof shown);
	if (best)
		fprintf(stderr, "docdex: unknown option: '%s', did you mean '%s'? (see docdex --help)\n",
		        shown, best);
	else
		fprintf(stderr, "docdex: unknown option: '%s' (see docdex --help)\n", shown);
	return EXIT_USAGE;
}

static const char help_usage[] =
	"usage: docdex help [COMMAND]\n"
	"\n"
	"Without COMMAND, show the usage of docdex and its commands; with one,\n"
	"show that command's usage and options, as 'docdex COMMAND --help' does.\n";

/* An argument after one the global options and help take. */
static int extra_argument(const char *arg)
{
	char shown[CLI_SUBJECT_MAX];
	fprintf(stderr, "docdex: extra argument: '%s' (see docdex --help)\n",
	        dx_escape(arg, strlen(arg), shown, sizeof shown));
	return EXIT_USAGE;
}

static int help(int argc, char **argv)
{
	if (argc < 2) {
		usage(stdout);
		return cli_stdout_done("help");
	}
	if (argc > 2)
		return extra_argument(argv[2]);
	/* "docdex help help", which completion offers, is the help's own usage. */
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		fputs(help_usage, stdout);
		return cli_stdout_done("help");
	}
	const struct subcommand *c = find(argv[1]);
	if (!c)
		return unknown(argv[1]);
	char *args[] = { argv[1], "--help", NULL };
	return c->fn(2, args);
}

/* A mapped file that shrinks under us (an index or corpus overwritten in
 * place, by cp for instance, instead of replaced by a rename) or a disk
 * that fails a read of a mapped page raises SIGBUS: one line and a failure
 * instead of a crash.  The library's guard comes first: a fault within a
 * docdex call fails that call (DX_ESTALE, with this same line), which the
 * command reports as any error; one elsewhere (the engine's loaders, the
 * output of a mapped record) is passed on to this handler.  Only write and
 * _exit may run here. */
static char sigbus_msg[256];
static size_t sigbus_len;

static void on_sigbus(int sig)
{
	(void)sig;
	ssize_t n = write(STDERR_FILENO, sigbus_msg, sigbus_len);
	(void)n;
	_exit(EXIT_FAIL);
}

static void catch_sigbus(const char *command)
{
	int n = snprintf(sigbus_msg, sizeof sigbus_msg,
	                 "docdex %s: a corpus or index file could not be read where it was mapped: "
	                 "it was cut short while in use (overwritten in place), or the disk failed\n",
	                 command);
	sigbus_len = n > 0 && (size_t)n < sizeof sigbus_msg ? (size_t)n : 0;
	struct sigaction sa = { .sa_handler = on_sigbus };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	dx_err err;
	if (dx_sigbus_guard_install(&err) < 0)
		return; /* this handler alone, then */
}

/* A descriptor among 0, 1 and 2 that the caller closed ("docdex get c <&-")
 * would be the next file docdex opens, which would then be read as stdin
 * or written as stdout: each is opened on /dev/null first, as git does.
 * Standard output is opened for reading only, so that output sent there
 * fails ("cannot write output: 'stdout': bad file descriptor", as cat
 * says) rather than vanish with status 0; a command that prints nothing
 * (index -q) is not troubled by it. */
static int open_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* The lowest free descriptor: fd itself, those below being open. */
		if (open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY) < 0)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (open_standard_fds() < 0)
		return EXIT_FAIL;
	/* A reader that goes away ends output with EPIPE, handled where written. */
	signal(SIGPIPE, SIG_IGN);
	/* A file-size limit (ulimit -f) makes the write fail with EFBIG, which
	 * is reported and the partial output removed, instead of killing us. */
	signal(SIGXFSZ, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		return argc > 2 ? extra_argument(argv[2]) : help(1, argv);
	if (strcmp(name, "help") == 0)
		return help(argc - 1, argv + 1);
	/* -V as zstd, xz, gzip and bzip2 spell it (-v is verbose there). */
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
		if (argc > 2)
			return extra_argument(argv[2]);
		print_version(stdout);
		return cli_stdout_done("--version");
	}
	if (name[0] == '-')
		return unknown_option(name);
	const struct subcommand *c = find(name);
	if (!c)
		return unknown(name);
	catch_sigbus(c->name);
	return c->fn(argc - 1, argv + 1);
}
