/* The synthetic corpus is the same, byte for byte, for the same options. */
#include <errno.h>
#include <zlib.h>

#include "dxbench.h"
#include "buf.h"
#include "docdex.h"
#include "unit.h"

static int to_buf(void *ctx, const void *p, size_t n)
{
	return dx__buf_add(ctx, p, n);
}

static uint32_t corpus_crc(int kind, int layout, uint64_t seed, uint64_t count, dx_buf *b)
{
	dxb_synth_opts o = { .kind = kind, .layout = layout, .seed = seed, .count = count };
	dxb_writer w = { to_buf, b };
	dx_err err = { 0 };
	b->len = 0;
	CHECK_EQ(dxb_synth_corpus(&o, &w, &err), count);
	return (uint32_t)crc32(0, (const unsigned char *)b->p, (uInt)b->len);
}

/* A writer whose caller asks to stop, as bench's does on SIGINT through
 * its progress callback; and one that fails. */
static int canceled(void *ctx, const void *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	errno = ECANCELED;
	return -1;
}

static int broken(void *ctx, const void *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	errno = ENOSPC;
	return -1;
}

/* Stopped by its writer, the generator reports an interruption, not a
 * failure to write: the command exits 130, not 1. */
static void stopped(void)
{
	dxb_synth_opts o = { .kind = DXB_SYN_PASSAGES, .layout = DXB_SYN_TSV, .count = 20000 };
	dxb_synth_topics_opts t = { .queries = 10, .records = 20000, .positives = 1, .depth = 100 };
	dxb_writer stop = { canceled, NULL }, full = { broken, NULL };
	dx_err err = { 0 };
	CHECK_EQ(dxb_synth_corpus(&o, &stop, &err), DX_ECANCELED);
	CHECK_EQ(err.code, DX_ECANCELED);
	memset(&err, 0, sizeof err);
	CHECK_EQ(dxb_synth_topics(&o, &t, &stop, NULL, NULL, &err), DX_ECANCELED);
	CHECK_EQ(err.code, DX_ECANCELED);
	memset(&err, 0, sizeof err);
	CHECK_EQ(dxb_synth_corpus(&o, &full, &err), DX_ESYS);
	CHECK_EQ(err.sys, ENOSPC);
	memset(&err, 0, sizeof err);
	CHECK_EQ(dxb_synth_topics(&o, &t, NULL, NULL, &full, &err), DX_ESYS);
	CHECK_EQ(err.sys, ENOSPC);
}

