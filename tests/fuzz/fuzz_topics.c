/*
 * fuzz_topics.c: the inputs of docdex sample (query texts, qrels, runs, ID
 * triples) on arbitrary bytes.  Input: one selector byte, then the file.
 *
 *   bits 0-1  the file: 0 queries (dx__queries_load), 1 qrels
 *             (dx__qrels_load), 2 a run (dx__run_load), 3 ID triples (read
 *             line by line by dx_sampler_next: no loader of its own)
 *   bit  2    strict: a bad line is an error, not a count
 *   bit  3    exclude_judged
 *   bits 4-5  k: min_rel 1, 0, 2, 0.5; run depth 0, 1, 3, 10; random
 *             negatives with a run when k is odd; triples: epochs 1 + (k & 1),
 *             count 5 when k & 2
 *   bit  6    3 negatives a triple, and the shard 1 of 2
 *   bit  7    also draw triples through dx_sampler_open (always for triples)
 *
 * A run may be TREC's or MS MARCO's (qid TAB pid TAB rank), told from its
 * first line by the loader.  Every input is read twice: over the corpus,
 * and without one (ids as named, no random negatives, and no queries file
 * unless the input is one; qrels then come with a fixed run for their
 * negatives).
 *
 * The other inputs are fixed: a small TSV corpus holding the ids that the
 * seeds (slices of tests/data) name, indexed once per process, its queries,
 * its qrels and a run.  A file may be refused with an error code, never
 * crash or leak; what is loaded must hold together (documents inside the
 * corpus or the ids named, positives never drawn as negatives, a shape
 * warning that says what), or abort().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docdex.h"
#include "fuzz.h"
#include "sample.h"

/* Bounds the triples drawn from one input: enough for a second epoch of
 * a small file and for every negative path, few enough to stay fast. */
enum { MAX_TRIPLES = 64, MAX_NEG = 3 };

/* The ids of the seeds' qrels and runs, so that their judgements and
 * candidates resolve; mixed kinds, so the index hashes them. */
static const char corpus_ids[] =
	"1720389\n1720395\n1729\n2046505\n3045565\n3045567\n"
	"<dbpedia:Ancient_Roman_architecture>\n<dbpedia:Architecture_of_Provence>\n"
	"<dbpedia:Art_in_Paris>\n<dbpedia:Arènes_de_Lutèce>\n<dbpedia:Barbegal_aqueduct_and_mill>\n"
	"CACM-1410\nCACM-1572\nCACM-1605\nCACM-2020\nCACM-2358\nCACM-2434\n"
	"CR93E-10279\nCR93E-10505\nCR93E-1282\nCR93E-1850\nCR#93E-1860\nCR93E-1952\n"
	"CR93E-2191\nCR93E-2473\nCR93E-3103\n"
	"SHK-MOV-0-0\nSHK-MOV-I-I\nSHK-MOV-I-II\nSHK-MOV-II-I\nSHK-MOV-II-VII\n"
	"1239\n1502\n4462\n4569\n5472\n5502\n"
	"CACM-1938\nCACM-2036\nCACM-1827\nCACM-1071\nCACM-2535\n"
	"FR940202-2-00150\nFR940202-2-00151\nFR940202-2-00154\nFR940203-1-00036\n"
	"FR940203-1-00038\nFR940203-1-00039\n"
	"FBIS3-27619\nFT941-17652\nFBIS3-2934\nFBIS3-25796\nFT934-4015\nFBIS4-46846\n"
	"4418\n1297\n26\n4344\n8304\n8333\n6711\n6708\n";

/* The seeds' query ids, each once (a repeated one is an error under strict). */
static const char queries_text[] =
	"1\tmeasurement of dielectric constant\n"
	"2\tmathematical analysis of waveguides\n"
	"301\tinternational organized crime\n"
	"302\tpolio and post-polio\n"
	"303\thubble telescope achievements\n"
	"19335\tanthropological definition of environment\n"
	"INEX_LD-2010019\tla guerre d'algérie\n"
	"TEST00\tdramatis personae\n"
	"TEST01\tportia\n";

/* A run for the queries of the qrels below, for qrels read without a
 * corpus (no random negatives then); 9999 is in no corpus. */
