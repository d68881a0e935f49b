/*
 * The sampler's library parts (issue 14): the run's top K counts the lines
 * of documents missing from the corpus, in a run read once and in one
 * read twice; MS MARCO runs; sampling without a corpus gives the triples
 * of a corpus that holds every id; the report on failure; a triples file
 * without a triple ends; shapes of inputs given as another kind; strings
 * of the string table stay put.
 */
#include "docdex.h"
#include "sample.h"
#include "unit.h"

/* A TSV corpus of the given ids, indexed, opened. */
static dx_corpus *corpus(const char *ids)
{
	char tsv[4096] = "";
	for (const char *p = ids, *sp; *p; p = *sp ? sp + 1 : sp) {
		sp = strchr(p, ' ');
		if (!sp)
			sp = p + strlen(p);
		size_t n = strlen(tsv);
		snprintf(tsv + n, sizeof tsv - n, "%.*s\ttext of %.*s\n", (int)(sp - p), p, (int)(sp - p), p);
	}
	unit_write_text("c.tsv", tsv);
	const char *files[1] = { path("c.tsv") };
	char index[600];
	snprintf(index, sizeof index, "%s.ddx", files[0]);
	dx_build_opts bo;
	dx_build_opts_init(&bo);
	bo.format = DX_FMT_TSV;
	dx_err err = { 0 };
	CHECK(dx_index_build(files, 1, index, &bo, NULL, &err) == 0);
	dx_corpus *c = dx_corpus_open(index, &err);
	CHECK(c != NULL);
	return c;
}

/* The ids of query q's run candidates, space-separated. */
static const char *candidates(dx_sampler *s, const char *qid)
{
	static char out[1024];
	out[0] = '\0';
	int64_t q = dx__strtab_find(&s->q.ids, qid, strlen(qid));
	if (q < 0)
		return "(no query)";
	for (uint32_t i = 0; i < s->cand_n[q]; i++) {
		const char *id;
		size_t n;
		dx_err err = { 0 };
		CHECK(dx_sampler_doc_id(s, s->cand[s->cand_at[q] + i], &id, &n, &err) == 0);
		size_t at = strlen(out);
		snprintf(out + at, sizeof out - at, "%s%.*s", at ? " " : "", (int)n, id);
	}
	return out;
}

/* The example: d2 is not in the corpus; the top 2 are d1 and d2,
 * so d3 is no candidate, and d2 is counted at its line. */
