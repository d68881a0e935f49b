/*
 * runfile.c: negatives for sample from a run: TREC "qid Q0 docid rank score
 * tag" (columns after the tag are ignored, as trec_eval does) or MS MARCO
 * "qid TAB pid TAB rank" (rank 1 best, no score), told from the first line.
 * Each query keeps the top depth lines of the run, by score (a TREC run)
 * or by rank (MS MARCO), ties broken by the rank column, then by a hash of
 * the document id, so that the order of the file's lines does not matter
 * (trec_eval breaks them by document id too); of those, the places from
 * depth_from on; then its positives, or all its judged documents, are left
 * out.  With a margin, each candidate keeps its score, and each positive
 * the run scores its own (the best, if the run names it twice); with
 * weights, each candidate keeps the sum of the weights up to it.
 *
 * The top depth is the run's: a line whose document is not in the corpus
 * keeps its place in it, so that no deeper line takes it (a judged subset
 * of a corpus would else give negatives from far below the depth asked
 * for), and is counted, with the first such line, when it is inside.
 *
 * Runs are written a query at a time, so the lines of one query are ranked
 * as a block and only the kept documents stay in memory, 8 bytes each.  A
 * run whose queries come back in later blocks is read a second time,
 * keeping the scores too, and each query is ranked again over all of its
 * blocks at the end.  A document that is not in the corpus takes its slot
 * in both: while a block is read it stands for its line and id; in the
 * second reading a block keeps only its line number, and only those that
 * the final ranking keeps are counted, the id of the first read again.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hash.h"
#include "sample.h"

/* A document not in the corpus: the rest of pos numbers its line in the
 * block's table of missing lines or, once kept in a second reading, is
 * its line number in the file. */
#define MISSING (UINT64_C(1) << 63)

typedef struct entry {
	uint64_t pos;
	double score;         /* higher is better: a score, or minus a rank */
	double rank;          /* the rank column: lower is better */
	uint64_t tie;         /* a hash of the document id */
	uint64_t seq;         /* file order, last: the same document twice */
} entry;

typedef struct block {
	uint32_t q;
	uint64_t start, n;    /* in the kept arrays */
} block;

/* A line whose document is not in the corpus: where, and its id. */
typedef struct missing {
	uint64_t line;
	size_t off, len;      /* the id in a pool */
} missing;

typedef struct missing_list {
	missing *m;
	size_t n, cap;
	dx_buf ids;
} missing_list;

typedef struct loader {
	dx_sampler *s;
	const char *path;
	entry *cur;           /* the lines of the block being read */
	size_t ncur, capcur;
	uint32_t cur_q;
	missing_list cur_miss; /* the missing lines of that block */
	uint64_t *pos;        /* kept candidates, block after block */
	double *score;        /* and their scores, with keep_scores or a margin */
	double *rank;         /* and the rest of their entries, with keep_scores */
	uint64_t *tie;
	uint32_t *place;      /* their places in the final ranking, with weights */
	int keep_scores;
	uint64_t n, cap;
	block *blocks;
	size_t nblocks, capblocks;
	int repeated;         /* a query came back in a later block */
	unsigned char *seen;  /* queries that had a block */
	/* Missing documents inside a top depth: how many, and the first. */
	uint64_t miss_n, miss_line;
	char miss_id[201];
	size_t miss_id_len;
	int miss_id_known;    /* miss_id is that of miss_line */
	/* With a margin: the pairs sorted by query and positive, to find the
	 * pair of a run line that names a positive (not the loader's own). */
	const uint64_t *by_pair;
} loader;

static int by_rank(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->tie != y->tie)
		return x->tie < y->tie ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int margin_on(const loader *l)
{
	return l->s->o.margin_kind != DX_MARGIN_NONE;
}

static int add_missing(missing_list *ml, uint64_t line, const char *id, size_t len, uint64_t *idx,
                       dx_err *err)
{
	if (dx__grow(&ml->m, &ml->cap, ml->n + 1, 256, sizeof *ml->m) < 0 ||
	    dx__buf_add(&ml->ids, id, len) < 0)
		return dx__fail_nomem(err);
	ml->m[ml->n] = (missing){ .line = line, .off = ml->ids.len - len, .len = len };
	*idx = ml->n++;
	return 0;
}

