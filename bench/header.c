/*
 * header.c: what a report measured, on what, in a few lines for people:
 * the corpus, the workload and the machine, read from the report's own
 * params and machine objects, so that a report read back with --from says
 * the same as the run that wrote it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dxbench.h"
#include "json.h"

static double number(const char *obj, const char *name)
{
	double x;
	if (!obj || dx__json_number(dx__json_member(obj, obj + strlen(obj), name), &x) < 0)
		return -1;
	return x;
}

static const char *string(const char *obj, const char *name, char *buf, size_t n)
{
	if (!obj || dx__json_string_copy(dx__json_member(obj, obj + strlen(obj), name),
	                                 obj + strlen(obj), buf, n) < 0)
		buf[0] = '\0';
	return buf;
}

/* 17528866 bytes as "16.7 MiB". */
static const char *size_text(double bytes, char *buf, size_t n)
{
	static const char *unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;
	while (bytes >= 1024 && u + 1 < sizeof unit / sizeof *unit) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
	return buf;
}

const char *dxb_format_count(uint64_t n, char *buf, size_t size)
{
	char digits[24];
	int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
	size_t o = 0;
	for (int i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	if (size)
		buf[o] = '\0';
	return buf;
}

/* Appends to text (of HEADER_MAX bytes, len used) as snprintf would. */
enum { HEADER_MAX = 2048 };
static void add(char *text, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char *text, size_t *len, const char *fmt, ...)
{
	va_list ap;
	if (*len >= HEADER_MAX - 1)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(text + *len, HEADER_MAX - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < HEADER_MAX ? *len + (size_t)n : HEADER_MAX - 1;
}

char *dxb_rs_header(const dxb_rs_matrix *m)
{
	const char *p = m->params_json, *mc = m->machine_json;
	char corpus[512], workload[64], cpu[128], kernel[128], fs[64], a[32], b[32];
	char *text = malloc(HEADER_MAX);
	size_t len = 0;
	if (!text)
		return NULL;
	text[0] = '\0';
	/* A report read back may lack any of these: its lines are left out. */
	if (string(p, "corpus", corpus, sizeof corpus)[0]) {
		int synthetic = strncmp(corpus, "synthetic ", 10) == 0;
		add(text, &len, "corpus: %s%s, %s records, %s%s\n", synthetic ? "generated " : "",
		    corpus + (synthetic ? 10 : 0), dxb_format_count((uint64_t)fmax(0, number(p, "records")), a, sizeof a),
		    size_text(number(p, "corpus_bytes"), b, sizeof b),
		    synthetic ? " (small enough to sit in the page cache: name a corpus of your own "
		                "to measure it)" : "");
	}
	if (string(p, "workload", workload, sizeof workload)[0]) {
		double negatives = number(p, "negatives"), samples = number(p, "samples");
		if (strcmp(workload, "triples") == 0)
			add(text, &len, "workload: triples with %.0f negative%s", negatives,
			    negatives == 1 ? "" : "s");
		else
			add(text, &len, "workload: %s", workload);
		add(text, &len, ", batches of %.0f; %.0f repetitions of ", number(p, "batch"),
		    number(p, "repeat"));
		if (samples > 0)
			add(text, &len, "%.0f samples a worker\n", samples);
		else
			add(text, &len, "%g s, after %g s of warm-up\n", number(p, "duration_s"),
			    number(p, "warmup_s"));
	}
	if (mc)
		add(text, &len, "machine: %.0f cores (%s), %s of memory, %s; the corpus on %s\n",
		    number(mc, "cores"), string(mc, "cpu", cpu, sizeof cpu),
		    size_text(number(mc, "memory_bytes"), a, sizeof a),
		    string(mc, "kernel", kernel, sizeof kernel),
		    string(mc, "corpus_filesystem", fs, sizeof fs));
	if (len && text[len - 1] == '\n')
		text[len - 1] = '\0';
	return text;
}
