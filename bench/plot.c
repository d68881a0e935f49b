/*
 * plot.c: the SVG plot of a measurement matrix (dxb_rs_write_svg).  Two panels,
 * one per plotted metric, with the x dimension (workers) across and one
 * line per series: the DXB_RS_OK cells that share every other dimension.  A
 * point is a cell's median, a bar through it its min..max over the
 * repetitions.  Plain SVG 1.1, no script and no CSS, so that a browser, an
 * image viewer and an XML parser all read it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dxbench.h"

/* Geometry in SVG user units (pixels). */
enum {
	PANEL_W = 420,   /* a panel, its margins included */
	PANEL_H = 340,
	PAD_L = 84,      /* the plot area inside a panel: room for a tick
	                    label such as "150 MiB" and the axis title */
	PAD_R = 18,
	PAD_T = 30,
	PAD_B = 54,
	HEAD = 56,       /* the title band above the panels, without the
	                    header's lines (LINE_H each) */
	LINE_H = 15,
	ROW = 18,        /* a legend entry */
	CHAR_W = 7,      /* a rough width of a character at font-size 12 */
	LABEL_MAX = 256
};

/* Distinguishable on white and for the common colour blindnesses; a ninth
 * series and beyond reuse them with a dash pattern. */
static const char *const palette[] = {
	"#0072b2", "#e69f00", "#009e73", "#d55e00",
	"#cc79a7", "#56b4e9", "#7f7f7f", "#000000",
};
enum { NCOLOURS = sizeof palette / sizeof palette[0] };

typedef struct series {
	size_t first;            /* its first cell, whose values name it */
	size_t ok;               /* where its DXB_RS_OK cells start in the order array */
	size_t nok;              /* how many, sorted by x */
	size_t nbad;             /* its cells that are not DXB_RS_OK */
	size_t bad;              /* where those start in the bad array */
	char label[LABEL_MAX];   /* "mmap/t2" */
	char note[LABEL_MAX];    /* "(oom)", or "(oom at j8)" beside a line */
} series;

/* What the panels share: the matrix sorted into series, and the x axis. */
typedef struct plot {
	const dxb_rs_matrix *m;
	FILE *f;
	series *s;
	size_t ns;
	size_t *order;           /* the DXB_RS_OK cells, series by series */
	size_t *bad;             /* the other cells, series by series */
	size_t *sid;             /* the series of each cell */
	double *x;               /* each cell's position on the x axis (unscaled) */
	unsigned char *xfirst;   /* the cell is the first at its x: it gets the tick */
	int categorical;         /* x values are not all numbers: ordinals instead */
	int logx;                /* x spans a factor of 8 or more: log2 scale */
	double xlo, xhi;         /* the scaled x range */
	size_t minreps, maxreps; /* the repetitions of the OK cells */
	unsigned char varies[DXB_RS_MAX_DIMS]; /* the dimension differs between cells */
	unsigned char *fastest;  /* the cell is clearly the fastest at its x */
	int head;                /* the title band's height */
} plot;

static const char *dimval(const dxb_rs_cell *c, size_t d)
{
	return c->dim[d] ? c->dim[d] : "";
}

/* A label falls back on the key, as in the other reports. */
static const char *dim_label(const dxb_rs_dim *d)
{
	return d->label ? d->label : d->key ? d->key : "";
}

/* The dimensions a cell can hold values for, however many m claims. */
static size_t ndims_of(const dxb_rs_matrix *m)
{
	return m->ndims < DXB_RS_MAX_DIMS ? m->ndims : DXB_RS_MAX_DIMS;
}

static const char *sci(char *buf, size_t n, double m, int e);

/* Numbers are written by hand rather than with %f, whose decimal point
 * follows LC_NUMERIC: a comma there would break every coordinate. */
static const char *num(char *buf, size_t n, double v, int decimals)
{
	static const unsigned long long pow10[] = { 1, 10, 100, 1000, 10000, 100000, 1000000 };
	if (decimals < 0)
		decimals = 0;
	if (decimals > 6)
		decimals = 6;
	if (!isfinite(v))
		v = 0;
	/* No measurement comes near: an absurd value read from a report
	 * (1.6e308) is written as one, not in 309 digits. */
	if (fabs(v) >= 1e15) {
		int e = (int)floor(log10(fabs(v)));
		return sci(buf, n, v / pow(10, e), e);
	}
	double r = round(fabs(v) * (double)pow10[decimals]);
	if (r >= 9e18) {
		/* %.0f prints no decimal point, and no grouping without the ' flag. */
		snprintf(buf, n, "%.0f", v);
		return buf;
	}
	unsigned long long u = (unsigned long long)r, p = pow10[decimals];
	const char *sign = v < 0 && u ? "-" : "";
	if (decimals)
		snprintf(buf, n, "%s%llu.%0*llu", sign, u / p, decimals, u % p);
	else
		snprintf(buf, n, "%s%llu", sign, u);
	return buf;
}

