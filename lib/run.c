/*
 * run.c: negatives for sample from a TREC run, "qid Q0 docid rank score tag"
 * (columns after the tag are ignored, as trec_eval does).  Each query keeps
 * its top depth documents by score, ties in file order; then its positives,
 * or all its judged documents, are left out.
 *
 * Runs are written a query at a time, so the lines of one query are ranked
 * as a block and only the kept documents stay in memory, 8 bytes each.  A
 * run whose queries come back in later blocks is read a second time,
 * keeping the scores too, and each query is ranked again over all of its
 * blocks at the end.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "sample.h"

typedef struct entry {
	uint64_t pos;
	double score;
	uint64_t seq;         /* file order */
} entry;

typedef struct block {
	uint32_t q;
	uint64_t start, n;    /* in the kept arrays */
} block;

typedef struct loader {
	dx_sampler *s;
	entry *cur;           /* the lines of the block being read */
	size_t ncur, capcur;
	uint32_t cur_q;
	uint64_t *pos;        /* kept candidates, block after block */
	double *score;        /* and their scores, with keep_scores */
	int keep_scores;
	uint64_t n, cap;
	block *blocks;
	size_t nblocks, capblocks;
	int repeated;         /* a query came back in a later block */
	unsigned char *seen;  /* queries that had a block */
} loader;

