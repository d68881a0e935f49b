/*
 * sample_shape.c: telling an input of sample that has the shape of another
 * kind of file.  A TREC run given as qrels is read as 4,300 "positives"
 * with the rank as relevance, and a run given as queries as query texts
 * such as "Q0 5339620 1 10.755 rank": nothing in the lines is malformed
 * for the wrong reader, so only their shape can tell.
 *
 * The shapes are told from the first data line, and for files of three
 * columns from the first lines of its first query: an MS MARCO run counts
 * its ranks up (1, 2, 3), qrels repeat or jump.  Only shapes that no file
 * of the expected kind has are reported, so that --strict can fail on
 * them: a queries line of exactly "qid Q0 docid rank score tag" is not a
 * query anyone wrote.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "sample.h"

enum shape {
	SH_NONE,          /* nothing that points elsewhere */
	SH_TREC_RUN,
	SH_TREC_QRELS,
	SH_BEIR_HEADER,
	SH_QUERIES_TSV,
	SH_JSONL,
	SH_TOPICS,
	SH_TEXT_TRIPLES,
	SH_MSMARCO_RUN,   /* three columns whose third counts up in a query */
	SH_QRELS_3COL,    /* three columns whose third does not */
	SH_ID_COLUMNS,    /* three columns, the last two numbers, as queries */
};

static const char *const shape_name[] = {
	[SH_TREC_RUN] = "a TREC run (qid Q0 docid rank score tag)",
	[SH_TREC_QRELS] = "TREC qrels (qid iter docid rel)",
	[SH_BEIR_HEADER] = "BEIR qrels (query-id corpus-id score)",
	[SH_QUERIES_TSV] = "queries (qid TAB text)",
	[SH_JSONL] = "JSON or JSONL",
	[SH_TOPICS] = "TREC topics or documents",
	[SH_TEXT_TRIPLES] = "text triples (query TAB passage TAB passage)",
	[SH_MSMARCO_RUN] = "an MS MARCO run (qid TAB pid TAB rank, ranks counting up)",
	[SH_QRELS_3COL] = "qrels (qid docid rel, not ranks counting up)",
	[SH_ID_COLUMNS] = "an MS MARCO run or ID triples (qid TAB pid TAB number)",
};

static const char *const input_name[] = {
	[DX_INPUT_QUERIES] = "queries",
	[DX_INPUT_QRELS] = "qrels",
	[DX_INPUT_RUN] = "a run",
	[DX_INPUT_TRIPLES] = "ID triples",
};

/* The file of each input, and what it should hold, for the error of a
 * file that held nothing of its kind. */
static const char *const file_name[] = {
	[DX_INPUT_QUERIES] = "queries",
	[DX_INPUT_QRELS] = "qrels",
	[DX_INPUT_RUN] = "run",
	[DX_INPUT_TRIPLES] = "triples",
};

static const char *const expected[] = {
	[DX_INPUT_QUERIES] = "queries (qid TAB text, JSONL or TREC topics)",
	[DX_INPUT_QRELS] = "qrels (TREC: qid iter docid rel, or BEIR: query-id corpus-id score)",
	[DX_INPUT_RUN] = "a run (TREC: qid Q0 docid rank score tag, or MS MARCO: qid TAB pid TAB rank)",
	[DX_INPUT_TRIPLES] = "ID triples (qid TAB pos TAB neg)",
};

/* Whether a shape is one that a file of this input never has. */
static int foreign(int input, enum shape sh, const dx_sampler *s)
{
	switch (sh) {
	case SH_NONE:
		return 0;
	case SH_TREC_RUN:
		return input != DX_INPUT_RUN;
	case SH_TREC_QRELS:
		/* ID triples with more columns than needed may hold anything
		 * after them: only a line of exactly qid, 0/Q0, id, number with
		 * one negative looks like qrels rather than a triple. */
		return input == DX_INPUT_QUERIES || input == DX_INPUT_RUN ||
		       (input == DX_INPUT_TRIPLES && s->o.negatives == 1);
	case SH_BEIR_HEADER:
		return input != DX_INPUT_QRELS;
	case SH_QUERIES_TSV:
	case SH_TEXT_TRIPLES:
		return input != DX_INPUT_QUERIES;
	case SH_JSONL:
	case SH_TOPICS:
		return input != DX_INPUT_QUERIES;
	case SH_MSMARCO_RUN:
		return input == DX_INPUT_QRELS;
	case SH_QRELS_3COL:
		return input == DX_INPUT_RUN;
	case SH_ID_COLUMNS:
		return input == DX_INPUT_QUERIES;
	}
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int has_blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_blank(p[i]))
			return 1;
	return 0;
}