static void depth_counts_missing(void)
{
	dx_corpus *c = corpus("d1 d3 p");
	unit_write_text("q.tsv", "q\tquery\nr\tother\n");
	unit_write_text("qrels", "q 0 p 1\nr 0 p 1\n");
	/* A query at a time, and the same lines with the queries split
	 * (read twice): the same candidates, the same count and line. */
	unit_write_text("run", "q Q0 d1 1 3 t\nq Q0 d2 2 2 t\nq Q0 d3 3 1 t\nr Q0 d3 1 9 t\n");
	unit_write_text("run.split", "q Q0 d1 1 3 t\nr Q0 d3 1 9 t\nq Q0 d2 2 2 t\nq Q0 d3 3 1 t\n");
	unit_write_text("run.ms", "q\td1\t1\nq\td2\t2\nq\td3\t3\nr\td3\t1\n");
	const char *runs[3] = { "run", "run.split", "run.ms" };
	const char *lines[3] = { "run:2", "run.split:3", "run.ms:2" };
	for (int i = 0; i < 3; i++) {
		char runpath[512];
		snprintf(runpath, sizeof runpath, "%s", path(runs[i]));
		dx_sample_opts o;
		dx_sample_opts_init(&o);
		o.queries = path("q.tsv");
		o.qrels = path("qrels");
		o.run = runpath;
		o.depth = 2;
		o.min_rel = 1;
		o.negatives = 1;
		o.world_size = 1;
		dx_err err = { 0 };
		dx_sampler *s = dx_sampler_open(c, &o, &err);
		CHECK(s != NULL);
		if (!s)
			continue;
		CHECK(strcmp(candidates(s, "q"), "d1") == 0);
		CHECK(strcmp(candidates(s, "r"), "d3") == 0);
		const dx_sample_report *rep = dx_sampler_report(s);
		CHECK_EQ(rep->problems[DX_SP_RUN_MISSING], 1);
		CHECK_EQ(rep->problems[DX_SP_UNKNOWN_ID], 0);
		const char *first = strrchr(rep->first[DX_SP_RUN_MISSING], '/');
		CHECK(first && strcmp(first + 1, lines[i]) == 0);
		CHECK_EQ(s->run_format, i == 2 ? DX_RUN_MSMARCO : DX_RUN_TREC);
		dx_sampler_close(s);
		/* Deeper, d3 is inside and d2 still counted once. */
		o.depth = 3;
		s = dx_sampler_open(c, &o, &err);
		CHECK(s && strcmp(candidates(s, "q"), "d1 d3") == 0);
		CHECK(s && dx_sampler_report(s)->problems[DX_SP_RUN_MISSING] == 1);
		dx_sampler_close(s);
		/* Strict: the missing line is the error, naming it. */
		o.depth = 2;
		o.strict = 1;
		CHECK(dx_sampler_open(c, &o, &err) == NULL);
		CHECK_EQ(err.code, DX_EFORMAT);
		if (strcmp(err.what, "run id not in the corpus: 'd2'") != 0)
			fprintf(stderr, "%s: got '%s' (%s)\n", runs[i], err.what, err.subject);
		CHECK(strcmp(err.what, "run id not in the corpus: 'd2'") == 0);
		CHECK(strrchr(err.subject, '/') && strcmp(strrchr(err.subject, '/') + 1, lines[i]) == 0);
	}
	/* Below the top K, a missing document is not counted at all. */
	unit_write_text("run.deep", "q Q0 d1 1 3 t\nq Q0 d3 2 2 t\nq Q0 d2 3 1 t\n");
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	o.queries = path("q.tsv");
	o.qrels = path("qrels");
	o.run = path("run.deep");
	o.depth = 2;
	o.min_rel = 1;
	o.negatives = 1;
	o.world_size = 1;
	dx_err err = { 0 };
	dx_sampler *s = dx_sampler_open(c, &o, &err);
	CHECK(s && strcmp(candidates(s, "q"), "d1 d3") == 0);
	CHECK(s && dx_sampler_report(s)->problems[DX_SP_RUN_MISSING] == 0);
	dx_sampler_close(s);
	dx_corpus_close(c);
}

/* Draws n id triples as "q pos neg;" into out. */
static void draw_ids(dx_corpus *c, const dx_sample_opts *o, char *out, size_t outsz)
{
	dx_err err = { 0 };
	dx_sampler *s = dx_sampler_open(c, o, &err);
	CHECK(s != NULL);
	out[0] = '\0';
	if (!s)
		return;
	uint64_t neg[2];
	dx_triple t = { .neg = neg };
	int r;
	while ((r = dx_sampler_next(s, &t, &err)) == 1) {
		const char *id[3];
		size_t n[3];
		CHECK(dx_sampler_doc_id(s, t.pos, &id[0], &n[0], &err) == 0);
		CHECK(dx_sampler_doc_id(s, t.neg[0], &id[1], &n[1], &err) == 0);
		CHECK(dx_sampler_doc_id(s, t.neg[1], &id[2], &n[2], &err) == 0);
		size_t at = strlen(out);
		snprintf(out + at, outsz - at, "%.*s %.*s %.*s %.*s;", (int)t.qid_len, t.qid, (int)n[0], id[0],
		         (int)n[1], id[1], (int)n[2], id[2]);
	}
	CHECK_EQ(r, 0);
	dx_sampler_close(s);
}

/* Without a corpus: the same triples as with one holding every id, with
 * and without query texts; random negatives need a corpus. */