/* m times ten to the e as "1.25e308": m brought into [1, 10), to three
 * decimals at most. */
static const char *sci(char *buf, size_t n, double m, int e)
{
	char mant[32];
	if (m == 0 || !isfinite(m)) {
		snprintf(buf, n, "0");
		return buf;
	}
	/* At most a few hundred steps: m and 10^e are finite doubles. */
	for (; fabs(m) >= 10; e++)
		m /= 10;
	for (; fabs(m) < 1; e--)
		m *= 10;
	if (round(fabs(m) * 1000) >= 10000) {
		m /= 10;
		e++;
	}
	size_t len = strlen(num(mant, sizeof mant, m, 3));
	while (mant[len - 1] == '0')
		mant[--len] = '\0';
	if (mant[len - 1] == '.')
		mant[--len] = '\0';
	snprintf(buf, n, "%se%d", mant, e);
	return buf;
}

/* A coordinate, to a tenth of a pixel. */
static const char *coord(char *buf, size_t n, double v)
{
	return num(buf, n, v, 1);
}

/* The length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned cp;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	cp = p[0] & (0x7fu >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Text as XML character data or attribute value.  Control characters and
 * bytes that are not UTF-8 (a path in a reason) become '?': XML has no way
 * to hold them, and a parser rejects the whole document over one. */
static void put_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t n = utf8_len(p);
		switch (n == 1 ? *p : 0) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			if (n == 0 || (n == 1 && *p < 0x20 && *p != '\t' && *p != '\n'))
				fputc('?', f);
			else
				fwrite(p, 1, n, f);
		}
		p += n ? n : 1;
	}
}

/* Appends s to buf (of size n), truncating. */
static void append(char *buf, size_t n, const char *s)
{
	size_t len = strlen(buf);
	if (len + 1 < n)
		snprintf(buf + len, n - len, "%s", s);
}

/* A dimension's value as a key shows it: "j4" for a numeric one. */
static void append_value(char *buf, size_t n, const dxb_rs_dim *d, const char *v)
{
	if (d->numeric)
		append(buf, n, dim_label(d));
	append(buf, n, v);
}


/* Whether the ticks of metric k carry its unit: sizes, in MiB or GiB as
 * the axis reaches. */
static int sized(const dxb_rs_metric *k)
{
	return k->unit && strcmp(k->unit, "MiB") == 0;
}

/* An axis title: "samples/s", "PSS", "p50 (ms)". */
static void metric_title(char *buf, size_t n, const dxb_rs_metric *k)
{
	const char *name, *unit;
	int len;
	dxb_rs_split_label(k, &name, &len, &unit);
	if (unit && !sized(k))
		snprintf(buf, n, "%.*s (%s)", len, name, unit);
	else
		snprintf(buf, n, "%.*s", len, name);
}

/* The order of cells by series, every dimension but x, then by place. */
typedef struct by_series {
	const dxb_rs_matrix *m;
	size_t i;
} by_series;

/* Cells i and j by the dimensions that name a series: 0 when they share
 * them. */
static int series_order(const dxb_rs_matrix *m, size_t i, size_t j)
{
	for (size_t d = 0; d < ndims_of(m); d++) {
		int c = d == m->x_dim ? 0 : strcmp(dimval(&m->cells[i], d), dimval(&m->cells[j], d));
		if (c)
			return c;
	}
	return 0;
}

