/*
 * The sampler's schedule: a start reached in O(1) is the tail of the whole
 * sequence; a job resumed on another number of ranks loses and repeats no
 * triple; shards are equal, padded by wrapping or with drop_last cut;
 * one pair per query an epoch; and the run's candidates: a depth range,
 * ties that do not depend on the file's order, margins, rank weights.
 */
#include "docdex.h"
#include "sample.h"
#include "unit.h"

/* One triple as the tests compare them. */
typedef struct drawn {
	uint64_t n, epoch;
	char text[64];        /* "qid pos neg" */
} drawn;

/* Draws every triple of the options into out (at most max); their count. */
static size_t draw(const dx_sample_opts *o, drawn *out, size_t max)
{
	dx_err err = { 0 };
	dx_sampler *s = dx_sampler_open(NULL, o, &err);
	CHECK(s != NULL);
	if (!s) {
		fprintf(stderr, "  %s: %s\n", err.what, err.subject);
		return 0;
	}
	uint64_t neg[1];
	dx_triple t = { .neg = neg };
	size_t n = 0;
	int r = 0;
	while (n < max && (r = dx_sampler_next(s, &t, &err)) == 1) {
		const char *p, *q;
		size_t pl, ql;
		CHECK(dx_sampler_doc_id(s, t.pos, &p, &pl, &err) == 0);
		CHECK(dx_sampler_doc_id(s, t.neg[0], &q, &ql, &err) == 0);
		out[n].n = t.n;
		out[n].epoch = t.epoch;
		snprintf(out[n].text, sizeof out[n].text, "%.*s %.*s %.*s", (int)t.qid_len, t.qid, (int)pl,
		         p, (int)ql, q);
		n++;
	}
	if (n < max) {
		CHECK_EQ(r, 0);
		CHECK_EQ(n, dx_sampler_report(s)->shard);
	}
	dx_sampler_close(s);
	return n;
}

/* The inputs' paths, kept (path() reuses its buffers). */
static char qrels_path[512], run_path[512];

/* Queries with a few positives each and a run of ten candidates each. */
static dx_sample_opts inputs(void)
{
	char qrels[4096] = "", run[8192] = "";
	for (int q = 1; q <= 6; q++) {
		for (int p = 0; p < q % 3 + 1; p++) {
			size_t at = strlen(qrels);
			snprintf(qrels + at, sizeof qrels - at, "q%d 0 p%d_%d 1\n", q, q, p);
		}
		for (int d = 1; d <= 10; d++) {
			size_t at = strlen(run);
			snprintf(run + at, sizeof run - at, "q%d Q0 d%d_%d %d %d t\n", q, q, d, d, 100 - d);
		}
	}
	unit_write_text("qrels", qrels);
	unit_write_text("run", run);
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	o.qrels = qrels_path;
	o.run = run_path;
	o.seed = 7;
	return o;
}

enum { MAX = 400 };

/* --start N gives the tail of the whole sequence from N, byte for byte. */
static void start_is_the_tail(void)
{
	static drawn all[MAX], tail[MAX];
	dx_sample_opts o = inputs();
	o.epochs = 5;
	size_t n = draw(&o, all, MAX);
	CHECK(n > 40);
	for (uint64_t start = 0; start < n; start += 13) {
		o.start = start;
		size_t m = draw(&o, tail, MAX);
		CHECK_EQ(m, n - start);
		for (size_t i = 0; i < m && i + start < n; i++) {
			CHECK_EQ(tail[i].n, all[start + i].n);
			CHECK(strcmp(tail[i].text, all[start + i].text) == 0);
		}
	}
	/* At or past the end: an error, not an empty success. */
	o.start = n;
	dx_err err = { 0 };
	CHECK(dx_sampler_open(NULL, &o, &err) == NULL);
	CHECK_EQ(err.code, DX_EINVAL);
}

/* A job on 3 ranks wrote 4 steps (triples 0..11); resumed on 2 ranks at
 * 12, the two phases together are the whole sequence, once each. */