static void free_missing(missing_list *ml)
{
	free(ml->m);
	dx__buf_free(&ml->ids);
	memset(ml, 0, sizeof *ml);
}

/* A missing document inside a top depth: counted, the first line kept,
 * with its id when it is known (id is NULL in a second reading). */
static void note_missing(loader *l, uint64_t line, const char *id, size_t len)
{
	if (l->miss_n++ == 0 || line < l->miss_line) {
		l->miss_line = line;
		l->miss_id_known = id != NULL;
		l->miss_id_len = id ? (len < sizeof l->miss_id - 1 ? len : sizeof l->miss_id - 1) : 0;
		if (l->miss_id_len)
			memcpy(l->miss_id, id, l->miss_id_len);
	}
}

/* Counts the missing documents found inside a top depth (the first is
 * the error under strict).  Returns 0 or the error code. */
static int report_missing(loader *l, dx_err *err)
{
	if (!l->miss_n)
		return 0;
	uint64_t n = l->miss_n;
	l->miss_n = 0;
	return dx__sample_problems(l->s, DX_SP_RUN_MISSING, l->path, l->miss_line, n, err,
	                           "run id not in the corpus: '%.*s'", (int)l->miss_id_len, l->miss_id);
}

/*
 * Ranks entries e[0..n), keeps the top depth, appends them as a block of q.
 * Returns 1, without scores, when q had a block already.  The missing
 * documents kept are counted and dropped in a first reading, whose ranking
 * of the block is final; in a second one (from_read, with scores), they
 * are copied out of the block's table to be ranked again with the others.
 */
static int keep(loader *l, uint32_t q, entry *e, size_t n, int from_read, dx_err *err)
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
	/* The final ranking of the query (not a block's of a second reading,
	 * ranked again with the others): the places from depth_from on. */
	int final = !(from_read && l->keep_scores);
	size_t from = final && l->s->o.depth_from > 1 ? l->s->o.depth_from - 1 : 0;
	int with_place = final && l->s->o.weights != DX_WEIGHTS_UNIFORM;
	int with_score = l->keep_scores || margin_on(l);
	size_t m = 0;
	for (size_t i = from; i < n; i++) {
		if ((e[i].pos & MISSING) && (from_read || !l->keep_scores)) {
			const missing *mi = &l->cur_miss.m[e[i].pos & ~MISSING];
			if (!l->keep_scores) {
				note_missing(l, mi->line, l->cur_miss.ids.p + mi->off, mi->len);
				continue;
			}
			/* Kept to be ranked again: its line is enough. */
			e[i].pos = MISSING | mi->line;
		}
		e[i].seq = i + 1; /* its place, from here on */
		e[m++] = e[i];
	}
	n = m;
	if (l->n + n > l->cap) {
		size_t cap = l->cap;
		if (dx__grow(&l->pos, &cap, l->n + n, 1 << 16, sizeof *l->pos) < 0 ||
		    (with_score && dx__resize(&l->score, cap, sizeof *l->score) < 0) ||
		    (l->keep_scores && (dx__resize(&l->rank, cap, sizeof *l->rank) < 0 ||
		                        dx__resize(&l->tie, cap, sizeof *l->tie) < 0)) ||
		    (with_place && dx__resize(&l->place, cap, sizeof *l->place) < 0))
			return dx__fail_nomem(err);
		l->cap = cap;
	}
	if (dx__grow(&l->blocks, &l->capblocks, l->nblocks + 1, 1024, sizeof *l->blocks) < 0)
		return dx__fail_nomem(err);
	l->blocks[l->nblocks++] = (block){ .q = q, .start = l->n, .n = n };
	for (size_t i = 0; i < n; i++) {
		l->pos[l->n + i] = e[i].pos;
		if (with_score)
			l->score[l->n + i] = e[i].score;
		if (l->keep_scores) {
			l->rank[l->n + i] = e[i].rank;
			l->tie[l->n + i] = e[i].tie;
		}
		if (with_place)
			l->place[l->n + i] = (uint32_t)e[i].seq;
	}
	l->n += n;
	return 0;
}