static int cmp_series(const void *a, const void *b)
{
	const by_series *x = a, *y = b;
	int c = series_order(x->m, x->i, y->i);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Notes which dimensions differ between cells, once for every label. */
static void varying_dims(plot *p)
{
	const dxb_rs_matrix *m = p->m;
	for (size_t d = 0; d < ndims_of(m); d++)
		for (size_t i = 1; i < m->ncells && !p->varies[d]; i++)
			p->varies[d] = strcmp(dimval(&m->cells[i], d), dimval(&m->cells[0], d)) != 0;
}

/* The series' name: the values of the dimensions that vary, or of the
 * first dimension besides x when none does, so that a lone line is still
 * called something. */
static void series_label(const plot *p, const dxb_rs_cell *c, char *buf, size_t n)
{
	const dxb_rs_matrix *m = p->m;
	buf[0] = '\0';
	for (size_t d = 0; d < ndims_of(m); d++) {
		if (d == m->x_dim || !p->varies[d])
			continue;
		if (buf[0])
			append(buf, n, "/");
		append_value(buf, n, &m->dims[d], dimval(c, d));
	}
	for (size_t d = 0; d < ndims_of(m) && !buf[0]; d++)
		if (d != m->x_dim)
			append_value(buf, n, &m->dims[d], dimval(c, d));
	if (!buf[0])
		append(buf, n, "all cells");
}

static const char *status_word(int status)
{
	switch (status) {
	case DXB_RS_OOM: return "oom";
	case DXB_RS_FAILED: return "failed";
	case DXB_RS_SKIPPED: return "skipped";
	}
	return "ok";
}

/* "(oom)" for a series without figures; "(oom at j8, j16; failed at j32)"
 * for the gaps in one that has a line. */
static void series_note(const plot *p, const series *s, char *buf, size_t n)
{
	static const int bad[] = { DXB_RS_OOM, DXB_RS_FAILED, DXB_RS_SKIPPED };
	const dxb_rs_matrix *m = p->m;
	buf[0] = '\0';
	for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
		int first = 1;
		/* The series' own cells without figures, in their order. */
		for (size_t q = 0; q < s->nbad; q++) {
			const dxb_rs_cell *c = &m->cells[p->bad[s->bad + q]];
			if (c->status != bad[b])
				continue;
			if (s->nok == 0) {
				/* The first status found, in the order of bad[], names it. */
				snprintf(buf, n, "(%s)", status_word(bad[b]));
				return;
			}
			append(buf, n, first ? (buf[0] ? "; " : "(") : ", ");
			if (first) {
				append(buf, n, status_word(bad[b]));
				append(buf, n, " at ");
			}
			append_value(buf, n, &m->dims[m->x_dim], dimval(c, m->x_dim));
			first = 0;
		}
	}
	if (buf[0])
		append(buf, n, ")");
}

static double xscale(const plot *p, double x)
{
	return p->logx ? log2(x) : x;
}

/* A cell's place in an order by text or by number, ties broken by the
 * cell's place in the matrix so that sorting keeps the matrix's order. */
typedef struct ranked {
	const char *s;
	double x;
	size_t group;
	size_t i;
} ranked;