static void resume_on_other_ranks(void)
{
	static drawn all[MAX], part[MAX];
	dx_sample_opts o = inputs();
	o.count = 60;
	size_t n = draw(&o, all, MAX);
	CHECK_EQ(n, 60);
	unsigned char seen[60] = { 0 };
	for (uint64_t r = 0; r < 3; r++) {
		o.world_size = 3;
		o.rank = r;
		size_t m = draw(&o, part, 4);
		CHECK_EQ(m, 4);
		for (size_t i = 0; i < m; i++) {
			CHECK(part[i].n < 12);
			seen[part[i].n % 60]++;
			CHECK(strcmp(part[i].text, all[part[i].n % 60].text) == 0);
		}
	}
	o.start = 12;
	for (uint64_t r = 0; r < 2; r++) {
		o.world_size = 2;
		o.rank = r;
		size_t m = draw(&o, part, MAX);
		CHECK_EQ(m, 24);
		for (size_t i = 0; i < m; i++) {
			seen[part[i].n % 60]++;
			CHECK(strcmp(part[i].text, all[part[i].n % 60].text) == 0);
		}
	}
	for (int i = 0; i < 60; i++)
		CHECK_EQ(seen[i], 1);
}

/* Every rank the same number of triples, for 1 to 8 ranks and every count
 * modulo the world size: padded, every triple at least once and the rest
 * wrapping round to the first; with drop_last, the first whole rounds. */
static void equal_shards(void)
{
	static drawn part[MAX];
	dx_sample_opts o = inputs();
	for (uint64_t w = 1; w <= 8; w++)
		for (uint64_t count = 24; count < 24 + w; count++)
			for (int drop = 0; drop <= 1; drop++) {
				unsigned seen[40] = { 0 };
				uint64_t want = drop ? count / w : (count + w - 1) / w;
				o.count = count;
				o.world_size = w;
				o.drop_last = drop;
				for (uint64_t r = 0; r < w; r++) {
					o.rank = r;
					size_t m = draw(&o, part, MAX);
					CHECK_EQ(m, want);
					for (size_t i = 0; i < m; i++)
						seen[part[i].n]++;
				}
				for (uint64_t i = 0; i < count; i++) {
					uint64_t at_least = drop && i >= want * w ? 0 : 1;
					uint64_t padded = !drop && i < want * w - count ? 1 : 0;
					CHECK_EQ(seen[i], at_least + padded);
				}
			}
}

/* DX_PAIRS_QUERY: each query once an epoch, its positives in turn. */
static void one_pair_per_query(void)
{
	static drawn all[MAX];
	dx_sample_opts o = inputs();
	o.pairs = DX_PAIRS_QUERY;
	o.epochs = 6;
	size_t n = draw(&o, all, MAX);
	CHECK_EQ(n, 6 * 6);
	/* q2 and q5 have 3 positives: over 6 epochs each comes twice. */
	for (int e = 0; e < 6; e++) {
		int queries[7] = { 0 };
		for (size_t i = 0; i < n; i++)
			if (all[i].epoch == (uint64_t)e)
				queries[all[i].text[1] - '0']++;
		for (int q = 1; q <= 6; q++)
			CHECK_EQ(queries[q], 1);
	}
	for (int p = 0; p < 3; p++) {
		char want[16];
		snprintf(want, sizeof want, "q2 p2_%d ", p);
		int times = 0;
		for (size_t i = 0; i < n; i++)
			times += strncmp(all[i].text, want, strlen(want)) == 0;
		CHECK_EQ(times, 2);
	}
}

/* The candidates of query qid, space-separated. */
static const char *candidates(const dx_sample_opts *o, const char *qid)
{
	static char out[512];
	dx_err err = { 0 };
	dx_sampler *s = dx_sampler_open(NULL, o, &err);
	CHECK(s != NULL);
	out[0] = '\0';
	if (!s) {
		fprintf(stderr, "  %s: %s\n", err.what, err.subject);
		return out;
	}
	int64_t q = dx__strtab_find(&s->q.ids, qid, strlen(qid));
	for (uint32_t i = 0; q >= 0 && i < s->cand_n[q]; i++) {
		const char *id;
		size_t n, at = strlen(out);
		CHECK(dx_sampler_doc_id(s, s->cand[s->cand_at[q] + i], &id, &n, &err) == 0);
		snprintf(out + at, sizeof out - at, "%s%.*s", at ? " " : "", (int)n, id);
	}
	dx_sampler_close(s);
	return out;
}

