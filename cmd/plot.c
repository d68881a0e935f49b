/*
 * plot.c: the SVG plot of a measurement matrix (rs_write_svg).  Two panels,
 * one per plotted metric, with the x dimension (workers) across and one
 * line per series: the RS_OK cells that share every other dimension.  A
 * point is a cell's median, a bar through it its min..max over the
 * repetitions.  Plain SVG 1.1, no script and no CSS, so that a browser, an
 * image viewer and an XML parser all read it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results.h"

/* Geometry in SVG user units (pixels). */
enum {
	PANEL_W = 420,   /* a panel, its margins included */
	PANEL_H = 340,
	PAD_L = 74,      /* the plot area inside a panel */
	PAD_R = 18,
	PAD_T = 30,
	PAD_B = 54,
	HEAD = 56,       /* the title band above the panels */
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
	size_t ok;               /* where its RS_OK cells start in the order array */
	size_t nok;              /* how many, sorted by x */
	size_t nbad;             /* its cells that are not RS_OK */
	size_t bad;              /* the first of those */
	char label[LABEL_MAX];   /* "mmap/t2" */
	char note[LABEL_MAX];    /* "(oom)", or "(oom at j8)" beside a line */
} series;

/* What the panels share: the matrix sorted into series, and the x axis. */
typedef struct plot {
	const rs_matrix *m;
	FILE *f;
	series *s;
	size_t ns;
	size_t *order;           /* the RS_OK cells, series by series */
	size_t *sid;             /* the series of each cell */
	double *x;               /* each cell's position on the x axis (unscaled) */
	int categorical;         /* x values are not all numbers: ordinals instead */
	int logx;                /* x spans a factor of 8 or more: log2 scale */
	double xlo, xhi;         /* the scaled x range */
	size_t minreps, maxreps; /* the repetitions of the OK cells */
} plot;

static const char *dimval(const rs_cell *c, size_t d)
{
	return c->dim[d] ? c->dim[d] : "";
}

/* A label falls back on the key, as in the other reports. */
static const char *dim_label(const rs_dim *d)
{
	return d->label ? d->label : d->key ? d->key : "";
}

/* The dimensions a cell can hold values for, however many m claims. */
static size_t ndims_of(const rs_matrix *m)
{
	return m->ndims < RS_MAX_DIMS ? m->ndims : RS_MAX_DIMS;
}

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
static void append_value(char *buf, size_t n, const rs_dim *d, const char *v)
{
	if (d->numeric)
		append(buf, n, dim_label(d));
	append(buf, n, v);
}


/* An axis title: "samples/s", "PSS (MiB)". */
static void metric_title(char *buf, size_t n, const rs_metric *k)
{
	const char *name, *unit;
	int len;
	rs_split_label(k, &name, &len, &unit);
	if (unit)
		snprintf(buf, n, "%.*s (%s)", len, name, unit);
	else
		snprintf(buf, n, "%.*s", len, name);
}

static int same_series(const rs_matrix *m, const rs_cell *a, const rs_cell *b)
{
	for (size_t d = 0; d < ndims_of(m); d++)
		if (d != m->x_dim && strcmp(dimval(a, d), dimval(b, d)) != 0)
			return 0;
	return 1;
}

/* Whether dimension d has the same value in every cell. */
static int constant_dim(const rs_matrix *m, size_t d)
{
	for (size_t i = 1; i < m->ncells; i++)
		if (strcmp(dimval(&m->cells[i], d), dimval(&m->cells[0], d)) != 0)
			return 0;
	return 1;
}

/* The series' name: the values of the dimensions that vary, or of the
 * first dimension besides x when none does, so that a lone line is still
 * called something. */
static void series_label(const rs_matrix *m, const rs_cell *c, char *buf, size_t n)
{
	buf[0] = '\0';
	for (size_t d = 0; d < ndims_of(m); d++) {
		if (d == m->x_dim || constant_dim(m, d))
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
	case RS_OOM: return "oom";
	case RS_FAILED: return "failed";
	case RS_SKIPPED: return "skipped";
	}
	return "ok";
}

/* "(oom)" for a series without figures; "(oom at j8, j16; failed at j32)"
 * for the gaps in one that has a line. */