static const char run_text[] =
	"1 Q0 4418 1 3.9 t\n1 Q0 9999 2 3.9 t\n1 Q0 1297 3 3.8 t\n"
	"19335 Q0 1720389 1 9 t\n19335 Q0 1720395 2 8 t\n301 Q0 CR93E-10279 1 1 t\n";

/* Positives for the queries of the run seeds, some at relevance 2 so that
 * every min_rel of the selector leaves one. */
static const char qrels_text[] =
	"1 0 CACM-1410 1\n"
	"1 0 1239 2\n"
	"2 0 8304 1\n"
	"301 0 CR93E-1282 2\n"
	"301 0 FR940202-2-00150 0\n"
	"303 0 FT941-17652 1\n"
	"19335 0 1729 2\n";

static dx_corpus *corpus;

/* Bytes summed into a volatile: every byte handed out is read, so that
 * ASan sees an id or text that points outside its memory. */
static volatile size_t sink;
static char queries_path[512], qrels_path[512], run_path[512];

/* Writes the fixed files and indexes the corpus, once per process. */
static void setup(void)
{
	if (corpus)
		return;
	dx_buf tsv = { 0 };
	for (const char *p = corpus_ids, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
		size_t n = (size_t)(nl - p);
		if (dx__buf_add(&tsv, p, n) < 0 || dx__buf_add(&tsv, "\tdocument ", 10) < 0 ||
		    dx__buf_add(&tsv, p, n + 1) < 0)
			abort();
	}
	char path[512], index[600];
	snprintf(path, sizeof path, "%s", fuzz_file("corpus.tsv", tsv.p, tsv.len));
	snprintf(index, sizeof index, "%s.ddx", path);
	dx__buf_free(&tsv);
	const char *files[1] = { path };
	dx_build_opts bo;
	dx_build_opts_init(&bo);
	bo.format = DX_FMT_TSV;
	dx_err err = { 0 };
	if (dx_index_build(files, 1, index, &bo, NULL, &err) < 0 || !(corpus = dx_corpus_open(index, &err))) {
		fprintf(stderr, "fuzz_topics: %s: %s\n", err.subject, err.what);
		abort();
	}
	snprintf(queries_path, sizeof queries_path, "%s",
	         fuzz_file("queries.tsv", queries_text, sizeof queries_text - 1));
	snprintf(qrels_path, sizeof qrels_path, "%s", fuzz_file("qrels.txt", qrels_text, sizeof qrels_text - 1));
	snprintf(run_path, sizeof run_path, "%s", fuzz_file("run.txt", run_text, sizeof run_text - 1));
}

/* A failure must say what it was. */
static void failed(int r, const dx_err *err)
{
	if (r >= 0 || err->code != r)
		abort();
}

/* The documents there are: the corpus's, or without one the ids named. */
static uint64_t doc_count(const dx_sampler *s)
{
	return s->c ? dx_corpus_count(s->c) : s->docs.n;
}

/* A warning is a shape, or the pairs left out without a negative (as
 * many as the report counts). */
static int known_warning(const dx_sample_report *r, const char *what)
{
	char pairs[64];
	snprintf(pairs, sizeof pairs, "%llu of ", (unsigned long long)r->no_negative);
	return strncmp(what, "read as ", 8) == 0 ||
	       (r->no_negative && strncmp(what, pairs, strlen(pairs)) == 0 &&
	        strstr(what, " no negative to draw, left out: "));
}

/* The warnings say what and where, within their bounds. */
static void check_report(const dx_sampler *s)
{
	const dx_sample_report *r = &s->rep;
	if (r->nwarnings > DX_SAMPLE_WARNINGS)
		abort();
	for (unsigned i = 0; i < r->nwarnings; i++)
		if (r->warning[i].code != DX_EFORMAT || !memchr(r->warning[i].what, 0, sizeof r->warning[i].what) ||
		    !known_warning(r, r->warning[i].what) || !r->warning[i].subject[0])
			abort();
	for (int k = 0; k < DX_SP_KINDS; k++)
		if ((r->problems[k] != 0) != (r->first[k][0] != 0))
			abort();
}

/* A document's number gives back its id, and the id its number. */
static void check_doc(dx_sampler *s, uint64_t doc)
{
	const char *id;
	size_t n;
	dx_err err = { 0 };
	if (doc >= doc_count(s) || dx_sampler_doc_id(s, doc, &id, &n, &err) < 0)
		abort();
	fuzz_touch(id, n);
	uint64_t back;
	if (!s->c && (dx__sample_doc(s, id, n, &back, &err) != 1 || back != doc))
		abort();
}

