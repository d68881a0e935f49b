/*
 * report_read.c: reading an earlier JSON report, to compare a matrix with
 * it (--baseline) or to report it again (--from).
 *
 * The report is read whole and checked once against JSON's grammar by the
 * core's reader (lib/json.c); the few values compared are then found by
 * walking its text again with the same reader, which needs no tree and no
 * allocation per value.  Only well-formed text is ever walked, so the
 * walkers need not check what the check did.
 *
 * A report is input like any other: its size, its cells and repetitions
 * are bounded (results.h), what is kept of it grows with its text and not
 * with a malloc per value, and every pass over its cells is linear or a
 * sort, so that a file of a million empty cells is refused at once rather
 * than read for minutes into gigabytes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"
#include "json.h"
#include "dxbench.h"

enum {
	MAX_DEPTH = 64,          /* nesting the reader accepts: a report has 5 */
	KEY_MAX = 512,           /* a cell key or member name, decoded */
	MAX_SIZE = 64 << 20      /* a report is kilobytes: more is not one */
};

/* A baseline cell: its key (kept in the arena) and its object in the
 * text; pos is its place in the report, which decides between two cells
 * of one key (the first is compared). */
typedef struct base_cell {
	const char *key;
	const char *obj;
	size_t pos;
} base_cell;

/* ---- the strings kept -------------------------------------------------------- */

/* What is kept of a report (dimension values, the machine, build, params
 * and environment objects, baseline keys) lies in large blocks, not in an
 * allocation per string: a report of many cells costs its text, not a
 * malloc header and a pointer per value. */
enum { BLOCK = 64 << 10 };

typedef struct arena {
	char **blocks;
	size_t n, cap;
	char *at;                 /* the free room of the last small block */
	size_t left;
} arena;

static char *arena_alloc(arena *a, size_t size)
{
	/* A large string gets a block of its own, so that the room left in
	 * the current block is not lost to it. */
	int own = size > BLOCK / 4;
	if (!own && size <= a->left) {
		char *p = a->at;
		a->at += size;
		a->left -= size;
		return p;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		char **b = realloc(a->blocks, cap * sizeof *b);
		if (!b)
			return NULL;
		a->blocks = b;
		a->cap = cap;
	}
	char *p = malloc(own ? size : BLOCK);
	if (!p)
		return NULL;
	a->blocks[a->n++] = p;
	if (!own) {
		a->at = p + size;
		a->left = BLOCK - size;
	}
	return p;
}