static void series_note(const plot *p, const series *s, size_t si, char *buf, size_t n)
{
	static const int bad[] = { RS_OOM, RS_FAILED, RS_SKIPPED };
	const rs_matrix *m = p->m;
	buf[0] = '\0';
	for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
		int first = 1;
		for (size_t i = 0; i < m->ncells; i++) {
			const rs_cell *c = &m->cells[i];
			if (p->sid[i] != si || c->status != bad[b])
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

/* The x values: numbers when every cell has one, else the ordinal of each
 * distinct value in the order the cells come. */
static void x_values(plot *p)
{
	const rs_matrix *m = p->m;
	for (size_t i = 0; i < m->ncells && !p->categorical; i++) {
		const char *v = dimval(&m->cells[i], m->x_dim);
		char *end;
		p->x[i] = strtod(v, &end);
		if (!*v || *end || !isfinite(p->x[i]))
			p->categorical = 1;
	}
	if (p->categorical) {
		double next = 0;
		for (size_t i = 0; i < m->ncells; i++) {
			size_t j = 0;
			while (j < i && strcmp(dimval(&m->cells[j], m->x_dim),
			                       dimval(&m->cells[i], m->x_dim)) != 0)
				j++;
			p->x[i] = j < i ? p->x[j] : next++;
		}
	}
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

/* Sorts the series' OK cells by x (a handful: insertion sort). */
static void sort_by_x(plot *p, series *s)
{
	size_t *a = p->order + s->ok;
	for (size_t i = 1; i < s->nok; i++) {
		size_t v = a[i], j = i;
		for (; j > 0 && p->x[a[j - 1]] > p->x[v]; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static void make_series(plot *p)
{
	const rs_matrix *m = p->m;
	for (size_t i = 0; i < m->ncells; i++) {
		size_t j = 0;
		while (j < p->ns && !same_series(m, &m->cells[p->s[j].first], &m->cells[i]))
			j++;
		if (j == p->ns)
			p->s[p->ns++] = (series){ .first = i };
		p->sid[i] = j;
		if (m->cells[i].status == RS_OK) {
			p->s[j].nok++;
			size_t r = m->cells[i].nreps;
			if (p->maxreps == 0 || r < p->minreps)
				p->minreps = r;
			if (r > p->maxreps)
				p->maxreps = r;
		} else if (p->s[j].nbad++ == 0) {
			p->s[j].bad = i;
		}
	}
	size_t at = 0;
	for (size_t j = 0; j < p->ns; j++) {
		series *s = &p->s[j];
		s->ok = at;
		for (size_t i = 0; i < m->ncells; i++)
			if (p->sid[i] == j && m->cells[i].status == RS_OK)
				p->order[at++] = i;
		sort_by_x(p, s);
		series_label(m, &m->cells[s->first], s->label, sizeof s->label);
		series_note(p, s, j, s->note, sizeof s->note);
	}
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

/* A gridline's label: "12.5k" rather than "12500" once the steps reach
 * thousands, so that the labels fit the margin. */
static void tick_label(char *buf, size_t n, double v, double step)
{
	static const char suffix[] = "kMGT";
	double scale = 1;
	int i = -1;
	while (i < 3 && step >= scale * 1000) {
		scale *= 1000;
		i++;
	}
	num(buf, n, v / scale, step_decimals(step / scale));
	if (i >= 0 && v != 0) {
		char s[2] = { suffix[i], '\0' };
		append(buf, n, s);
	}
}

static double xpos(const plot *p, double x)
{
	double w = PANEL_W - PAD_L - PAD_R, pad = w * 0.06;
	if (p->xhi <= p->xlo)
		return PAD_L + w / 2;
	return PAD_L + pad + (xscale(p, x) - p->xlo) / (p->xhi - p->xlo) * (w - 2 * pad);
}

static double ypos(double v, double ymax)
{
	double h = PANEL_H - PAD_T - PAD_B;
	return PAD_T + h - v / ymax * h;
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

static void axes(plot *p, const rs_metric *k, double ymax, double step)
{
	FILE *f = p->f;
	const rs_matrix *m = p->m;
	double l = PAD_L, r = PANEL_W - PAD_R, t = PAD_T, b = PANEL_H - PAD_B;
	char buf[LABEL_MAX];

	for (int i = 0; step * i <= ymax * (1 + 1e-9); i++) {
		double y = ypos(step * i, ymax);
		line(f, l, y, r, y, i ? "stroke=\"#dddddd\"" : "stroke=\"#444444\"");
		tick_label(buf, sizeof buf, step * i, step);
		text(f, l - 6, y, "dy=\".32em\" text-anchor=\"end\"", buf);
	}
	line(f, l, t, l, b, "stroke=\"#444444\"");

	/* A tick at every x value measured, failed cells' too, so a gap shows
	 * where the line stops; labels that would overlap are dropped. */
	double last = -1e9;
	for (size_t i = 0; i < m->ncells; i++) {
		size_t j = 0;
		while (j < i && p->x[j] != p->x[i])
			j++;
		if (j < i)
			continue;
		double x = xpos(p, p->x[i]);
		line(f, x, b, x, b + 5, "stroke=\"#444444\"");
		const char *v = dimval(&m->cells[i], m->x_dim);
		if (fabs(x - last) < (double)(strlen(v) + 1) * CHAR_W)
			continue;
		text(f, x, b + 18, "text-anchor=\"middle\"", v);
		last = x;
	}

	const rs_dim *xd = &m->dims[m->x_dim];
	snprintf(buf, sizeof buf, "%s%s", xd->key ? xd->key : dim_label(xd),
	         p->logx ? " (log scale)" : "");
	text(f, (l + r) / 2, b + 40, "text-anchor=\"middle\"", buf);
	metric_title(buf, sizeof buf, k);
	char y[32], tr[96];
	snprintf(tr, sizeof tr, "text-anchor=\"middle\" transform=\"rotate(-90 18 %s)\"",
	         coord(y, sizeof y, (t + b) / 2));
	text(f, 18, (t + b) / 2, tr, buf);
	text(f, (l + r) / 2, t - 12, "text-anchor=\"middle\" font-weight=\"bold\"", buf);
}

/* A point: a cell's median of one metric, and its spread, in pixels. */
typedef struct point {
	const rs_cell *c;
	double med, lo, hi;      /* the figures */
	double x, y, ylo, yhi;   /* where they go */
} point;

/* The q-th point of series s on metric k.  Returns 0, or -1 when the cell
 * has no median to show (no repetition measured the metric). */
static int point_at(const plot *p, const series *s, size_t q, size_t k, double ymax, point *pt)
{
	size_t i = p->order[s->ok + q];
	pt->c = &p->m->cells[i];
	rs_summary(p->m, pt->c, k, &pt->med, &pt->lo, &pt->hi);
	if (!isfinite(pt->med))
		return -1;
	if (!isfinite(pt->lo) || !isfinite(pt->hi))
		pt->lo = pt->hi = pt->med;
	pt->x = xpos(p, p->x[i]);
	pt->y = ypos(pt->med, ymax);
	pt->ylo = ypos(pt->lo, ymax);
	pt->yhi = ypos(pt->hi, ymax);
	return 0;
}

/* A point's tooltip: "mmap/j4/t1: samples/s 10234 (10100..10300)". */
static void point_title(const plot *p, const point *pt, const rs_metric *k)
{
	char key[LABEL_MAX], nm[LABEL_MAX], a[48], b[48], d[48];
	const char *name, *unit;
	int len;
	rs_split_label(k, &name, &len, &unit);
	snprintf(nm, sizeof nm, "%.*s", len, name);
	fputs("<title>", p->f);
	put_text(p->f, rs_cell_key(p->m, pt->c, key, sizeof key));
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

static void draw_series(plot *p, size_t j, size_t k, double ymax)
{
	static const char thin[] = "stroke-width=\"1\" stroke-dasharray=\"none\"";
	FILE *f = p->f;
	const series *s = &p->s[j];
	const rs_metric *mk = &p->m->metrics[k];
	char a[32], b[32];
	point pt;

	fputs("<g ", f);
	stroke(f, j);
	fprintf(f, " fill=\"%s\">\n", palette[j % NCOLOURS]);
	/* The spread first, so that the line and the points lie over it. */
	for (size_t q = 0; q < s->nok; q++) {
		if (point_at(p, s, q, k, ymax, &pt) < 0 || pt.ylo - pt.yhi < 1)
			continue;
		line(f, pt.x, pt.ylo, pt.x, pt.yhi, thin);
		line(f, pt.x - 3, pt.ylo, pt.x + 3, pt.ylo, thin);
		line(f, pt.x - 3, pt.yhi, pt.x + 3, pt.yhi, thin);
	}
	fputs("<polyline fill=\"none\" stroke-width=\"2\" points=\"", f);
	for (size_t q = 0, n = 0; q < s->nok; q++)
		if (point_at(p, s, q, k, ymax, &pt) == 0)
			fprintf(f, "%s%s,%s", n++ ? " " : "", coord(a, sizeof a, pt.x),
			        coord(b, sizeof b, pt.y));
	fputs("\"/>\n", f);
	for (size_t q = 0; q < s->nok; q++) {
		if (point_at(p, s, q, k, ymax, &pt) < 0)
			continue;
		fprintf(f, "<circle cx=\"%s\" cy=\"%s\" r=\"3.5\">", coord(a, sizeof a, pt.x),
		        coord(b, sizeof b, pt.y));
		point_title(p, &pt, mk);
		fputs("</circle>\n", f);
	}
	fputs("</g>\n", f);
}

static void panel(plot *p, size_t which, double ox)
{
	const rs_matrix *m = p->m;
	size_t k = m->plot_metrics[which];
	char a[32];

	double top = 0;
	for (size_t i = 0; i < m->ncells; i++) {
		double med, lo, hi;
		if (m->cells[i].status != RS_OK)
			continue;
		rs_summary(m, &m->cells[i], k, &med, &lo, &hi);
		if (isfinite(hi) && hi > top)
			top = hi;
		if (isfinite(med) && med > top)
			top = med;
	}
	if (!(top > 0))
		top = 1;
	double step = nice_step(top);
	double ymax = step * ceil(top / step - 1e-9);

	fprintf(p->f, "<g transform=\"translate(%s %d)\">\n", coord(a, sizeof a, ox), HEAD);
	axes(p, &m->metrics[k], ymax, step);
	for (size_t j = 0; j < p->ns; j++)
		if (p->s[j].nok)
			draw_series(p, j, k, ymax);
	fputs("</g>\n", p->f);
}

static void legend(plot *p, double ox)
{
	FILE *f = p->f;
	char a[32], buf[LABEL_MAX * 2 + 2];
	fprintf(f, "<g transform=\"translate(%s %d)\">\n", coord(a, sizeof a, ox), HEAD + PAD_T);
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
			const rs_cell *c = &p->m->cells[s->bad];
			fputs("<title>", f);
			put_text(f, rs_cell_key(p->m, c, key, sizeof key));
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

int rs_write_svg(const rs_matrix *m, FILE *f)
{
	char title[LABEL_MAX], sub[LABEL_MAX];
	plot p = { .m = m, .f = f };
	int rc = -1;
	/* Cleared so that a write error's errno is the one ferror's caller sees. */
	errno = 0;
	snprintf(title, sizeof title, "docdex %s", m->command ? m->command : "");

	size_t nok = 0;
	for (size_t i = 0; i < m->ncells; i++)
		nok += m->cells[i].status == RS_OK;
	if (nok == 0 || m->x_dim >= ndims_of(m))
		return no_figures(f, title);
	for (int w = 0; w < 2; w++)
		if (m->plot_metrics[w] >= m->nmetrics) {
			errno = EINVAL;
			return -1;
		}

	p.s = calloc(m->ncells, sizeof *p.s);
	p.order = calloc(m->ncells, sizeof *p.order);
	p.sid = calloc(m->ncells, sizeof *p.sid);
	p.x = calloc(m->ncells, sizeof *p.x);
	if (!p.s || !p.order || !p.sid || !p.x) {
		errno = ENOMEM;
		goto out;
	}
	x_values(&p);
	make_series(&p);

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
	double h = HEAD + PANEL_H;
	if (HEAD + PAD_T + (double)p.ns * ROW + 16 > h)
		h = HEAD + PAD_T + (double)p.ns * ROW + 16;

	header(f, w, h, title);
	text(f, w / 2, 24, "text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\"", title);
	snprintf(sub, sizeof sub, "points: medians of %s%zu repetition%s; bars: min to max",
	         p.minreps < p.maxreps ? "up to " : "", p.maxreps, p.maxreps == 1 ? "" : "s");
	text(f, w / 2, 42, "text-anchor=\"middle\" fill=\"#666666\"", sub);
	panel(&p, 0, 0);
	panel(&p, 1, PANEL_W);
	legend(&p, 2 * PANEL_W + 8);
	rc = finish(f);
out:
	free(p.s);
	free(p.order);
	free(p.sid);
	free(p.x);
	return rc;
}
