/*
 * report_read.c: reading an earlier JSON report, to compare a matrix with
 * it (--baseline) or to report it again (--from).
 *
 * The report is read whole and checked once by a small recursive-descent
 * reader; the few values compared are then found by walking its text again,
 * which needs no tree and no allocation per value.  Only well-formed text
 * is ever walked, so the walkers need not check what the reader checked.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "json.h"
#include "results.h"

enum {
	MAX_DEPTH = 64,          /* nesting the reader accepts: a report has 5 */
	KEY_MAX = 512,           /* a cell key or member name, decoded */
	MAX_SIZE = 64 << 20      /* a report is kilobytes: more is not one */
};

/* A baseline cell: its key and its object in the text. */
typedef struct base_cell {
	char key[KEY_MAX];
	const char *obj;
} base_cell;

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/* p at the opening quote: the byte after the closing one, or NULL. */
static const char *string_end(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (++p >= end)
			return NULL;
		switch (*p) {
		case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
			break;
		case 'u':
			if (end - p < 5)
				return NULL;
			for (int i = 1; i <= 4; i++)
				if (!isxdigit((unsigned char)p[i]))
					return NULL;
			p += 4;
			break;
		default:
			return NULL;
		}
	}
	return NULL;
}

static const char *digits_end(const char *p, const char *end)
{
	const char *s = p;
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p > s ? p : NULL;
}

/* JSON's number grammar, stricter than strtod's (no hex, inf, nan, "+1"). */
static const char *number_end(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = digits_end(p, end)))
		return NULL;
	if (p < end && *p == '.' && !(p = digits_end(p + 1, end)))
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = digits_end(p, end)))
			return NULL;
	}
	return p;
}

static const char *word_end(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);
	return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

/* p at a value's first byte: the byte after the value, or NULL when it is
 * not well-formed JSON. */
static const char *value_end(const char *p, const char *end, int depth)
{
	if (p >= end || depth > MAX_DEPTH)
		return NULL;
	switch (*p) {
	case '"':
		return string_end(p, end);
	case '{':
	case '[': {
		char close = *p == '{' ? '}' : ']';
		p = skip_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				if (p >= end || *p != '"' || !(p = string_end(p, end)))
					return NULL;
				p = skip_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p = skip_ws(p + 1, end);
			}
			if (!(p = value_end(p, end, depth + 1)))
				return NULL;
			p = skip_ws(p, end);
			if (p < end && *p == close)
				return p + 1;
			if (p >= end || *p != ',')
				return NULL;
			p = skip_ws(p + 1, end);
		}
	}
	case 't':
		return word_end(p, end, "true");
	case 'f':
		return word_end(p, end, "false");
	case 'n':
		return word_end(p, end, "null");
	}
	return number_end(p, end);
}

/* Decodes the (well-formed) string value at v into buf, with lib/json.c's
 * decoder.  Returns 0, or -1 when v is not a string, holds a NUL, or does
 * not fit: such a string matches no key and no status, which is what the
 * callers want. */
static int get_string(const char *v, const char *end, char *buf, size_t n)
{
	if (!v || *v != '"')
		return -1;
	dx_buf d = { 0 };
	int ok = dx__json_decode(v, string_end(v, end), &d) == 0 && d.len < n &&
	         (d.len == 0 || !memchr(d.p, '\0', d.len));
	if (ok) {
		if (d.len)
			memcpy(buf, d.p, d.len);
		buf[d.len] = '\0';
	}
	dx__buf_free(&d);
	return ok ? 0 : -1;
}

/* The value of member name of the object at obj, or NULL when obj is not
 * an object or has no such member. */
static const char *member(const char *obj, const char *end, const char *name)
{
	char key[KEY_MAX];
	if (!obj || *obj != '{')
		return NULL;
	const char *p = skip_ws(obj + 1, end);
	while (p < end && *p == '"') {
		const char *ke = string_end(p, end);
		const char *v = skip_ws(skip_ws(ke, end) + 1, end);
		if (get_string(p, ke, key, sizeof key) == 0 && strcmp(key, name) == 0)
			return v;
		p = skip_ws(value_end(v, end, 0), end);
		if (*p == ',')
			p = skip_ws(p + 1, end);
	}
	return NULL;
}

/* The number at v: 0, or -1 when it is not one. */
static int get_number(const char *v, double *out)
{
	/* The text was checked against JSON's grammar and ends in a NUL, so
	 * strtod reads just the number; docdex never sets LC_NUMERIC, so its
	 * decimal point is '.'. */
	if (!v || !(*v == '-' || (*v >= '0' && *v <= '9')))
		return -1;
	*out = strtod(v, NULL);
	return 0;
}

