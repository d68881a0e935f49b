/*
 * results.c: the summaries of a measurement matrix and its reports: the
 * table for a terminal, CSV, JSON and Markdown (see results.h).  The plot
 * and the comparison with a baseline live in files of their own.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dxbench.h"
#include "json.h"

const char *dxb_rs_status_name(int status)
{
	switch (status) {
	case DXB_RS_OK:
		return "ok";
	case DXB_RS_OOM:
		return "oom";
	case DXB_RS_FAILED:
		return "failed";
	case DXB_RS_SKIPPED:
		return "skipped";
	}
	return "unknown";
}

/* The dimensions a cell can hold values for, however many m claims. */
static size_t ndims_of(const dxb_rs_matrix *m)
{
	return m->ndims < DXB_RS_MAX_DIMS ? m->ndims : DXB_RS_MAX_DIMS;
}

static const char *dim_value(const dxb_rs_cell *c, size_t j)
{
	return c->dim[j] ? c->dim[j] : "";
}

static const char *dim_label(const dxb_rs_dim *d)
{
	return d->label ? d->label : d->key ? d->key : "";
}

static const char *metric_label(const dxb_rs_metric *k)
{
	return k->label ? k->label : k->key ? k->key : "";
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

/* The reason is a fixed array: never read past it, terminated or not. */
static size_t reason_len(const dxb_rs_cell *c)
{
	return strnlen(c->reason, sizeof c->reason);
}

const char *dxb_rs_cell_key(const dxb_rs_matrix *m, const dxb_rs_cell *c, char *buf, size_t bufsz)
{
	size_t len = 0;

	if (!bufsz)
		return buf;
	buf[0] = '\0';
	for (size_t j = 0; j < ndims_of(m); j++) {
		const dxb_rs_dim *d = &m->dims[j];
		int n = snprintf(buf + len, bufsz - len, "%s%s%s", j ? "/" : "",
		                 d->numeric ? dim_label(d) : "", dim_value(c, j));
		if (n < 0 || (size_t)n >= bufsz - len)
			break; /* cut short, but terminated */
		len += (size_t)n;
	}
	return buf;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The mean of two values, finite when both are: 1.6e308 twice sums to
 * infinity, so its halves are added then; a sum that does not overflow is
 * halved as it always was, so real figures keep their medians. */
static double mean2(double a, double b)
{
	double s = a + b;
	return isfinite(s) || !isfinite(a) || !isfinite(b) ? s / 2 : a / 2 + b / 2;
}

/* Repetitions that fit here are summarized without touching the heap. */
enum { SUMMARY_STACK = 1024 };

void dxb_rs_summary(const dxb_rs_matrix *m, const dxb_rs_cell *c, size_t k, double *median, double *min,
                double *max)
{
	double small[SUMMARY_STACK], *v = small;
	double md = 0, lo = 0, hi = 0;
	size_t n = 0;

	if (c->rep && c->nreps && k < m->nmetrics) {
		if (c->nreps > SUMMARY_STACK && !(v = malloc(c->nreps * sizeof *v))) {
			md = lo = hi = NAN;
			goto out;
		}
		/* A value that could not be measured (NaN) is left out rather
		 * than allowed to poison the order the median depends on. */
		for (size_t r = 0; r < c->nreps; r++) {
			double x = c->rep[r * m->nmetrics + k];
			if (!isnan(x))
				v[n++] = x;
		}
		if (n) {
			qsort(v, n, sizeof *v, cmp_double);
			md = n % 2 ? v[n / 2] : mean2(v[n / 2 - 1], v[n / 2]);
			lo = v[0];
			hi = v[n - 1];
		} else {
			md = lo = hi = NAN;
		}
		if (v != small)
			free(v);
	}
out:
	if (median)
		*median = md;
	if (min)
		*min = lo;
	if (max)
		*max = hi;
}

/* ---- the fastest cell of each group ------------------------------------- */

/* The group dimension's value of cell i; without one the whole matrix is
 * one group. */
static const char *group_of(const dxb_rs_matrix *m, size_t i)
{
	return m->group_dim < ndims_of(m) ? dim_value(&m->cells[i], m->group_dim) : "";
}

/* Whether median a beats median b: higher wins, unless the primary metric
 * says lower is better (a latency), where "fastest" means the lowest. */
static int beats(const dxb_rs_matrix *m, double a, double b)
{
	return m->metrics[m->primary].better == DXB_RS_LOWER ? a < b : a > b;
}

/* The primary median of cell j from the summaries sum.  NaN for a cell
 * without figures. */
static double primary_median(const dxb_rs_matrix *m, const double *sum, size_t j)
{
	const dxb_rs_cell *c = &m->cells[j];

	if (c->status != DXB_RS_OK || !c->nreps || !c->rep)
		return NAN;
	return sum[(j * m->nmetrics + m->primary) * 3];
}

/* Whether cell j is the best of its group so far (best is the best before
 * it, or SIZE_MAX for none): the fastest is the first of the cells whose
 * median beats every other's, so a tie goes to the cell that comes first. */
static int better_than(const dxb_rs_matrix *m, const double *sum, size_t j, size_t best)
{
	double mj = primary_median(m, sum, j);
	return !isnan(mj) && (best == SIZE_MAX || beats(m, mj, primary_median(m, sum, best)));
}

typedef struct member_of {
	const char *group;
	size_t i;
} member_of;

static int cmp_member(const void *a, const void *b)
{
	const member_of *x = a, *y = b;
	int c = strcmp(x->group, y->group);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Whether the repetitions of cells a and b overlap in the primary metric:
 * then the noise of the two is as large as their difference, and neither
 * can be called the faster. */
static int overlap(const dxb_rs_matrix *m, const double *sum, size_t a, size_t b)
{
	const double *x = sum + (a * m->nmetrics + m->primary) * 3;
	const double *y = sum + (b * m->nmetrics + m->primary) * 3;
	return x[1] <= y[2] && y[1] <= x[2];
}

/* Marks the best cell of each group by median in top[], and in fastest[]
 * those that are clearly so: measured more than once, with a range of
 * repetitions clear of every other cell's of the group.  For a best cell
 * that is not, rival[] names the first cell it overlaps (SIZE_MAX when it
 * was measured once).  The cells are sorted by group (and place), so each
 * group is one run of them and the whole costs n log n.  A group of one
 * measured cell has no winner: it beat nothing.  Returns 0, or -1 when out
 * of memory. */
static int mark_fastest(const dxb_rs_matrix *m, const double *sum, unsigned char *top,
                        unsigned char *fastest, size_t *rival)
{
	size_t n = m->ncells;

	memset(top, 0, n ? n : 1);
	memset(fastest, 0, n ? n : 1);
	if (m->primary >= m->nmetrics || n == 0)
		return 0;
	member_of *by = malloc(n * sizeof *by);
	if (!by)
		return -1;
	for (size_t i = 0; i < n; i++)
		by[i] = (member_of){ group_of(m, i), i };
	qsort(by, n, sizeof *by, cmp_member);
	for (size_t a = 0, b; a < n; a = b) {
		size_t best = SIZE_MAX, measured = 0;
		for (b = a; b < n && strcmp(by[b].group, by[a].group) == 0; b++) {
			measured += !isnan(primary_median(m, sum, by[b].i));
			if (better_than(m, sum, by[b].i, best))
				best = by[b].i;
		}
		if (best == SIZE_MAX || measured < 2)
			continue;
		top[best] = 1;
		rival[best] = SIZE_MAX;
		if (m->cells[best].nreps < 2)
			continue;
		for (size_t k = a; k < b && rival[best] == SIZE_MAX; k++) {
			size_t o = by[k].i;
			if (o != best && !isnan(primary_median(m, sum, o)) && overlap(m, sum, best, o))
				rival[best] = o;
		}
		fastest[best] = rival[best] == SIZE_MAX;
	}
	free(by);
	return 0;
}

/* ---- summaries computed once per report --------------------------------- */

/* Every writer looks at each summary more than once, and each costs a
 * copy and a sort, so a report computes them all up front. */
typedef struct view {
	const dxb_rs_matrix *m;
	double *sum;             /* [cell][metric]{median, min, max} */
	unsigned char *top;      /* [cell]: the best of its group by median */
	unsigned char *fastest;  /* [cell]: and clearly so (mark_fastest) */
	size_t *rival;           /* [cell]: for a top cell not clearly so */
	int any_fastest;
	int any_unclear;         /* some top cell is not clearly the fastest */
	int any_failed;          /* some cell is not DXB_RS_OK */
} view;

static void view_free(view *v)
{
	free(v->sum);
	free(v->top);
	free(v->fastest);
	free(v->rival);
}

static int view_init(view *v, const dxb_rs_matrix *m)
{
	size_t n = m->ncells * m->nmetrics;

	memset(v, 0, sizeof *v);
	v->m = m;
	if ((m->nmetrics && n / m->nmetrics != m->ncells) || n > SIZE_MAX / (3 * sizeof *v->sum)) {
		errno = ENOMEM;
		return -1;
	}
	v->sum = malloc(n ? n * 3 * sizeof *v->sum : 1);
	v->top = malloc(m->ncells ? m->ncells : 1);
	v->fastest = malloc(m->ncells ? m->ncells : 1);
	v->rival = malloc((m->ncells ? m->ncells : 1) * sizeof *v->rival);
	if (!v->sum || !v->top || !v->fastest || !v->rival) {
		view_free(v);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < m->ncells; i++) {
		for (size_t k = 0; k < m->nmetrics; k++) {
			double *s = v->sum + (i * m->nmetrics + k) * 3;
			dxb_rs_summary(m, &m->cells[i], k, &s[0], &s[1], &s[2]);
		}
		if (m->cells[i].status != DXB_RS_OK)
			v->any_failed = 1;
	}
	if (mark_fastest(m, v->sum, v->top, v->fastest, v->rival) < 0) {
		view_free(v);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < m->ncells; i++) {
		v->any_fastest |= v->fastest[i];
		v->any_unclear |= v->top[i] && !v->fastest[i];
	}
	return 0;
}

int dxb_rs_fastest(const dxb_rs_matrix *m, unsigned char *fastest)
{
	view v;
	if (view_init(&v, m) < 0)
		return -1;
	memcpy(fastest, v.fastest, m->ncells);
	view_free(&v);
	return 0;
}

static const double *view_sum(const view *v, size_t i, size_t k)
{
	return v->sum + (i * v->m->nmetrics + k) * 3;
}

/* The writers' common end: the caller flushes and closes, so an error seen
 * here is one stdio already met while writing. */
static int finish(view *v, FILE *f)
{
	view_free(v);
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* A figure for people, with the metric's decimals. */
static void fmt_figure(char *buf, size_t n, double x, int decimals)
{
	if (isnan(x))
		snprintf(buf, n, "-");
	else if (!isfinite(x) || fabs(x) >= 1e15)
		snprintf(buf, n, "%.6g", x); /* too long for a column in full */
	else
		snprintf(buf, n, "%.*f", decimals < 0 ? 0 : decimals > 9 ? 9 : decimals, x);
	/* Noise below the resolution shown is 0, not "-0.0". */
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
		memmove(buf, buf + 1, strlen(buf));
}

/* "for each value of workers", or "overall" without a group dimension. */
static const char *group_words(const dxb_rs_matrix *m, char *buf, size_t n)
{
	if (m->group_dim < ndims_of(m))
		snprintf(buf, n, "for each value of %s", str_or_empty(m->dims[m->group_dim].key));
	else
		snprintf(buf, n, "overall");
	return buf;
}

/* The words after the mark. */
static void fastest_words(const dxb_rs_matrix *m, char *buf, size_t n)
{
	char g[128];
	snprintf(buf, n, "fastest %s, by median %s, its repetitions clear of every other cell's",
	         group_words(m, g, sizeof g), metric_label(&m->metrics[m->primary]));
}

/* Half the range of cell i's primary metric against its median, in %. */
static double spread_pct(const view *v, size_t i)
{
	const double *s = v->sum + (i * v->m->nmetrics + v->m->primary) * 3;
	return (s[2] - s[1]) / 2 / fabs(s[0]) * 100;
}

/* Why the best cell i of its group by median is not marked the fastest. */
static void unclear_words(const view *v, size_t i, char *buf, size_t n)
{
	const dxb_rs_matrix *m = v->m;
	char key[256], other[256], g[160] = "";
	if (m->group_dim < ndims_of(m))
		snprintf(g, sizeof g, " at %s %s", str_or_empty(m->dims[m->group_dim].key),
		         dim_value(&m->cells[i], m->group_dim));
	dxb_rs_cell_key(m, &m->cells[i], key, sizeof key);
	if (v->rival[i] == SIZE_MAX) {
		snprintf(buf, n, "no winner told%s: %s was measured once, which shows no noise "
		         "(--repeat 3 or more does)", g, key);
		return;
	}
	dxb_rs_cell_key(m, &m->cells[v->rival[i]], other, sizeof other);
	snprintf(buf, n, "no clear winner%s: %s (\u00b1%.0f%%) and %s (\u00b1%.0f%%) overlap; more "
	         "repetitions (--repeat) or longer ones (--duration) may tell them apart",
	         g, key, spread_pct(v, i), other, spread_pct(v, v->rival[i]));
}

enum { WRAP = 100 };
void dxb_rs_put_wrapped(FILE *f, const char *s, size_t col, size_t indent)
{
	size_t first = col;
	while (*s) {
		size_t word = strcspn(s, " "), w = 0;
		for (size_t k = 0; k < word; k++)
			w += ((unsigned char)s[k] & 0xC0) != 0x80;
		if (col > first && col + 1 + w > WRAP) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = first = indent;
		} else if (col > first) {
			putc(' ', f);
			col++;
		}
		fwrite(s, 1, word, f);
		col += w;
		s += word;
		s += strspn(s, " ");
	}
	putc('\n', f);
}

/* ---- the table and Markdown --------------------------------------------- */

enum { COL_DIM, COL_METRIC, COL_SPREAD };

typedef struct col {
	int kind;            /* COL_DIM, COL_METRIC or COL_SPREAD */
	size_t idx;          /* the dimension or metric */
	const char *head;
	int right;           /* numbers are right-aligned */
	size_t width;        /* in characters on the screen, not bytes */
} col;

/* The columns shared by the table and Markdown: the dimensions, then the
 * metrics, with the primary metric's spread right after it. */
typedef struct layout {
	view v;
	col *cols;
	size_t ncols;
	size_t first_figure; /* where a cell without figures shows its status */
} layout;

/* Screen width of UTF-8 text ("±" is two bytes, one column). */
static size_t text_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

/* Characters that would change a Markdown table if left as they are. */
static int md_special(int ch)
{
	return ch && strchr("\\|*_`<>[]", ch) != NULL;
}

/* Screen width of text once escaped for Markdown. */
static size_t md_width(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n && s[i]; i++)
		w += (((unsigned char)s[i] & 0xC0) != 0x80) + md_special(s[i]);
	return w;
}

/* The text of cell i in column c; "" where it has none.  The status of a
 * cell without figures is not a column's text: the rows write it. */
static const char *col_text(const view *v, size_t i, const col *c, char *buf, size_t n)
{
	const dxb_rs_matrix *m = v->m;
	const dxb_rs_cell *cell = &m->cells[i];
	switch (c->kind) {
	case COL_DIM:
		return dim_value(cell, c->idx);
	case COL_METRIC:
		if (cell->status != DXB_RS_OK)
			return "";
		fmt_figure(buf, n, view_sum(v, i, c->idx)[0], m->metrics[c->idx].decimals);
		return buf;
	case COL_SPREAD:
		if (cell->status != DXB_RS_OK || cell->nreps < 2)
			return "";
		/* Half the range, relative to the median: how far one run may
		 * land from the figure shown. */
		double spread = spread_pct(v, i);
		if (!isfinite(spread) || spread > 1e6)
			return "";
		snprintf(buf, n, "\u00b1%.0f%%", spread);
		return buf;
	}
	return "";
}

/* Sizes each column to its heading and its widest value; in Markdown the
 * escapes, the bold of the fastest and the status words take room too. */
static void size_columns(layout *L, int markdown)
{
	const dxb_rs_matrix *m = L->v.m;
	char buf[64];

	for (size_t c = 0; c < L->ncols; c++) {
		col *cl = &L->cols[c];
		cl->width = markdown ? md_width(cl->head, SIZE_MAX) : text_width(cl->head);
		if (markdown && cl->width < 4)
			cl->width = 4; /* room for the alignment row's "---:" */
		for (size_t i = 0; i < m->ncells; i++) {
			const char *t = col_text(&L->v, i, cl, buf, sizeof buf);
			size_t w = markdown ? md_width(t, SIZE_MAX) : text_width(t);
			if (markdown && cl->kind == COL_METRIC && cl->idx == m->primary &&
			    L->v.fastest[i])
				w += 4;
			if (markdown && c == L->first_figure && m->cells[i].status != DXB_RS_OK)
				w = strlen(dxb_rs_status_name(m->cells[i].status));
			if (w > cl->width)
				cl->width = w;
		}
	}
}

/* Whether every cell has the same value of dimension j: then the table
 * says it once, above the rows, rather than in a column (but for the
 * first dimension, which names the rows). */
static int dim_constant(const dxb_rs_matrix *m, size_t j)
{
	if (m->wide || j == 0 || m->ncells == 0)
		return 0;
	for (size_t i = 1; i < m->ncells; i++)
		if (strcmp(dim_value(&m->cells[i], j), dim_value(&m->cells[0], j)) != 0)
			return 0;
	return 1;
}

/* Whether metric k has a column: the primary always; a hidden one never;
 * one for --wide only with it; and without --wide, none where no cell has
 * a figure (H2D GB/s without a GPU). */
static int metric_shown(const view *v, size_t k)
{
	const dxb_rs_matrix *m = v->m;
	if (k == m->primary)
		return 1;
	if (m->metrics[k].hide == DXB_RS_HIDE || (m->metrics[k].hide == DXB_RS_WIDE && !m->wide))
		return 0;
	for (size_t i = 0; !m->wide && i < m->ncells; i++)
		if (m->cells[i].status == DXB_RS_OK && !isnan(view_sum(v, i, k)[0]))
			return 1;
	return m->wide;
}

static int layout_init(layout *L, const dxb_rs_matrix *m, int markdown)
{
	size_t nd = ndims_of(m), n = 0;
	int spread = 0;
	char buf[64];

	if (view_init(&L->v, m) < 0)
		return -1;
	L->cols = calloc(nd + m->nmetrics + 1, sizeof *L->cols);
	if (!L->cols) {
		view_free(&L->v);
		errno = ENOMEM;
		return -1;
	}
	/* The spread needs repetitions: with one each, its column is left out. */
	for (size_t i = 0; i < m->ncells && m->primary < m->nmetrics; i++)
		spread |= col_text(&L->v, i, &(col){ .kind = COL_SPREAD }, buf, sizeof buf)[0] != '\0';
	for (size_t j = 0; j < nd; j++)
		if (!dim_constant(m, j))
			L->cols[n++] = (col){ COL_DIM, j, dim_label(&m->dims[j]), m->dims[j].numeric, 0 };
	L->first_figure = n;
	for (size_t k = 0; k < m->nmetrics; k++) {
		if (!metric_shown(&L->v, k))
			continue;
		L->cols[n++] = (col){ COL_METRIC, k, metric_label(&m->metrics[k]), 1, 0 };
		if (k == m->primary && spread)
			L->cols[n++] = (col){ COL_SPREAD, k, "\u00b1", 1, 0 };
	}
	L->ncols = n;
	size_columns(L, markdown);
	return 0;
}

/* The text above a table: the header, and the dimensions every cell
 * shares ("workers 1, threads 1"). */
static void put_above(const dxb_rs_matrix *m, FILE *f)
{
	char all[512];
	size_t len = 0;
	for (const char *h = m->header; h && *h;) {
		char one[1024];
		size_t n = strcspn(h, "\n");
		snprintf(one, sizeof one, "%.*s", (int)n, h);
		dxb_rs_put_wrapped(f, one, 0, 2);
		h += n + (h[n] == '\n');
	}
	for (size_t j = 0; j < ndims_of(m) && len < sizeof all; j++)
		if (dim_constant(m, j)) {
			int k = snprintf(all + len, sizeof all - len, "%s%s %s", len ? ", " : "",
			                 str_or_empty(m->dims[j].key), dim_value(&m->cells[0], j));
			len += k > 0 ? (size_t)k : 0;
		}
	if (len)
		fprintf(f, "every cell: %s\n", all);
	if ((m->header && *m->header) || len)
		putc('\n', f);
}

/* What the headings mean, from the notes of the columns shown. */
static void put_notes(const layout *L, FILE *f)
{
	const dxb_rs_matrix *m = L->v.m;
	char text[2048];
	size_t len = 0;
	for (size_t c = 0; c < L->ncols && len < sizeof text; c++) {
		const col *cl = &L->cols[c];
		const char *note = cl->kind == COL_DIM ? m->dims[cl->idx].note
		                   : cl->kind == COL_SPREAD ? "half the range of the repetitions, against the median"
		                                            : m->metrics[cl->idx].note;
		if (!note)
			continue;
		int k = snprintf(text + len, sizeof text - len, "%s%s: %s", len ? "; " : "", cl->head, note);
		len += k > 0 ? (size_t)k : 0;
	}
	if (len)
		dxb_rs_put_wrapped(f, text, 0, 2);
}

static void layout_free(layout *L)
{
	free(L->cols);
}

/* A terminal line whose padding is held back until text follows it, so no
 * line ends in spaces. */
typedef struct line {
	FILE *f;
	size_t pend;
} line;

static void put_pad(line *l, size_t n)
{
	l->pend += n;
}

/* Writes text; a control character (a newline in a reason) would break
 * the row, so it becomes a space. */
static void put_text(line *l, const char *s, size_t n)
{
	if (!n || !*s)
		return;
	for (; l->pend; l->pend--)
		putc(' ', l->f);
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];
		putc(ch < 0x20 || ch == 0x7f ? ' ' : ch, l->f);
	}
}