static int cmp_text(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* By group, then x, then place. */
static int cmp_x(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* first[i]: the first cell whose x value is the same as cell i's, by
 * sorting (r has room for every cell).  The equal values are one run of
 * the sorted cells, which starts with the first of them. */
static void first_of_equal(const plot *p, ranked *r, size_t *first, int by_text)
{
	const dxb_rs_matrix *m = p->m;
	size_t n = m->ncells;
	for (size_t i = 0; i < n; i++)
		r[i] = (ranked){ .s = dimval(&m->cells[i], m->x_dim), .x = p->x[i], .i = i };
	qsort(r, n, sizeof *r, by_text ? cmp_text : cmp_x);
	for (size_t a = 0, b; a < n; a = b) {
		for (b = a; b < n && (by_text ? strcmp(r[b].s, r[a].s) == 0 : r[b].x == r[a].x); b++)
			first[r[b].i] = r[a].i;
	}
}

/* The x values: numbers when every cell has one, else the ordinal of each
 * distinct value in the order the cells come.  Also marks the cell that
 * is first at each x (xfirst), where the axis gets its tick.  r and tmp
 * have room for every cell. */
static void x_values(plot *p, ranked *r, size_t *tmp)
{
	const dxb_rs_matrix *m = p->m;
	for (size_t i = 0; i < m->ncells && !p->categorical; i++) {
		const char *v = dimval(&m->cells[i], m->x_dim);
		char *end;
		p->x[i] = strtod(v, &end);
		if (!*v || *end || !isfinite(p->x[i]))
			p->categorical = 1;
	}
	if (p->categorical) {
		double next = 0;
		first_of_equal(p, r, tmp, 1);
		for (size_t i = 0; i < m->ncells; i++)
			p->x[i] = tmp[i] < i ? p->x[tmp[i]] : next++;
	}
	first_of_equal(p, r, tmp, 0);
	for (size_t i = 0; i < m->ncells; i++)
		p->xfirst[i] = tmp[i] == i;
	double lo = p->x[0], hi = p->x[0];
	for (size_t i = 1; i < m->ncells; i++) {
		lo = fmin(lo, p->x[i]);
		hi = fmax(hi, p->x[i]);
	}
	/* Workers double from run to run: 1, 2, 4 ... 32 would crowd the first
	 * points into a corner on a linear scale. */
	p->logx = !p->categorical && lo > 0 && hi / lo >= 8;
	p->xlo = xscale(p, lo);
	p->xhi = xscale(p, hi);
}

/* Sorts the cells into series: those that share every dimension but x,
 * numbered in the order of their first cells, each with its DXB_RS_OK cells
 * sorted by x (in order) and its other cells (in bad).  A sort, not a
 * pass over the series for every cell: a report may hold thousands.
 * Returns 0, or -1 when out of memory. */
static int make_series(plot *p, ranked *r, size_t *tmp)
{
	const dxb_rs_matrix *m = p->m;
	size_t n = m->ncells, nok = 0;
	by_series *by = malloc(n * sizeof *by);
	if (!by)
		return -1;
	for (size_t i = 0; i < n; i++)
		by[i] = (by_series){ m, i };
	qsort(by, n, sizeof *by, cmp_series);
	/* tmp[i]: the first cell of cell i's series, which names it. */
	for (size_t a = 0, b; a < n; a = b)
		for (b = a; b < n && series_order(m, by[a].i, by[b].i) == 0; b++)
			tmp[by[b].i] = by[a].i;
	free(by);
	p->ns = 0;
	for (size_t i = 0; i < n; i++)
		p->sid[i] = tmp[i] == i ? p->ns++ : p->sid[tmp[i]];
	if (!(p->s = calloc(p->ns, sizeof *p->s)))
		return -1;
	for (size_t i = 0; i < n; i++) {
		series *s = &p->s[p->sid[i]];
		if (tmp[i] == i)
			s->first = i;
		if (m->cells[i].status == DXB_RS_OK) {
			s->nok++;
			nok++;
			size_t reps = m->cells[i].nreps;
			if (p->maxreps == 0 || reps < p->minreps)
				p->minreps = reps;
			if (reps > p->maxreps)
				p->maxreps = reps;
		} else {
			s->nbad++;
		}
	}
	/* Where each series' cells start, then the cells in their order. */
	for (size_t j = 0, ok = 0, bad = 0; j < p->ns; j++) {
		p->s[j].ok = ok;
		p->s[j].bad = bad;
		ok += p->s[j].nok;
		bad += p->s[j].nbad;
		p->s[j].nok = p->s[j].nbad = 0;
	}
	for (size_t i = 0; i < n; i++) {
		series *s = &p->s[p->sid[i]];
		if (m->cells[i].status == DXB_RS_OK)
			p->order[s->ok + s->nok++] = i;
		else
			p->bad[s->bad + s->nbad++] = i;
	}
	/* The OK cells by series, then by x: a stable order, as each series'
	 * cells are already in the matrix's. */
	for (size_t q = 0; q < nok; q++)
		r[q] = (ranked){ .x = p->x[p->order[q]], .group = p->sid[p->order[q]], .i = p->order[q] };
	qsort(r, nok, sizeof *r, cmp_x);
	for (size_t q = 0; q < nok; q++)
		p->order[q] = r[q].i;
	for (size_t j = 0; j < p->ns; j++) {
		series *s = &p->s[j];
		series_label(p, &m->cells[s->first], s->label, sizeof s->label);
		series_note(p, s, s->note, sizeof s->note);
	}
	return 0;
}

/* Enough decimals to tell the multiples of step apart: 2.5 needs one. */
static int step_decimals(double step)
{
	double e = floor(log10(step) + 1e-9);
	int d = (int)-e;
	if (fabs(step / pow(10, e) - 2.5) < 1e-9)
		d++;
	return d > 0 ? d : 0;
}

/* The gridline step: 1, 2, 2.5 or 5 times a power of ten, the smallest
 * that covers max in at most 6 steps; as each is at most twice the one
 * before, that is always at least 4 steps. */
static double nice_step(double max)
{
	static const double mult[] = { 1, 2, 2.5, 5, 10 };
	double p = pow(10, floor(log10(max / 6)));
	for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++)
		if (ceil(max / (p * mult[i]) - 1e-9) <= 6)
			return p * mult[i];
	return p * 10;
}

/* The y axis of a panel: n gridlines step apart above 0, up to ymax. */
typedef struct yaxis {
	double step, ymax;
	int n;
} yaxis;

/* The label of gridline i, scaled to the axis's top so that the labels
 * fit the margin and read as people write them: "1.5M" rather than
 * "1500k", "10 GiB" rather than "10k" MiB.  "2.5e307" for steps no
 * measurement takes (a value read from a report may be anything), in steps
 * so that the last need not be a number beyond a double's range. */
static void tick_label(char *buf, size_t n, int line_no, const yaxis *ya, const dxb_rs_metric *k)
{
	static const char suffix[] = "kMGT";
	static const char *const size_unit[] = { " MiB", " GiB", " TiB" };
	double step = ya->step, scale = 1, v = step * line_no;
	int i = -1;
	if (step >= 1e15 || step_decimals(step) > 6) {
		int e = (int)floor(log10(step));
		sci(buf, n, line_no * (step / pow(10, e)), e);
		return;
	}
	double base = sized(k) ? 1024 : 1000;
	/* The last unit each list has: TiB (sizes are in MiB), or T. */
	int last = sized(k) ? 1 : 3;
	while (i < last && ya->ymax >= scale * base) {
		scale *= base;
		i++;
	}
	num(buf, n, v / scale, step_decimals(step / scale));
	if (v == 0)
		return;
	if (sized(k)) {
		append(buf, n, size_unit[i + 1]);
	} else if (i >= 0) {
		char s[2] = { suffix[i], '\0' };
		append(buf, n, s);
	}
}

static double xpos(const plot *p, double x)
{
	double w = PANEL_W - PAD_L - PAD_R, pad = w * 0.06;
	double span = p->xhi - p->xlo, at = xscale(p, x) - p->xlo;
	if (p->xhi <= p->xlo)
		return PAD_L + w / 2;
	/* x values of either sign near a double's limit: their differences
	 * overflow, their halves' do not. */
	if (!isfinite(span) || !isfinite(at)) {
		span = p->xhi / 2 - p->xlo / 2;
		at = xscale(p, x) / 2 - p->xlo / 2;
	}
	return PAD_L + pad + at / span * (w - 2 * pad);
}

/* Where value v goes, kept within the plot area: a value below 0 (none
 * is measured so) sits on the x axis rather than pages below it. */
static double ypos(const yaxis *ya, double v)
{
	double h = PANEL_H - PAD_T - PAD_B;
	/* A top near a double's limit makes ymax infinite: then in steps. */
	double f = isfinite(ya->ymax) ? v / ya->ymax : v / ya->step / ya->n;
	return fmin(fmax(PAD_T + h - f * h, PAD_T), PAD_T + h);
}

static void line(FILE *f, double x1, double y1, double x2, double y2, const char *attrs)
{
	char a[32], b[32], c[32], d[32];
	fprintf(f, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" %s/>\n", coord(a, sizeof a, x1),
	        coord(b, sizeof b, y1), coord(c, sizeof c, x2), coord(d, sizeof d, y2), attrs);
}

static void text(FILE *f, double x, double y, const char *attrs, const char *s)
{
	char a[32], b[32];
	fprintf(f, "<text x=\"%s\" y=\"%s\" %s>", coord(a, sizeof a, x), coord(b, sizeof b, y), attrs);
	put_text(f, s);
	fputs("</text>\n", f);
}

/* A series' stroke: its colour, dashed once the palette has gone round. */
static void stroke(FILE *f, size_t j)
{
	static const char *const dash[] = { "", " stroke-dasharray=\"6 3\"",
		                            " stroke-dasharray=\"2 3\"" };
	size_t round = j / NCOLOURS;
	fprintf(f, "stroke=\"%s\"%s", palette[j % NCOLOURS], dash[round < 3 ? round : 2]);
}

static void axes(plot *p, const dxb_rs_metric *k, const yaxis *ya)
{
	FILE *f = p->f;
	const dxb_rs_matrix *m = p->m;
	double l = PAD_L, r = PANEL_W - PAD_R, t = PAD_T, b = PANEL_H - PAD_B;
	char buf[LABEL_MAX];

	/* Counted, not compared with ymax: a sum that overflows, or steps too
	 * small to move it, must not draw lines without end. */
	size_t widest = 0;
	for (int i = 0; i <= ya->n; i++) {
		double y = ypos(ya, ya->step * i);
		line(f, l, y, r, y, i ? "stroke=\"#dddddd\"" : "stroke=\"#444444\"");
		tick_label(buf, sizeof buf, i, ya, k);
		text(f, l - 6, y, "dy=\".32em\" text-anchor=\"end\"", buf);
		widest = strlen(buf) > widest ? strlen(buf) : widest;
	}
	line(f, l, t, l, b, "stroke=\"#444444\"");

	/* A tick at every x value measured, failed cells' too, so a gap shows
	 * where the line stops; labels that would overlap are dropped. */
	double last = -1e9;
	for (size_t i = 0; i < m->ncells; i++) {
		if (!p->xfirst[i])
			continue;
		double x = xpos(p, p->x[i]);
		line(f, x, b, x, b + 5, "stroke=\"#444444\"");
		const char *v = dimval(&m->cells[i], m->x_dim);
		if (fabs(x - last) < (double)(strlen(v) + 1) * CHAR_W)
			continue;
		text(f, x, b + 18, "text-anchor=\"middle\"", v);
		last = x;
	}

	const dxb_rs_dim *xd = &m->dims[m->x_dim];
	snprintf(buf, sizeof buf, "%s%s", xd->key ? xd->key : dim_label(xd),
	         p->logx ? " (log scale)" : "");
	text(f, (l + r) / 2, b + 40, "text-anchor=\"middle\"", buf);
	metric_title(buf, sizeof buf, k);
	/* Turned upright, the title's letters reach about 10 units left of
	 * its baseline and 3 right: its baseline goes left of the widest
	 * tick label by that much, and no nearer the panel's edge than 12. */
	double tx = fmax(12, l - 6 - (double)widest * CHAR_W - 6);
	char x[32], y[32], tr[128];
	snprintf(tr, sizeof tr, "text-anchor=\"middle\" transform=\"rotate(-90 %s %s)\"",
	         coord(x, sizeof x, tx), coord(y, sizeof y, (t + b) / 2));
	text(f, tx, (t + b) / 2, tr, buf);
	text(f, (l + r) / 2, t - 12, "text-anchor=\"middle\" font-weight=\"bold\"", buf);
}

/* A point: a cell's median of one metric, and its spread, in pixels. */
typedef struct point {
	const dxb_rs_cell *c;
	double med, lo, hi;      /* the figures */
	double x, y, ylo, yhi;   /* where they go */
} point;

/* The q-th point of series s on metric k.  Returns 0, or -1 when the cell
 * has no median to show (no repetition measured the metric). */
static int point_at(const plot *p, const series *s, size_t q, size_t k, const yaxis *ya,
                    point *pt)
{
	size_t i = p->order[s->ok + q];
	pt->c = &p->m->cells[i];
	dxb_rs_summary(p->m, pt->c, k, &pt->med, &pt->lo, &pt->hi);
	if (!isfinite(pt->med))
		return -1;
	if (!isfinite(pt->lo) || !isfinite(pt->hi))
		pt->lo = pt->hi = pt->med;
	pt->x = xpos(p, p->x[i]);
	pt->y = ypos(ya, pt->med);
	pt->ylo = ypos(ya, pt->lo);
	pt->yhi = ypos(ya, pt->hi);
	return 0;
}

/* A point's tooltip: "mmap/j4/t1: samples/s 10234 (10100..10300)". */
static void point_title(const plot *p, const point *pt, const dxb_rs_metric *k)
{
	char key[LABEL_MAX], nm[LABEL_MAX], a[48], b[48], d[48];
	const char *name, *unit;
	int len;
	dxb_rs_split_label(k, &name, &len, &unit);
	snprintf(nm, sizeof nm, "%.*s", len, name);
	fputs("<title>", p->f);
	put_text(p->f, dxb_rs_cell_key(p->m, pt->c, key, sizeof key));
	fputs(": ", p->f);
	put_text(p->f, nm);
	fprintf(p->f, " %s", num(a, sizeof a, pt->med, k->decimals));
	if (unit) {
		fputc(' ', p->f);
		put_text(p->f, unit);
	}
	fprintf(p->f, " (%s..%s)</title>", num(b, sizeof b, pt->lo, k->decimals),
	        num(d, sizeof d, pt->hi, k->decimals));
}

static void draw_series(plot *p, size_t j, size_t k, const yaxis *ya)
{
	static const char thin[] = "stroke-width=\"1\" stroke-dasharray=\"none\"";
	FILE *f = p->f;
	const series *s = &p->s[j];
	const dxb_rs_metric *mk = &p->m->metrics[k];
	char a[32], b[32];
	point pt;

	fputs("<g ", f);
	stroke(f, j);
	fprintf(f, " fill=\"%s\">\n", palette[j % NCOLOURS]);
	/* The spread first, so that the line and the points lie over it. */
	for (size_t q = 0; q < s->nok; q++) {
		if (point_at(p, s, q, k, ya, &pt) < 0 || pt.ylo - pt.yhi < 1)
			continue;
		line(f, pt.x, pt.ylo, pt.x, pt.yhi, thin);
		line(f, pt.x - 3, pt.ylo, pt.x + 3, pt.ylo, thin);
		line(f, pt.x - 3, pt.yhi, pt.x + 3, pt.yhi, thin);
	}
	fputs("<polyline fill=\"none\" stroke-width=\"2\" points=\"", f);
	for (size_t q = 0, n = 0; q < s->nok; q++)
		if (point_at(p, s, q, k, ya, &pt) == 0)
			fprintf(f, "%s%s,%s", n++ ? " " : "", coord(a, sizeof a, pt.x),
			        coord(b, sizeof b, pt.y));
	fputs("\"/>\n", f);
	for (size_t q = 0; q < s->nok; q++) {
		if (point_at(p, s, q, k, ya, &pt) < 0)
			continue;
		fprintf(f, "<circle cx=\"%s\" cy=\"%s\" r=\"3.5\">", coord(a, sizeof a, pt.x),
		        coord(b, sizeof b, pt.y));
		point_title(p, &pt, mk);
		fputs("</circle>\n", f);
		/* The winner at its x, where the table marks one: ringed. */
		if (k == p->m->primary && p->fastest[pt.c - p->m->cells])
			fprintf(f, "<circle class=\"fastest\" cx=\"%s\" cy=\"%s\" r=\"8\" "
			        "fill=\"none\" stroke-width=\"1.5\"/>\n", coord(a, sizeof a, pt.x),
			        coord(b, sizeof b, pt.y));
	}
	fputs("</g>\n", f);
}

static void panel(plot *p, size_t which, double ox)
{
	const dxb_rs_matrix *m = p->m;
	size_t k = m->plot_metrics[which];
	char a[32];

	double top = 0;
	for (size_t i = 0; i < m->ncells; i++) {
		double med, lo, hi;
		if (m->cells[i].status != DXB_RS_OK)
			continue;
		dxb_rs_summary(m, &m->cells[i], k, &med, &lo, &hi);
		if (isfinite(hi) && hi > top)
			top = hi;
		if (isfinite(med) && med > top)
			top = med;
	}
	if (!(top > 0))
		top = 1;
	else if (top < 1e-300)
		top = 1e-300; /* a denormal's sixth is 0, whose logarithm has no step */
	yaxis ya = { .step = nice_step(top) };
	double n = ceil(top / ya.step - 1e-9);
	/* nice_step makes it 4 to 6; held there should rounding say otherwise. */
	ya.n = n < 1 ? 1 : n > 10 ? 10 : (int)n;
	ya.ymax = ya.step * n;

	fprintf(p->f, "<g transform=\"translate(%s %d)\">\n", coord(a, sizeof a, ox), p->head);
	axes(p, &m->metrics[k], &ya);
	for (size_t j = 0; j < p->ns; j++)
		if (p->s[j].nok)
			draw_series(p, j, k, &ya);
	fputs("</g>\n", p->f);
}

static void legend(plot *p, double ox)
{
	FILE *f = p->f;
	char a[32], buf[LABEL_MAX * 2 + 2];
	fprintf(f, "<g transform=\"translate(%s %d)\">\n", coord(a, sizeof a, ox), p->head + PAD_T);
	for (size_t j = 0; j < p->ns; j++) {
		const series *s = &p->s[j];
		double y = (double)j * ROW + ROW / 2.0;
		fputs("<g ", f);
		stroke(f, j);
		fprintf(f, " fill=\"%s\"%s>", palette[j % NCOLOURS],
		        s->nok ? "" : " opacity=\"0.45\"");
		/* Why cells are missing, for a mouse over the entry. */
		if (s->nbad) {
			char key[LABEL_MAX];
			const dxb_rs_cell *c = &p->m->cells[p->bad[s->bad]];
			fputs("<title>", f);
			put_text(f, dxb_rs_cell_key(p->m, c, key, sizeof key));
			fprintf(f, ": %s", status_word(c->status));
			if (c->reason[0]) {
				/* Never past the array, terminated or not. */
				snprintf(buf, sizeof buf, ": %.*s",
				         (int)strnlen(c->reason, sizeof c->reason), c->reason);
				put_text(f, buf);
			}
			fputs("</title>", f);
		}
		fputc('\n', f);
		line(f, 0, y, 24, y, "stroke-width=\"2\"");
		fprintf(f, "<circle cx=\"12\" cy=\"%s\" r=\"3.5\"%s/>\n", coord(a, sizeof a, y),
		        s->nok ? "" : " fill=\"white\"");
		snprintf(buf, sizeof buf, "%s%s%s", s->label, s->note[0] ? " " : "", s->note);
		text(f, 32, y, "dy=\".32em\" stroke=\"none\" fill=\"#222222\"", buf);
		fputs("</g>\n", f);
	}
	fputs("</g>\n", f);
}

static void header(FILE *f, double w, double h, const char *title)
{
	char a[32], b[32];
	coord(a, sizeof a, w);
	coord(b, sizeof b, h);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%s\" "
	        "height=\"%s\" viewBox=\"0 0 %s %s\" font-family=\"sans-serif\" font-size=\"12\">\n",
	        a, b, a, b);
	fputs("<title>", f);
	put_text(f, title);
	fputs("</title>\n", f);
	fprintf(f, "<rect width=\"%s\" height=\"%s\" fill=\"white\"/>\n", a, b);
}

