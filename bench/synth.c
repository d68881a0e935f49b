/*
 * synth.c: deterministic corpora shaped like MS MARCO, for tests and
 * benchmarks of any size.
 *
 * Words are drawn from a Zipf distribution (weight 1/rank^1.25) over a
 * fixed vocabulary of made-up words, frequent words short, often in
 * habitual pairs, so that text compresses about as well as English does
 * (3.1 times with gzip -6; passages of 350 bytes, 5.8 bytes a word).  Only integer arithmetic and
 * the correctly rounded sqrt decide what is written, and every record has
 * its own generator seeded from (seed, record number): the same options
 * give the same bytes on any machine, and any record can be made alone.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dxbench.h"
#include "buf.h"
#include "err.h"
#include "hash.h"

enum {
	VOCAB = 32768,
	WORD_MAX = 24,
	PASSAGE_MIN_WORDS = 20,     /* passages: 20 + two draws of 0..40 words, 60 on average */
	DOC_SCALE = 733,            /* documents: Pareto(2) words, 1,100 on average, long tail */
	DOC_MAX_WORDS = 60000,
	FLUSH_AT = 1 << 20,
};

typedef struct vocab {
	char word[VOCAB][WORD_MAX];
	unsigned char len[VOCAB];
	/* Walker's alias table over the Zipf weights, in integers. */
	uint64_t total;
	uint64_t prob[VOCAB];
	uint16_t alias[VOCAB];
} vocab;

typedef struct gen {
	const dxb_synth_opts *o;
	const dxb_writer *w;
	vocab *v;
	dx_buf out;
	uint64_t written;           /* bytes handed to the writer or buffered */
	dx_err *err;
	int failed;
} gen;

static const char *const onsets[] = { "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p",
	                              "r", "s", "t", "v", "w", "th", "st", "s", "t", "r", "l" };
static const char *const nuclei[] = { "a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou" };
static const char *const codas[] = { "", "", "", "", "", "n", "r", "s", "t", "l", "nd", "st" };

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* Word of rank k: more syllables for rarer words; a few carry an accent so
 * that text holds multi-byte UTF-8 like real corpora do. */
static void make_word(vocab *v, unsigned k)
{
	unsigned syl = 1 + (k >= 16) + (k >= 1000);
	uint64_t h = dx__mix64(0x5eed0000ULL + k);
	char *w = v->word[k];
	size_t n = 0;
	for (unsigned i = 0; i < syl; i++) {
		const char *parts[3] = { onsets[h % COUNT(onsets)], nuclei[(h >> 8) % COUNT(nuclei)],
			                 codas[(h >> 16) % COUNT(codas)] };
		if (i == 0 && k < 24 && ((h >> 24) & 1))
			parts[0] = ""; /* short frequent words may start with a vowel: "a", "io" */
		for (int j = 0; j < 3; j++) {
			size_t l = strlen(parts[j]);
			memcpy(w + n, parts[j], l);
			n += l;
		}
		h = dx__mix64(h + i + 1);
	}
	if (k % 211 == 100 && n + 2 <= WORD_MAX) {
		memcpy(w + n, "\xc3\xa9", 2); /* é */
		n += 2;
	}
	v->len[k] = (unsigned char)n;
}

static vocab *vocab_new(void)
{
	vocab *v = calloc(1, sizeof *v);
	uint64_t *scaled = malloc(VOCAB * sizeof *scaled);
	uint16_t *small = malloc(VOCAB * sizeof *small), *large = malloc(VOCAB * sizeof *large);
	if (!v || !scaled || !small || !large) {
		free(v);
		v = NULL;
		goto out;
	}
	for (unsigned k = 0; k < VOCAB; k++) {
		make_word(v, k);
		/* Weight 1 / rank^1.25; sqrt is correctly rounded everywhere. */
		double rank = (double)(k + 1);
		scaled[k] = (uint64_t)((double)(1ULL << 40) / (rank * sqrt(sqrt(rank))));
		v->total += scaled[k];
	}
	/* Vose's construction: every bucket holds `total` units of probability,
	 * its own word's share and the rest from one heavier word. */
	size_t ns = 0, nl = 0;
	for (unsigned k = 0; k < VOCAB; k++) {
		scaled[k] *= VOCAB;
		if (scaled[k] < v->total)
			small[ns++] = (uint16_t)k;
		else
			large[nl++] = (uint16_t)k;
	}
	while (ns && nl) {
		uint16_t s = small[--ns], l = large[nl - 1];
		v->prob[s] = scaled[s];
		v->alias[s] = l;
		scaled[l] -= v->total - scaled[s];
		if (scaled[l] < v->total) {
			nl--;
			small[ns++] = l;
		}
	}
	while (nl)
		v->prob[large[--nl]] = v->total;
	while (ns)
		v->prob[small[--ns]] = v->total;
out:
	free(scaled);
	free(small);
	free(large);
	return v;
}