/* Reads the whole file into b, NUL-terminated; noun says what it is to
 * the user ("baseline", "report"). */
static int read_file(const char *path, const char *noun, dx_buf *b, dx_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return dx__fail_sys(err, path, "cannot read %s", noun);
	int rc = 0;
	for (;;) {
		if (dx__buf_reserve(b, 1 << 16) < 0) {
			rc = dx__fail_nomem(err);
			goto out;
		}
		size_t n = fread(b->p + b->len, 1, b->cap - b->len - 1, f);
		b->len += n;
		if (n == 0)
			break;
		if (b->len > MAX_SIZE) {
			rc = dx__fail(err, DX_EFORMAT, 0, path, "%s is too large to be a report", noun);
			goto out;
		}
	}
	if (ferror(f)) {
		rc = dx__fail_sys(err, path, "cannot read %s", noun);
		goto out;
	}
	b->p[b->len] = '\0';
out:
	fclose(f);
	return rc;
}

/* The cells of the report, with their keys.  Returns the count, or -1 when
 * out of memory.  A cell without a string key cannot be matched: left out. */
static long index_cells(const char *arr, const char *end, base_cell **out)
{
	*out = NULL;
	if (!arr || *arr != '[')
		return 0;
	size_t n = 0, cap = 0;
	base_cell *cells = NULL;
	const char *p = skip_ws(arr + 1, end);
	while (p < end && *p != ']') {
		const char *next = value_end(p, end, 0);
		char key[KEY_MAX];
		if (get_string(member(p, end, "key"), end, key, sizeof key) == 0) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				base_cell *c = realloc(cells, cap * sizeof *c);
				if (!c) {
					free(cells);
					return -1;
				}
				cells = c;
			}
			memcpy(cells[n].key, key, sizeof key);
			cells[n++].obj = p;
		}
		p = skip_ws(next, end);
		if (*p == ',')
			p = skip_ws(p + 1, end);
	}
	*out = cells;
	return (long)n;
}


/* Compares metric k of cell c with the baseline's summary of it.  Returns
 * 1 when it regressed (and says so on out), else 0. */
static int compare_metric(const rs_matrix *m, const rs_cell *c, const char *key, size_t k,
                          const char *summary, const char *end, double tol, FILE *out)
{
	const rs_metric *mk = &m->metrics[k];
	const char *s = mk->key ? member(summary, end, mk->key) : NULL;
	double bmed, bmin, bmax, med, min, max;
	if (mk->better == RS_NEITHER || get_number(member(s, end, "median"), &bmed) < 0 ||
	    get_number(member(s, end, "min"), &bmin) < 0 ||
	    get_number(member(s, end, "max"), &bmax) < 0)
		return 0;
	rs_summary(m, c, k, &med, &min, &max);
	/* Worse by more than the tolerance, and by more than the noise: the
	 * two runs' ranges do not even touch. */
	if (mk->better == RS_HIGHER ? !(med < bmed * (1 - tol / 100) && max < bmin)
	                            : !(med > bmed * (1 + tol / 100) && min > bmax))
		return 0;
	int d = mk->decimals < 0 ? 0 : mk->decimals > 6 ? 6 : mk->decimals, len;
	const char *name, *unit;
	rs_split_label(mk, &name, &len, &unit);
	fprintf(out, "regressed: %s: %.*s %.*f -> %.*f%s%s (", key, len, name, d, bmed, d, med,
	        unit ? " " : "", unit ? unit : "");
	/* From 0 there is no percentage to give. */
	if (bmed != 0)
		fprintf(out, "%+.1f%%; ", 100 * (med - bmed) / bmed);
	fprintf(out, "tolerance %g%%; baseline %.*f..%.*f, now %.*f..%.*f)\n", tol, d, bmin, d, bmax,
	        d, min, d, max);
	return 1;
}

/* Compares cell c with its baseline cell b.  Returns 1 when it regressed. */
static int compare_cell(const rs_matrix *m, const rs_cell *c, const char *key, const char *b,
                        const char *end, double tol, FILE *out)
{
	char status[32] = "ok";
	const char *st = member(b, end, "status");
	/* A cell written without a status had figures, as in the first reports. */
	if (st && get_string(st, end, status, sizeof status) < 0)
		return 0;
	if (strcmp(status, "ok") != 0)
		return 0; /* no baseline figures: nothing can be worse than them */
	if (c->status != RS_OK) {
		fprintf(out, "regressed: %s: was ok, now %s", key, rs_status_name(c->status));
		/* On one line whatever the reason holds, and never past its array. */
		size_t n = strnlen(c->reason, sizeof c->reason);
		if (n)
			fputs(": ", out);
		for (size_t i = 0; i < n; i++)
			fputc(c->reason[i] == '\n' || c->reason[i] == '\r' ? ' ' : c->reason[i], out);
		fputc('\n', out);
		return 1;
	}
	const char *summary = member(b, end, "summary");
	int regressed = 0;
	for (size_t k = 0; k < m->nmetrics; k++)
		if (m->metrics[k].gate)
			regressed |= compare_metric(m, c, key, k, summary, end, tol, out);
	return regressed;
}