/* A copy of the n bytes at s, NUL-terminated, or NULL. */
static const char *arena_keep(arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	if (p) {
		if (n)
			memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static void arena_free(arena *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->blocks[i]);
	free(a->blocks);
	memset(a, 0, sizeof *a);
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

/* The elements of the array at arr: calls fn, when not NULL, for each;
 * returns how many, or what fn returned when that was negative. */
static long each_element(const char *arr, const char *end,
                         int (*fn)(void *ctx, size_t i, const char *v), void *ctx)
{
	const char *v, *ve;
	size_t n = 0;
	if (!arr || dx__json_open_array(&arr, end) < 0)
		return 0;
	while (dx__json_next_element(&arr, end, &v, &ve) == 1) {
		int r = fn ? fn(ctx, n, v) : 0;
		if (r < 0)
			return r;
		n++;
	}
	return (long)n;
}

static int cmp_base(const void *a, const void *b)
{
	const base_cell *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

typedef struct indexer {
	base_cell *cells;
	size_t n;
	const char *end;
	arena *a;
} indexer;

/* A cell without a string key cannot be matched: left out. */
static int index_cell(void *ctx, size_t i, const char *v)
{
	indexer *ix = ctx;
	char key[KEY_MAX];
	if (dx__json_string_copy(dx__json_member(v, ix->end, "key"), ix->end, key, sizeof key) < 0)
		return 0;
	base_cell *b = &ix->cells[ix->n];
	if (!(b->key = arena_keep(ix->a, key, strlen(key))))
		return DX_ENOMEM;
	b->obj = v;
	b->pos = i;
	ix->n++;
	return 0;
}

/* The n cells of the array at arr that have a key, sorted by it, so that
 * each cell measured finds its baseline in log n steps.  Returns how many,
 * or DX_ENOMEM. */
static long index_cells(const char *arr, const char *end, size_t n, arena *a, base_cell **out)
{
	indexer ix = { .end = end, .a = a };
	*out = NULL;
	if (n == 0)
		return 0;
	if (!(ix.cells = malloc(n * sizeof *ix.cells)))
		return DX_ENOMEM;
	long r = each_element(arr, end, index_cell, &ix);
	if (r < 0) {
		free(ix.cells);
		return r;
	}
	qsort(ix.cells, ix.n, sizeof *ix.cells, cmp_base);
	*out = ix.cells;
	return (long)ix.n;
}

/* The baseline cell of key (the first in the report of those that have
 * it), or NULL. */
static const base_cell *find_cell(const base_cell *cells, size_t n, const char *key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(cells[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(cells[lo].key, key) == 0 ? &cells[lo] : NULL;
}

/* Compares metric k of cell c with the baseline's summary of it.  Returns
 * 1 when it regressed (and says so on out), else 0. */
static int compare_metric(const dxb_rs_matrix *m, const dxb_rs_cell *c, const char *key, size_t k,
                          const char *summary, const char *end, double tol, FILE *out)
{
	const dxb_rs_metric *mk = &m->metrics[k];
	const char *s = mk->key ? dx__json_member(summary, end, mk->key) : NULL;
	double bmed, bmin, bmax, med, min, max;
	if (mk->better == DXB_RS_NEITHER || dx__json_number(dx__json_member(s, end, "median"), &bmed) < 0 ||
	    dx__json_number(dx__json_member(s, end, "min"), &bmin) < 0 ||
	    dx__json_number(dx__json_member(s, end, "max"), &bmax) < 0)
		return 0;
	dxb_rs_summary(m, c, k, &med, &min, &max);
	/* Worse by more than the tolerance, and by more than the noise: the
	 * two runs' ranges do not even touch. */
	if (mk->better == DXB_RS_HIGHER ? !(med < bmed * (1 - tol / 100) && max < bmin)
	                            : !(med > bmed * (1 + tol / 100) && min > bmax))
		return 0;
	int d = mk->decimals < 0 ? 0 : mk->decimals > 6 ? 6 : mk->decimals, len;
	const char *name, *unit;
	dxb_rs_split_label(mk, &name, &len, &unit);
	fprintf(out, "regressed: %s: %.*s %.*f -> %.*f%s%s (", key, len, name, d, bmed, d, med,
	        unit ? " " : "", unit ? unit : "");
	/* From 0 there is no percentage to give. */
	if (bmed != 0)
		fprintf(out, "%+.1f%%; ", 100 * (med - bmed) / bmed);
	fprintf(out, "tolerance %g%%; baseline %.*f..%.*f, now %.*f..%.*f)\n", tol, d, bmin, d, bmax,
	        d, min, d, max);
	return 1;
}

/* Compares cell c with its baseline cell b.  key is c's, escaped for the
 * line.  Returns 1 when it regressed. */
static int compare_cell(const dxb_rs_matrix *m, const dxb_rs_cell *c, const char *key, const char *b,
                        const char *end, double tol, FILE *out)
{
	char status[32] = "ok";
	const char *st = dx__json_member(b, end, "status");
	/* A cell written without a status had figures, as in the first reports. */
	if (st && dx__json_string_copy(st, end, status, sizeof status) < 0)
		return 0;
	if (strcmp(status, "ok") != 0)
		return 0; /* no baseline figures: nothing can be worse than them */
	if (c->status != DXB_RS_OK) {
		/* On one line whatever the reason holds (its control bytes
		 * escaped), and never past its array. */
		char reason[4 * sizeof c->reason + 4];
		size_t n = strnlen(c->reason, sizeof c->reason);
		fprintf(out, "regressed: %s: was ok, now %s%s%s\n", key, dxb_rs_status_name(c->status),
		        n ? ": " : "", dx_escape(c->reason, n, reason, sizeof reason));
		return 1;
	}
	const char *summary = dx__json_member(b, end, "summary");
	int regressed = 0;
	for (size_t k = 0; k < m->nmetrics; k++)
		if (m->metrics[k].gate)
			regressed |= compare_metric(m, c, key, k, summary, end, tol, out);
	return regressed;
}

/* Reads the report at path and checks that it is JSON, a report of m's
 * command, and within the bounds of one (results.h); *doc is its
 * top-level object in text, *cells its array of cells and *ncells their
 * count. */
static int load(const dxb_rs_matrix *m, const char *path, const char *noun, dx_buf *text,
                const char **doc, const char **cells, size_t *ncells, dx_err *err)
{
	char want[KEY_MAX], report[KEY_MAX];
	int rc = read_file(path, noun, text, err);
	if (rc < 0)
		return rc;
	const char *end = text->p + text->len;
	const char *after = dx__json_check(*doc = dx__json_skip_ws(text->p, end), end, MAX_DEPTH);
	if (!after || dx__json_skip_ws(after, end) != end)
		return dx__fail(err, DX_EFORMAT, 0, path, "%s is not valid JSON", noun);
	snprintf(want, sizeof want, "docdex %s", m->command ? m->command : "");
	if (dx__json_string_copy(dx__json_member(*doc, end, "report"), end, report, sizeof report) < 0 ||
	    strcmp(report, want) != 0)
		return dx__fail(err, DX_EFORMAT, 0, path, "not a %s report", want);
	*cells = dx__json_member(*doc, end, "cells");
	long n = each_element(*cells, end, NULL, NULL);
	if (n > DXB_RS_MAX_CELLS)
		return dx__fail(err, DX_EFORMAT, 0, path, "%s has more than %d cells", noun,
		                DXB_RS_MAX_CELLS);
	*ncells = (size_t)n;
	return 0;
}

int dxb_rs_compare_baseline(const dxb_rs_matrix *m, const char *path, double tolerance, FILE *out,
                        dx_err *err)
{
	dx_buf text = { 0 };
	arena a = { 0 };
	base_cell *cells = NULL;
	char key[KEY_MAX], shown[4 * KEY_MAX + 4], where[4096];
	const char *doc, *arr;
	size_t n;
	int rc = load(m, path, "baseline", &text, &doc, &arr, &n, err);
	if (rc < 0)
		goto out;
	const char *end = text.p + text.len;
	long ncells = index_cells(arr, end, n, &a, &cells);
	if (ncells < 0) {
		rc = dx__fail_nomem(err);
		goto out;
	}

	size_t compared = 0, fresh = 0;
	int regressed = 0;
	for (size_t i = 0; i < m->ncells; i++) {
		const dxb_rs_cell *c = &m->cells[i];
		dxb_rs_cell_key(m, c, key, sizeof key);
		const base_cell *b = find_cell(cells, (size_t)ncells, key);
		if (!b) {
			fresh++;
			continue;
		}
		compared++;
		/* A key read from a report may hold any byte: escaped, as in
		 * every message. */
		regressed += compare_cell(m, c, dx_escape(key, strlen(key), shown, sizeof shown),
		                          b->obj, end, tolerance, out);
	}
	fprintf(out, "compared %zu cell%s with %s: %d regressed beyond %g%%", compared,
	        compared == 1 ? "" : "s", dx_escape(path, strlen(path), where, sizeof where),
	        regressed, tolerance);
	if (fresh)
		fprintf(out, ", %zu not in the baseline", fresh);
	fputc('\n', out);
	rc = regressed;
out:
	free(cells);
	arena_free(&a);
	dx__buf_free(&text);
	return rc;
}

/* ---- reading a report back (--from) ---------------------------------------- */

/* What dxb_rs_read_report allocated besides the cells: the strings they and
 * the matrix point to, and every cell's repetitions in one block. */
typedef struct kept {
	arena a;
	double *reps;
} kept;

/* The text of member name of obj as it is (objects copied whole) into
 * *out, or NULL when there is none.  Returns 0, or DX_ENOMEM. */
static int keep_member(kept *k, const char *obj, const char *end, const char *name,
                       const char **out)
{
	const char *v = dx__json_member(obj, end, name);
	const char *e = v ? dx__json_skip_value(v, end) : NULL;
	*out = e ? arena_keep(&k->a, v, (size_t)(e - v)) : NULL;
	return e && !*out ? DX_ENOMEM : 0;
}

/* A dimension's value: a string decoded, any other value as written; ""
 * when there is none, or when it is longer than a key may be (KEY_MAX),
 * as a string that long is.  Returns 0, or DX_ENOMEM. */
static int keep_dim(kept *k, const char *v, const char *end, const char **out)
{
	char buf[KEY_MAX];
	const char *s = NULL;
	size_t n = 0;
	*out = "";
	if (v && *v == '"') {
		if (dx__json_string_copy(v, end, buf, sizeof buf) == 0) {
			s = buf;
			n = strlen(buf);
		}
	} else if (v) {
		const char *e = dx__json_skip_value(v, end);
		if (e && e - v < KEY_MAX) {
			s = v;
			n = (size_t)(e - v);
		}
	}
	if (s && !(*out = arena_keep(&k->a, s, n)))
		return DX_ENOMEM;
	return 0;
}

typedef struct reader {
	dxb_rs_matrix *m;
	kept *k;
	const char *end;
	const char *path;
	dx_err *err;
	size_t reps;              /* the repetitions of the OK cells so far */
	dxb_rs_cell *c;               /* the cell whose repetitions are read */
} reader;

static int read_repetition(void *ctx, size_t r, const char *v)
{
	reader *rd = ctx;
	for (size_t j = 0; j < rd->m->nmetrics; j++) {
		double x;
		if (dx__json_number(dx__json_member(v, rd->end, rd->m->metrics[j].key), &x) < 0)
			x = NAN; /* null, or a metric this report lacks */
		rd->c->rep[r * rd->m->nmetrics + j] = x;
	}
	return 0;
}

/* A cell but its repetitions, which are counted (read_figures reads them
 * once all are counted and one block holds them). */
static int read_cell(void *ctx, size_t i, const char *v)
{
	reader *rd = ctx;
	dxb_rs_matrix *m = rd->m;
	dxb_rs_cell *c = &m->cells[i];
	char status[32] = "";
	for (size_t j = 0; j < m->ndims && j < DXB_RS_MAX_DIMS; j++)
		if (keep_dim(rd->k, dx__json_member(v, rd->end, m->dims[j].key), rd->end, &c->dim[j]) < 0)
			return dx__fail_nomem(rd->err);
	dx__json_string_copy(dx__json_member(v, rd->end, "status"), rd->end, status, sizeof status);
	c->status = DXB_RS_FAILED;
	for (int s = DXB_RS_OK; s <= DXB_RS_SKIPPED; s++)
		if (strcmp(status, dxb_rs_status_name(s)) == 0)
			c->status = s;
	if (dx__json_string_copy(dx__json_member(v, rd->end, "reason"), rd->end, c->reason, sizeof c->reason) < 0)
		c->reason[0] = '\0';
	if (dx__json_number(dx__json_member(v, rd->end, "projected_bytes"), &c->projected) < 0)
		c->projected = 0;
	if (c->status != DXB_RS_OK)
		return 0;
	long n = each_element(dx__json_member(v, rd->end, "repetitions"), rd->end, NULL, NULL);
	c->nreps = (size_t)n;
	rd->reps += c->nreps;
	/* Counted as they come, so that what is refused is never read whole. */
	if (rd->reps > DXB_RS_MAX_REPETITIONS)
		return dx__fail(rd->err, DX_EFORMAT, 0, rd->path, "report has more than %d repetitions",
		                DXB_RS_MAX_REPETITIONS);
	return 0;
}

static int read_figures(void *ctx, size_t i, const char *v)
{
	reader *rd = ctx;
	dxb_rs_cell *c = &rd->m->cells[i];
	if (c->status != DXB_RS_OK || !c->nreps)
		return 0;
	c->rep = rd->k->reps + rd->reps * rd->m->nmetrics;
	rd->reps += c->nreps;
	rd->c = c;
	return (int)each_element(dx__json_member(v, rd->end, "repetitions"), rd->end, read_repetition, rd);
}

int dxb_rs_read_report(dxb_rs_matrix *m, const char *path, dx_err *err)
{
	dx_buf text = { 0 };
	const char *doc, *cells;
	size_t n;
	kept *k = calloc(1, sizeof *k);
	int rc;
	m->loaded = k;
	m->cells = NULL;
	m->ncells = 0;
	if (!k)
		return dx__fail_nomem(err);
	if ((rc = load(m, path, "report", &text, &doc, &cells, &n, err)) < 0)
		goto out;
	const char *end = text.p + text.len;
	reader rd = { .m = m, .k = k, .end = end, .path = path, .err = err };
	if (keep_member(k, doc, end, "machine", &m->machine_json) < 0 ||
	    keep_member(k, doc, end, "build", &m->build_json) < 0 ||
	    keep_member(k, doc, end, "params", &m->params_json) < 0 ||
	    keep_member(k, doc, end, "environment", &m->environment_json) < 0 ||
	    (n > 0 && !(m->cells = calloc(n, sizeof *m->cells)))) {
		rc = dx__fail_nomem(err);
		goto out;
	}
	m->ncells = n;
	long r = each_element(cells, end, read_cell, &rd);
	if (r < 0) {
		rc = (int)r;
		goto out;
	}
	/* One block for every repetition (the count bounded above), filled
	 * in a second pass over the cells. */
	if (!(k->reps = malloc((rd.reps * m->nmetrics + 1) * sizeof *k->reps))) {
		rc = dx__fail_nomem(err);
		goto out;
	}
	rd.reps = 0;
	each_element(cells, end, read_figures, &rd);
out:
	dx__buf_free(&text);
	return rc;
}

int dxb_rs_json_get(const char *obj, const char *key, char *buf, size_t bufsz)
{
	const char *end = obj ? obj + strlen(obj) : NULL;
	const char *v = dx__json_member(obj, end, key);
	if (!v)
		return -1;
	if (*v == '"')
		return dx__json_string_copy(v, end, buf, bufsz);
	const char *e = dx__json_skip_value(v, end);
	if (!e || *v == '{' || *v == '[' || (size_t)(e - v) >= bufsz)
		return -1;
	memcpy(buf, v, (size_t)(e - v));
	buf[e - v] = '\0';
	return 0;
}

void dxb_rs_free_report(dxb_rs_matrix *m)
{
	kept *k = m->loaded;
	/* Measured cells own their repetitions; read ones share k's block. */
	for (size_t i = 0; !k && m->cells && i < m->ncells; i++)
		free(m->cells[i].rep);
	free(m->cells);
	m->cells = NULL;
	m->ncells = 0;
	if (k) {
		free(k->reps);
		arena_free(&k->a);
	}
	free(k);
	m->loaded = NULL;
}