static unsigned draw_word(const vocab *v, dx_rng *r)
{
	unsigned k = (unsigned)dx_rng_below(r, VOCAB);
	return dx_rng_below(r, v->total) < v->prob[k] ? k : v->alias[k];
}

/* The writer refused the bytes: it failed (errno), or its caller asked
 * to stop (ECANCELED, as a progress callback does), which is no failure
 * of the writing and must read as an interruption, not an error. */
static void write_failed(gen *g)
{
	if (errno == ECANCELED)
		g->failed = dx__fail(g->err, DX_ECANCELED, 0, "", "interrupted");
	else
		g->failed = dx__fail_sys(g->err, "", "cannot write the synthetic corpus");
}

static void put(gen *g, const void *p, size_t n)
{
	if (g->failed)
		return;
	if (dx__buf_add(&g->out, p, n) < 0) {
		g->failed = dx__fail_nomem(g->err);
		return;
	}
	g->written += n;
	if (g->out.len >= FLUSH_AT) {
		if (g->w->write(g->w->ctx, g->out.p, g->out.len) != 0)
			write_failed(g);
		g->out.len = 0;
	}
}

static void puts_(gen *g, const char *s)
{
	put(g, s, strlen(s));
}

static void put_u64(gen *g, uint64_t v)
{
	char t[24];
	put(g, t, (size_t)snprintf(t, sizeof t, "%llu", (unsigned long long)v));
}

/* n words of running text: sentences of 6 to 20 words, capitalised, with
 * the odd comma. */
static void put_text(gen *g, dx_rng *r, uint64_t n, int sentences)
{
	uint64_t left_in_sentence = 0;
	unsigned prev = 0;
	for (uint64_t i = 0; i < n; i++) {
		unsigned k;
		/* Words come in habitual pairs, as in "of the": 7 times in 16 a word is
		 * one of three that follow the previous word, among the 1,000 commonest. */
		if (i && dx_rng_below(r, 16) < 7)
			k = (unsigned)(dx__mix64(prev * 8 + dx_rng_below(r, 3)) % 1000);
		else
			k = draw_word(g->v, r);
		prev = k;
		char w[WORD_MAX];
		size_t len = g->v->len[k];
		memcpy(w, g->v->word[k], len);
		int start = sentences && left_in_sentence == 0;
		if (start) {
			left_in_sentence = 6 + dx_rng_below(r, 15);
			if (w[0] >= 'a' && w[0] <= 'z')
				w[0] = (char)(w[0] - 'a' + 'A');
		}
		if (i)
			put(g, " ", 1);
		put(g, w, len);
		if (sentences) {
			left_in_sentence--;
			if (left_in_sentence == 0 || i + 1 == n)
				put(g, ".", 1);
			else if (dx_rng_below(r, 12) == 0)
				put(g, ",", 1);
		}
	}
}

static void put_title(gen *g, dx_rng *r)
{
	uint64_t n = 3 + dx_rng_below(r, 8);
	for (uint64_t i = 0; i < n; i++) {
		unsigned k = draw_word(g->v, r);
		char w[WORD_MAX];
		memcpy(w, g->v->word[k], g->v->len[k]);
		if (w[0] >= 'a' && w[0] <= 'z')
			w[0] = (char)(w[0] - 'a' + 'A');
		if (i)
			put(g, " ", 1);
		put(g, w, g->v->len[k]);
	}
}

static void put_url(gen *g, dx_rng *r)
{
	puts_(g, "http://www.");
	for (int i = 0; i < 2; i++) {
		unsigned k = draw_word(g->v, r);
		put(g, g->v->word[k], g->v->len[k]);
	}
	puts_(g, ".com/");
	unsigned k = draw_word(g->v, r);
	put(g, g->v->word[k], g->v->len[k]);
	puts_(g, "/");
	put_u64(g, dx_rng_below(r, 100000));
	puts_(g, ".html");
}

static uint64_t words_of(const dxb_synth_opts *o, dx_rng *r)
{
	if (o->kind == DXB_SYN_PASSAGES)
		return PASSAGE_MIN_WORDS + dx_rng_below(r, 41) + dx_rng_below(r, 41);
	/* Pareto with shape 2 by inversion, words = s / sqrt(u) - s / 2. */
	double u = (double)(dx_rng_next(r) >> 11 | 1) / 9007199254740992.0;
	double w = DOC_SCALE / sqrt(u) - DOC_SCALE / 2.0;
	return w > DOC_MAX_WORDS ? DOC_MAX_WORDS : (uint64_t)w;
}