static int by_rank(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Ranks entries e[0..n), keeps the top depth, appends them as a block of q.
 * Returns 1, without scores, when q had a block already. */
static int keep(loader *l, uint32_t q, entry *e, size_t n, dx_err *err)
{
	if (l->seen[q]) {
		l->repeated = 1;
		if (!l->keep_scores)
			return 1;
	}
	l->seen[q] = 1;
	qsort(e, n, sizeof *e, by_rank);
	if (l->s->o.depth && n > l->s->o.depth)
		n = l->s->o.depth;
	if (l->n + n > l->cap) {
		uint64_t cap = l->cap ? l->cap : 1 << 16;
		while (cap < l->n + n)
			cap *= 2;
		uint64_t *p = realloc(l->pos, cap * sizeof *p);
		if (!p)
			return dx__fail_nomem(err);
		l->pos = p;
		if (l->keep_scores) {
			double *sc = realloc(l->score, cap * sizeof *sc);
			if (!sc)
				return dx__fail_nomem(err);
			l->score = sc;
		}
		l->cap = cap;
	}
	if (l->nblocks == l->capblocks) {
		size_t c = l->capblocks ? l->capblocks * 2 : 1024;
		block *b = realloc(l->blocks, c * sizeof *b);
		if (!b)
			return dx__fail_nomem(err);
		l->blocks = b;
		l->capblocks = c;
	}
	l->blocks[l->nblocks++] = (block){ .q = q, .start = l->n, .n = n };
	for (size_t i = 0; i < n; i++) {
		l->pos[l->n + i] = e[i].pos;
		if (l->keep_scores)
			l->score[l->n + i] = e[i].score;
	}
	l->n += n;
	return 0;
}

/* Adds a line to the block being read. */
static int add_entry(loader *l, entry e, dx_err *err)
{
	if (l->ncur == l->capcur) {
		size_t c = l->capcur ? l->capcur * 2 : 1024;
		entry *p = realloc(l->cur, c * sizeof *p);
		if (!p)
			return dx__fail_nomem(err);
		l->cur = p;
		l->capcur = c;
	}
	l->cur[l->ncur++] = e;
	return 0;
}

static int end_block(loader *l, dx_err *err)
{
	int r = l->ncur ? keep(l, l->cur_q, l->cur, l->ncur, err) : 0;
	l->ncur = 0;
	return r;
}

static int by_query(const void *a, const void *b)
{
	const block *x = a, *y = b;
	if (x->q != y->q)
		return x->q < y->q ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Ranks each query again over all of its blocks: they become one block. */
static int merge_blocks(loader *l, dx_err *err)
{
	qsort(l->blocks, l->nblocks, sizeof *l->blocks, by_query);
	loader m = { .s = l->s, .seen = l->seen, .keep_scores = 1 };
	memset(l->seen, 0, l->s->q.ids.n);
	int r = 0;
	for (size_t i = 0; i < l->nblocks && r == 0;) {
		size_t k = i;
		l->ncur = 0;
		for (; k < l->nblocks && l->blocks[k].q == l->blocks[i].q; k++)
			for (uint64_t x = 0; x < l->blocks[k].n && r == 0; x++) {
				uint64_t at = l->blocks[k].start + x;
				r = add_entry(l, (entry){ l->pos[at], l->score[at], l->ncur }, err);
			}
		if (r == 0)
			r = keep(&m, l->blocks[i].q, l->cur, l->ncur, err);
		i = k;
	}
	free(l->pos);
	free(l->score);
	free(l->blocks);
	l->pos = m.pos;
	l->score = m.score;
	l->n = m.n;
	l->cap = m.cap;
	l->blocks = m.blocks;
	l->nblocks = m.nblocks;
	return r;
}

/* Leaves out the excluded documents and packs the blocks to the front. */
static int finish(loader *l, dx_err *err)
{
	dx_sampler *s = l->s;
	uint32_t nq = s->q.ids.n;
	s->cand_at = calloc((size_t)nq + 1, sizeof *s->cand_at);
	s->cand_n = calloc((size_t)nq + 1, sizeof *s->cand_n);
	if (!s->cand_at || !s->cand_n)
		return dx__fail_nomem(err);
	uint64_t w = 0;
	for (size_t b = 0; b < l->nblocks; b++) {
		const block *bl = &l->blocks[b];
		s->cand_at[bl->q] = w;
		for (uint64_t x = 0; x < bl->n; x++) {
			uint64_t pos = l->pos[bl->start + x];
			if (!dx__sample_excluded(s, bl->q, pos))
				l->pos[w++] = pos;
		}
		s->cand_n[bl->q] = (uint32_t)(w - s->cand_at[bl->q]);
	}
	free(l->score);
	l->score = NULL;
	s->cand = w ? realloc(l->pos, w * sizeof *s->cand) : NULL;
	if (!s->cand)
		free(l->pos);
	l->pos = NULL;
	s->rep.run_entries = w;
	return 0;
}

/* Frees what a reading of the run kept, but the queries it wants. */
static void loader_free(loader *l)
{
	free(l->cur);
	free(l->pos);
	free(l->score);
	free(l->blocks);
	free(l->seen);
	memset(l, 0, sizeof *l);
}

/* Reads the run once.  Returns 0, 1 when a query came back in a later
 * block and the scores were not kept, or a negative code. */
static int read_run(loader *l, dx_textfile *t, const unsigned char *wanted, dx_err *err)
{
	char *line;
	size_t len;
	uint64_t seq = 0;
	int r;
	if (!(l->seen = calloc(l->s->q.ids.n + 1, 1)))
		return dx__fail_nomem(err);
	while ((r = dx__textfile_next(t, &line, &len, err)) == 1) {
		char *f[6];
		size_t fl[6];
		int nf = dx__split_blanks(line, len, f, fl, 6);
		if (nf == 0 || *f[0] == '#')
			continue;
		if (nf < 6) {
			if ((r = dx__sample_problem(l->s, DX_SP_BAD_LINE, t, err, "run line with %d columns, not 6", nf)) < 0)
				return r;
			continue;
		}
		int64_t q = dx__strtab_find(&l->s->q.ids, f[0], fl[0]);
		if (q < 0 || !wanted[q])
			continue;
		double score;
		if (!dx__parse_double(f[4], fl[4], &score)) {
			if ((r = dx__sample_problem(l->s, DX_SP_BAD_LINE, t, err, "run score is not a number")) < 0)
				return r;
			continue;
		}
		uint64_t pos;
		if ((r = dx__sample_doc(l->s, f[2], fl[2], &pos, err)) < 0)
			return r;
		if (r == 0) {
			if ((r = dx__sample_problem(l->s, DX_SP_UNKNOWN_ID, t, err, "run id not in the corpus: '%.*s'",
			                            (int)(fl[2] > 200 ? 200 : fl[2]), f[2])) < 0)
				return r;
			continue;
		}
		if ((uint32_t)q != l->cur_q && (r = end_block(l, err)) != 0)
			return r;
		l->cur_q = (uint32_t)q;
		if ((r = add_entry(l, (entry){ pos, score, seq++ }, err)) < 0)
			return r;
	}
	return r < 0 ? r : end_block(l, err);
}

int dx__run_load(dx_sampler *s, dx_err *err)
{
	dx_textfile t;
	int r = dx__textfile_open(&t, s->o.run, err);
	if (r < 0)
		return r;
	/* Only queries with a pair need their run lines. */
	unsigned char *wanted = calloc(s->q.ids.n + 1, 1);
	if (!wanted)
		r = dx__fail_nomem(err);
	for (uint64_t i = 0; r == 0 && i < s->npairs; i++)
		wanted[s->pair_q[i]] = 1;
	loader l = { .s = s };
	dx_sample_report before = s->rep;
	if (r == 0 && (r = read_run(&l, &t, wanted, err)) == 1) {
		/* Not a query at a time: again, ranking each query over all its lines. */
		loader_free(&l);
		l = (loader){ .s = s, .keep_scores = 1 };
		s->rep = before;
		if ((r = dx__textfile_rewind(&t, err)) == 0)
			r = read_run(&l, &t, wanted, err);
	}
	if (r == 0 && l.repeated)
		r = merge_blocks(&l, err);
	if (r == 0)
		r = finish(&l, err);
	loader_free(&l);
	free(wanted);
	dx__textfile_close(&t);
	return r;
}