/* Columns split on TABs alone: how many (the first three kept). */
static int split_tabs(const char *line, size_t len, const char **f, size_t *fl)
{
	int n = 0;
	const char *p = line, *end = line + len;
	for (;;) {
		const char *tab = memchr(p, '\t', (size_t)(end - p));
		const char *e = tab ? tab : end;
		if (n < 3) {
			f[n] = p;
			fl[n] = (size_t)(e - p);
		}
		n++;
		if (!tab)
			return n;
		p = tab + 1;
	}
}

static int is_q0(const char *p, size_t n)
{
	return n == 2 && (p[0] == 'Q' || p[0] == 'q') && p[1] == '0';
}

/* The shape of one line, told from it alone (three columns of a number
 * need the next lines: SH_MSMARCO_RUN stands for "maybe" until then). */
static enum shape line_shape(const char *line, size_t len)
{
	const char *p = line;
	size_t n = len;
	while (n && is_blank(*p))
		p++, n--;
	if (n && *p == '{')
		return SH_JSONL;
	if (n && *p == '<')
		return SH_TOPICS;
	char copy[512];
	if (len >= sizeof copy)
		len = sizeof copy - 1; /* the first columns are what tells */
	memcpy(copy, line, len);
	char *f[7];
	size_t fl[7];
	int nf = dx__split_blanks(copy, len, f, fl, 7);
	double v;
	if (nf >= 6 && is_q0(f[1], fl[1]) && dx__is_digits(f[3], fl[3]) && dx__parse_double(f[4], fl[4], &v))
		return SH_TREC_RUN;
	if (nf == 4 && (is_q0(f[1], fl[1]) || (fl[1] == 1 && f[1][0] == '0')) &&
	    dx__parse_double(f[3], fl[3], &v))
		return SH_TREC_QRELS;
	if (nf == 3 && fl[0] == 8 && strncasecmp(f[0], "query-id", 8) == 0)
		return SH_BEIR_HEADER;
	const char *tf[3];
	size_t tl[3];
	int nt = split_tabs(line, len, tf, tl);
	if (nt == 2 && has_blank(tf[1], tl[1]))
		return SH_QUERIES_TSV;
	if (nt == 3 && has_blank(tf[1], tl[1]) && has_blank(tf[2], tl[2]))
		return SH_TEXT_TRIPLES;
	if (nf == 3 && dx__is_digits(f[2], fl[2]))
		return dx__is_digits(f[1], fl[1]) ? SH_ID_COLUMNS : SH_MSMARCO_RUN;
	return SH_NONE;
}

/* A shape that does not fit: a warning, or with strict the error. */
static int report(dx_sampler *s, dx_shape *sh, const dx_textfile *t, enum shape shape, dx_err *err)
{
	sh->done = 1;
	if (!foreign(sh->input, shape, s))
		return 0;
	char where[sizeof err->subject];
	snprintf(where, sizeof where, "%s:%llu", t->path, (unsigned long long)sh->first_line);
	s->foreign[sh->input] = (int)shape;
	memcpy(s->foreign_at[sh->input], where, sizeof where);
	if (s->o.strict)
		return dx__fail(err, DX_EFORMAT, 0, where, "read as %s, but shaped like %s",
		                input_name[sh->input], shape_name[shape]);
	if (s->rep.nwarnings < DX_SAMPLE_WARNINGS)
		dx__fail(&s->rep.warning[s->rep.nwarnings++], DX_EFORMAT, 0, where,
		         "read as %s, but shaped like %s", input_name[sh->input], shape_name[shape]);
	return 0;
}

