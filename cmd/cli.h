/*
 * cli.h: what the subcommands share: messages and exit statuses, the
 * parsing of numbers and lists, the progress bar.
 */
#ifndef DX_CLI_H
#define DX_CLI_H

#include <stdint.h>

#include "docdex.h"

/* Exit statuses, the same for every subcommand (see docdex(1)). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,        /* an error, or an id that was not found */
	EXIT_USAGE = 2,       /* a bad command line */
	EXIT_INTERRUPTED = 130
};

/* The most bytes of a subject (an id, a value given) a message echoes:
 * control bytes show as \xNN, and what is longer is cut with "...". */
enum { CLI_SUBJECT_MAX = 4096 };

/* "docdex CMD: what: 'subject'" (the subject only when there is one). */
void cli_error(const char *cmd, const char *what, const char *subject)
	__attribute__((cold));
/* The same for a library error, with strerror when a system call failed. */
void cli_lib_error(const char *cmd, const dx_err *err) __attribute__((cold));
/* Reports a library failure (code rc) and returns the exit status for it:
 * EXIT_INTERRUPTED when it was canceled by a signal, else EXIT_FAIL. */
int cli_lib_failure(const char *cmd, int rc, const dx_err *err) __attribute__((cold));
/* A usage error: the message and where to read the usage; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *what, const char *subject) __attribute__((cold));
/* The usage error for what getopt_long returned with optstring ":...":
 * '?' (unknown option) or ':' (missing value). */
int cli_bad_option(const char *cmd, char **argv, int c) __attribute__((cold));

/* "docdex CMD: what: 'subject': <strerror of sys>". */
void cli_sys_error(const char *cmd, const char *what, const char *subject, int sys)
	__attribute__((cold));
/* "docdex CMD: cannot write output: 'stdout': <strerror>". */
void cli_output_error(const char *cmd, int sys) __attribute__((cold));

/* What was printed on stdout through stdio (a help, the version) written
 * out: EXIT_OK, or EXIT_FAIL with cli_output_error's line (a full disk). */
int cli_stdout_done(const char *cmd);

/* Refuses an output path that names a file the command reads, the same
 * file through any link: one of inputs[0..n) (NULL entries are skipped),
 * or the corpus's index or a source when c is not NULL.  A path that does
 * not exist, or is no regular file (written through: /dev/null, a FIFO),
 * replaces nothing.  Returns 0, or says so in one line and returns
 * EXIT_FAIL. */
int cli_check_output(const char *cmd, const char *output, const char *const *inputs, size_t n,
                     const dx_corpus *c);

/* Refuses, unless force, to replace a regular file that exists at output
 * (through a link, the file it points to), as gzip and bgzip refuse to:
 * "docdex index --bgzf out.gz in.tsv" with the two names swapped would
 * otherwise lose a file without a word.  With index_ok, a docdex index
 * there (a file that starts with the index magic) is replaced as before,
 * since rebuilding an index over the old one is the usual way to refresh
 * it.  A path that does not exist, or is no regular file (a device, a
 * FIFO: written through, never replaced), passes.  Returns 0, or says so
 * in one line and returns EXIT_FAIL. */
int cli_check_replace(const char *cmd, const char *output, int force, int index_ok);

/* Parses a non-negative decimal integer, all of s; 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *v);
/* The same for the n bytes at s: 0, -1 for what is not digits (none, or
 * any other byte), -2 for digits past 64 bits. */
int cli_parse_digits(const char *s, size_t n, uint64_t *v);
/* The same with an optional K, M or G suffix (powers of 1024). */
int cli_parse_size(const char *s, uint64_t *v);
/* Parses a number as strtod reads it, all of s: 0; 1 when it is out of
 * range (*v is then strtod's: HUGE_VAL, or a number near 0); -1 when s is
 * not a number, or is "nan" or "inf", which no option takes. */
int cli_parse_double(const char *s, double *v);

/* Calls word(ctx, w) for each word of a comma-separated list, in order.
 * Returns 0; -1 for an empty list, an empty word (a last comma ends the
 * list), a word of 32 bytes or more, or when word returns non-zero. */
int cli_parse_list(const char *s, int (*word)(void *ctx, const char *w), void *ctx);

/* A progress bar on stderr, shown only on a terminal and after a second:
 * the share done, the rate and the time left.  It counts bytes, or with
 * unit set (after progress_init) things so named ("triples"); a total of
 * 0 is unknown, and then only what is done and the rate show. */
typedef struct progress {
	const char *label;
	const char *unit;
	int enabled;
	int shown;
	double start, last;
} progress;

/* Also makes SIGINT and SIGTERM cancel the work, through progress_update. */
void progress_init(progress *p, const char *label, int quiet);
/* A dx_progress_fn: draws the bar; returns 1 once the process was interrupted. */
int progress_update(void *ctx, uint64_t done, uint64_t total);
/* Clears the bar, if it was drawn, and writes the summary (when not NULL)
 * as a last line wherever a bar could be drawn: stderr a terminal and not
 * quiet, however short the work was. */
void progress_done(progress *p, const char *summary);
/* A time left as a progress line shows it: "1:05", "2:03:04". */
const char *cli_time_left(double secs, char *buf, size_t size);

#endif
