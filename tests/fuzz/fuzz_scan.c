/*
 * fuzz_scan.c: the corpus scanners (TSV, JSONL in its MS MARCO v2 and BEIR
 * shapes, TREC) through dx_index_build, then the index they wrote through
 * dx_corpus_open.  Input: one option byte, then the corpus file.
 *
 *   bits 0-1  format: 0 detected from the content, 1 TSV, 2 JSONL, 3 TREC
 *   bits 2-3  duplicates: 0 and 3 error, 1 first, 2 last
 *   bit  4    skip_bad
 *   bits 5-7  k: TSV id_column k & 3 (0 is the default, 1), and JSONL
 *             id_field ids[k] (NULL: picked from the first record)
 *
 * A corpus may be refused with an error code, never crash or leak.  One
 * that builds must serve every record (the first MAX_RECORDS): its bytes,
 * its id, the same position back when the id is looked up, and its fields.
 * A wrong position found for an id serves the wrong document: abort().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "docdex.h"
#include "format.h"
#include "fuzz.h"
#include "index.h"

/* Enough records to reach the id table's probing and the pool's
 * checkpoints (every 16th id), few enough to stay fast. */
enum { MAX_RECORDS = 1000, BATCH = 16 };

static const char *const ids[8] = { NULL, "docid", "_id", "id", "pid", "doc_id", "", "contents" };

/* Field selections beyond the default text, one per format, by name and
 * by number, so that field_parse and field see more than the default. */
static const char *const specs[4] = { NULL, "2,text,1", "title,text,docid", "docno,title,HEAD" };

/* Bytes summed into a volatile: every byte handed out is read, so that
 * ASan sees a record or field that points outside its memory. */
static volatile size_t sink;

static void touch(const char *p, size_t n)
{
	size_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += (unsigned char)p[i];
	sink += s + n;
}

/* Checks that record pos is found under its own id (or, with a duplicate
 * policy, under the record that took that id), and that the id the index
 * holds is the one the format reads from the record's bytes. */
static void check_record(dx_corpus *c, const dx_build_opts *o, const dx_fields *text,
                         const dx_fields *named, uint64_t pos)
{
	dx_err err = { 0 };
	dx_record rec;
	const char *id;
	size_t idlen;
	if (dx_corpus_record(c, pos, &rec, &err) < 0 || rec.pos != pos)
		abort(); /* a record of a fresh index, of an unchanged file */
	if (rec.stable) {
		/* A plain file's record lies inside its mapping: a read past it
		 * would go unseen by ASan until it left the last page. */
		const void *map;
		uint64_t maplen;
		dx__corpus_mapping(c, 0, &map, &maplen);
		const char *m = map;
		if (rec.len && (!m || rec.data < m || rec.len > maplen ||
		                (uint64_t)(rec.data - m) > maplen - rec.len))
			abort();
	}
	touch(rec.data, rec.len);
	if (dx_corpus_id(c, pos, &id, &idlen, &err) < 0)
		abort();
	/* The id is valid only until the next call on c: keep a copy. */
	char *mine = malloc(idlen + 1);
	if (!mine)
		abort();
	memcpy(mine, id, idlen);
	mine[idlen] = '\0';

	/* The format reads the same id from the bytes served. */
	const dx_params *pm = dx__index_params(dx_corpus_index(c));
	const dx_format_ops *ops = dx__format_ops(pm->format);
	dx_buf scratch = { 0 };
	const char *rid, *why;
	size_t rlen;
	if (!ops || ops->id(pm, rec.data, rec.len, &scratch, &rid, &rlen, &why) != 0 || rlen != idlen ||
	    memcmp(rid, mine, idlen) != 0)
		abort();
	dx__buf_free(&scratch);

	uint64_t found;
	int r = dx_corpus_find(c, mine, idlen, &found, &err);
	if (r != 1)
		abort(); /* a record whose id is not found */
	if (found != pos) {
		/* Only a duplicate whose id the first (or last) record took. */
		const char *other;
		size_t olen;
		if (o->duplicates != DX_DUP_FIRST && o->duplicates != DX_DUP_LAST)
			abort();
		if ((o->duplicates == DX_DUP_FIRST) != (found < pos))
			abort();
		if (dx_corpus_id(c, found, &other, &olen, &err) < 0 || olen != idlen ||
		    memcmp(other, mine, idlen) != 0)
			abort();
	}
	free(mine);

	const char *out;
	size_t outlen;
	/* A JSON record may be well-formed enough for its id, not for a field
	 * (a bad escape in the text): an error then, not a crash. */
	if (dx_corpus_fields(c, text, &rec, &out, &outlen, &err) == 0)
		touch(out, outlen);
	if (named && dx_corpus_record(c, pos, &rec, &err) == 0 &&
	    dx_corpus_fields(c, named, &rec, &out, &outlen, &err) == 0)
		touch(out, outlen);
	/* The fields one by one, selected and all of them: every name and
	 * value in memory that is still there (scratch moves as it grows). */
	const dx_fields *sel[3] = { NULL, text, named };
	for (int k = 0; k < 3; k++) {
		const dx_value *v;
		size_t n;
		if ((k && !sel[k]) || dx_corpus_record(c, pos, &rec, &err) < 0 ||
		    dx_corpus_values(c, sel[k], &rec, &v, &n, &err) < 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (v[i].kind < DX_VALUE_ABSENT || v[i].kind > DX_VALUE_JSON ||
			    (v[i].kind == DX_VALUE_ABSENT && v[i].len))
				abort();
			touch(v[i].name, v[i].name_len);
			touch(v[i].data, v[i].len);
		}
	}
}