/* Three columns, the third a number, in the first query's lines: an MS
 * MARCO run counts up from 0 or 1 by one; qrels, or an ID triple's
 * negative, do not. */
static enum shape sequence_shape(const dx_shape *sh)
{
	int up = sh->val[0] <= 1;
	for (unsigned i = 1; i < sh->nval; i++)
		up = up && sh->val[i] == sh->val[i - 1] + 1;
	return up ? SH_MSMARCO_RUN : SH_QRELS_3COL;
}

int dx__shape_end(dx_sampler *s, dx_shape *sh, const dx_textfile *t, dx_err *err)
{
	if (sh->done)
		return 0;
	sh->done = 1;
	/* Qrels need three lines counting up to look like a run, a run two
	 * that do not to look like qrels; fewer tell nothing. */
	if ((sh->input == DX_INPUT_QRELS && sh->nval >= 3) || (sh->input == DX_INPUT_RUN && sh->nval >= 2))
		return report(s, sh, t, sequence_shape(sh), err);
	return 0;
}

int dx__shape_line(dx_sampler *s, dx_shape *sh, const dx_textfile *t, const char *line, size_t len,
                   dx_err *err)
{
	if (sh->done)
		return 0;
	if (sh->lines++ == 0) {
		sh->first_line = t->line;
		enum shape shape = line_shape(line, len);
		/* Three columns ending in a number: qrels and runs tell from
		 * the next lines, queries refuse a text that is an id. */
		int numbers = shape == SH_MSMARCO_RUN || shape == SH_ID_COLUMNS;
		if (!numbers || (sh->input != DX_INPUT_QRELS && sh->input != DX_INPUT_RUN))
			return report(s, sh, t, shape, err);
	}
	/* Three columns in qrels or a run: the third column of the first
	 * query's first lines. */
	char copy[512];
	size_t n = len < sizeof copy ? len : sizeof copy - 1;
	memcpy(copy, line, n);
	char *f[3];
	size_t fl[3];
	int nf = dx__split_blanks(copy, n, f, fl, 3);
	double v;
	if (sh->lines == 1) {
		if (fl[0] > sizeof sh->qid)
			return dx__shape_end(s, sh, t, err);
		memcpy(sh->qid, f[0], fl[0]);
		sh->qid_len = fl[0];
	} else if (nf != 3 || fl[0] != sh->qid_len || memcmp(f[0], sh->qid, fl[0]) != 0) {
		return dx__shape_end(s, sh, t, err);
	}
	if (nf != 3 || !dx__is_digits(f[2], fl[2]) || !dx__parse_double(f[2], fl[2], &v))
		return dx__shape_end(s, sh, t, err);
	sh->val[sh->nval++] = v;
	if (sh->nval == 3)
		return dx__shape_end(s, sh, t, err);
	return 0;
}

/* Shapes of a queries file, and of a qrels file: a pair of files given the
 * other way round shows one in each. */
static int queries_like(int shape)
{
	return shape == SH_QUERIES_TSV || shape == SH_JSONL || shape == SH_TOPICS;
}

static int qrels_like(int shape)
{
	return shape == SH_TREC_QRELS || shape == SH_BEIR_HEADER || shape == SH_QRELS_3COL ||
	       shape == SH_ID_COLUMNS;
}

int dx__shape_failure(dx_sampler *s, int input, dx_err *err)
{
	int shape = s->foreign[input];
	if (!shape)
		return 0;
	int q = s->foreign[DX_INPUT_QUERIES], j = s->foreign[DX_INPUT_QRELS];
	if (input == DX_INPUT_QRELS && queries_like(j) && qrels_like(q))
		dx__fail(err, DX_EFORMAT, 0, s->foreign_at[input],
		         "the queries and qrels files are the other way round: the qrels file is shaped "
		         "like %s, the queries file like %s", shape_name[j], shape_name[q]);
	else
		dx__fail(err, DX_EFORMAT, 0, s->foreign_at[input], "the %s file is shaped like %s, not like %s",
		         file_name[input], shape_name[shape], expected[input]);
	return 1;
}