/* The number in document ids, like MS MARCO's D1555982: distinct, and
 * scattered within blocks of 65,536 records over a range an eighth wider,
 * so that it needs no record count. */
static uint64_t doc_number(const dxb_synth_opts *o, uint64_t n)
{
	enum { BLOCK = 65536, RANGE = BLOCK + BLOCK / 8 };
	dx_perm p;
	dx_perm_init(&p, RANGE, o->seed ^ (0xd0c5ULL + n / BLOCK));
	return n / BLOCK * RANGE + dx_perm_at(&p, n % BLOCK) + 1;
}

static void put_id(gen *g, uint64_t n, uint64_t line_start)
{
	const dxb_synth_opts *o = g->o;
	if (o->layout == DXB_SYN_JSONL_V2) {
		char prefix[40];
		snprintf(prefix, sizeof prefix, "msmarco_%s_%02u_", o->kind == DXB_SYN_PASSAGES ? "passage" : "doc",
		         o->bundle % 100);
		puts_(g, prefix);
		put_u64(g, line_start);
	} else if (o->kind == DXB_SYN_PASSAGES) {
		put_u64(g, n);
	} else {
		puts_(g, "D");
		put_u64(g, doc_number(o, n));
	}
}

static void put_record(gen *g, uint64_t n)
{
	const dxb_synth_opts *o = g->o;
	dx_rng r;
	dx_rng_seed(&r, o->seed ^ dx__mix64(n + 1));
	uint64_t words = words_of(o, &r), start = g->written;
	int doc = o->kind == DXB_SYN_DOCUMENTS;

	switch (o->layout) {
	case DXB_SYN_TSV:
		put_id(g, n, start);
		puts_(g, "\t");
		if (doc) {
			put_url(g, &r);
			puts_(g, "\t");
			put_title(g, &r);
			puts_(g, "\t");
		}
		put_text(g, &r, words, 1);
		puts_(g, "\n");
		break;
	case DXB_SYN_JSONL_V2:
		if (doc) {
			puts_(g, "{\"url\": \"");
			put_url(g, &r);
			puts_(g, "\", \"title\": \"");
			put_title(g, &r);
			puts_(g, "\", \"headings\": \"");
			put_title(g, &r);
			puts_(g, "\", \"body\": \"");
			put_text(g, &r, words, 1);
			puts_(g, "\", \"docid\": \"");
			put_id(g, n, start);
			puts_(g, "\"}\n");
		} else {
			puts_(g, "{\"pid\": \"");
			put_id(g, n, start);
			puts_(g, "\", \"passage\": \"");
			uint64_t text_start = g->written;
			put_text(g, &r, words, 1);
			uint64_t text_len = g->written - text_start;
			puts_(g, "\", \"spans\": \"(0,");
			put_u64(g, text_len);
			puts_(g, ")\", \"docid\": \"msmarco_doc_00_");
			put_u64(g, n / 8 * 4096);
			puts_(g, "\"}\n");
		}
		break;
	case DXB_SYN_JSONL_BEIR:
		puts_(g, "{\"_id\": \"");
		put_id(g, n, start);
		puts_(g, "\", \"title\": \"");
		if (doc)
			put_title(g, &r);
		puts_(g, "\", \"text\": \"");
		put_text(g, &r, words, 1);
		puts_(g, "\", \"metadata\": {}}\n");
		break;
	case DXB_SYN_TREC:
		puts_(g, "<DOC>\n<DOCNO>");
		put_id(g, n, start);
		puts_(g, "</DOCNO>\n");
		if (doc) {
			puts_(g, "<URL>");
			put_url(g, &r);
			puts_(g, "</URL>\n<TITLE>");
			put_title(g, &r);
			puts_(g, "</TITLE>\n");
		}
		puts_(g, "<TEXT>\n");
		put_text(g, &r, words, 1);
		puts_(g, "\n</TEXT>\n</DOC>\n");
		break;
	}
}

static int check_opts(const dxb_synth_opts *o, dx_err *err)
{
	if ((o->kind != DXB_SYN_PASSAGES && o->kind != DXB_SYN_DOCUMENTS) ||
	    o->layout < DXB_SYN_TSV || o->layout > DXB_SYN_TREC)
		return dx__fail(err, DX_EINVAL, 0, "", "unknown synthetic corpus kind or layout");
	if (!o->count && !o->size)
		return dx__fail(err, DX_EINVAL, 0, "", "give a record count or a size");
	return 0;
}

static int flush(gen *g)
{
	if (!g->failed && g->out.len && g->w->write(g->w->ctx, g->out.p, g->out.len) != 0)
		write_failed(g);
	return g->failed;
}