int main(void)
{
	stopped();
	dx_buf b = { 0 };
	/* Golden checksums: these bytes are what every machine must write. */
	static const struct { int kind, layout; uint32_t crc; } golden[] = {
		{ DXB_SYN_PASSAGES, DXB_SYN_TSV, 0x30eda94e },        { DXB_SYN_PASSAGES, DXB_SYN_JSONL_V2, 0x1d48e102 },
		{ DXB_SYN_PASSAGES, DXB_SYN_JSONL_BEIR, 0xc692c021 }, { DXB_SYN_PASSAGES, DXB_SYN_TREC, 0x91daad2e },
		{ DXB_SYN_DOCUMENTS, DXB_SYN_TSV, 0xe4f5aafd },       { DXB_SYN_DOCUMENTS, DXB_SYN_JSONL_V2, 0xef880632 },
		{ DXB_SYN_DOCUMENTS, DXB_SYN_JSONL_BEIR, 0xbb74291c }, { DXB_SYN_DOCUMENTS, DXB_SYN_TREC, 0x62454fb2 },
	};
	for (size_t i = 0; i < sizeof golden / sizeof *golden; i++) {
		uint32_t crc = corpus_crc(golden[i].kind, golden[i].layout, 1, 50, &b);
		if (crc != golden[i].crc) {
			fprintf(stderr, "synth kind %d layout %d: crc 0x%08x, want 0x%08x\n", golden[i].kind,
			        golden[i].layout, crc, golden[i].crc);
			unit_failures++;
		}
	}
	/* Another seed, other bytes; the same seed, the same bytes. */
	uint32_t a = corpus_crc(DXB_SYN_PASSAGES, DXB_SYN_TSV, 2, 50, &b);
	CHECK(a != corpus_crc(DXB_SYN_PASSAGES, DXB_SYN_TSV, 3, 50, &b));
	CHECK(a == corpus_crc(DXB_SYN_PASSAGES, DXB_SYN_TSV, 2, 50, &b));

	/* dxb_synth_id names the records that the corpus holds, in order. */
	dxb_synth_opts o = { .kind = DXB_SYN_DOCUMENTS, .layout = DXB_SYN_TSV, .seed = 5, .count = 300 };
	corpus_crc(o.kind, o.layout, o.seed, o.count, &b);
	dx_err err = { 0 };
	const char *p = b.p, *end = b.p + b.len;
	for (uint64_t n = 0; n < o.count && p < end; n++) {
		char id[32];
		CHECK(dxb_synth_id(&o, n, id, sizeof id, &err) == 0);
		size_t l = strlen(id);
		CHECK(memcmp(p, id, l) == 0 && p[l] == '\t');
		p = (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
	}
	dxb_synth_opts v2 = { .kind = DXB_SYN_PASSAGES, .layout = DXB_SYN_JSONL_V2, .count = 1 };
	char id[32];
	CHECK(dxb_synth_id(&v2, 0, id, sizeof id, &err) == DX_EINVAL);

	/* Documents average about 1,100 words; passages about 60. */
	corpus_crc(DXB_SYN_DOCUMENTS, DXB_SYN_TSV, 9, 2000, &b);
	size_t words = 0;
	for (size_t i = 0; i < b.len; i++)
		words += b.p[i] == ' ';
	CHECK(words / 2000 > 900 && words / 2000 < 1300);
	corpus_crc(DXB_SYN_PASSAGES, DXB_SYN_TSV, 9, 2000, &b);
	words = 0;
	for (size_t i = 0; i < b.len; i++)
		words += b.p[i] == ' ';
	CHECK(words / 2000 > 50 && words / 2000 < 70);

	/* Topics: every judged document is a record of the corpus. */
	dx_buf q = { 0 }, qr = { 0 }, run = { 0 };
	dxb_writer wq = { to_buf, &q }, wqr = { to_buf, &qr }, wrun = { to_buf, &run };
	dxb_synth_topics_opts t = { .seed = 1, .queries = 20, .records = 300, .positives = 3, .depth = 10 };
	CHECK(dxb_synth_topics(&o, &t, &wq, &wqr, &wrun, &err) == 0);
	size_t lines = 0;
	for (size_t i = 0; i < q.len; i++)
		lines += q.p[i] == '\n';
	CHECK_EQ(lines, 20);
	lines = 0;
	for (size_t i = 0; i < run.len; i++)
		lines += run.p[i] == '\n';
	CHECK_EQ(lines, 200);
	/* Each qrels line judges a record of the corpus, one the run ranks. */
	dx__buf_add(&qr, "", 1);
	dx__buf_add(&run, "", 1);
	for (char *line = qr.p; *line; line = strchr(line, '\n') + 1) {
		char qid[32], docid[32], ranked[80];
		CHECK(sscanf(line, "%31s 0 %31s 1", qid, docid) == 2);
		int found = 0;
		for (uint64_t n = 0; n < o.count && !found; n++) {
			CHECK(dxb_synth_id(&o, n, id, sizeof id, &err) == 0);
			found = strcmp(id, docid) == 0;
		}
		CHECK(found);
		snprintf(ranked, sizeof ranked, "%s Q0 %s ", qid, docid);
		CHECK(strstr(run.p, ranked) != NULL);
	}
	dx__buf_free(&q);
	dx__buf_free(&qr);
	dx__buf_free(&run);
	dx__buf_free(&b);
	UNIT_DONE();
}