/* Every query id finds its own number, and its text is in the pool. */
static void check_queries(const dx_sampler *s)
{
	const dx_queries *q = &s->q;
	if (q->ids.n != s->rep.queries)
		abort();
	for (uint32_t i = 0; i < q->ids.n; i++) {
		size_t idn, tn;
		const char *id = dx__strtab_get(&q->ids, i, &idn), *t = dx__query_text(q, i, &tn);
		if (dx__strtab_find(&q->ids, id, idn) != (int64_t)i || q->text_off[i] > q->text_off[i + 1] ||
		    q->text_off[i + 1] > q->text.len)
			abort();
		for (size_t k = 0; k < idn; k++)
			sink += (unsigned char)id[k];
		for (size_t k = 0; k < tn; k++)
			sink += (unsigned char)t[k];
	}
}

/* Pairs name known queries and documents of the corpus; each query's
 * excluded documents are sorted (they are binary-searched) and hold its
 * positives. */
static void check_qrels(const dx_sampler *s)
{
	uint32_t nq = s->q.ids.n;
	uint64_t n = doc_count(s);
	for (uint32_t q = 0; q < nq; q++) {
		if (s->excl_at[q] > s->excl_at[q + 1])
			abort();
		for (uint64_t i = s->excl_at[q]; i < s->excl_at[q + 1]; i++)
			if (s->excl[i] >= n || (i > s->excl_at[q] && s->excl[i] <= s->excl[i - 1]))
				abort();
	}
	if (s->rep.positives != s->npairs)
		abort();
	for (uint64_t i = 0; i < s->npairs; i++)
		if (s->pair_q[i] >= nq || s->pair_doc[i] >= n || !dx__sample_excluded(s, s->pair_q[i], s->pair_doc[i]))
			abort();
}

/* A query's candidates lie inside the kept ones, within the depth, in the
 * corpus, and none is excluded for it. */
static void check_run(const dx_sampler *s)
{
	uint64_t n = doc_count(s);
	if (s->run_format != DX_RUN_TREC && s->run_format != DX_RUN_MSMARCO && s->run_format != DX_RUN_UNKNOWN)
		abort();
	for (uint32_t q = 0; q < s->q.ids.n; q++) {
		uint64_t at = s->cand_at[q], m = s->cand_n[q];
		if (at > s->rep.run_entries || m > s->rep.run_entries - at || (s->o.depth && m > s->o.depth))
			abort();
		for (uint64_t i = 0; i < m; i++)
			if (s->cand[at + i] >= n || dx__sample_excluded(s, q, s->cand[at + i]))
				abort();
	}
}

/* Loads the file through its own loader, after the fixed inputs that it
 * needs (the queries, and for a run the qrels too). */
static void load_direct(dx_corpus *c, int which, const dx_sample_opts *o)
{
	dx_err err = { 0 };
	dx_sampler *s = dx__sampler_new(c, o, &err);
	if (!s)
		abort();
	int r = 0;
	if (o->queries) {
		s->have_texts = 1;
		r = dx__queries_load(s, &err);
	}
	if (which == 0) {
		if (r < 0)
			failed(r, &err);
		else
			check_queries(s);
	} else if (r < 0) {
		abort(); /* the fixed queries */
	} else if ((r = dx__qrels_load(s, &err)) < 0) {
		if (which == 2)
			abort(); /* the fixed qrels */
		failed(r, &err);
	} else {
		check_qrels(s);
		if (o->run && (r = dx__run_load(s, &err)) < 0) {
			if (which != 2)
				abort(); /* the fixed run */
			failed(r, &err);
		} else if (o->run) {
			check_run(s);
		}
	}
	check_report(s);
	dx_sampler_close(s);
}

