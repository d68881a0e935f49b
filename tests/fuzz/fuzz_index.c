/*
 * fuzz_index.c: an index file (.ddx) of arbitrary bytes, beside fixed TSV,
 * JSONL and TREC corpora, to dx_index_open, dx_corpus_open and every lookup
 * through them: each must serve or refuse, never crash or leak.
 *
 * Input: a flags byte, then the index.  Flag bit 0 clear: the harness first
 * recomputes the header's, sections' and chunks' CRC32s and the file size,
 * so that a mutation reaches the checks behind them instead of being
 * refused as damaged at once; set: the bytes go in as they are.  The seeds
 * (tests/fuzz/seeds/index) are indexes built by docdex index over exactly
 * the corpora below, with their mtime, so that mutations start from indexes
 * that open.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "docdex.h"
#include "fuzz.h"
#include "index_format.h"

/* The corpora that seed indexes were built over; any change to them (or to
 * FIXED_MTIME) makes every seed stale: rebuild the seeds then. */
/* What the harness read, so that the reads are not optimised away. */
static volatile size_t sink;

static const char tsv[] =
	"0\tThe presence of communication amid scientific minds was important.\n"
	"1\tThe Manhattan Project and its atomic bomb helped bring an end to World War II.\n"
	"2\tEssay on the legacy of the project.\n"
	"\n"
	"3\tTabs\tinside\tthe text, and a CRLF line end.\r\n"
	"4\tThe last passage, \"quoted\", without a line end.";
static const char tsv2[] =
	"d-1\tA title\tA second file, whose ids are not numbers.\n"
	"d-2\t\tNo title here.\n";
static const char jsonl[] =
	"{\"_id\": \"doc-a\", \"title\": \"Alpha\", \"text\": \"The first document.\"}\n"
	"{\"_id\": \"doc-b\", \"title\": \"\", \"text\": \"Escapes: \\\"\\u00e9\\n\\t\\\\ end\"}\n"
	"{\"_id\": \"17\", \"contents\": \"A numeric id, text under contents.\", \"n\": [1, {\"x\": null}]}\n"
	"{\"_id\": \"doc-c\", \"text\": \"\"}\n";
static const char trec[] =
	"<DOC>\n<DOCNO> FT911-1 </DOCNO>\n<TITLE>A title</TITLE>\n<TEXT>\nThe text of the first.\n</TEXT>\n</DOC>\n"
	"<DOC>\n<DOCNO>FT911-2</DOCNO>\nNo TEXT element: the text follows the DOCNO.\n</DOC>\n"
	"<DOC id=\"ntcir-3\">\n<text>An NTCIR id.</text>\n</DOC>\n";

/* 2023-11-14 22:13:20 UTC. */
#define FIXED_MTIME 1700000000

static void put_corpus(const char *name, const char *text, size_t len)
{
	const char *p = fuzz_file(name, text, len);
	/* A fixed mtime, as the index records it (with its size and a
	 * fingerprint of its bytes) and refuses the file as stale otherwise. */
	struct timespec t[2] = { { FIXED_MTIME, 0 }, { FIXED_MTIME, 0 } };
	if (utimensat(AT_FDCWD, p, t, 0) < 0)
		abort();
}

static void index_lookups(const char *path)
{
	dx_err err = { 0 };
	dx_index *ix = dx_index_open(path, &err);
	if (!ix)
		return;
	dx_index_info info;
	dx_index_get_info(ix, &info);
	fuzz_touch(info.params, info.params_len);
	dx_source_info si;
	/* sources and sections are bounded by the file size (96 and 32 bytes each). */
	for (uint32_t i = 0; i < info.sources; i++)
		if (dx_index_get_source(ix, i, &si) == 0)
			sink += strlen(si.path) + strlen(si.abs_path) + si.size + si.records;
	if (dx_index_get_source(ix, info.sources, &si) != DX_EINVAL)
		abort();
	dx_section_info sec;
	uint32_t nsec = dx_index_sections(ix);
	for (uint32_t i = 0; i < nsec; i++)
		if (dx_index_get_section(ix, i, &sec) == 0)
			sink += strlen(sec.name) + sec.offset + sec.size;
	if (dx_index_get_section(ix, nsec, &sec) != DX_EINVAL)
		abort();
	sink += (size_t)dx_index_check(ix, &err);
	sink += (size_t)dx_index_check_source(ix, 0, &err);
	dx_index_close(ix);
}