static void put_col(line *l, const char *s, size_t width, int right)
{
	size_t w = text_width(s), pad = w < width ? width - w : 0;

	if (right)
		put_pad(l, pad);
	put_text(l, s, SIZE_MAX);
	if (!right)
		put_pad(l, pad);
}

static void put_end(line *l)
{
	l->pend = 0;
	putc('\n', l->f);
}

/* Cells without figures, by reason then place, for footnotes(). */
static const dxb_rs_matrix *by_reason_m;
static int same_reason(size_t x, size_t y)
{
	return strncmp(by_reason_m->cells[x].reason, by_reason_m->cells[y].reason,
	               sizeof by_reason_m->cells[x].reason);
}

static int cmp_reason(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = same_reason(x, y);
	return c ? c : (x > y) - (x < y);
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* The footnote of each cell's reason in note[] (0 for none): a reason
 * shared by many rows (no GPU) is written once, numbered from 1 in the
 * order of the first row that gives it.  The cells are sorted by reason,
 * so a report of many failed cells costs n log n.  Returns the number of
 * footnotes, or -1 when out of memory. */
static long footnotes(const dxb_rs_matrix *m, size_t *note)
{
	size_t cap = m->ncells ? m->ncells : 1, n = 0, nfirst = 0;
	size_t *by = malloc(cap * sizeof *by), *first = malloc(cap * sizeof *first);
	size_t *head = malloc(cap * sizeof *head);
	if (!by || !first || !head) {
		free(by);
		free(first);
		free(head);
		return -1;
	}
	for (size_t i = 0; i < m->ncells; i++) {
		note[i] = 0;
		if (m->cells[i].status != DXB_RS_OK && reason_len(&m->cells[i]))
			by[n++] = i;
	}
	by_reason_m = m;
	qsort(by, n, sizeof *by, cmp_reason);
	/* Each group of one reason starts with its first row. */
	for (size_t k = 0; k < n; k++) {
		if (k == 0 || same_reason(by[k - 1], by[k]) != 0)
			first[nfirst++] = by[k];
		head[by[k]] = first[nfirst - 1];
	}
	qsort(first, nfirst, sizeof *first, cmp_size);
	for (size_t k = 0; k < nfirst; k++)
		note[first[k]] = k + 1;
	for (size_t k = 0; k < n; k++)
		note[by[k]] = note[head[by[k]]];
	free(by);
	free(first);
	free(head);
	return (long)nfirst;
}

int dxb_rs_write_table(const dxb_rs_matrix *m, FILE *f)
{
	layout L;
	line l = { f, 0 };
	char buf[64], words[1024];

	errno = 0;
	if (layout_init(&L, m, 0) < 0)
		return -1;
	size_t *note = malloc((m->ncells ? m->ncells : 1) * sizeof *note);
	long notes = note ? footnotes(m, note) : -1;
	if (notes < 0) {
		free(note);
		layout_free(&L);
		view_free(&L.v);
		errno = ENOMEM;
		return -1;
	}
	if (m->preamble)
		fprintf(f, "%s\n", m->preamble);
	put_above(m, f);
	/* The mark's column, one character wide, then the headings. */
	put_pad(&l, 1);
	for (size_t c = 0; c < L.ncols; c++) {
		put_pad(&l, 2);
		put_col(&l, L.cols[c].head, L.cols[c].width, L.cols[c].right);
	}
	put_end(&l);
	for (size_t i = 0; i < m->ncells; i++) {
		const dxb_rs_cell *cell = &m->cells[i];
		put_col(&l, L.v.fastest[i] ? "*" : "", 1, 0);
		for (size_t c = 0; c < L.ncols; c++) {
			put_pad(&l, 2);
			if (c == L.first_figure && cell->status != DXB_RS_OK) {
				/* No figures: the status where they would start,
				 * and the number of its reason below the table. */
				put_text(&l, dxb_rs_status_name(cell->status), SIZE_MAX);
				if (note[i]) {
					snprintf(buf, sizeof buf, " [%zu]", note[i]);
					put_text(&l, buf, SIZE_MAX);
				}
				break;
			}
			put_col(&l, col_text(&L.v, i, &L.cols[c], buf, sizeof buf), L.cols[c].width,
			        L.cols[c].right);
		}
		put_end(&l);
	}
	for (size_t i = 0, next = 1; i < m->ncells && next <= (size_t)notes; i++)
		if (note[i] == next) {
			snprintf(words, sizeof words, "[%zu] %.*s", next++, (int)reason_len(&m->cells[i]),
			         m->cells[i].reason);
			dxb_rs_put_wrapped(f, words, 0, 4);
		}
	if (L.v.any_fastest) {
		fastest_words(m, words + 2, sizeof words - 2);
		memcpy(words, "* ", 2);
		dxb_rs_put_wrapped(f, words, 0, 2);
	}
	for (size_t i = 0; i < m->ncells; i++)
		if (L.v.top[i] && !L.v.fastest[i]) {
			unclear_words(&L.v, i, words, sizeof words);
			dxb_rs_put_wrapped(f, words, 0, 2);
		}
	put_notes(&L, f);
	if (m->epilogue)
		fprintf(f, "\n%s", m->epilogue);
	free(note);
	layout_free(&L);
	return finish(&L.v, f);
}

/* Writes text escaped for a Markdown table cell, padded to width. */
static void md_cell(FILE *f, const char *s, size_t n, size_t width, int right, int bold)
{
	size_t w = md_width(s, n) + (bold ? 4 : 0);
	size_t pad = w < width ? width - w : 0;

	fputs("| ", f);
	for (size_t i = 0; right && i < pad; i++)
		putc(' ', f);
	if (bold)
		fputs("**", f);
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (md_special(ch))
			putc('\\', f);
		putc(ch < 0x20 || ch == 0x7f ? ' ' : ch, f);
	}
	if (bold)
		fputs("**", f);
	for (size_t i = 0; !right && i < pad; i++)
		putc(' ', f);
	putc(' ', f);
}