int64_t dxb_synth_corpus(const dxb_synth_opts *o, const dxb_writer *w, dx_err *err)
{
	int rc = check_opts(o, err);
	if (rc < 0)
		return rc;
	gen g = { .o = o, .w = w, .err = err, .v = vocab_new() };
	if (!g.v)
		return dx__fail_nomem(err);
	uint64_t n = 0;
	while (!g.failed && (o->count ? n < o->count : g.written < o->size))
		put_record(&g, n++);
	rc = flush(&g);
	free(g.v);
	dx__buf_free(&g.out);
	return rc < 0 ? rc : (int64_t)n;
}

/* The id of record n in the layouts whose ids do not hold offsets. */
static void synth_id(const dxb_synth_opts *o, uint64_t n, char *out, size_t outsz)
{
	if (o->kind == DXB_SYN_PASSAGES)
		snprintf(out, outsz, "%llu", (unsigned long long)n);
	else
		snprintf(out, outsz, "D%llu", (unsigned long long)doc_number(o, n));
}

int dxb_synth_id(const dxb_synth_opts *o, uint64_t n, char *out, size_t outsz, dx_err *err)
{
	int rc = check_opts(o, err);
	if (rc < 0)
		return rc;
	if (o->layout == DXB_SYN_JSONL_V2)
		return dx__fail(err, DX_EINVAL, 0, "", "MS MARCO v2 ids hold byte offsets of the corpus");
	synth_id(o, n, out, outsz);
	return 0;
}

int dxb_synth_topics(const dxb_synth_opts *o, const dxb_synth_topics_opts *t, const dxb_writer *queries,
                     const dxb_writer *qrels, const dxb_writer *run, dx_err *err)
{
	int rc = check_opts(o, err);
	if (rc < 0)
		return rc;
	if (o->layout == DXB_SYN_JSONL_V2)
		return dx__fail(err, DX_EINVAL, 0, "", "topics for MS MARCO v2 layouts are not generated");
	if (!t->records || !t->queries || !t->positives || t->depth < t->positives ||
	    t->depth > t->records)
		return dx__fail(err, DX_EINVAL, 0, "",
		                "topics need the corpus' record count, queries, and positives <= depth <= records");
	gen g = { .o = o, .err = err, .v = vocab_new() };
	if (!g.v)
		return dx__fail_nomem(err);
	/* A whole file at a time, each through its own writer; every query draws
	 * from its own generator, so the three files agree. */
	const dxb_writer *outs[3] = { queries, qrels, run };
	for (int file = 0; file < 3 && !g.failed; file++) {
		if (!(g.w = outs[file]))
			continue;
		for (uint64_t q = 0; q < t->queries && !g.failed; q++) {
			dx_rng r;
			dx_rng_seed(&r, o->seed ^ dx__mix64(0x9e3779b9ULL * (q + 1)) ^ 0x70bcULL);
			uint64_t qid = 1000 + q * 7 + dx_rng_below(&r, 7);
			/* The judged documents and the run's ranking come from one permutation
			 * of the corpus per query: the first `positives` of the run are judged. */
			dx_perm p;
			dx_perm_init(&p, t->records, dx_rng_next(&r));
			uint64_t npos = 1 + dx_rng_below(&r, t->positives);
			char id[32];
			if (file == 0) {
				put_u64(&g, qid);
				puts_(&g, "\t");
				put_text(&g, &r, 3 + dx_rng_below(&r, 6), 0);
				puts_(&g, "\n");
			} else if (file == 1) {
				for (uint64_t i = 0; i < npos; i++) {
					synth_id(o, dx_perm_at(&p, i), id, sizeof id);
					put_u64(&g, qid);
					puts_(&g, " 0 ");
					puts_(&g, id);
					puts_(&g, " 1\n");
				}
			} else {
				/* Positives land at random ranks among the rest. */
				uint64_t shift = dx_rng_below(&r, t->depth);
				for (uint64_t rank = 0; rank < t->depth; rank++) {
					uint64_t i = (rank + shift) % t->depth;
					synth_id(o, dx_perm_at(&p, i), id, sizeof id);
					uint64_t score = 300000 - rank * 37 - dx_rng_below(&r, 37);
					char s[32];
					snprintf(s, sizeof s, "%llu.%04llu", (unsigned long long)(score / 10000),
					         (unsigned long long)(score % 10000));
					put_u64(&g, qid);
					puts_(&g, " Q0 ");
					puts_(&g, id);
					puts_(&g, " ");
					put_u64(&g, rank + 1);
					puts_(&g, " ");
					puts_(&g, s);
					puts_(&g, " docdex-synth\n");
				}
			}
		}
		flush(&g);
		g.out.len = 0;
	}
	rc = g.failed;
	free(g.v);
	dx__buf_free(&g.out);
	return rc;
}