/* Record pos whole, its id, and the record that id finds. */
static void record_at(dx_corpus *c, uint64_t pos, uint64_t n)
{
	const char *id;
	size_t len;
	if (fuzz_record_at(c, pos, n, &id, &len) < 0)
		return;
	/* find needs the id's bytes after the next call on c: a copy. */
	char copy[256];
	size_t cl = len < sizeof copy ? len : sizeof copy;
	memcpy(copy, id, cl);
	uint64_t at;
	dx_err err = { 0 };
	if (dx_corpus_find(c, copy, cl, &at, &err) == 1 && at >= n)
		abort();
}

static void corpus_lookups(const char *path)
{
	dx_err err = { 0 };
	dx_corpus *c = dx_corpus_open(path, &err);
	if (!c)
		return;
	uint64_t n = dx_corpus_count(c);
	/* First, last, middle, and count itself (and n - 1 wrapping at 0). */
	const uint64_t at[] = { 0, n - 1, n / 2, n, UINT64_MAX };
	for (size_t i = 0; i < sizeof at / sizeof *at; i++)
		record_at(c, at[i], n);

	/* A batch out of order with a repeat, and one with a position past the end. */
	uint64_t pos[5] = { n / 2, 0, n - 1, 0, n / 3 };
	dx_record recs[5];
	if (n && dx_corpus_records(c, pos, 5, recs, &err) == 0)
		for (size_t i = 0; i < 5; i++)
			fuzz_touch(recs[i].data, recs[i].len);
	pos[3] = n;
	if (dx_corpus_records(c, pos, 5, recs, &err) == 0)
		abort();

	static const char *const absent[] = { "", "absent-id", "99999999999999999999", "5", "doc-z" };
	/* Read ahead as a batch first: a hint that reads the id table and
	 * pool unchecked, within their sections. */
	size_t lens[sizeof absent / sizeof *absent];
	for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
		lens[i] = strlen(absent[i]);
	dx_corpus_prefetch_ids(c, absent, lens, sizeof absent / sizeof *absent);
	uint64_t found[sizeof absent / sizeof *absent];
	for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
		uint64_t p;
		int r = dx_corpus_find(c, absent[i], strlen(absent[i]), &p, &err);
		if (r == 1 && p >= n)
			abort();
		found[i] = r == 1 ? p : r == 0 ? DX_NOT_FOUND : 0;
	}
	/* The same as a batch: each position as found one at a time. */
	uint64_t many[sizeof absent / sizeof *absent];
	if (dx_corpus_find_many(c, absent, lens, sizeof absent / sizeof *absent, many, &err) == 0)
		for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
			if (many[i] != found[i])
				abort();

	/* The text of the first records, and a selection of fields named as
	 * the corpus's format names them. */
	dx_index_info info;
	dx_index_get_info(dx_corpus_index(c), &info);
	const char *specs[] = { NULL, info.format == DX_FMT_TSV     ? "2,text,1"
	                              : info.format == DX_FMT_JSONL ? "title,_id,text"
	                                                            : "title,docno,text" };
	for (size_t s = 0; s < 2; s++) {
		dx_fields *f = dx_fields_parse(c, specs[s], &err);
		for (uint64_t p = 0; f && p < n && p < 4; p++) {
			dx_record rec;
			const char *out;
			size_t len;
			if (dx_corpus_record(c, p, &rec, &err) == 0 &&
			    dx_corpus_fields(c, f, &rec, &out, &len, &err) == 0)
				fuzz_touch(out, len);
			/* Ids and ends checked, as get and sample check them. */
			if (dx_corpus_record(c, p, &rec, &err) == 0 &&
			    dx_corpus_check_ids(c, &rec, 1, &err) < 0 && err.code != DX_ECORRUPT)
				abort();
		}
		dx_fields_free(f);
	}
	dx_corpus_close(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		put_corpus("c.tsv", tsv, sizeof tsv - 1);
		put_corpus("d.tsv", tsv2, sizeof tsv2 - 1);
		put_corpus("c.jsonl", jsonl, sizeof jsonl - 1);
		put_corpus("c.trec", trec, sizeof trec - 1);
		ready = 1;
	}
	if (size < 1)
		return 0;
	int raw = data[0] & 1;
	size--;
	unsigned char *ix = malloc(size ? size : 1);
	if (!ix)
		abort();
	memcpy(ix, data + 1, size);
	if (!raw)
		fuzz_repair_index(ix, size);
	/* The index names its corpus files relative to its own directory. */
	char path[512];
	snprintf(path, sizeof path, "%s", fuzz_file("c.ddx", ix, size));
	free(ix);
	index_lookups(path);
	corpus_lookups(path);
	return 0;
}
