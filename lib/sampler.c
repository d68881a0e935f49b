/*
 * sampler.c: drawing training triples.
 *
 * Triple n of the unsharded sequence is a function of the seed and n alone,
 * so that any shard computes its own triples without the others', a job
 * starts at any n in O(1) (a resumed job, on another number of ranks
 * perhaps), and the shards together are exactly the unsharded output.
 * Epoch e = n / P visits its P items (the (query, positive) pairs, or the
 * queries) in the order of a permutation keyed by the seed and e; the
 * negatives of triple n come from a generator seeded with the seed and n.
 * The shards divide the triples from the start on: the k-th of shard r is
 * number start + r + k * world_size, all shards the same size.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "opts.h"
#include "hash.h"
#include "sample.h"

int dx__sample_problems(dx_sampler *s, int kind, const char *path, uint64_t line, uint64_t count,
                        dx_err *err, const char *fmt, ...)
{
	char where[sizeof s->rep.first[0]];
	snprintf(where, sizeof where, "%s:%llu", path, (unsigned long long)line);
	if ((s->counting & DX_COUNT_REPORT) && s->o.strict) {
		char what[sizeof err->what];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof what, fmt, ap);
		va_end(ap);
		return dx__fail(err, DX_EFORMAT, 0, where, "%s", what);
	}
	dx_sample_report *to[2] = { s->counting & DX_COUNT_REPORT ? &s->rep : NULL,
		                    s->counting & DX_COUNT_SHADOW ? &s->shadow : NULL };
	for (int i = 0; i < 2; i++) {
		if (!to[i])
			continue;
		if (to[i]->problems[kind] == 0)
			memcpy(to[i]->first[kind], where, sizeof where);
		to[i]->problems[kind] += count;
	}
	return 0;
}

int dx__sample_problem(dx_sampler *s, int kind, const dx_textfile *t, dx_err *err, const char *fmt, ...)
{
	char what[sizeof err->what];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return dx__sample_problems(s, kind, t->path, t->line, 1, err, "%s", what);
}

int dx__sample_tick(dx_sampler *s, const dx_textfile *t, dx_err *err)
{
	/* Every 65536 lines: a file of bad lines, or another shard's, may be
	 * long, and the caller must be able to stop it. */
	if ((++s->lines_read & 0xffff) == 0 && s->o.progress &&
	    s->o.progress(s->o.progress_ctx, s->lines_read, 0))
		return dx__fail(err, DX_ECANCELED, 0, t->path, "interrupted");
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int dx__split_blanks(char *line, size_t len, char **f, size_t *flen, int max)
{
	int n = 0;
	char *p = line, *end = line + len;
	for (;;) {
		while (p < end && is_blank(*p))
			p++;
		if (p == end)
			return n;
		char *s = p;
		while (p < end && !is_blank(*p))
			p++;
		if (n < max) {
			f[n] = s;
			flen[n] = (size_t)(p - s);
		}
		n++;
	}
}

int dx__parse_double(const char *p, size_t n, double *v)
{
	char tmp[64], *end;
	if (n == 0 || n >= sizeof tmp)
		return 0;
	memcpy(tmp, p, n);
	tmp[n] = '\0';
	*v = strtod(tmp, &end);
	return end == tmp + n && isfinite(*v);
}

int dx__is_digits(const char *p, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	return 1;
}

int dx__sample_doc(dx_sampler *s, const char *id, size_t len, uint64_t *pos, dx_err *err)
{
	if (s->c)
		return dx_corpus_find(s->c, id, len, pos, err);
	/* Without a corpus every id is a document, numbered as first named. */
	uint32_t i;
	if (dx__strtab_add(&s->docs, id, len, &i) < 0)
		return dx__fail_nomem(err);
	*pos = i;
	return 1;
}

int dx__sample_query(dx_sampler *s, const char *id, size_t len, uint32_t *q, dx_err *err)
{
	if (s->have_texts) {
		int64_t found = dx__strtab_find(&s->q.ids, id, len);
		if (found < 0)
			return 0;
		*q = (uint32_t)found;
		return 1;
	}
	int r = dx__queries_add(s, id, len, "", 0, q, err);
	return r < 0 ? r : 1;
}