int dxb_rs_write_markdown(const dxb_rs_matrix *m, FILE *f)
{
	static const char note[] = "note";
	layout L;
	char buf[64], words[256];
	size_t note_width = sizeof note - 1;

	errno = 0;
	if (layout_init(&L, m, 1) < 0)
		return -1;
	/* The text around the table is laid out for a terminal: kept as it
	 * is in a fenced block. */
	if (m->preamble)
		fprintf(f, "```\n%s```\n\n", m->preamble);
	/* What went wrong gets a last column, only when something did. */
	for (size_t i = 0; i < m->ncells && L.v.any_failed; i++)
		if (m->cells[i].status != DXB_RS_OK) {
			size_t w = md_width(m->cells[i].reason, reason_len(&m->cells[i]));
			note_width = w > note_width ? w : note_width;
		}

	for (size_t c = 0; c < L.ncols; c++)
		md_cell(f, L.cols[c].head, SIZE_MAX, L.cols[c].width, 0, 0);
	if (L.v.any_failed)
		md_cell(f, note, SIZE_MAX, note_width, 0, 0);
	fputs("|\n", f);
	for (size_t c = 0; c < L.ncols; c++) {
		fputs(L.cols[c].right ? "| " : "| :", f);
		for (size_t d = 1; d < L.cols[c].width; d++)
			putc('-', f);
		fputs(L.cols[c].right ? ": " : " ", f);
	}
	if (L.v.any_failed) {
		fputs("| :", f);
		for (size_t d = 1; d < note_width; d++)
			putc('-', f);
		putc(' ', f);
	}
	fputs("|\n", f);

	for (size_t i = 0; i < m->ncells; i++) {
		const dxb_rs_cell *cell = &m->cells[i];
		for (size_t c = 0; c < L.ncols; c++) {
			const col *cl = &L.cols[c];
			const char *t = col_text(&L.v, i, cl, buf, sizeof buf);
			if (c == L.first_figure && cell->status != DXB_RS_OK)
				t = dxb_rs_status_name(cell->status);
			md_cell(f, t, SIZE_MAX, cl->width, cl->right,
			        cl->kind == COL_METRIC && cl->idx == m->primary && L.v.fastest[i]);
		}
		if (L.v.any_failed) {
			if (cell->status != DXB_RS_OK)
				md_cell(f, cell->reason, reason_len(cell), note_width, 0, 0);
			else
				md_cell(f, "", 0, note_width, 0, 0);
		}
		fputs("|\n", f);
	}
	if (L.v.any_fastest) {
		fastest_words(m, words, sizeof words);
		/* A blank line first, or it would be read as a row. */
		fprintf(f, "\n**Bold**: %s.\n", words);
	}
	if (m->epilogue)
		fprintf(f, "\n```\n%s```\n", m->epilogue);
	layout_free(&L);
	return finish(&L.v, f);
}

