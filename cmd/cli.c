/* cli.c: messages, the parsing of numbers and lists, and the progress bar
 * (see cli.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dxbench.h"
#include "signals.h"

/* A subject as a message shows it: one line, at most CLI_SUBJECT_MAX bytes. */
static const char *shown(const char *subject, char *buf)
{
	return dx_escape(subject, strlen(subject), buf, CLI_SUBJECT_MAX);
}

void cli_error(const char *cmd, const char *what, const char *subject)
{
	char buf[CLI_SUBJECT_MAX];
	if (subject)
		fprintf(stderr, "docdex %s: %s: '%s'\n", cmd, what, shown(subject, buf));
	else
		fprintf(stderr, "docdex %s: %s\n", cmd, what);
}

void cli_lib_error(const char *cmd, const dx_err *err)
{
	char line[sizeof err->what + sizeof err->subject + 300];
	dx_describe(err, line, sizeof line);
	fprintf(stderr, "docdex %s: %s\n", cmd, line);
}

int cli_lib_failure(const char *cmd, int rc, const dx_err *err)
{
	cli_lib_error(cmd, err);
	return rc == DX_ECANCELED ? EXIT_INTERRUPTED : EXIT_FAIL;
}

void cli_sys_error(const char *cmd, const char *what, const char *subject, int sys)
{
	dx_err e = { .sys = sys };
	snprintf(e.what, sizeof e.what, "%s", what);
	dx_escape(subject, strlen(subject), e.subject, sizeof e.subject);
	cli_lib_error(cmd, &e);
}

void cli_output_error(const char *cmd, int sys)
{
	cli_sys_error(cmd, "cannot write output", "stdout", sys);
}

int cli_stdout_done(const char *cmd)
{
	/* The error of the write that failed: this flush's, or one made while
	 * the text was printed (a text longer than stdio's buffer), errno
	 * being left as that write set it. */
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_OK;
	int sys = errno ? errno : EIO;
	/* A reader gone (docdex --help | head) is no failure, as elsewhere. */
	if (sys == EPIPE)
		return EXIT_OK;
	cli_output_error(cmd, sys);
	return EXIT_FAIL;
}

int cli_usage_error(const char *cmd, const char *what, const char *subject)
{
	char buf[CLI_SUBJECT_MAX];
	if (subject)
		fprintf(stderr, "docdex %s: %s: '%s' (see docdex %s --help)\n", cmd, what,
		        shown(subject, buf), cmd);
	else
		fprintf(stderr, "docdex %s: %s (see docdex %s --help)\n", cmd, what, cmd);
	return EXIT_USAGE;
}

int cli_bad_option(const char *cmd, char **argv, int c)
{
	const char *what = c == ':' ? "option needs a value" : "unknown option";
	/* A short option is named by its letter; a long one by its place. */
	if (optopt > 0 && optopt < 128 && isalnum(optopt)) {
		char opt[3] = { '-', (char)optopt, 0 };
		return cli_usage_error(cmd, what, opt);
	}
	return cli_usage_error(cmd, what, argv[optind - 1]);
}

int cli_check_output(const char *cmd, const char *output, const char *const *inputs, size_t n,
                     const dx_corpus *c)
{
	if (!output)
		return 0;
	int same = c && dx_corpus_uses_file(c, output);
	for (size_t i = 0; i < n && !same; i++)
		same = inputs[i] && dx_same_file(output, inputs[i]);
	if (!same)
		return 0;
	cli_error(cmd, "the output would replace a file this command reads", output);
	return EXIT_FAIL;
}

/* The first bytes of every docdex index, as docdex-index(5) documents
 * them: what tells an index docdex wrote from any other file. */
static const unsigned char index_magic[8] = { 0x89, 'D', 'D', 'X', '\r', '\n', 0x1a, '\n' };

