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
	/* The access points of the file being read, and the next one to try. */
	const struct ddx_point *pts;
	uint64_t npts, next_pt;
	uint32_t file;
} verifier;

static int mismatch(verifier *v, const dx_scan_item *it, const char *what, dx_err *err)
{
	char place[1100];
	dx__place(place, sizeof place, dx__corpus_source_path(v->c, it->file), it->offset);
	return dx__fail(err, DX_EMISMATCH, 0, place, "record %llu differs from the index: %s",
	                (unsigned long long)v->next, what);
}

/* The digits of [p, end) as a number; 0 when there are none or too many. */
static int digits(const char *p, const char *end, uint64_t *v)
{
	*v = 0;
	if (p == end || end - p > 19)
		return 0;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		*v = *v * 10 + (uint64_t)(*p - '0');
	}
	return 1;
}

/*
 * An MS MARCO v2 id, msmarco_doc_BB_OFFSET or msmarco_passage_BB_OFFSET,
 * names the bundle of its record and the byte offset of its line in the
 * uncompressed bundle: both must be where the record really is.
 */
static int check_v2_id(verifier *v, const dx_scan_item *it, dx_err *err)
{
	static const char *const kinds[] = { "msmarco_doc_", "msmarco_passage_" };
	const char *id = it->id, *end = it->id + it->id_len;
	for (int k = 0; k < 2; k++) {
		size_t kl = strlen(kinds[k]);
		if (it->id_len <= kl || memcmp(id, kinds[k], kl) != 0)
			continue;
		const char *us = memchr(id + kl, '_', (size_t)(end - id - kl));
		uint64_t bundle, off;
		if (!us || !digits(id + kl, us, &bundle) || !digits(us + 1, end, &off))
			return 0;
		char what[160];
		if (off != it->offset) {
			snprintf(what, sizeof what, "its MS MARCO v2 id names byte %llu, the record starts at byte %llu",
			         (unsigned long long)off, (unsigned long long)it->offset);
			return mismatch(v, it, what, err);
		}
		/* The file, when named like a bundle, is the one the id names. */
		const char *path = dx__corpus_source_path(v->c, it->file), *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		uint64_t fb;
		size_t bl = strspn(base + kl, "0123456789");
		if (strncmp(base, kinds[k], kl) == 0 && bl && digits(base + kl, base + kl + bl, &fb) && fb != bundle) {
			snprintf(what, sizeof what, "its MS MARCO v2 id names bundle %02llu", (unsigned long long)bundle);
			return mismatch(v, it, what, err);
		}
		return 0;
	}
	return 0;
}

/* The record read through the index (from an access point when it is the
 * first after one) must be the bytes the scan found. */
static int check_bytes(verifier *v, const dx_scan_item *it, dx_err *err)
{
	if (v->file != it->file || v->pts == NULL) {
		const unsigned char *w;
		uint64_t ws;
		v->file = it->file;
		v->pts = NULL;
		v->npts = v->next_pt = 0;
		if (dx__index_points(v->ix, it->file, &v->pts, &v->npts, &w, &ws, err) < 0)
			return err->code;
	}
	int restart = 0;
	while (v->next_pt < v->npts && v->pts[v->next_pt].uoff <= it->offset) {
		v->next_pt++;
		restart = 1;
	}
	if (restart)
		dx__corpus_restart(v->c, it->file);
	dx_record rec;
	if (dx_corpus_record(v->c, v->next, &rec, err) < 0)
		return err->code;
	if (rec.len != it->length || memcmp(rec.data, it->rec, rec.len) != 0)
		return mismatch(v, it, "its bytes read through the index", err);
	/* Points inside the record: reading from each must give its bytes
	 * there too, so that every window in use is tried. */
	for (; v->next_pt < v->npts && v->pts[v->next_pt].uoff < it->offset + it->length; v->next_pt++) {
		uint64_t at = v->pts[v->next_pt].uoff, n = it->offset + it->length - at;
		const char *data;
		n = n < 4096 ? n : 4096;
		dx__corpus_restart(v->c, it->file);
		if (dx__corpus_bytes(v->c, it->file, at, n, &data, err) < 0)
			return err->code;
		if (memcmp(data, it->rec + (at - it->offset), n) != 0)
			return mismatch(v, it, "its bytes read from an access point inside it", err);
	}
	return 0;
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
	int rc;
	if ((rc = check_bytes(v, it, err)) < 0 || (rc = check_v2_id(v, it, err)) < 0)
		return rc;
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
	verifier v = { .c = c, .ix = ix, .n = info.records, .file = UINT32_MAX };
	dx_scan scan = { .pm = &pm, .on_record = on_record, .ctx = &v,
	                 .progress = progress, .progress_ctx = ctx };
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(ix, i, &si) == 0)
			scan.total += si.size;
	}
	for (uint32_t i = 0; i < info.sources && rc == 0; i++)
		rc = dx__scan_file(&scan, dx__corpus_source_path(c, i), i, err);
	dx__buf_free(&scan.points);
	dx__buf_free(&scan.windows);
	if (rc < 0)
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