/* Adds a line to the block being read. */
static int add_entry(loader *l, entry e, dx_err *err)
{
	if (dx__grow(&l->cur, &l->capcur, l->ncur + 1, 1024, sizeof *l->cur) < 0)
		return dx__fail_nomem(err);
	l->cur[l->ncur++] = e;
	return 0;
}

static int end_block(loader *l, dx_err *err)
{
	int r = l->ncur ? keep(l, l->cur_q, l->cur, l->ncur, 1, err) : 0;
	l->ncur = 0;
	l->cur_miss.n = 0;
	l->cur_miss.ids.len = 0;
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
				r = add_entry(l, (entry){ l->pos[at], l->score[at], l->rank[at], l->tie[at], l->ncur },
				              err);
			}
		if (r == 0)
			r = keep(&m, l->blocks[i].q, l->cur, l->ncur, 0, err);
		i = k;
	}
	free(l->pos);
	free(l->score);
	free(l->rank);
	free(l->tie);
	free(l->place);
	free(l->blocks);
	l->pos = m.pos;
	l->score = m.score;
	l->rank = m.rank;
	l->tie = m.tie;
	l->place = m.place;
	l->n = m.n;
	l->cap = m.cap;
	l->blocks = m.blocks;
	l->nblocks = m.nblocks;
	return r;
}

/* Leaves out the excluded documents, and counts the missing ones that the
 * final ranking kept, and packs the blocks to the front. */
static int finish(loader *l, dx_err *err)
{
	dx_sampler *s = l->s;
	uint32_t nq = s->q.ids.n;
	s->cand_at = calloc((size_t)nq + 1, sizeof *s->cand_at);
	s->cand_n = calloc((size_t)nq + 1, sizeof *s->cand_n);
	if (!s->cand_at || !s->cand_n)
		return dx__fail_nomem(err);
	if (l->place && !(s->cand_cw = malloc((l->n ? l->n : 1) * sizeof *s->cand_cw)))
		return dx__fail_nomem(err);
	uint64_t w = 0;
	for (size_t b = 0; b < l->nblocks; b++) {
		const block *bl = &l->blocks[b];
		s->cand_at[bl->q] = w;
		double sum = 0;
		for (uint64_t x = 0; x < bl->n; x++) {
			uint64_t at = bl->start + x, pos = l->pos[at];
			if (pos & MISSING) {
				note_missing(l, pos & ~MISSING, NULL, 0);
				continue;
			}
			if (dx__sample_excluded(s, bl->q, pos))
				continue;
			if (l->score)
				l->score[w] = l->score[at];
			if (l->place) {
				/* The weight of place p is 1 / p. */
				sum += 1.0 / l->place[at];
				s->cand_cw[w] = sum;
			}
			l->pos[w++] = pos;
		}
		s->cand_n[bl->q] = (uint32_t)(w - s->cand_at[bl->q]);
	}
	s->cand = w ? realloc(l->pos, w * sizeof *s->cand) : NULL;
	if (!s->cand)
		free(l->pos);
	l->pos = NULL;
	if (s->o.margin_kind != DX_MARGIN_NONE) {
		s->cand_score = l->score;
		l->score = NULL;
	}
	s->rep.run_entries = w;
	return 0;
}

/* Pairs by query, then positive. */
static int by_pair(const void *a, const void *b, void *ctx)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	const dx_sampler *s = ctx;
	if (s->pair_q[x] != s->pair_q[y])
		return s->pair_q[x] < s->pair_q[y] ? -1 : 1;
	return s->pair_doc[x] < s->pair_doc[y] ? -1 : s->pair_doc[x] > s->pair_doc[y];
}

/* With a margin: the table that finds a pair by query and positive, and
 * the positives' scores, none yet (NAN). */