static void serve(const char *index, const dx_build_opts *o, const dx_build_report *rep)
{
	dx_err err = { 0 };
	/* Opened by its index: a corpus that begins with the index magic is
	 * taken for an index itself when named (dx_index_path_for). */
	dx_corpus *c = dx_corpus_open(index, &err);
	if (!c)
		abort(); /* the index just written, over an unchanged file */
	uint64_t n = dx_corpus_count(c);
	if (n != rep->records)
		abort();
	dx_fields *text = dx_fields_parse(c, NULL, &err);
	if (!text)
		abort();
	dx_index_info info;
	dx_index_get_info(dx_corpus_index(c), &info);
	dx_fields *named = dx_fields_parse(c, specs[info.format], &err);
	uint64_t lim = n < MAX_RECORDS ? n : MAX_RECORDS;
	for (uint64_t pos = 0; pos < lim; pos++)
		check_record(c, o, text, named, pos);

	/* A batch in reverse order: records sorted by place and (gzip) copied
	 * into the arena, each back at its own request. */
	uint64_t pos[BATCH];
	dx_record recs[BATCH];
	size_t m = lim < BATCH ? (size_t)lim : BATCH;
	for (size_t i = 0; i < m; i++)
		pos[i] = lim - 1 - i;
	if (m && dx_corpus_records(c, pos, m, recs, &err) < 0)
		abort();
	for (size_t i = 0; i < m; i++) {
		if (recs[i].pos != pos[i])
			abort();
		touch(recs[i].data, recs[i].len);
	}
	dx_fields_free(named);
	dx_fields_free(text);
	dx_corpus_close(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned opt = data[0], k = opt >> 5;
	dx_build_opts o;
	dx_build_opts_init(&o);
	o.format = (int)(opt & 3);
	o.duplicates = (int)((opt >> 2) & 3) == 3 ? DX_DUP_ERROR : (int)((opt >> 2) & 3);
	o.skip_bad = (opt >> 4) & 1;
	o.id_column = k & 3;
	o.id_field = ids[k];
	/* The corpus and its index side by side, as docdex index writes them;
	 * the name has no .gz, so gzip is told by content alone. */
	char corpus[512];
	snprintf(corpus, sizeof corpus, "%s", fuzz_file("corpus", data + 1, size - 1));
	char index[600];
	snprintf(index, sizeof index, "%s.ddx", corpus);
	const char *files[1] = { corpus };
	dx_build_report rep;
	dx_err err = { 0 };
	if (dx_index_build(files, 1, index, &o, &rep, &err) == 0)
		serve(index, &o, &rep);
	else if (err.code >= 0)
		abort(); /* a failure without its code */
	return 0;
}