/* Reads the report at path and checks that it is JSON and a report of
 * m's command; *doc is its top-level object in text. */
static int load(const rs_matrix *m, const char *path, const char *noun, dx_buf *text,
                const char **doc, dx_err *err)
{
	char want[KEY_MAX], report[KEY_MAX];
	int rc = read_file(path, noun, text, err);
	if (rc < 0)
		return rc;
	const char *end = text->p + text->len;
	const char *after = value_end(*doc = skip_ws(text->p, end), end, 0);
	if (!after || skip_ws(after, end) != end)
		return dx__fail(err, DX_EFORMAT, 0, path, "%s is not valid JSON", noun);
	snprintf(want, sizeof want, "docdex %s", m->command ? m->command : "");
	if (get_string(member(*doc, end, "report"), end, report, sizeof report) < 0 ||
	    strcmp(report, want) != 0)
		return dx__fail(err, DX_EFORMAT, 0, path, "not a %s report", want);
	return 0;
}

int rs_compare_baseline(const rs_matrix *m, const char *path, double tolerance, FILE *out,
                        dx_err *err)
{
	dx_buf text = { 0 };
	base_cell *cells = NULL;
	char key[KEY_MAX];
	const char *doc;
	int rc = load(m, path, "baseline", &text, &doc, err);
	if (rc < 0)
		goto out;
	const char *end = text.p + text.len;
	long ncells = index_cells(member(doc, end, "cells"), end, &cells);
	if (ncells < 0) {
		rc = dx__fail_nomem(err);
		goto out;
	}

	size_t compared = 0, fresh = 0;
	int regressed = 0;
	for (size_t i = 0; i < m->ncells; i++) {
		const rs_cell *c = &m->cells[i];
		rs_cell_key(m, c, key, sizeof key);
		long j = 0;
		while (j < ncells && strcmp(cells[j].key, key) != 0)
			j++;
		if (j == ncells) {
			fresh++;
			continue;
		}
		compared++;
		regressed += compare_cell(m, c, key, cells[j].obj, end, tolerance, out);
	}
	fprintf(out, "compared %zu cell%s with %s: %d regressed beyond %g%%", compared,
	        compared == 1 ? "" : "s", path, regressed, tolerance);
	if (fresh)
		fprintf(out, ", %zu not in the baseline", fresh);
	fputc('\n', out);
	rc = regressed;
out:
	free(cells);
	dx__buf_free(&text);
	return rc;
}

/* ---- reading a report back (--from) ---------------------------------------- */

/* What rs_read_report allocated besides the cells: the strings they and
 * the matrix point to. */
typedef struct kept {
	char **p;
	size_t n, cap;
} kept;

static const char *keep(kept *k, const char *s, size_t n)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 64;
		char **p = realloc(k->p, cap * sizeof *p);
		if (!p)
			return NULL;
		k->p = p;
		k->cap = cap;
	}
	char *copy = strndup(s, n);
	if (copy)
		k->p[k->n++] = copy;
	return copy;
}

/* A JSON value's text as it is (objects copied whole), or NULL. */
static const char *keep_raw(kept *k, const char *v, const char *end)
{
	const char *e = v ? value_end(v, end, 0) : NULL;
	return e ? keep(k, v, (size_t)(e - v)) : NULL;
}

/* A dimension's value: a string decoded, a number as written. */
static const char *keep_dim(kept *k, const char *v, const char *end)
{
	char buf[KEY_MAX];
	if (v && *v == '"')
		return get_string(v, end, buf, sizeof buf) == 0 ? keep(k, buf, strlen(buf)) : NULL;
	return keep_raw(k, v, end);
}

/* The elements of the array at arr: calls fn for each; returns how many,
 * or -1 when fn failed. */
static long each_element(const char *arr, const char *end,
                         int (*fn)(void *ctx, size_t i, const char *v), void *ctx)
{
	size_t n = 0;
	if (!arr || *arr != '[')
		return 0;
	const char *p = skip_ws(arr + 1, end);
	while (p < end && *p != ']') {
		if (fn && fn(ctx, n, p) < 0)
			return -1;
		n++;
		p = skip_ws(value_end(p, end, 0), end);
		if (*p == ',')
			p = skip_ws(p + 1, end);
	}
	return (long)n;
}