int dx__sample_excluded(const dx_sampler *s, uint32_t q, uint64_t pos)
{
	const uint64_t *lo = s->excl + s->excl_at[q], *hi = s->excl + s->excl_at[q + 1];
	while (lo < hi) {
		const uint64_t *mid = lo + (hi - lo) / 2;
		if (*mid == pos)
			return 1;
		if (*mid < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static uint64_t excluded_count(const dx_sampler *s, uint32_t q)
{
	return s->excl_at[q + 1] - s->excl_at[q];
}

/* The run candidates of query q that pair i may draw, [*lo, *hi) of
 * cand_at[q] on: those that a margin leaves, at and below the first whose
 * score is far enough below the positive's (the candidates are in the
 * run's order, best first, so they are a tail). */
static void run_window(const dx_sampler *s, uint32_t q, uint64_t i, uint64_t *lo, uint64_t *hi)
{
	*lo = 0;
	*hi = s->cand_n[q];
	if (*hi == 0 || s->o.margin_kind == DX_MARGIN_NONE || isnan(s->pair_score[i]))
		return;
	double p = s->pair_score[i];
	double bound = s->o.margin_kind == DX_MARGIN_SCORE ? p - s->o.margin
	                                                   : p - fabs(p) * s->o.margin / 100;
	const double *sc = s->cand_score + s->cand_at[q];
	uint64_t a = 0, b = *hi;
	while (a < b) {
		uint64_t mid = a + (b - a) / 2;
		if (sc[mid] <= bound)
			b = mid;
		else
			a = mid + 1;
	}
	*lo = a;
}

/* Whether pair i can have a negative at all. */
static int has_negative(const dx_sampler *s, uint64_t i)
{
	uint32_t q = s->pair_q[i];
	if (s->o.random && s->c && excluded_count(s, q) < dx_corpus_count(s->c))
		return 1;
	if (!s->o.run)
		return 0;
	uint64_t lo, hi;
	run_window(s, q, i, &lo, &hi);
	return lo < hi;
}

/* Why a pair has no negative when its query has run candidates. */
static const char *why_not_candidates(const dx_sampler *s)
{
	if (s->o.margin_kind != DX_MARGIN_NONE)
		return "no run candidate of their query scores below the margin";
	return s->o.exclude_judged ? "every run candidate of their query is judged"
	                           : "every run candidate of their query is a positive";
}

/* Why pairs have no negative, for a message: nq queries have a pair,
 * nocand of them no run candidate at all; other pairs were left out
 * whose query has some. */
static void why_no_negative(const dx_sampler *s, uint64_t nq, uint64_t nocand, uint64_t other, char *buf,
                            size_t size)
{
	if (s->o.random) /* with or without a run: the corpus is all excluded */
		snprintf(buf, size, "every document of the corpus is %s for their query",
		         s->o.exclude_judged ? "judged" : "a positive");
	else if (nocand && other)
		snprintf(buf, size, "the run has no candidate for %llu of the %llu queries with a positive; "
		         "for %llu more pair%s, %s", (unsigned long long)nocand, (unsigned long long)nq,
		         (unsigned long long)other, other == 1 ? "" : "s", why_not_candidates(s));
	else if (nocand)
		snprintf(buf, size, "the run has no candidate for %llu of the %llu queries with a positive",
		         (unsigned long long)nocand, (unsigned long long)nq);
	else
		snprintf(buf, size, "%s", why_not_candidates(s));
}

/* Leaves out the pairs that can have no negative, and says so: a warning
 * in the report when some are left, else the error.  0 or a negative
 * code. */
static int drop_pairs_without_negative(dx_sampler *s, dx_err *err)
{
	/* Per query: whether it has a pair. */
	unsigned char *seen = calloc((size_t)s->q.ids.n + 1, 1);
	if (!seen)
		return dx__fail_nomem(err);
	uint64_t m = 0, other = 0;
	for (uint64_t i = 0; i < s->npairs; i++) {
		seen[s->pair_q[i]] = 1;
		if (!has_negative(s, i)) {
			other += s->o.run && s->cand_n[s->pair_q[i]] != 0;
		} else {
			s->pair_q[m] = s->pair_q[i];
			s->pair_doc[m] = s->pair_doc[i];
			if (s->pair_score)
				s->pair_score[m] = s->pair_score[i];
			m++;
		}
	}
	uint64_t nq = 0, nocand = 0;
	for (uint32_t q = 0; q < s->q.ids.n; q++) {
		nq += seen[q];
		nocand += seen[q] && s->o.run && s->cand_n[q] == 0;
	}
	free(seen);
	uint64_t dropped = s->npairs - m;
	s->rep.no_negative = dropped;
	const char *file = s->o.run && !s->o.random ? s->o.run : s->o.qrels;
	char why[256];
	why_no_negative(s, nq, nocand, other, why, sizeof why);
	/* A run read as qrels makes every candidate a positive: the qrels'
	 * shape can be what left none a negative too. */
	if (m == 0 && (dx__shape_failure(s, DX_INPUT_RUN, err) || dx__shape_failure(s, DX_INPUT_QRELS, err)))
		return err->code;
	if (m == 0)
		return dx__fail(err, DX_EFORMAT, 0, file, "no (query, positive) pair has a negative to draw: %s", why);
	if (dropped && s->rep.nwarnings < DX_SAMPLE_WARNINGS)
		dx__fail(&s->rep.warning[s->rep.nwarnings++], DX_EFORMAT, 0, file,
		         "%llu of %llu (query, positive) pairs %s no negative to draw, left out: %s",
		         (unsigned long long)dropped, (unsigned long long)s->npairs, dropped == 1 ? "has" : "have",
		         why);
	s->npairs = m;
	return 0;
}

/* DX_PAIRS_QUERY: the queries with a pair, in the order of their first
 * pair (the qrels' order, as the pairs), and each one's pairs, in their
 * order. */
static int group_by_query(dx_sampler *s, dx_err *err)
{
	uint64_t n = s->npairs, nq = 0;
	size_t all = (size_t)s->q.ids.n + 1;
	uint64_t *slot = malloc(all * sizeof *slot);
	s->qorder = malloc((n ? n : 1) * sizeof *s->qorder);
	s->qpair = malloc((n ? n : 1) * sizeof *s->qpair);
	s->qpair_at = calloc(n + 2, sizeof *s->qpair_at);
	if (!slot || !s->qorder || !s->qpair || !s->qpair_at) {
		free(slot);
		return dx__fail_nomem(err);
	}
	for (size_t q = 0; q < all; q++)
		slot[q] = UINT64_MAX;
	/* Number the queries as first met, counting each one's pairs one
	 * place ahead, so that the sums are where each group starts. */
	for (uint64_t i = 0; i < n; i++) {
		uint32_t q = s->pair_q[i];
		if (slot[q] == UINT64_MAX) {
			slot[q] = nq;
			s->qorder[nq++] = q;
		}
		s->qpair_at[slot[q] + 2]++;
	}
	for (uint64_t j = 2; j <= nq + 1; j++)
		s->qpair_at[j] += s->qpair_at[j - 1];
	/* qpair_at[j + 1] is now group j's start: it moves on as the group is
	 * filled, to end where group j + 1 starts. */
	for (uint64_t i = 0; i < n; i++)
		s->qpair[s->qpair_at[slot[s->pair_q[i]] + 1]++] = i;
	free(slot);
	s->nqorder = nq;
	return 0;
}

static int check_opts(const dx_corpus *c, const dx_sample_opts *o, dx_err *err)
{
	if (!o->triples && !o->qrels)
		return dx__fail(err, DX_EINVAL, 0, "", "no qrels and no triples file");
	if (o->triples && (o->qrels || o->run || o->random))
		return dx__fail(err, DX_EINVAL, 0, "", "a triples file comes without qrels, run or random negatives");
	if (!o->triples && !o->run && !o->random)
		return dx__fail(err, DX_EINVAL, 0, "", "no source of negatives: a run, random, or both");
	if (o->random && !c)
		return dx__fail(err, DX_EINVAL, 0, "", "random negatives are drawn from a corpus: none given");
	if (o->negatives == 0)
		return dx__fail(err, DX_EINVAL, 0, "", "at least one negative per triple");
	if (!(o->run_ratio >= 0 && o->run_ratio <= 1))
		return dx__fail(err, DX_EINVAL, 0, "", "the run ratio is between 0 and 1");
	if (o->world_size == 0 || o->rank >= o->world_size)
		return dx__fail(err, DX_EINVAL, 0, "", "the rank (%llu) is not below the world size (%llu)",
		                (unsigned long long)o->rank, (unsigned long long)o->world_size);
	if ((o->depth_from > 1 || o->margin_kind != DX_MARGIN_NONE || o->weights != DX_WEIGHTS_UNIFORM) &&
	    !o->run)
		return dx__fail(err, DX_EINVAL, 0, "", "a depth range, a margin or weights need a run");
	if (o->depth && o->depth_from > o->depth)
		return dx__fail(err, DX_EINVAL, 0, "", "the depth range starts at %u, below its end %u",
		                o->depth_from, o->depth);
	if (o->margin_kind < DX_MARGIN_NONE || o->margin_kind > DX_MARGIN_PERCENT ||
	    !(o->margin >= 0) || !isfinite(o->margin))
		return dx__fail(err, DX_EINVAL, 0, "", "the margin is a number, 0 or more");
	if (o->weights != DX_WEIGHTS_UNIFORM && o->weights != DX_WEIGHTS_RANK)
		return dx__fail(err, DX_EINVAL, 0, "", "unknown weights");
	if (o->pairs != DX_PAIRS_ALL && o->pairs != DX_PAIRS_QUERY)
		return dx__fail(err, DX_EINVAL, 0, "", "unknown pairing");
	if (o->triples && o->pairs != DX_PAIRS_ALL)
		return dx__fail(err, DX_EINVAL, 0, "", "a triples file is read as it is: no pairing");
	return 0;
}

/* How many triples this shard gives: of the tail triples from start on,
 * the shards' equal share, rounded down with drop_last, else up (the last
 * shards then wrap round to the first triples of the tail). */
static uint64_t shard_size(const dx_sample_opts *o, uint64_t tail)
{
	uint64_t w = o->world_size, share = tail / w;
	return o->drop_last || tail % w == 0 ? share : share + 1;
}

/* Sets the totals once the triples are known: 0, or DX_EINVAL when start
 * is not below them. */
static int set_totals(dx_sampler *s, uint64_t total, dx_err *err)
{
	s->rep.total = total;
	if (!total)
		return 0; /* a triples file without count: its length is unknown */
	if (s->o.start >= total)
		return dx__fail(err, DX_EINVAL, 0, "", "the start (%llu) is not below the number of triples (%llu)",
		                (unsigned long long)s->o.start, (unsigned long long)total);
	s->tail = total - s->o.start;
	s->shard = shard_size(&s->o, s->tail);
	s->rep.shard = s->shard;
	return 0;
}

dx_sampler *dx__sampler_new(dx_corpus *c, const dx_sample_opts *o, dx_err *err)
{
	dx_sampler *s = calloc(1, sizeof *s);
	if (!s) {
		dx__fail_nomem(err);
		return NULL;
	}
	s->c = c;
	s->o = *o;
	s->perm_epoch = UINT64_MAX;
	s->counting = DX_COUNT_REPORT;
	return s;
}

/* The shape of the triples file, told from its first data line (put back
 * for next_line), so that a warning comes before any triple. */
static int triples_shape(dx_sampler *s, dx_err *err)
{
	dx_shape shape = { .input = DX_INPUT_TRIPLES };
	char *line;
	size_t len;
	int r;
	while ((r = dx__textfile_next(&s->tf, &line, &len, err)) == 1) {
		size_t i = 0;
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len || line[i] == '#')
			continue;
		r = dx__shape_line(s, &shape, &s->tf, line, len, err);
		dx__textfile_unget(&s->tf);
		break;
	}
	return r < 0 ? r : 0;
}

dx_sampler *dx_sampler_open(dx_corpus *c, const dx_sample_opts *caller_opts, dx_err *err)
{
	dx_sample_opts taken;
	const dx_sample_opts *o = &taken;
	if (dx__sample_opts_take(&taken, caller_opts, err) < 0) {
		if (caller_opts && caller_opts->size >= offsetof(dx_sample_opts, report) + sizeof(void *) &&
		    caller_opts->report)
			memset(caller_opts->report, 0, sizeof *caller_opts->report);
		return NULL;
	}
	if (check_opts(c, o, err) < 0) {
		if (o->report)
			memset(o->report, 0, sizeof *o->report);
		return NULL;
	}
	dx_sampler *s = dx__sampler_new(c, o, err);
	if (!s) {
		if (o->report)
			memset(o->report, 0, sizeof *o->report);
		return NULL;
	}
	int r = 0;
	if (o->queries) {
		s->have_texts = 1;
		r = dx__queries_load(s, err);
	}
	if (r == 0 && o->triples) {
		s->tf_field = malloc((2 + o->negatives) * sizeof *s->tf_field);
		s->tf_len = malloc((2 + o->negatives) * sizeof *s->tf_len);
		s->tf_hold_neg = malloc(o->negatives * sizeof *s->tf_hold_neg);
		r = s->tf_field && s->tf_len && s->tf_hold_neg ? dx__textfile_open(&s->tf, o->triples, err)
		                                               : dx__fail_nomem(err);
		if (r == 0)
			r = triples_shape(s, err);
		if (r == 0)
			r = set_totals(s, o->count, err);
		s->tf_first_pass = 1;
	} else if (r == 0) {
		if ((r = dx__qrels_load(s, err)) == 0 && o->run)
			r = dx__run_load(s, err);
		if (r == 0)
			r = drop_pairs_without_negative(s, err);
		if (r == 0) {
			s->rep.pairs = s->npairs;
			if (o->pairs == DX_PAIRS_QUERY)
				r = group_by_query(s, err);
		}
		if (r == 0) {
			uint64_t epochs = o->epochs ? o->epochs : 1;
			uint64_t per = o->pairs == DX_PAIRS_QUERY ? s->nqorder : s->npairs;
			s->rep.per_epoch = per;
			if (per == 0)
				r = dx__fail(err, DX_EFORMAT, 0, o->run ? o->run : o->qrels,
				             "no query with a positive has a negative to draw");
			else if (!o->count && epochs > UINT64_MAX / per)
				r = dx__fail(err, DX_EINVAL, 0, "", "too many epochs");
			else
				r = set_totals(s, o->count ? o->count : epochs * per, err);
		}
	}
	if (o->report)
		*o->report = s->rep;
	if (r < 0) {
		dx_sampler_close(s);
		return NULL;
	}
	return s;
}

const dx_sample_report *dx_sampler_report(const dx_sampler *s)
{
	return &s->rep;
}

static int picked_before(const uint64_t *picked, unsigned k, uint64_t p)
{
	for (unsigned i = 0; i < k; i++)
		if (picked[i] == p)
			return 1;
	return 0;
}

/* A document drawn uniformly from the corpus that is not excluded for q
 * and, when one is left, not among picked[0..k). */
static uint64_t random_negative(const dx_sampler *s, uint32_t q, dx_rng *r, const uint64_t *picked,
                                unsigned k)
{
	uint64_t n = dx_corpus_count(s->c), p = 0;
	for (int tries = 0; tries < 64; tries++) {
		p = dx_rng_below(r, n);
		if (!dx__sample_excluded(s, q, p) && !picked_before(picked, k, p))
			return p;
	}
	/* Nearly every document is excluded or picked: the next one that is
	 * neither, else the next one not excluded (there is one, or the pair
	 * would have been left out). */
	for (uint64_t i = 0, x = p; i < n; i++, x = x + 1 < n ? x + 1 : 0)
		if (!dx__sample_excluded(s, q, x) && !picked_before(picked, k, x))
			return x;
	while (dx__sample_excluded(s, q, p))
		p = p + 1 < n ? p + 1 : 0;
	return p;
}

/* A place in [lo, hi) of q's candidates: uniform, or by the weights,
 * whose sums up to each candidate are cw (a search for the first sum above
 * a uniform draw over the window's total). */
static uint64_t draw_place(const dx_sampler *s, uint32_t q, dx_rng *r, uint64_t lo, uint64_t hi)
{
	if (!s->cand_cw)
		return lo + dx_rng_below(r, hi - lo);
	const double *cw = s->cand_cw + s->cand_at[q];
	double base = lo ? cw[lo - 1] : 0;
	double u = base + (double)(dx_rng_next(r) >> 11) * 0x1p-53 * (cw[hi - 1] - base);
	uint64_t a = lo, b = hi - 1;
	while (a < b) {
		uint64_t mid = a + (b - a) / 2;
		if (cw[mid] > u)
			b = mid;
		else
			a = mid + 1;
	}
	return a;
}

/* One of the run candidates that pair i may draw, when one is left not
 * among picked[0..k). */
static uint64_t run_negative(const dx_sampler *s, uint64_t i, dx_rng *r, const uint64_t *picked,
                             unsigned k)
{
	uint32_t q = s->pair_q[i];
	const uint64_t *pool = s->cand + s->cand_at[q];
	uint64_t lo, hi, at = 0;
	run_window(s, q, i, &lo, &hi);
	for (int tries = 0; tries < 16; tries++) {
		at = draw_place(s, q, r, lo, hi);
		if (!picked_before(picked, k, pool[at]))
			return pool[at];
	}
	uint64_t m = hi - lo;
	for (uint64_t j = 0, x = at; j < m; j++, x = x + 1 < hi ? x + 1 : lo)
		if (!picked_before(picked, k, pool[x]))
			return pool[x];
	return pool[at];
}

static uint64_t seed_key(const dx_sampler *s)
{
	return dx__mix64(s->o.seed ^ 0x5ca1ab1e0ddba11ULL);
}

/* The number of this shard's next triple in the unsharded sequence. */
static uint64_t next_number(dx_sampler *s)
{
	/* In 128 bits: k * world_size may pass 2^64 where the tail is long. */
	unsigned __int128 i = (unsigned __int128)s->k++ * s->o.world_size + s->o.rank;
	return s->o.start + (uint64_t)(i % s->tail);
}

/* Triple n of the unsharded sequence: a function of n and the seed alone,
 * which is what lets a shard start anywhere and a caller read any n. */
static void triple_at(dx_sampler *s, uint64_t n, dx_triple *t)
{
	uint64_t per = s->rep.per_epoch;
	uint64_t epoch = n / per;
	if (epoch != s->perm_epoch) {
		dx_perm_init(&s->perm, per, seed_key(s) + epoch);
		s->perm_epoch = epoch;
	}
	uint64_t i = dx_perm_at(&s->perm, n % per);
	if (s->o.pairs == DX_PAIRS_QUERY) {
		/* Query i's positives take turns, from a place its id fixes. */
		uint64_t first = s->qpair_at[i], npos = s->qpair_at[i + 1] - first;
		size_t idlen;
		const char *id = dx__strtab_get(&s->q.ids, s->qorder[i], &idlen);
		uint64_t turn = dx__hash64(id, idlen, seed_key(s)) + epoch;
		i = s->qpair[first + turn % npos];
	}
	uint32_t q = s->pair_q[i];
	t->n = n;
	t->epoch = epoch;
	t->qid = dx__strtab_get(&s->q.ids, q, &t->qid_len);
	t->query = dx__query_text(&s->q, q, &t->query_len);
	t->pos = s->pair_doc[i];
	dx_rng r;
	dx_rng_seed(&r, seed_key(s) ^ dx__mix64(n + 1));
	int from_run_only = !s->o.random;
	for (unsigned k = 0; k < s->o.negatives; k++) {
		uint64_t lo = 0, hi = 0;
		if (s->o.run)
			run_window(s, q, i, &lo, &hi);
		int run = lo < hi &&
		          (from_run_only || (double)(dx_rng_next(&r) >> 11) * 0x1p-53 < s->o.run_ratio);
		t->neg[k] = run ? run_negative(s, i, &r, t->neg, k) : random_negative(s, q, &r, t->neg, k);
	}
	t->nneg = s->o.negatives;
}

static int next_pair(dx_sampler *s, dx_triple *t)
{
	if (s->k >= s->shard)
		return 0;
	triple_at(s, next_number(s), t);
	return 1;
}

/* No line of the first pass, over every shard, holds a triple: the
 * sampling ends with an error, its summary counting every shard's lines
 * (which are what says why), not only this one's. */
static int no_triples(dx_sampler *s, dx_err *err)
{
	memcpy(s->rep.problems, s->shadow.problems, sizeof s->rep.problems);
	memcpy(s->rep.first, s->shadow.first, sizeof s->rep.first);
	if (s->tf_lines == 0)
		return dx__fail(err, DX_EFORMAT, 0, s->o.triples, "no triples in the file");
	if (dx__shape_failure(s, DX_INPUT_TRIPLES, err))
		return err->code;
	return dx__fail(err, DX_EFORMAT, 0, s->o.triples,
	                "no line of the file holds a triple that can be written");
}

/* The end of a pass over the triples file, or of the lines that count
 * takes: the first pass must have held a triple, whichever shard's, or no
 * later one will (the file is the same, only which shard has which line
 * changes); then another pass, if one is due.  Returns 1 to read on, 0 at
 * the end, or a negative code. */
static int end_pass(dx_sampler *s, int at_eof, dx_err *err)
{
	uint64_t epochs = s->o.epochs ? s->o.epochs : 1;
	if (s->tf_first_pass) {
		s->tf_first_pass = 0;
		if (!s->tf_valid) {
			s->tf_done = 1;
			return no_triples(s, err);
		}
	}
	if (!at_eof || (!s->o.count && s->tf_epoch + 1 >= epochs)) {
		s->tf_done = 1;
		return 0;
	}
	s->tf_epoch++;
	int r = dx__textfile_rewind(&s->tf, err);
	return r < 0 ? r : 1;
}

/* The query and documents of a triples line of nf columns: 1, 0 when the
 * line is bad (counted), or a negative code. */
static int resolve_line(dx_sampler *s, int nf, dx_triple *t, uint32_t *q, dx_err *err)
{
	unsigned want = 2 + s->o.negatives;
	char **f = s->tf_field;
	size_t *fl = s->tf_len;
	if (nf < (int)want)
		return dx__sample_problem(s, DX_SP_BAD_LINE, &s->tf, err, "triple with %d columns, not %u", nf, want);
	int r = dx__sample_query(s, f[0], fl[0], q, err);
	if (r <= 0)
		return r < 0 ? r : dx__sample_problem(s, DX_SP_NO_TEXT, &s->tf, err, "query without a text: '%.*s'",
		                                      (int)(fl[0] > 200 ? 200 : fl[0]), f[0]);
	unsigned k;
	for (k = 1; k < want; k++) {
		uint64_t *dst = k == 1 ? &t->pos : &t->neg[k - 2];
		if ((r = dx__sample_doc(s, f[k], fl[k], dst, err)) <= 0)
			break;
	}
	if (r < 0)
		return r;
	if (k < want)
		return dx__sample_problem(s, DX_SP_UNKNOWN_ID, &s->tf, err, "id not in the corpus: '%.*s'",
		                          (int)(fl[k] > 200 ? 200 : fl[k]), f[k]);
	return 1;
}

/* Gives the line kept in p (its negatives in neg) as the shard's next
 * triple, in t: 1. */
static int emit(dx_sampler *s, dx_triple *t, const struct dx_pad *p, const uint64_t *neg)
{
	t->n = p->n;
	t->epoch = p->epoch;
	t->pos = p->pos;
	if (neg != t->neg)
		memcpy(t->neg, neg, s->o.negatives * sizeof *t->neg);
	t->qid = dx__strtab_get(&s->q.ids, p->q, &t->qid_len);
	t->query = dx__query_text(&s->q, p->q, &t->query_len);
	t->nneg = s->o.negatives;
	s->k++;
	return 1;
}

/* Keeps line n, just resolved (ok) into t and q, for pad_line: 0, or
 * DX_ENOMEM. */
static int keep_pad(dx_sampler *s, uint64_t n, int ok, const dx_triple *t, uint32_t q, dx_err *err)
{
	unsigned k = s->o.negatives;
	if (s->tf_npad == s->tf_pad_cap) {
		size_t cap = s->tf_pad_cap ? 2 * s->tf_pad_cap : 8;
		struct dx_pad *p = realloc(s->tf_pad, cap * sizeof *p);
		if (p)
			s->tf_pad = p;
		uint64_t *neg = p ? realloc(s->tf_pad_neg, cap * k * sizeof *neg) : NULL;
		if (!neg)
			return dx__fail_nomem(err);
		s->tf_pad_neg = neg;
		s->tf_pad_cap = cap;
	}
	struct dx_pad *p = &s->tf_pad[s->tf_npad];
	*p = (struct dx_pad){ .n = n, .epoch = s->tf_epoch, .pos = t->pos, .q = q, .ok = ok };
	if (ok)
		memcpy(s->tf_pad_neg + s->tf_npad * k, t->neg, k * sizeof *t->neg);
	s->tf_npad++;
	return 0;
}

/* The lines of the file from start on are dealt out as the shards' turns
 * come, so that, unless drop_last, the last round's lines, m = tail % W of
 * them, leave the shards from m on one short: each then pads, as the
 * sampler pads generated triples, with the line its turn would wrap round
 * to, start + (rank - m), kept as it went by.  Known only at the end, when
 * the lines are counted: with count or without.  1 with the padding triple
 * in t, or 0. */
static int pad_line(dx_sampler *s, dx_triple *t)
{
	const dx_sample_opts *o = &s->o;
	if (o->drop_last || s->tf_padded || (s->shard && s->k >= s->shard))
		return 0;
	s->tf_padded = 1;
	/* With count, a shard may end before the others' last lines. */
	uint64_t lines = o->count ? o->count : s->tf_lines;
	uint64_t tail = lines > o->start ? lines - o->start : 0, m = tail % o->world_size;
	if (m == 0 || o->rank < m || o->rank - m >= s->tf_npad)
		return 0;
	size_t i = (size_t)(o->rank - m);
	if (!s->tf_pad[i].ok)
		return 0; /* a bad line: the shard one short, as for its own */
	return emit(s, t, &s->tf_pad[i], s->tf_pad_neg + i * o->negatives);
}

/* The next line of a triples file that is this shard's, resolved.  In the
 * first pass the other shards' lines are resolved too until one holds a
 * triple, so that every shard knows whether the file holds any.
 *
 * With drop_last and no count, the lines are not counted before the end,
 * so a shard holds each of its lines back until the file shows the line
 * that completes its round (the others' turns after it): a round the file
 * ends in is left out by every shard alike. */
static int next_own_line(dx_sampler *s, dx_triple *t, dx_err *err)
{
	unsigned want = 2 + s->o.negatives;
	char **f = s->tf_field;
	size_t *fl = s->tf_len;
	int hold = s->o.drop_last && !s->o.count;
	for (;;) {
		if (s->tf_holding && s->tf_lines > s->tf_hold_end) {
			s->tf_holding = 0;
			return emit(s, t, &s->tf_hold, s->tf_hold_neg);
		}
		if (s->tf_done || (s->shard && s->k >= s->shard))
			return 0;
		char *line;
		size_t len;
		int r = dx__textfile_next(&s->tf, &line, &len, err);
		if (r < 0)
			return r;
		if (r == 0) {
			if ((r = end_pass(s, 1, err)) <= 0)
				return r;
			continue;
		}
		if ((r = dx__sample_tick(s, &s->tf, err)) < 0)
			return r;
		int nf = dx__split_blanks(line, len, f, fl, (int)want);
		if (nf == 0 || *f[0] == '#')
			continue;
		uint64_t n = s->tf_lines;
		if (s->o.count && n >= s->o.count) {
			if ((r = end_pass(s, 0, err)) <= 0)
				return r;
			continue;
		}
		s->tf_lines++;
		/* Lines before start are skipped unread (but for the check that
		 * the file holds a triple at all), and the other shards' lines
		 * but for those a padding may take. */
		int own = n >= s->o.start && (n - s->o.start) % s->o.world_size == s->o.rank;
		int pad = !s->o.drop_last && n >= s->o.start && n - s->o.start <= s->o.rank;
		if (!own && !pad && !(s->tf_first_pass && !s->tf_valid))
			continue;
		uint32_t q = 0;
		s->counting = (own ? DX_COUNT_REPORT : 0) | (s->tf_first_pass ? DX_COUNT_SHADOW : 0);
		r = resolve_line(s, nf, t, &q, err);
		s->counting = DX_COUNT_REPORT;
		if (r < 0)
			return r;
		if (pad && keep_pad(s, n, r, t, q, err) < 0)
			return err->code;
		if (r == 0)
			continue;
		if (s->tf_first_pass)
			s->tf_valid = 1;
		if (!own)
			continue;
		struct dx_pad line_kept = { .n = n, .epoch = s->tf_epoch, .pos = t->pos, .q = q, .ok = 1 };
		if (!hold)
			return emit(s, t, &line_kept, t->neg);
		s->tf_hold = line_kept;
		memcpy(s->tf_hold_neg, t->neg, s->o.negatives * sizeof *t->neg);
		s->tf_hold_end = n + (s->o.world_size - 1 - (n - s->o.start) % s->o.world_size);
		s->tf_holding = 1;
	}
}

static int next_line(dx_sampler *s, dx_triple *t, dx_err *err)
{
	int r = next_own_line(s, t, err);
	return r != 0 ? r : pad_line(s, t);
}

int dx_sampler_next(dx_sampler *s, dx_triple *t, dx_err *err)
{
	return s->o.triples ? next_line(s, t, err) : next_pair(s, t);
}

int dx_sampler_at(dx_sampler *s, uint64_t n, dx_triple *t, dx_err *err)
{
	if (s->o.triples)
		return dx__fail(err, DX_EINVAL, 0, s->o.triples, "a triples file is read in order: no triple by number");
	if (n >= s->rep.total)
		return dx__fail(err, DX_EINVAL, 0, "", "no triple numbered %llu: there are %llu",
		                (unsigned long long)n, (unsigned long long)s->rep.total);
	triple_at(s, n, t);
	return 0;
}

int dx_sampler_doc_id(dx_sampler *s, uint64_t doc, const char **id, size_t *len, dx_err *err)
{
	if (s->c)
		return dx_corpus_id(s->c, doc, id, len, err);
	if (doc >= s->docs.n)
		return dx__fail(err, DX_EINVAL, 0, "", "no document numbered %llu", (unsigned long long)doc);
	*id = dx__strtab_get(&s->docs, (uint32_t)doc, len);
	return 0;
}

void dx_sampler_close(dx_sampler *s)
{
	if (!s)
		return;
	dx__queries_free(&s->q);
	dx__strtab_free(&s->docs);
	free(s->excl_at);
	free(s->excl);
	free(s->pair_q);
	free(s->pair_doc);
	free(s->cand_at);
	free(s->cand);
	free(s->cand_n);
	free(s->cand_score);
	free(s->cand_cw);
	free(s->pair_score);
	free(s->qorder);
	free(s->qpair_at);
	free(s->qpair);
	if (s->tf.gz)
		dx__textfile_close(&s->tf);
	free(s->tf_field);
	free(s->tf_len);
	free(s->tf_pad);
	free(s->tf_pad_neg);
	free(s->tf_hold_neg);
	free(s);
}