/* Draws triples as docdex sample does and checks each. */
static void draw(dx_corpus *c, const dx_sample_opts *o)
{
	dx_err err = { 0 };
	dx_sample_report rep;
	dx_sample_opts oo = *o;
	oo.report = &rep;
	dx_sampler *s = dx_sampler_open(c, &oo, &err);
	if (!s) {
		failed(err.code, &err);
		if (rep.nwarnings > DX_SAMPLE_WARNINGS)
			abort();
		return;
	}
	check_report(s);
	uint64_t neg[MAX_NEG];
	dx_triple t = { .neg = neg };
	int r = 0, padded = 0;
	for (int i = 0; i < MAX_TRIPLES && (r = dx_sampler_next(s, &t, &err)) == 1; i++) {
		/* The shard's i-th triple: rank + i * world_size of those from
		 * start on, padded by wrapping round to the first of them.  A
		 * triples file's: its own lines, as they fall, then perhaps one
		 * line of the first round, before its own, as the padding. */
		const dx_sample_report *sr = dx_sampler_report(s);
		uint64_t tail = sr->total - o->start, at = o->rank + (uint64_t)i * o->world_size;
		uint64_t line = t.n - o->start;
		int own = line % o->world_size == o->rank;
		if (o->triples ? padded || (!own && line >= o->rank) : t.n != o->start + at % tail)
			abort();
		padded = !own;
		if (t.nneg != o->negatives)
			abort();
		check_doc(s, t.pos);
		int64_t q = dx__strtab_find(&s->q.ids, t.qid, t.qid_len);
		size_t tn;
		const char *text = q < 0 ? NULL : dx__query_text(&s->q, (uint32_t)q, &tn);
		if (!text || tn != t.query_len || memcmp(text, t.query, tn) != 0)
			abort();
		for (size_t k = 0; k < t.query_len; k++)
			sink += (unsigned char)t.query[k];
		for (unsigned k = 0; k < t.nneg; k++) {
			check_doc(s, neg[k]);
			/* Drawn from qrels: a positive or excluded document is no negative. */
			if (!o->triples && dx__sample_excluded(s, (uint32_t)q, neg[k]))
				abort();
		}
		if (!o->triples && !dx__sample_excluded(s, (uint32_t)q, t.pos))
			abort();
	}
	if (r < 0)
		failed(r, &err);
	check_report(s);
	dx_sampler_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double min_rel[4] = { 1, 0, 2, 0.5 };
	static const unsigned depth[4] = { 0, 1, 3, 10 };
	if (size < 1)
		return 0;
	setup();
	unsigned sel = data[0], which = sel & 3, k = (sel >> 4) & 3;
	const char *file = fuzz_file("input", data + 1, size - 1);
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	o.queries = queries_path;
	o.qrels = qrels_path;
	o.min_rel = min_rel[k];
	o.depth = depth[k];
	o.exclude_judged = (sel >> 3) & 1;
	o.random = 1;
	o.run_ratio = 0.5;
	o.negatives = sel & 0x40 ? MAX_NEG : 1;
	o.seed = sel;
	o.epochs = 1;
	o.rank = sel & 0x40 ? 1 : 0;
	o.world_size = sel & 0x40 ? 2 : 1;
	o.start = k == 3 ? 3 : 0;
	o.strict = (sel >> 2) & 1;
	if (which == 0) {
		o.queries = file;
	} else if (which == 1) {
		o.qrels = file;
	} else if (which == 2) {
		o.run = file;
		o.random = k & 1; /* a run alone, or a run and random negatives */
		/* The mining options, from the input's last byte. */
		unsigned x = data[size - 1];
		o.depth_from = x & 3;
		o.margin_kind = (int)((x >> 2) % 3);
		o.margin = (x >> 4) & 3;
		o.weights = (x >> 6) & 1;
		o.pairs = (x >> 7) & 1;
	} else {
		/* ID triples come alone: no qrels, run or random negatives. */
		o.triples = file;
		o.qrels = NULL;
		o.random = 0;
		o.epochs = 1 + (k & 1);
		o.count = k & 2 ? 5 : 0;
	}
	if (which != 3)
		load_direct(corpus, (int)which, &o);
	if (which == 3 || (sel & 0x80))
		draw(corpus, &o);
	/* Again without a corpus: no random negatives, and no queries file
	 * but the input; qrels take the fixed run for their negatives. */
	o.random = 0;
	if (which != 0)
		o.queries = NULL;
	if (which == 0 || which == 1)
		o.run = run_path;
	if (which != 3)
		load_direct(NULL, (int)which, &o);
	if (which == 3 || (sel & 0x80))
		draw(NULL, &o);
	return 0;
}