/* ---- CSV ---------------------------------------------------------------- */

/* One field, quoted as RFC 4180 has it when it holds a separator, a quote
 * or a line break. */
static void csv_field(FILE *f, const char *s, size_t n)
{
	size_t len = strnlen(s, n);

	if (!memchr(s, ',', len) && !memchr(s, '"', len) && !memchr(s, '\n', len) &&
	    !memchr(s, '\r', len)) {
		fwrite(s, 1, len, f);
		return;
	}
	putc('"', f);
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"')
			putc('"', f);
		putc(s[i], f);
	}
	putc('"', f);
}

/* A number as the JSON report writes it, or an empty field where there is
 * none (NaN, infinity). */
static void csv_num(FILE *f, double x)
{
	char buf[64];

	if (!isfinite(x))
		return;
	dx__json_format_figure(buf, sizeof buf, x);
	fputs(buf, f);
}

int dxb_rs_write_csv(const dxb_rs_matrix *m, FILE *f)
{
	view v;
	char key[1024], name[256];

	errno = 0;
	if (view_init(&v, m) < 0)
		return -1;
	fputs("key", f);
	for (size_t j = 0; j < ndims_of(m); j++) {
		putc(',', f);
		csv_field(f, str_or_empty(m->dims[j].key), SIZE_MAX);
	}
	fputs(",status,reason,repetitions,projected_bytes", f);
	for (size_t k = 0; k < m->nmetrics; k++) {
		const char *mk = str_or_empty(m->metrics[k].key);
		putc(',', f);
		csv_field(f, mk, SIZE_MAX);
		/* Suffixed inside the field, so a key that needs quotes
		 * keeps its suffix within them. */
		snprintf(name, sizeof name, "%s_min", mk);
		putc(',', f);
		csv_field(f, name, SIZE_MAX);
		snprintf(name, sizeof name, "%s_max", mk);
		putc(',', f);
		csv_field(f, name, SIZE_MAX);
	}
	putc('\n', f);

	for (size_t i = 0; i < m->ncells; i++) {
		const dxb_rs_cell *c = &m->cells[i];
		csv_field(f, dxb_rs_cell_key(m, c, key, sizeof key), SIZE_MAX);
		for (size_t j = 0; j < ndims_of(m); j++) {
			putc(',', f);
			csv_field(f, dim_value(c, j), SIZE_MAX);
		}
		fprintf(f, ",%s,", dxb_rs_status_name(c->status));
		csv_field(f, c->reason, sizeof c->reason);
		fprintf(f, ",%zu,", c->nreps);
		csv_num(f, c->projected);
		for (size_t k = 0; k < m->nmetrics; k++) {
			const double *s = view_sum(&v, i, k);
			for (int q = 0; q < 3; q++) {
				putc(',', f);
				if (c->status == DXB_RS_OK)
					csv_num(f, s[q]);
			}
		}
		putc('\n', f);
	}
	return finish(&v, f);
}

