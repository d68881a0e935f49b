/*
 * qrels.c: judgements for sample.  TREC qrels are "qid iter docid rel",
 * split on any run of blanks, the iter column ignored whatever it holds
 * (0, Q0, 4.5); BEIR qrels are "query-id corpus-id score" after a header
 * line.  Lines starting with '#' are comments (trec_eval accepts them).
 *
 * The (query, positive) pairs are kept in the order of their lines, not of
 * the query or document numbers: those differ between a corpus (positions)
 * and none (ids numbered as named), and between a queries file and none,
 * and the same seed must give the same triples either way.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "sample.h"

typedef struct judgement {
	uint64_t pos;
	uint64_t line;
	uint32_t q;
	int positive;
} judgement;

static int by_line(const void *a, const void *b)
{
	const judgement *x = a, *y = b;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int by_query_doc(const void *a, const void *b)
{
	const judgement *x = a, *y = b;
	if (x->q != y->q)
		return x->q < y->q ? -1 : 1;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* Reads the file into j (n of them). */
static int read_judgements(dx_sampler *s, judgement **out, size_t *nout, uint64_t *positives,
                           dx_err *err)
{
	dx_textfile t;
	int r = dx__textfile_open(&t, s->o.qrels, err);
	if (r < 0)
		return r;
	judgement *j = NULL;
	size_t n = 0, cap = 0;
	int first = 1;
	dx_shape shape = { .input = DX_INPUT_QRELS };
	char *line;
	size_t len;
	while ((r = dx__textfile_next(&t, &line, &len, err)) == 1) {
		if ((r = dx__sample_tick(s, &t, err)) < 0)
			break;
		char *f[4];
		size_t fl[4];
		int nf = dx__split_blanks(line, len, f, fl, 4);
		if (nf == 0 || *f[0] == '#')
			continue;
		if (!shape.done && (r = dx__shape_line(s, &shape, &t, line, len, err)) < 0)
			break;
		int was_first = first;
		first = 0;
		if (nf < 3) {
			r = dx__sample_problem(s, DX_SP_BAD_LINE, &t, err, "qrels line with %d columns", nf);
			if (r < 0)
				break;
			continue;
		}
		/* Three columns: BEIR, "qid docid score"; four: TREC. */
		int d = nf == 3 ? 1 : 2, rc = nf == 3 ? 2 : 3;
		double rel;
		if (!dx__parse_double(f[rc], fl[rc], &rel)) {
			if (was_first && nf == 3)
				continue; /* the header of a BEIR qrels file */
			r = dx__sample_problem(s, DX_SP_BAD_LINE, &t, err, "relevance is not a number");
			if (r < 0)
				break;
			continue;
		}
		if (rel >= s->o.min_rel)
			(*positives)++;
		uint32_t q;
		if ((r = dx__sample_query(s, f[0], fl[0], &q, err)) < 0)
			break;
		if (r == 0) {
			r = dx__sample_problem(s, DX_SP_NO_TEXT, &t, err, "query without a text: '%.*s'",
			                       (int)(fl[0] > 200 ? 200 : fl[0]), f[0]);
			if (r < 0)
				break;
			continue;
		}
		uint64_t pos;
		r = dx__sample_doc(s, f[d], fl[d], &pos, err);
		if (r < 0)
			break;
		if (r == 0) {
			r = dx__sample_problem(s, DX_SP_UNKNOWN_ID, &t, err, "judged id not in the corpus: '%.*s'",
			                       (int)(fl[d] > 200 ? 200 : fl[d]), f[d]);
			if (r < 0)
				break;
			continue;
		}
		if (dx__grow(&j, &cap, n + 1, 4096, sizeof *j) < 0) {
			r = dx__fail_nomem(err);
			break;
		}
		j[n++] = (judgement){ .pos = pos, .line = t.line, .q = q, .positive = rel >= s->o.min_rel };
	}
	if (r == 0)
		r = dx__shape_end(s, &shape, &t, err);
	dx__textfile_close(&t);
	if (r < 0) {
		free(j);
		return r;
	}
	*out = j;
	*nout = n;
	return 0;
}

int dx__qrels_load(dx_sampler *s, dx_err *err)
{
	judgement *j;
	size_t n;
	uint64_t positives = 0;
	int r = read_judgements(s, &j, &n, &positives, err);
	if (r < 0)
		return r;
	if (positives == 0) {
		free(j);
		/* A file of another kind (JSON, queries) has no judgement
		 * either: its shape is what to say. */
		if (dx__shape_failure(s, DX_INPUT_QRELS, err))
			return err->code;
		return dx__fail(err, DX_EFORMAT, 0, s->o.qrels, "no judgement reaches the minimum relevance %g",
		                s->o.min_rel);
	}
	/* By query and document; a document judged twice keeps its first line. */
	if (n > 1)
		qsort(j, n, sizeof *j, by_query_doc);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || j[i].q != j[m - 1].q || j[i].pos != j[m - 1].pos)
			j[m++] = j[i];
	uint32_t nq = s->q.ids.n;
	s->excl_at = calloc((size_t)nq + 1, sizeof *s->excl_at);
	s->excl = malloc((m ? m : 1) * sizeof *s->excl);
	s->pair_q = malloc((m ? m : 1) * sizeof *s->pair_q);
	s->pair_doc = malloc((m ? m : 1) * sizeof *s->pair_doc);
	if (!s->excl_at || !s->excl || !s->pair_q || !s->pair_doc) {
		free(j);
		return dx__fail_nomem(err);
	}
	size_t ne = 0, np = 0;
	for (size_t i = 0; i < m; i++) {
		if (j[i].positive || s->o.exclude_judged) {
			s->excl[ne++] = j[i].pos;
			s->excl_at[j[i].q + 1]++;
		}
		if (j[i].positive)
			j[np++] = j[i];
	}
	for (uint32_t q = 0; q < nq; q++)
		s->excl_at[q + 1] += s->excl_at[q];
	/* The pairs in the order of their lines (see the top of the file). */
	if (np > 1)
		qsort(j, np, sizeof *j, by_line);
	for (size_t i = 0; i < np; i++) {
		s->pair_q[i] = j[i].q;
		s->pair_doc[i] = j[i].pos;
	}
	s->npairs = np;
	free(j);
	s->rep.positives = s->npairs;
	if (s->npairs == 0 && (dx__shape_failure(s, DX_INPUT_QRELS, err) ||
	                       dx__shape_failure(s, DX_INPUT_QUERIES, err)))
		return err->code;
	if (s->npairs == 0)
		return dx__fail(err, DX_EFORMAT, 0, s->o.qrels,
		                "no positive judgement names both a query with a text and a document of the corpus");
	return 0;
}