static int is_docdex_index(const char *path)
{
	unsigned char head[sizeof index_magic];
	/* Non-blocking: the file was a regular one when stat looked, but a
	 * FIFO put there since must not hang us. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, head, sizeof head);
	close(fd);
	return n == (ssize_t)sizeof head && memcmp(head, index_magic, sizeof head) == 0;
}

int cli_check_replace(const char *cmd, const char *output, int force, int index_ok)
{
	if (force || !output || !dx_output_replaces(output))
		return 0;
	if (index_ok && is_docdex_index(output))
		return 0;
	cli_error(cmd, index_ok ? "output exists and is not a docdex index, give --force to replace it"
	                        : "output exists, give --force to replace it",
	          output);
	return EXIT_FAIL;
}

int cli_parse_digits(const char *s, size_t n, uint64_t *v)
{
	uint64_t r = 0;
	int over = 0;
	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');
		if (s[i] < '0' || s[i] > '9')
			return -1;
		over |= r > (UINT64_MAX - d) / 10;
		r = r * 10 + d;
	}
	*v = r;
	return over ? -2 : 0;
}

int cli_parse_u64(const char *s, uint64_t *v)
{
	return cli_parse_digits(s, strlen(s), v) < 0 ? -1 : 0;
}

int cli_parse_size(const char *s, uint64_t *v)
{
	char num[32];
	size_t n = strlen(s);
	unsigned shift = 0;
	if (n && strchr("KMG", s[n - 1])) {
		shift = s[n - 1] == 'K' ? 10 : s[n - 1] == 'M' ? 20 : 30;
		n--;
	}
	if (n == 0 || n >= sizeof num)
		return -1;
	memcpy(num, s, n);
	num[n] = '\0';
	if (cli_parse_u64(num, v) < 0 || *v > (UINT64_MAX >> shift))
		return -1;
	*v <<= shift;
	return 0;
}

int cli_parse_double(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	if (!*s || *end || isnan(*v) || isinf(*v))
		return -1;
	return errno == ERANGE;
}

int cli_parse_list(const char *s, int (*word)(void *ctx, const char *w), void *ctx)
{
	char w[32];
	if (!*s)
		return -1;
	while (*s) {
		size_t len = strcspn(s, ",");
		if (len == 0 || len >= sizeof w)
			return -1;
		memcpy(w, s, len);
		w[len] = '\0';
		if (word(ctx, w))
			return -1;
		s += len + (s[len] == ',');
	}
	return 0;
}

void progress_init(progress *p, const char *label, int quiet)
{
	*p = (progress){ .label = label, .enabled = !quiet && isatty(STDERR_FILENO) };
	cli_catch_signals();
	p->start = p->last = dxb_now();
}

/* A quantity of the bar: a count, or bytes. */
static const char *amount(const progress *p, uint64_t v, char *buf, size_t size)
{
	return p->unit ? dxb_format_count(v, buf, size) : dx_format_bytes(v, buf, size);
}

const char *cli_time_left(double secs, char *buf, size_t size)
{
	unsigned long long s = secs > 0 && secs < 1e9 ? (unsigned long long)(secs + 0.5) : 0;
	if (s >= 3600)
		snprintf(buf, size, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, size, "%llu:%02llu", s / 60, s % 60);
	return buf;
}

int progress_update(void *ctx, uint64_t done, uint64_t total)
{
	progress *p = ctx;
	if (cli_interrupted())
		return 1;
	if (!p->enabled)
		return 0;
	double now = dxb_now();
	if (now - p->start < 1.0 || now - p->last < 0.1)
		return 0;
	p->last = now;
	p->shown = 1;
	double elapsed = now - p->start;
	/* The line after the label, which may be a path of any length. */
	char a[32], b[32], r[32], t[32], line[256];
	size_t n = 0;
	if (total) {
		double pct = 100.0 * (double)done / (double)total;
		n = (size_t)snprintf(line, sizeof line, " %5.1f%%  %s of %s", pct > 100 ? 100 : pct,
		                     amount(p, done, a, sizeof a), amount(p, total, b, sizeof b));
	} else {
		n = (size_t)snprintf(line, sizeof line, "  %s", amount(p, done, a, sizeof a));
	}
	if (p->unit && n < sizeof line)
		n += (size_t)snprintf(line + n, sizeof line - n, " %s", p->unit);
	if (n < sizeof line)
		n += (size_t)snprintf(line + n, sizeof line - n, ", %s/s",
		                      amount(p, (uint64_t)((double)done / elapsed), r, sizeof r));
	if (total && done && done < total && n < sizeof line)
		snprintf(line + n, sizeof line - n, ", %s left",
		         cli_time_left(elapsed * (double)(total - done) / (double)done, t, sizeof t));
	/* Erase-line after the text: a shorter line leaves nothing of the
	 * one before it.  No colour, so NO_COLOR has nothing to turn off. */
	fprintf(stderr, "\r%s%s\033[K", p->label, line);
	return 0;
}

void progress_done(progress *p, const char *summary)
{
	/* Carriage return and erase-line: no colour, so NO_COLOR has nothing to turn off. */
	if (p->shown)
		fprintf(stderr, "\r\033[K");
	if (summary && p->enabled)
		fprintf(stderr, "%s\n", summary);
}