static void without_corpus(void)
{
	/* Corpus order unlike the order the inputs name the ids in. */
	dx_corpus *c = corpus("z9 a1 m5 b2 y8 c3 p1 p2 p3");
	unit_write_text("q2.tsv", "2\ttwo\n1\tone\n");
	unit_write_text("qrels2", "1 0 p1 1\n2 0 p2 1\n1 0 p3 1\n2 0 z9 0\n");
	unit_write_text("run2", "2 Q0 z9 1 5 t\n2 Q0 a1 2 4 t\n2 Q0 m5 3 3 t\n"
	                   "1 Q0 b2 1 5 t\n1 Q0 y8 2 4 t\n1 Q0 c3 3 3 t\n1 Q0 p1 4 2 t\n");
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	o.queries = path("q2.tsv");
	o.qrels = path("qrels2");
	o.run = path("run2");
	o.min_rel = 1;
	o.negatives = 2;
	o.world_size = 1;
	o.seed = 7;
	o.count = 40;
	o.exclude_judged = 1;
	char with[8192], without[8192], bare[8192];
	draw_ids(c, &o, with, sizeof with);
	draw_ids(NULL, &o, without, sizeof without);
	o.queries = NULL;
	draw_ids(NULL, &o, bare, sizeof bare);
	CHECK(strlen(with) > 100);
	CHECK(strcmp(with, without) == 0);
	CHECK(strcmp(with, bare) == 0);
	/* The excluded judgement z9 is never a negative of query 2. */
	CHECK(strstr(with, "2 p2 z9") == NULL && strstr(with, " z9;") == NULL);
	o.random = 1;
	dx_err err = { 0 };
	CHECK(dx_sampler_open(NULL, &o, &err) == NULL);
	CHECK_EQ(err.code, DX_EINVAL);
	dx_corpus_close(c);
}

/* The report comes back when opening fails, with what was counted. */
static void report_on_failure(void)
{
	dx_corpus *c = corpus("a b");
	unit_write_text("q3.tsv", "1\tone\n");
	unit_write_text("qrels3", "1 0 nope 1\n2 0 a 1\n");
	dx_sample_report rep;
	memset(&rep, 0xff, sizeof rep);
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	o.queries = path("q3.tsv");
	o.qrels = path("qrels3");
	o.random = 1;
	o.min_rel = 1;
	o.negatives = 1;
	o.world_size = 1;
	o.report = &rep;
	dx_err err = { 0 };
	CHECK(dx_sampler_open(c, &o, &err) == NULL);
	CHECK_EQ(err.code, DX_EFORMAT);
	CHECK_EQ(rep.problems[DX_SP_UNKNOWN_ID], 1);
	CHECK_EQ(rep.problems[DX_SP_NO_TEXT], 1);
	CHECK_EQ(rep.nwarnings, 0);
	/* A rank not below the world size says both. */
	o.rank = 3;
	o.world_size = 3;
	CHECK(dx_sampler_open(c, &o, &err) == NULL);
	CHECK(strcmp(err.what, "the rank (3) is not below the world size (3)") == 0);
	dx_corpus_close(c);
}

static int cancel_all(void *ctx, uint64_t done, uint64_t total)
{
	(void)done;
	(void)total;
	return ++*(int *)ctx > 0;
}

/* A triples file of no triple to write ends with an error, in every shard,
 * whatever the count; the progress callback stops a long one. */