typedef struct reader {
	rs_matrix *m;
	kept *k;
	const char *end;
	rs_cell *c;               /* the cell whose repetitions are read */
} reader;

static int read_repetition(void *ctx, size_t r, const char *v)
{
	reader *rd = ctx;
	for (size_t j = 0; j < rd->m->nmetrics; j++) {
		double x;
		if (get_number(member(v, rd->end, rd->m->metrics[j].key), &x) < 0)
			x = NAN; /* null, or a metric this report lacks */
		rd->c->rep[r * rd->m->nmetrics + j] = x;
	}
	return 0;
}

static int read_cell(void *ctx, size_t i, const char *v)
{
	reader *rd = ctx;
	rs_matrix *m = rd->m;
	rs_cell *c = &m->cells[i];
	char status[32] = "";
	for (size_t j = 0; j < m->ndims && j < RS_MAX_DIMS; j++)
		if (!(c->dim[j] = keep_dim(rd->k, member(v, rd->end, m->dims[j].key), rd->end)))
			c->dim[j] = "";
	get_string(member(v, rd->end, "status"), rd->end, status, sizeof status);
	c->status = RS_FAILED;
	for (int s = RS_OK; s <= RS_SKIPPED; s++)
		if (strcmp(status, rs_status_name(s)) == 0)
			c->status = s;
	if (get_string(member(v, rd->end, "reason"), rd->end, c->reason, sizeof c->reason) < 0)
		c->reason[0] = '\0';
	if (get_number(member(v, rd->end, "projected_bytes"), &c->projected) < 0)
		c->projected = 0;
	if (c->status != RS_OK)
		return 0;
	const char *reps = member(v, rd->end, "repetitions");
	long n = each_element(reps, rd->end, NULL, NULL);
	if (n > 0 && !(c->rep = calloc((size_t)n * m->nmetrics, sizeof *c->rep)))
		return -1;
	rd->c = c;
	c->nreps = (size_t)n;
	return each_element(reps, rd->end, read_repetition, rd) < 0 ? -1 : 0;
}

int rs_read_report(rs_matrix *m, const char *path, dx_err *err)
{
	dx_buf text = { 0 };
	const char *doc;
	kept *k = calloc(1, sizeof *k);
	int rc;
	m->loaded = k;
	m->cells = NULL;
	m->ncells = 0;
	if (!k)
		return dx__fail_nomem(err);
	if ((rc = load(m, path, "report", &text, &doc, err)) < 0)
		goto out;
	const char *end = text.p + text.len;
	reader rd = { .m = m, .k = k, .end = end };
	m->machine_json = keep_raw(k, member(doc, end, "machine"), end);
	m->build_json = keep_raw(k, member(doc, end, "build"), end);
	m->params_json = keep_raw(k, member(doc, end, "params"), end);
	m->environment_json = keep_raw(k, member(doc, end, "environment"), end);
	const char *cells = member(doc, end, "cells");
	long n = each_element(cells, end, NULL, NULL);
	if (n > 0 && !(m->cells = calloc((size_t)n, sizeof *m->cells))) {
		rc = dx__fail_nomem(err);
		goto out;
	}
	m->ncells = (size_t)(n > 0 ? n : 0);
	if (each_element(cells, end, read_cell, &rd) < 0)
		rc = dx__fail_nomem(err);
out:
	dx__buf_free(&text);
	return rc;
}

int rs_json_get(const char *obj, const char *key, char *buf, size_t bufsz)
{
	const char *end = obj ? obj + strlen(obj) : NULL;
	const char *v = member(obj, end, key);
	if (!v)
		return -1;
	if (*v == '"')
		return get_string(v, end, buf, bufsz);
	const char *e = value_end(v, end, 0);
	if (!e || *v == '{' || *v == '[' || (size_t)(e - v) >= bufsz)
		return -1;
	memcpy(buf, v, (size_t)(e - v));
	buf[e - v] = '\0';
	return 0;
}

void rs_free_report(rs_matrix *m)
{
	kept *k = m->loaded;
	for (size_t i = 0; m->cells && i < m->ncells; i++)
		free(m->cells[i].rep);
	free(m->cells);
	m->cells = NULL;
	m->ncells = 0;
	for (size_t i = 0; k && i < k->n; i++)
		free(k->p[i]);
	if (k)
		free(k->p);
	free(k);
	m->loaded = NULL;
}