/* A depth range; equal scores ranked by the rank column, then an order of
 * the ids, whatever the order of the file's lines. */
static void depth_range_and_ties(void)
{
	dx_sample_opts o = inputs();
	o.depth = 4;
	o.depth_from = 3;
	CHECK(strcmp(candidates(&o, "q1"), "d1_3 d1_4") == 0);
	unit_write_text("qrels", "q 0 p 1\n");
	unit_write_text("run", "q Q0 c 3 1 t\nq Q0 a 1 1 t\nq Q0 b 2 1 t\nq Q0 x 9 1 t\nq Q0 y 9 1 t\n");
	o.depth = o.depth_from = 0;
	char first[512];
	snprintf(first, sizeof first, "%s", candidates(&o, "q"));
	CHECK(strncmp(first, "a b c ", 6) == 0);
	unit_write_text("run", "q Q0 y 9 1 t\nq Q0 b 2 1 t\nq Q0 x 9 1 t\nq Q0 c 3 1 t\nq Q0 a 1 1 t\n");
	CHECK(strcmp(candidates(&o, "q"), first) == 0);
}

/* Margins against the positive's own score; weights by place. */
static void margins_and_weights(void)
{
	static drawn all[MAX];
	unit_write_text("qrels", "q 0 p 1\n");
	unit_write_text("run", "q Q0 d1 1 5 t\nq Q0 d2 2 3.5 t\nq Q0 p 3 3 t\nq Q0 d3 4 2.9 t\nq Q0 d4 5 1 t\n");
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	o.qrels = qrels_path;
	o.run = run_path;
	o.count = 200;
	/* At most the positive's 3 less 0: d3 and d4; less 10% of 3: d4. */
	o.margin_kind = DX_MARGIN_SCORE;
	size_t n = draw(&o, all, MAX);
	int d3 = 0, d4 = 0;
	for (size_t i = 0; i < n; i++) {
		d3 += strcmp(all[i].text, "q p d3") == 0;
		d4 += strcmp(all[i].text, "q p d4") == 0;
	}
	CHECK_EQ(d3 + d4, n);
	CHECK(d3 > 0 && d4 > 0);
	o.margin_kind = DX_MARGIN_PERCENT;
	o.margin = 10;
	n = draw(&o, all, MAX);
	for (size_t i = 0; i < n; i++)
		CHECK(strcmp(all[i].text, "q p d4") == 0);
	/* Weights 1/p over places 1, 2, 4, 5 (p is at 3): d1 about five
	 * times as often as d4. */
	o.margin_kind = DX_MARGIN_NONE;
	o.weights = DX_WEIGHTS_RANK;
	o.count = MAX;
	n = draw(&o, all, MAX);
	int d1 = 0;
	d4 = 0;
	for (size_t i = 0; i < n; i++) {
		d1 += strcmp(all[i].text, "q p d1") == 0;
		d4 += strcmp(all[i].text, "q p d4") == 0;
	}
	CHECK(d1 > 3 * d4 && d4 > 0);
	/* An MS MARCO run has no scores for a margin. */
	unit_write_text("run", "q\td1\t1\n");
	o.weights = DX_WEIGHTS_UNIFORM;
	o.margin_kind = DX_MARGIN_SCORE;
	dx_err err = { 0 };
	CHECK(dx_sampler_open(NULL, &o, &err) == NULL);
	CHECK_EQ(err.code, DX_EINVAL);
}

int main(void)
{
	if (!unit_mkdir())
		return 1;
	snprintf(qrels_path, sizeof qrels_path, "%s", path("qrels"));
	snprintf(run_path, sizeof run_path, "%s", path("run"));
	start_is_the_tail();
	resume_on_other_ranks();
	equal_shards();
	one_pair_per_query();
	depth_range_and_ties();
	margins_and_weights();
	unit_rmdir();
	return unit_failures != 0;
}