/* ---- JSON --------------------------------------------------------------- */

static int to_file(void *ctx, const void *p, size_t len)
{
	return fwrite(p, 1, len, ctx) == len ? 0 : -1;
}

/* A JSON text rendered by the command, copied as it is; nothing (NULL or
 * blank) would leave the report invalid, so it becomes null. */
static void json_raw(dx_json_writer *w, const char *s)
{
	size_t n;

	if (s)
		s += strspn(s, " \t\r\n");
	if (!s || !*s) {
		dx__jw_null(w);
		return;
	}
	for (n = strlen(s); n && strchr(" \t\r\n", s[n - 1]); n--)
		;
	dx__jw_raw(w, s, n);
}

/* A numeric dimension's value as a JSON number when it is one; text that
 * is not a decimal integer stays a string, so the report still parses. */
static void json_dim(dx_json_writer *w, const dxb_rs_dim *d, const char *s)
{
	int saved = errno; /* a write error's, for the writer to return */
	char *end;
	long long v;

	if (d->numeric && *s) {
		errno = 0;
		v = strtoll(s, &end, 10);
		int ok = !*end && errno != ERANGE;
		errno = saved;
		if (ok) {
			dx__jw_int(w, v);
			return;
		}
	}
	dx__jw_cstring(w, s);
}

