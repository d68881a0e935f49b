/*
 * verify.c: re-reading a corpus and comparing every record with its index,
 * with the parameters the index was built with.
 */
#include <stdio.h>
#include <string.h>

#include "corpus.h"
#include "err.h"
#include "index.h"
#include "params.h"
#include "scan.h"

typedef struct verifier {
	dx_corpus *c;
	dx_index *ix;
	uint64_t next;        /* the record the corpus should hold next */
	uint64_t n;
} verifier;

static int mismatch(verifier *v, const dx_scan_item *it, const char *what, dx_err *err)
{
	char place[1100];
	dx__place(place, sizeof place, dx__corpus_source_path(v->c, it->file), it->offset);
	return dx__fail(err, DX_EMISMATCH, 0, place, "record %llu differs from the index: %s",
	                (unsigned long long)v->next, what);
}

static int on_record(void *ctx, const dx_scan_item *it, dx_err *err)
{
	verifier *v = ctx;
	if (it->bad) {
		if (dx__index_params(v->ix)->skip_bad && it->bad == DX_ENOID)
			return 0;
		return mismatch(v, it, it->why, err);
	}
	if (v->next >= v->n)
		return mismatch(v, it, "the corpus has more records", err);
	uint32_t file;
	uint64_t off, len, pos;
	if (dx__index_record(v->ix, v->next, &file, &off, &len, err) < 0)
		return err->code;
	if (file != it->file || off != it->offset || len != it->length)
		return mismatch(v, it, "its place in the file", err);
	const char *id;
	size_t idlen;
	if (dx__index_id(v->ix, v->next, &id, &idlen, err) < 0)
		return err->code;
	if (idlen != it->id_len || memcmp(id, it->id, idlen) != 0)
		return mismatch(v, it, "its id", err);
	/* Looking the id up finds this record, or with --duplicates another
	 * record with the same id. */
	int r = dx__index_find(v->ix, it->id, it->id_len, &pos, err);
	if (r < 0)
		return r;
	if (r == 0)
		return mismatch(v, it, "its id is not found", err);
	if (pos != v->next) {
		if (dx__index_id(v->ix, pos, &id, &idlen, err) < 0)
			return err->code;
		if (idlen != it->id_len || memcmp(id, it->id, idlen) != 0)
			return mismatch(v, it, "its id finds another record", err);
	}
	v->next++;
	return 0;
}

int dx_corpus_verify(dx_corpus *c, dx_progress_fn progress, void *ctx, dx_verify_report *report,
                     dx_err *err)
{
	dx_index *ix = dx_corpus_index(c);
	int rc = dx_index_check(ix, err);
	if (rc < 0)
		return rc;
	dx_params pm = *dx__index_params(ix);
	dx_index_info info;
	dx_index_get_info(ix, &info);
	verifier v = { .c = c, .ix = ix, .n = info.records };
	dx_scan scan = { .pm = &pm, .on_record = on_record, .ctx = &v,
	                 .progress = progress, .progress_ctx = ctx };
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(ix, i, &si) == 0)
			scan.total += si.size;
	}
	for (uint32_t i = 0; i < info.sources; i++)
		if ((rc = dx__scan_file(&scan, dx__corpus_source_path(c, i), i, err)) < 0)
			return rc;
	if (v.next != v.n)
		return dx__fail(err, DX_EMISMATCH, 0, dx__index_path(ix),
		                "the corpus has %llu records, the index %llu",
		                (unsigned long long)v.next, (unsigned long long)v.n);
	if (report) {
		report->records = v.next;
		report->bytes = scan.done;
	}
	return 0;
}
