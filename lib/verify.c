/*
 * verify.c: re-reading a corpus and comparing every record with its index,
 * with the parameters the index was built with.
 */
#include <stdio.h>
#include <string.h>

#include "corpus.h"
#include "err.h"
#include "guard.h"
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
	dx_verify_report *rep;
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

/* The bundle number a file is named after (msmarco_doc_31, .gz, .json or
 * any other suffix after a dot): 1 with *bundle, or 0. */
static int bundle_name(const char *path, const char *kind, uint64_t *bundle)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t kl = strlen(kind);
	if (strncmp(base, kind, kl) != 0)
		return 0;
	size_t n = strspn(base + kl, "0123456789");
	return (base[kl + n] == '\0' || base[kl + n] == '.') && digits(base + kl, base + kl + n, bundle);
}

/*
 * An MS MARCO v2 id, msmarco_doc_BB_OFFSET or msmarco_passage_BB_OFFSET,
 * names the bundle of its record and the byte offset of its line in the
 * uncompressed bundle.  In a file named after that bundle both must be
 * where the record really is.  In any other file (a subset: the judged
 * passages, the usual way v2 is used) the offset cannot be, and a record
 * that does not sit at its id's offset is only counted, not refused.
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
		uint64_t bundle, off, fb;
		if (!us || !digits(id + kl, us, &bundle) || !digits(us + 1, end, &off))
			return 0;
		char what[160];
		const char *path = dx__corpus_source_path(v->c, it->file);
		if (!bundle_name(path, kinds[k], &fb)) {
			if (off != it->offset && v->rep->v2_elsewhere++ == 0)
				dx__place(v->rep->v2_first, sizeof v->rep->v2_first, path, it->offset);
			return 0;
		}
		if (fb != bundle) {
			snprintf(what, sizeof what, "its MS MARCO v2 id names bundle %02llu", (unsigned long long)bundle);
			return mismatch(v, it, what, err);
		}
		if (off != it->offset) {
			snprintf(what, sizeof what, "its MS MARCO v2 id names byte %llu, the record starts at byte %llu",
			         (unsigned long long)off, (unsigned long long)it->offset);
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

static int check_record(void *ctx, const dx_scan_item *it, dx_err *err)
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

/* Each record's check reads the mappings under the guard: the scan itself
 * (reads, a second thread) is never jumped out of. */
static int on_record(void *ctx, const dx_scan_item *it, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, ((verifier *)ctx)->c, NULL, err, check_record(ctx, it, err));
	return rc;
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
	dx_verify_report dummy;
	verifier v = { .c = c, .ix = ix, .n = info.records, .file = UINT32_MAX,
	               .rep = report ? report : &dummy };
	memset(v.rep, 0, sizeof *v.rep);
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
	v.rep->records = v.next;
	v.rep->bytes = scan.done;
	return 0;
}