static int margin_start(dx_sampler *s, uint64_t **table, dx_err *err)
{
	uint64_t n = s->npairs;
	if (!(*table = malloc((n ? n : 1) * sizeof **table)) ||
	    !(s->pair_score = malloc((n ? n : 1) * sizeof *s->pair_score)))
		return dx__fail_nomem(err);
	for (uint64_t i = 0; i < n; i++) {
		(*table)[i] = i;
		s->pair_score[i] = NAN;
	}
	qsort_r(*table, n, sizeof **table, by_pair, s);
	return 0;
}

/* A run line of query q naming document pos: when pos is one of q's
 * positives, its score, the best of the lines that name it. */
static void note_positive_score(loader *l, uint32_t q, uint64_t pos, double score)
{
	const dx_sampler *s = l->s;
	uint64_t a = 0, b = s->npairs;
	while (a < b) {
		uint64_t mid = a + (b - a) / 2, i = l->by_pair[mid];
		if (s->pair_q[i] < q || (s->pair_q[i] == q && s->pair_doc[i] < pos))
			a = mid + 1;
		else
			b = mid;
	}
	if (a < s->npairs) {
		uint64_t i = l->by_pair[a];
		if (s->pair_q[i] == q && s->pair_doc[i] == pos &&
		    (isnan(s->pair_score[i]) || score > s->pair_score[i]))
			s->pair_score[i] = score;
	}
}

/* Frees what a reading of the run kept, but the queries it wants. */
static void loader_free(loader *l)
{
	free(l->cur);
	free(l->pos);
	free(l->score);
	free(l->rank);
	free(l->tie);
	free(l->place);
	free(l->blocks);
	free(l->seen);
	free_missing(&l->cur_miss);
	memset(l, 0, sizeof *l);
}

/* A malformed line: counted, or under strict the error, unless a missing
 * document of an earlier block (an earlier line) is the first error. */
static int bad_line(loader *l, const dx_textfile *t, dx_err *err, const char *what)
{
	if (l->s->o.strict && l->miss_n)
		return report_missing(l, err);
	return dx__sample_problem(l->s, DX_SP_BAD_LINE, t, err, "%s", what);
}

/* Reads the run once.  Returns 0, 1 when a query came back in a later
 * block and the scores were not kept, or a negative code. */