static const char *better_name(int better)
{
	return better == DXB_RS_HIGHER ? "higher" : better == DXB_RS_LOWER ? "lower" : "neither";
}

/* A cell in lines of its own; its summary of each metric and each of its
 * repetitions on one line: long, but one run reads as one row. */
static void json_cell(const view *v, size_t i, dx_json_writer *w)
{
	const dxb_rs_matrix *m = v->m;
	const dxb_rs_cell *c = &m->cells[i];
	char key[1024];

	dx__jw_begin_object(w, DX_JW_BLOCK);
	dx__jw_key(w, "key");
	dx__jw_cstring(w, dxb_rs_cell_key(m, c, key, sizeof key));
	for (size_t j = 0; j < ndims_of(m); j++) {
		dx__jw_key(w, str_or_empty(m->dims[j].key));
		json_dim(w, &m->dims[j], dim_value(c, j));
	}
	dx__jw_key(w, "status");
	dx__jw_cstring(w, dxb_rs_status_name(c->status));
	dx__jw_key(w, "reason");
	dx__jw_string(w, c->reason, reason_len(c));
	dx__jw_key(w, "projected_bytes");
	dx__jw_figure(w, c->projected);
	dx__jw_key(w, "fastest");
	dx__jw_bool(w, v->fastest[i]);
	dx__jw_key(w, "summary");
	dx__jw_begin_object(w, DX_JW_BLOCK);
	for (size_t k = 0; c->status == DXB_RS_OK && k < m->nmetrics; k++) {
		const double *s = view_sum(v, i, k);
		dx__jw_key(w, str_or_empty(m->metrics[k].key));
		dx__jw_begin_object(w, DX_JW_INLINE);
		dx__jw_key(w, "median");
		dx__jw_figure(w, s[0]);
		dx__jw_key(w, "min");
		dx__jw_figure(w, s[1]);
		dx__jw_key(w, "max");
		dx__jw_figure(w, s[2]);
		dx__jw_end_object(w);
	}
	dx__jw_end_object(w);
	dx__jw_key(w, "repetitions");
	dx__jw_begin_array(w, DX_JW_BLOCK);
	size_t nreps = c->status == DXB_RS_OK && c->rep ? c->nreps : 0;
	for (size_t r = 0; r < nreps; r++) {
		dx__jw_begin_object(w, DX_JW_INLINE);
		for (size_t k = 0; k < m->nmetrics; k++) {
			dx__jw_key(w, str_or_empty(m->metrics[k].key));
			dx__jw_figure(w, c->rep[r * m->nmetrics + k]);
		}
		dx__jw_end_object(w);
	}
	dx__jw_end_array(w);
	dx__jw_end_object(w);
}