static int finish(FILE *f)
{
	fputs("</svg>\n", f);
	if (ferror(f)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

static int no_figures(FILE *f, const char *title)
{
	header(f, 480, 160, title);
	text(f, 240, 36, "text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\"", title);
	text(f, 240, 96, "text-anchor=\"middle\" font-size=\"14\" fill=\"#666666\"", "no figures");
	return finish(f);
}

int dxb_rs_write_svg(const dxb_rs_matrix *m, FILE *f)
{
	char title[LABEL_MAX];
	plot p = { .m = m, .f = f };
	int rc = -1;
	/* Cleared so that a write error's errno is the one ferror's caller sees. */
	errno = 0;
	snprintf(title, sizeof title, "docdex %s", m->command ? m->command : "");

	size_t nok = 0;
	for (size_t i = 0; i < m->ncells; i++)
		nok += m->cells[i].status == DXB_RS_OK;
	if (nok == 0 || m->x_dim >= ndims_of(m))
		return no_figures(f, title);
	for (int w = 0; w < 2; w++)
		if (m->plot_metrics[w] >= m->nmetrics) {
			errno = EINVAL;
			return -1;
		}

	/* Space for every cell, a few words each; the series' labels (two
	 * arrays of LABEL_MAX) only for the series there are. */
	size_t nc = m->ncells;
	ranked *r = malloc(nc * sizeof *r);
	size_t *tmp = malloc(nc * sizeof *tmp);
	p.order = malloc(nc * sizeof *p.order);
	p.bad = malloc(nc * sizeof *p.bad);
	p.sid = malloc(nc * sizeof *p.sid);
	p.x = calloc(nc, sizeof *p.x);
	p.xfirst = malloc(nc);
	p.fastest = malloc(nc);
	if (!r || !tmp || !p.order || !p.bad || !p.sid || !p.x || !p.xfirst || !p.fastest ||
	    dxb_rs_fastest(m, p.fastest) < 0) {
		errno = ENOMEM;
		goto out;
	}
	varying_dims(&p);
	x_values(&p, r, tmp);
	if (make_series(&p, r, tmp) < 0) {
		errno = ENOMEM;
		goto out;
	}
	free(r);
	free(tmp);
	r = NULL;
	tmp = NULL;

	size_t longest = 0;
	for (size_t j = 0; j < p.ns; j++) {
		size_t n = strlen(p.s[j].label) + (p.s[j].note[0] ? strlen(p.s[j].note) + 1 : 0);
		if (n > longest)
			longest = n;
	}
	double legend_w = 48 + (double)longest * CHAR_W;
	if (legend_w < 140)
		legend_w = 140;
	double w = 2 * PANEL_W + legend_w;
	/* Below the title: what was measured on what (the header's lines),
	 * how to read the points, and what the two panels' figures are. */
	char lines[8][LABEL_MAX * 2]; /* 5 of the header, how to read, 2 notes */
	int nl = 0;
	for (const char *hd = m->header; hd && *hd && nl < 5;) {
		size_t len = strcspn(hd, "\n");
		snprintf(lines[nl++], sizeof lines[0], "%.*s", (int)len, hd);
		hd += len + (hd[len] == '\n');
	}
	int any_fastest = 0;
	for (size_t i = 0; i < nc; i++)
		any_fastest |= p.fastest[i];
	snprintf(lines[nl++], sizeof lines[0], "points: medians of %s%zu repetition%s; bars: min to "
	         "max%s", p.minreps < p.maxreps ? "up to " : "", p.maxreps, p.maxreps == 1 ? "" : "s",
	         any_fastest ? "; ringed: the fastest at its x, clear of the others' noise"
	                     : "; no point is clear of the others' noise");
	for (int w2 = 0; w2 < 2; w2++) {
		const dxb_rs_metric *k = &m->metrics[m->plot_metrics[w2]];
		char name[LABEL_MAX];
		metric_title(name, sizeof name, k);
		if (k->note)
			snprintf(lines[nl++], sizeof lines[0], "%s: %s", name, k->note);
	}
	p.head = HEAD + LINE_H * (nl - 1);
	double h = p.head + PANEL_H;
	if (p.head + PAD_T + (double)p.ns * ROW + 16 > h)
		h = p.head + PAD_T + (double)p.ns * ROW + 16;

	header(f, w, h, title);
	text(f, w / 2, 24, "text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\"", title);
	for (int i = 0; i < nl; i++)
		text(f, w / 2, 42 + LINE_H * i, "text-anchor=\"middle\" fill=\"#666666\"", lines[i]);
	panel(&p, 0, 0);
	panel(&p, 1, PANEL_W);
	legend(&p, 2 * PANEL_W + 8);
	rc = finish(f);
out:
	free(r);
	free(tmp);
	free(p.s);
	free(p.order);
	free(p.bad);
	free(p.sid);
	free(p.x);
	free(p.xfirst);
	free(p.fastest);
	return rc;
}