static void triples_end(void)
{
	dx_corpus *c = corpus("a b");
	unit_write_text("q4.tsv", "1\tone\n");
	unit_write_text("bad.tsv", "1\ta\tx\n1\tx\tb\n1\tb\ty\n");
	for (uint64_t rank = 0; rank < 2; rank++) {
		dx_sample_opts o;
		dx_sample_opts_init(&o);
		o.queries = path("q4.tsv");
		o.triples = path("bad.tsv");
		o.negatives = 1;
		o.count = 1000000000;
		o.rank = rank;
		o.world_size = 2;
		dx_err err = { 0 };
		dx_sampler *s = dx_sampler_open(c, &o, &err);
		CHECK(s != NULL);
		uint64_t neg[1];
		dx_triple t = { .neg = neg };
		CHECK_EQ(dx_sampler_next(s, &t, &err), DX_EFORMAT);
		CHECK(strcmp(err.what, "no line of the file holds a triple that can be written") == 0);
		/* The report counts every shard's lines of the first pass. */
		CHECK_EQ(dx_sampler_report(s)->problems[DX_SP_UNKNOWN_ID], 3);
		CHECK_EQ(dx_sampler_next(s, &t, &err), 0);
		dx_sampler_close(s);
	}
	/* One good line, the first: shard 1 has none and that is no error. */
	unit_write_text("one.tsv", "1\ta\tb\n1\tx\tb\n1\tb\ty\n");
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	o.queries = path("q4.tsv");
	o.triples = path("one.tsv");
	o.negatives = 1;
	o.count = 7;
	o.rank = 1;
	o.world_size = 2;
	dx_err err = { 0 };
	dx_sampler *s = dx_sampler_open(c, &o, &err);
	uint64_t neg[1];
	dx_triple t = { .neg = neg };
	int r = 0, n = 0;
	while (s && (r = dx_sampler_next(s, &t, &err)) == 1)
		n++;
	/* Shard 1 has the lines numbered 1, 3 and 5 of the 7 that count
	 * takes, over three passes: the file's second, first and third; the
	 * first is the good one.  Line 6 is shard 0's fourth, so shard 1
	 * pads with line 0, the good one again. */
	CHECK_EQ(n, 2);
	CHECK_EQ(r, 0);
	dx_sampler_close(s);
	/* A million lines of another shard's: the callback stops it. */
	FILE *f = fopen(path("long.tsv"), "w");
	for (int i = 0; f && i < 200000; i++)
		fputs("1\ta\tb\n", f);
	if (f)
		fclose(f);
	int calls = 0;
	dx_sample_opts o2;
	dx_sample_opts_init(&o2);
	o2.queries = path("q4.tsv");
	o2.triples = path("long.tsv");
	o2.negatives = 1;
	o2.rank = 0;
	o2.world_size = 1000000;
	o2.progress = cancel_all;
	o2.progress_ctx = &calls;
	s = dx_sampler_open(c, &o2, &err);
	CHECK(s != NULL);
	CHECK_EQ(s ? dx_sampler_next(s, &t, &err) : 0, 1);
	CHECK_EQ(s ? dx_sampler_next(s, &t, &err) : 0, DX_ECANCELED);
	CHECK_EQ(calls, 1);
	dx_sampler_close(s);
	dx_corpus_close(c);
}

/* Lines fed to the shape checker as an input of a kind: the warning, or "". */
static const char *shape_of(int input, const char *text, unsigned negatives)
{
	static char out[600];
	unit_write_text("shape", text);
	dx_sample_opts o;
	dx_sample_opts_init(&o);
	o.negatives = negatives;
	o.world_size = 1;
	dx_err err = { 0 };
	dx_sampler *s = dx__sampler_new(NULL, &o, &err);
	dx_textfile t;
	CHECK(dx__textfile_open(&t, path("shape"), &err) == 0);
	dx_shape sh = { .input = input };
	char *line;
	size_t len;
	while (!sh.done && dx__textfile_next(&t, &line, &len, &err) == 1)
		CHECK(dx__shape_line(s, &sh, &t, line, len, &err) == 0);
	CHECK(dx__shape_end(s, &sh, &t, &err) == 0);
	snprintf(out, sizeof out, "%s", s->rep.nwarnings ? s->rep.warning[0].what : "");
	dx__textfile_close(&t);
	dx_sampler_close(s);
	return out;
}