int dxb_rs_write_json(const dxb_rs_matrix *m, FILE *f)
{
	view v;
	dx_json_writer w;
	char report[128];

	errno = 0;
	if (view_init(&v, m) < 0)
		return -1;
	dx__jw_init(&w, to_file, f, 0);
	dx__jw_begin_object(&w, DX_JW_BLOCK);
	dx__jw_key(&w, "report");
	snprintf(report, sizeof report, "docdex %s", str_or_empty(m->command));
	dx__jw_cstring(&w, report);
	dx__jw_key(&w, "format_version");
	dx__jw_uint(&w, 1);
	dx__jw_key(&w, "build");
	json_raw(&w, m->build_json);
	dx__jw_key(&w, "machine");
	json_raw(&w, m->machine_json);
	if (m->environment_json) {
		dx__jw_key(&w, "environment");
		json_raw(&w, m->environment_json);
	}
	dx__jw_key(&w, "params");
	json_raw(&w, m->params_json);
	dx__jw_key(&w, "metrics");
	dx__jw_begin_array(&w, DX_JW_BLOCK);
	for (size_t k = 0; k < m->nmetrics; k++) {
		const dxb_rs_metric *mt = &m->metrics[k];
		dx__jw_begin_object(&w, DX_JW_INLINE);
		dx__jw_key(&w, "key");
		dx__jw_cstring(&w, str_or_empty(mt->key));
		dx__jw_key(&w, "label");
		dx__jw_cstring(&w, metric_label(mt));
		dx__jw_key(&w, "unit");
		dx__jw_cstring(&w, str_or_empty(mt->unit));
		dx__jw_key(&w, "better");
		dx__jw_cstring(&w, better_name(mt->better));
		dx__jw_key(&w, "gate");
		dx__jw_bool(&w, mt->gate);
		dx__jw_end_object(&w);
	}
	dx__jw_end_array(&w);
	dx__jw_key(&w, "cells");
	dx__jw_begin_array(&w, DX_JW_BLOCK);
	for (size_t i = 0; i < m->ncells; i++)
		json_cell(&v, i, &w);
	dx__jw_end_array(&w);
	if (m->summary_json) {
		dx__jw_key(&w, "summary");
		json_raw(&w, m->summary_json);
	}
	dx__jw_end_object(&w);
	/* A failed write leaves its trace in f's error flag, which finish reads. */
	dx__jw_finish(&w);
	putc('\n', f);
	return finish(&v, f);
}

/* A metric's name and the unit to write after its figures.  Labels carry
 * their units ("PSS MiB", "p50 ms"): the unit is split off to follow the
 * figures instead; a rate's ("1/s") goes unsaid, "samples/s" says it. */
void dxb_rs_split_label(const dxb_rs_metric *k, const char **name, int *namelen, const char **unit)
{
	const char *l = k->label ? k->label : k->key ? k->key : "";
	size_t n = strlen(l), u = k->unit ? strlen(k->unit) : 0;
	*name = l;
	*unit = NULL;
	if (u && strncmp(k->unit, "1/", 2) != 0) {
		if (n > u + 1 && l[n - u - 1] == ' ' && strcmp(l + n - u, k->unit) == 0)
			n -= u + 1;
		if (strcmp(l, k->unit) != 0)
			*unit = k->unit;
	}
	*namelen = n > 4096 ? 4096 : (int)n;
}