static int read_run(loader *l, dx_textfile *t, const unsigned char *wanted, dx_err *err)
{
	dx_sampler *s = l->s;
	dx_shape shape = { .input = DX_INPUT_RUN };
	char *line;
	size_t len;
	int r;
	if (!(l->seen = calloc(s->q.ids.n + 1, 1)))
		return dx__fail_nomem(err);
	while ((r = dx__textfile_next(t, &line, &len, err)) == 1) {
		if ((r = dx__sample_tick(s, t, err)) < 0)
			return r;
		char *f[6];
		size_t fl[6];
		int nf = dx__split_blanks(line, len, f, fl, 6);
		if (nf == 0 || *f[0] == '#')
			continue;
		if (!shape.done && (r = dx__shape_line(s, &shape, t, line, len, err)) < 0)
			return r;
		/* The first line tells the format: three columns ending in a
		 * rank are MS MARCO's, anything else must be TREC's. */
		if (s->run_format == DX_RUN_UNKNOWN) {
			s->run_format = nf == 3 && dx__is_digits(f[2], fl[2]) ? DX_RUN_MSMARCO : DX_RUN_TREC;
			if (s->run_format == DX_RUN_MSMARCO && margin_on(l))
				return dx__fail(err, DX_EINVAL, 0, l->path,
				                "a margin needs the scores of a TREC run; an MS MARCO run has ranks only");
		}
		int trec = s->run_format == DX_RUN_TREC;
		if (trec ? nf < 6 : nf != 3) {
			char what[80];
			snprintf(what, sizeof what, "run line with %d columns, not %s", nf,
			         trec ? "6" : "3 (qid TAB pid TAB rank)");
			if ((r = bad_line(l, t, err, what)) < 0)
				return r;
			continue;
		}
		int64_t q = dx__strtab_find(&s->q.ids, f[0], fl[0]);
		if (q < 0 || !wanted[q])
			continue;
		double score;
		if (trec ? !dx__parse_double(f[4], fl[4], &score)
		         : !dx__is_digits(f[2], fl[2]) || !dx__parse_double(f[2], fl[2], &score)) {
			if ((r = bad_line(l, t, err, trec ? "run score is not a number" : "run rank is not a whole number")) < 0)
				return r;
			continue;
		}
		/* Higher is better: a rank counts down.  Ties are broken by the
		 * rank column (an unreadable one after the others). */
		double rank = score;
		if (!trec)
			score = -score;
		else if (!dx__parse_double(f[3], fl[3], &rank))
			rank = INFINITY;
		int d = trec ? 2 : 1;
		uint64_t pos;
		int found = dx__sample_doc(s, f[d], fl[d], &pos, err);
		if (found < 0)
			return found;
		if ((uint32_t)q != l->cur_q && (r = end_block(l, err)) != 0)
			return r;
		l->cur_q = (uint32_t)q;
		/* Not in the corpus: it keeps its place in the ranking. */
		if (!found && (r = add_missing(&l->cur_miss, t->line, f[d], fl[d], &pos, err)) < 0)
			return r;
		if (!found)
			pos |= MISSING;
		if (found && l->by_pair)
			note_positive_score(l, (uint32_t)q, pos, score);
		entry e = { .pos = pos, .score = score, .rank = rank,
			    .tie = dx__hash64(f[d], fl[d], 0), .seq = t->line };
		if ((r = add_entry(l, e, err)) < 0)
			return r;
	}
	if (r == 0)
		r = dx__shape_end(s, &shape, t, err);
	return r < 0 ? r : end_block(l, err);
}

/* The id of the first missing line that a second reading counted, read
 * again from the file (which was read twice already, so can be). */
static int find_missing_id(loader *l, dx_textfile *t, dx_err *err)
{
	int r = dx__textfile_rewind(t, err);
	char *line;
	size_t len;
	if (r < 0)
		return r;
	while ((r = dx__textfile_next(t, &line, &len, err)) == 1) {
		if (t->line < l->miss_line)
			continue;
		char *f[3];
		size_t fl[3];
		int d = l->s->run_format == DX_RUN_TREC ? 2 : 1;
		if (dx__split_blanks(line, len, f, fl, 3) > d) {
			l->miss_id_len = fl[d] < sizeof l->miss_id - 1 ? fl[d] : sizeof l->miss_id - 1;
			memcpy(l->miss_id, f[d], l->miss_id_len);
			l->miss_id_known = 1;
		}
		return 0;
	}
	return r < 0 ? r : 0;
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
	uint64_t *by_pair = NULL;
	if (r == 0 && s->o.margin_kind != DX_MARGIN_NONE)
		r = margin_start(s, &by_pair, err);
	loader l = { .s = s, .path = s->o.run, .by_pair = by_pair };
	dx_sample_report before = s->rep;
	if (r == 0 && (r = read_run(&l, &t, wanted, err)) == 1) {
		/* Not a query at a time: again, ranking each query over all its
		 * lines (what the first reading counted is counted again). */
		loader_free(&l);
		l = (loader){ .s = s, .path = s->o.run, .keep_scores = 1, .by_pair = by_pair };
		s->rep = before;
		if ((r = dx__textfile_rewind(&t, err)) == 0)
			r = read_run(&l, &t, wanted, err);
	}
	if (r == 0 && l.repeated)
		r = merge_blocks(&l, err);
	if (r == 0)
		r = finish(&l, err);
	if (r == 0 && l.miss_n && !l.miss_id_known)
		r = find_missing_id(&l, &t, err);
	if (r == 0)
		r = report_missing(&l, err);
	loader_free(&l);
	free(by_pair);
	free(wanted);
	dx__textfile_close(&t);
	return r;
}