static void shapes(void)
{
	static const struct {
		int input;
		const char *text, *want;
	} cases[] = {
		{ DX_INPUT_QRELS, "1 Q0 d 1 3.5 run\n", "read as qrels, but shaped like a TREC run (qid Q0 docid rank score tag)" },
		{ DX_INPUT_QUERIES, "1048585 Q0 5339620 1 10.755 rank\n", "read as queries, but shaped like a TREC run (qid Q0 docid rank score tag)" },
		{ DX_INPUT_QUERIES, "1 0 CACM-1 1\n", "read as queries, but shaped like TREC qrels (qid iter docid rel)" },
		{ DX_INPUT_QUERIES, "1\t2\t3\n", "read as queries, but shaped like an MS MARCO run or ID triples (qid TAB pid TAB number)" },
		{ DX_INPUT_QRELS, "1\t7\t1\n1\t3\t2\n1\t9\t3\n", "read as qrels, but shaped like an MS MARCO run (qid TAB pid TAB rank, ranks counting up)" },
		{ DX_INPUT_RUN, "1\t7\t1\n1\t3\t1\n", "read as a run, but shaped like qrels (qid docid rel, not ranks counting up)" },
		{ DX_INPUT_RUN, "query-id\tcorpus-id\tscore\n", "read as a run, but shaped like BEIR qrels (query-id corpus-id score)" },
		{ DX_INPUT_RUN, "1\thow do i\n", "read as a run, but shaped like queries (qid TAB text)" },
		{ DX_INPUT_TRIPLES, "what is x\tx is a y\tz is\n", "read as ID triples, but shaped like text triples (query TAB passage TAB passage)" },
		{ DX_INPUT_TRIPLES, "{\"_id\": \"1\"}\n", "read as ID triples, but shaped like JSON or JSONL" },
		/* What each kind's own files look like: nothing to say. */
		{ DX_INPUT_QRELS, "1\t7\t1\n1\t3\t1\n1\t9\t2\n", "" },
		{ DX_INPUT_QRELS, "1 0 7 1\n", "" },
		{ DX_INPUT_QRELS, "1 Q0 CACM-1 1\n", "" },
		{ DX_INPUT_QRELS, "query-id\tcorpus-id\tscore\n", "" },
		{ DX_INPUT_QRELS, "1\t7\t1\n1\t3\t2\n", "" },
		{ DX_INPUT_RUN, "1\t7\t1\n1\t3\t2\n", "" },
		{ DX_INPUT_RUN, "1\t7\t1\n", "" },
		{ DX_INPUT_RUN, "1 Q0 d 0 3.5 run junk after\n", "" },
		{ DX_INPUT_QUERIES, "1\thow do i\n", "" },
		{ DX_INPUT_QUERIES, "TEST00 dramatis personae\n", "" },
		{ DX_INPUT_QUERIES, "<top>\n", "" },
		{ DX_INPUT_TRIPLES, "1\t2\t3\n", "" },
		{ DX_INPUT_TRIPLES, "1 0 2 3\n", "" }, /* with two negatives: a triple */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		unsigned neg = i == sizeof cases / sizeof *cases - 1 ? 2 : 1;
		const char *got = shape_of(cases[i].input, cases[i].text, neg);
		if (strcmp(got, cases[i].want) != 0) {
			fprintf(stderr, "shape case %zu: got '%s', want '%s'\n", i, got, cases[i].want);
			unit_failures++;
		}
	}
}

/* A string keeps its address while many more are added. */
static void strtab_stays(void)
{
	dx_strtab t = { 0 };
	uint32_t i, k;
	size_t n;
	CHECK_EQ(dx__strtab_add(&t, "first", 5, &i), 1);
	CHECK_EQ(dx__strtab_add(&t, "", 0, &k), 1);
	const char *p = dx__strtab_get(&t, i, &n);
	char id[32];
	for (int j = 0; j < 100000; j++) {
		snprintf(id, sizeof id, "id-%d", j);
		CHECK_EQ(dx__strtab_add(&t, id, strlen(id), &k), 1);
	}
	char big[100000];
	memset(big, 'x', sizeof big);
	CHECK_EQ(dx__strtab_add(&t, big, sizeof big, &k), 1);
	CHECK(dx__strtab_get(&t, i, &n) == p);
	CHECK_MEM(p, n, "first");
	CHECK_EQ(dx__strtab_find(&t, "id-77777", 8), 77779);
	CHECK_EQ(dx__strtab_find(&t, "", 0), 1);
	CHECK_EQ(dx__strtab_find(&t, big, sizeof big), k);
	CHECK_EQ(dx__strtab_add(&t, "id-5", 4, &k), 0);
	CHECK_EQ(k, 7);
	dx__strtab_free(&t);
}

int main(void)
{
	if (!unit_mkdir())
		return 1;
	depth_counts_missing();
	without_corpus();
	report_on_failure();
	triples_end();
	shapes();
	strtab_stays();
	unit_rmdir();
	UNIT_DONE();
}
