/*
 * index_write.c: building an index.  The corpus files are scanned once;
 * records and ids are collected in memory, the id table is built when the
 * count is known, and the sections are written through an atomic file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "atomic_file.h"
#include "buf.h"
#include "codec.h"
#include "err.h"
#include "opts.h"
#include "fileutil.h"
#include "hash.h"
#include "idtable.h"
#include "index_format.h"
#include "params.h"
#include "scan.h"

typedef struct source {
	const char *path;      /* as given */
	char *abs;             /* realpath */
	struct stat st;        /* at the start of the scan */
	uint64_t first, count;
	int kind;              /* DX_SOURCE_* */
	uint64_t usize;
	uint64_t first_point, npoints, window_bytes;
} source;

typedef struct builder {
	dx_params pm;
	source *src;
	size_t nsrc;
	dx_buf recs;           /* uint64_t per record */
	dx_buf longrecs;       /* struct ddx_longrec */
	dx_buf pool, ckpt;     /* ids, and the pool offset of every 16th */
	dx_buf points, windows; /* gzip sources' access points, all files */
	uint64_t n;
	/* Whether every id so far is a canonical integer counting up by one. */
	int sequential;
	uint64_t first_num;
	dx_build_report *rep;
} builder;

/* The file and line of record r, for messages. */
static void record_place(const builder *b, uint64_t r, char *out, size_t outsz)
{
	uint64_t packed;
	memcpy(&packed, b->recs.p + r * 8, 8);
	size_t f = 0;
	while (f + 1 < b->nsrc && r >= b->src[f + 1].first)
		f++;
	dx__place(out, outsz, b->src[f].path, packed >> DDX_LEN_BITS);
}

/* Appends record r's id to the pool, with a checkpoint every 16 records. */
static int add_id(builder *b, uint64_t r, const char *id, size_t len)
{
	if (r % DDX_CKPT_EVERY == 0) {
		uint64_t at = b->pool.len;
		if (dx__buf_add(&b->ckpt, &at, 8) < 0)
			return -1;
	}
	return dx__buf_add_varint(&b->pool, len) < 0 || dx__buf_add(&b->pool, id, len) < 0 ? -1 : 0;
}

static int on_record(void *ctx, const dx_scan_item *it, dx_err *err)
{
	builder *b = ctx;
	const char *path = b->src[it->file].path;
	if (it->bad) {
		char place[1100];
		if (!b->pm.skip_bad || it->bad == DX_EFORMAT) {
			dx__place(place, sizeof place, path, it->offset);
			return dx__fail(err, it->bad, 0, place, "%s%s", it->why,
			                it->bad == DX_ENOID ? " (skip such records with --skip-bad)" : "");
		}
		if (b->rep->skipped++ == 0)
			dx__place(b->rep->first_skipped, sizeof b->rep->first_skipped, path, it->offset);
		return 0;
	}
	if (it->offset > DDX_MAX_OFFSET)
		return dx__fail(err, DX_ELIMIT, 0, path, "file larger than the index format's 1 TiB");
	uint64_t r = b->n, packed = it->offset << DDX_LEN_BITS;
	if (it->length >= DDX_LEN_LONG) {
		struct ddx_longrec lr = { r, it->length };
		packed |= DDX_LEN_LONG;
		if (dx__buf_add(&b->longrecs, &lr, sizeof lr) < 0)
			return dx__fail_nomem(err);
	} else {
		packed |= it->length;
	}
	if (dx__buf_add(&b->recs, &packed, 8) < 0)
		return dx__fail_nomem(err);
	/* While the ids count up by one they need no pool: it is only filled,
	 * from the numbers, once an id breaks the sequence. */
	uint64_t v;
	if (b->sequential && dx__id_number(it->id, it->id_len, &v) && (r == 0 || v - b->first_num == r)) {
		if (r == 0)
			b->first_num = v;
	} else {
		for (uint64_t k = 0; b->sequential && k < r; k++) {
			char num[24];
			if (add_id(b, k, num, dx__id_format(b->first_num + k, num)) < 0)
				return dx__fail_nomem(err);
		}
		b->sequential = 0;
		if (add_id(b, r, it->id, it->id_len) < 0)
			return dx__fail_nomem(err);
	}
	b->n++;
	b->src[it->file].count++;
	return 0;
}

/* Two records with one id: an error, or the policy picks which one wins. */
static int duplicate(builder *b, uint64_t kept, uint64_t r, const char *id, size_t len,
                     int *take_new, dx_err *err)
{
	b->rep->duplicates++;
	if (b->pm.duplicates == DX_DUP_ERROR) {
		char p1[1100], p2[1100];
		record_place(b, kept, p1, sizeof p1);
		record_place(b, r, p2, sizeof p2);
		return dx__fail_n(err, DX_EDUPID, id, len,
		                  "duplicate id at %.400s and %.400s (keep one with --duplicates first or last)",
		                  p1, p2);
	}
	*take_new = b->pm.duplicates == DX_DUP_LAST;
	return 0;
}

static int build_hash(builder *b, dx_buf *table, uint32_t bits, dx_err *err)
{
	uint64_t nslots = dx__slots_for(b->n);
	if (dx__buf_reserve(table, nslots * 4) < 0)
		return dx__fail_nomem(err);
	uint32_t *t = (uint32_t *)table->p;
	memset(t, 0, nslots * 4);
	table->len = nslots * 4;
	const unsigned char *pool = (const unsigned char *)b->pool.p;
	const uint64_t *ckpt = (const uint64_t *)b->ckpt.p;
	uint32_t tagmask = dx__slot_tag_mask(bits), recmask = dx__slot_rec_mask(bits);
	/* Each id is hashed AHEAD records before it goes in, and its slot asked
	 * for then: the table is far larger than the cache, and waiting for a
	 * slot was most of this loop (perf: 78% of it, at one load, on 2.35M
	 * passages of MS MARCO v2's layout). */
	enum { AHEAD = 16 };
	struct ahead {
		const char *id;
		uint64_t len, h;
	} q[AHEAD];
	uint64_t off = 0, next = 0;
	for (uint64_t r = 0; r < b->n; r++) {
		for (; next < b->n && next < r + AHEAD; next++) {
			/* The pool is read in order, so each id follows the previous one. */
			struct ahead *a = &q[next % AHEAD];
			a->len = 0;
			off += dx__varint_get(pool + off, pool + b->pool.len, &a->len);
			a->id = (const char *)pool + off;
			off += a->len;
			a->h = dx__hash64(a->id, a->len, DDX_HASH_SEED);
			__builtin_prefetch(&t[dx__slot_of(a->h, nslots)], 1);
		}
		const char *id = q[r % AHEAD].id;
		uint64_t len = q[r % AHEAD].len, h = q[r % AHEAD].h;
		uint32_t tag = dx__slot_tag(h, bits);
		for (uint64_t i = dx__slot_of(h, nslots);; i = i + 1 == nslots ? 0 : i + 1) {
			uint32_t s = t[i];
			if (!s) {
				t[i] = tag | (uint32_t)(r + 1);
				break;
			}
			if ((s & tagmask) != tag)
				continue;
			const char *other;
			size_t olen;
			uint64_t kept = (s & recmask) - 1;
			if (dx__pool_id(pool, b->pool.len, ckpt, b->ckpt.len / 8, kept, NULL, NULL, &other,
			                &olen) < 0)
				return dx__fail(err, DX_EINVAL, 0, "", "internal error: id pool");
			if (olen != len || memcmp(other, id, len) != 0)
				continue;
			int take = 1;
			if (duplicate(b, kept, r, id, len, &take, err) < 0)
				return err->code;
			if (take)
				t[i] = tag | (uint32_t)(r + 1);
			break;
		}
	}
	return 0;
}

/* SOURCES: fixed entries, then the relative and absolute path strings. */
static int build_sources(builder *b, const char *out_path, dx_buf *sec, dx_err *err)
{
	int rc = 0;
	char *outdir = dx__dirname(out_path), *absdir = outdir ? realpath(outdir, NULL) : NULL;
	dx_buf strings = { 0 };
	if (!absdir) {
		rc = outdir ? dx__fail_sys(err, outdir, "cannot resolve") : dx__fail_nomem(err);
		goto out;
	}
	for (size_t i = 0; i < b->nsrc; i++) {
		source *s = &b->src[i];
		char *rel = dx__relative_path(absdir, s->abs);
		struct ddx_source e = {
			.size = (uint64_t)s->st.st_size,
			.mtime_sec = s->st.st_mtim.tv_sec,
			.mtime_nsec = (uint32_t)s->st.st_mtim.tv_nsec,
			.kind = (uint32_t)s->kind,
			.first_record = s->first,
			.nrecords = s->count,
			.usize = s->usize,
			.first_point = s->first_point,
			.npoints = s->npoints,
			.window_bytes = s->window_bytes,
		};
		if (!rel) {
			rc = dx__fail_nomem(err);
			goto out;
		}
		e.path_off = (uint32_t)strings.len;
		e.path_len = (uint32_t)strlen(rel);
		int bad = dx__buf_add(&strings, rel, e.path_len + 1) < 0;
		free(rel);
		e.abs_off = (uint32_t)strings.len;
		e.abs_len = (uint32_t)strlen(s->abs);
		if (bad || dx__buf_add(&strings, s->abs, e.abs_len + 1) < 0) {
			rc = dx__fail_nomem(err);
			goto out;
		}
		int fd = open(s->path, O_RDONLY | O_CLOEXEC);
		struct stat now;
		if (fd < 0 || fstat(fd, &now) < 0) {
			rc = dx__fail_sys(err, s->path, "cannot open");
			if (fd >= 0)
				close(fd);
			goto out;
		}
		if (now.st_size != s->st.st_size || now.st_mtim.tv_sec != s->st.st_mtim.tv_sec ||
		    now.st_mtim.tv_nsec != s->st.st_mtim.tv_nsec) {
			close(fd);
			rc = dx__fail(err, DX_ESTALE, 0, s->path, "file changed while it was being indexed");
			goto out;
		}
		rc = dx__fingerprint(fd, e.size, &e.fingerprint, s->path, err);
		close(fd);
		if (rc < 0)
			goto out;
		memcpy(sec->p + i * sizeof e, &e, sizeof e);
	}
	sec->len = b->nsrc * sizeof(struct ddx_source);
	if (dx__buf_add(sec, strings.p, strings.len) < 0)
		rc = dx__fail_nomem(err);
out:
	dx__buf_free(&strings);
	free(outdir);
	free(absdir);
	return rc;
}

typedef struct section {
	uint32_t type;
	const void *data;
	uint64_t size;
} section;

static uint64_t align_up(uint64_t v)
{
	return (v + DDX_ALIGN - 1) & ~(uint64_t)(DDX_ALIGN - 1);
}

/* Whether a point has a packed window: only then is the index written as
 * version 4, so that a docdex that reads version 2 alone reads the others. */
static int packed_points(const builder *b)
{
	const struct ddx_point *p = (const void *)b->points.p;
	for (size_t i = 0; i < b->points.len / sizeof *p; i++)
		if (p[i].flags & DDX_POINT_PACKED)
			return 1;
	return 0;
}

static int write_index(builder *b, const char *out_path, section *secs, uint32_t nsec,
                       uint32_t id_kind, uint32_t bits, dx_err *err)
{
	int rc;
	const uint64_t chunk = 1ULL << DDX_CHUNK_SHIFT;
	struct ddx_section table[DDX_SEC_MAX];
	dx_buf crcs = { 0 };
	dx_atomic af = { .fd = -1 };

	/* Chunk CRCs of every section; the last section holds them. */
	uint64_t off = align_up(sizeof(struct ddx_header) + (nsec + 1) * sizeof(struct ddx_section));
	for (uint32_t i = 0; i < nsec; i++) {
		const unsigned char *p = secs[i].data;
		uint32_t whole = (uint32_t)crc32(0, NULL, 0);
		table[i] = (struct ddx_section){ .type = secs[i].type, .offset = off, .size = secs[i].size,
		                                 .chunk_first = (uint32_t)(crcs.len / 4) };
		for (uint64_t at = 0; at < secs[i].size; at += chunk) {
			uint64_t n = secs[i].size - at < chunk ? secs[i].size - at : chunk;
			uint32_t c = dx__crc32(0, p + at, n);
			whole = (uint32_t)crc32_combine(whole, c, (z_off_t)n);
			if (dx__buf_add(&crcs, &c, 4) < 0) {
				rc = dx__fail_nomem(err);
				goto out;
			}
		}
		table[i].crc = whole;
		off = align_up(off + secs[i].size);
	}
	if (crcs.len / 4 > UINT32_MAX) {
		rc = dx__fail(err, DX_ELIMIT, 0, out_path, "index larger than the format allows");
		goto out;
	}
	secs[nsec] = (section){ DDX_SEC_CHUNKCRC, crcs.p, crcs.len };
	table[nsec] = (struct ddx_section){ .type = DDX_SEC_CHUNKCRC, .offset = off, .size = crcs.len,
	                                    .crc = dx__crc32(0, crcs.p, crcs.len) };
	nsec++;
	off = align_up(off + crcs.len);

	struct ddx_header h = {
		.version = packed_points(b) ? DDX_VERSION : DDX_VERSION_OLDEST,
		.byte_order = DDX_BYTE_ORDER,
		.header_size = (uint32_t)(sizeof h + nsec * sizeof(struct ddx_section)),
		.nsections = nsec,
		.file_size = off,
		.nrecords = b->n,
		.nsources = (uint32_t)b->nsrc,
		.format = (uint32_t)b->pm.format,
		.id_kind = id_kind,
		.record_bits = bits,
		.id_base = id_kind == DX_ID_SEQUENTIAL ? b->first_num : 0,
		.hash_seed = DDX_HASH_SEED,
		.chunk_shift = DDX_CHUNK_SHIFT,
	};
	memcpy(h.magic, DDX_MAGIC, 8);
	h.header_crc = ddx_header_crc(&h, table, nsec * sizeof(struct ddx_section));

	if ((rc = dx__atomic_open(&af, out_path, err)) < 0)
		goto out;
	static const char zeros[DDX_ALIGN];
	uint64_t at = 0;
	if ((rc = dx__atomic_write(&af, &h, sizeof h, err)) < 0 ||
	    (rc = dx__atomic_write(&af, table, nsec * sizeof(struct ddx_section), err)) < 0)
		goto out;
	at = h.header_size;
	for (uint32_t i = 0; i < nsec; i++) {
		if ((rc = dx__atomic_write(&af, zeros, table[i].offset - at, err)) < 0 ||
		    (rc = dx__atomic_write(&af, secs[i].data, secs[i].size, err)) < 0)
			goto out;
		at = table[i].offset + secs[i].size;
	}
	if ((rc = dx__atomic_write(&af, zeros, off - at, err)) < 0 || (rc = dx__atomic_commit(&af, err)) < 0)
		goto out;
	b->rep->index_size = off;
out:
	dx__atomic_abort(&af);
	dx__buf_free(&crcs);
	return rc;
}

static int finish(builder *b, const char *out_path, dx_err *err)
{
	int rc;
	dx_buf params = { 0 }, sources = { 0 }, table = { 0 };
	uint32_t kind, bits = dx__record_bits(b->n);
	if (b->n >= UINT32_MAX)
		return dx__fail(err, DX_ELIMIT, 0, out_path, "more than 4294967294 records");

	/* Sequential ids cannot repeat; any others go through the hash table,
	 * which also finds duplicates. */
	kind = b->sequential ? DX_ID_SEQUENTIAL : DX_ID_HASH;
	b->rep->id_kind = (int)kind;
	if (kind == DX_ID_HASH && (rc = build_hash(b, &table, bits, err)) < 0)
		goto out;

	if (dx__params_write(&b->pm, &params) < 0 ||
	    dx__buf_reserve(&sources, b->nsrc * sizeof(struct ddx_source)) < 0) {
		rc = dx__fail_nomem(err);
		goto out;
	}
	if ((rc = build_sources(b, out_path, &sources, err)) < 0)
		goto out;

	section secs[DDX_SEC_MAX];
	uint32_t n = 0;
	secs[n++] = (section){ DDX_SEC_PARAMS, params.p, params.len };
	secs[n++] = (section){ DDX_SEC_SOURCES, sources.p, sources.len };
	secs[n++] = (section){ DDX_SEC_LONGREC, b->longrecs.p, b->longrecs.len };
	secs[n++] = (section){ DDX_SEC_RECORDS, b->recs.p, b->recs.len };
	if (kind == DX_ID_HASH) {
		secs[n++] = (section){ DDX_SEC_IDHASH, table.p, table.len };
		secs[n++] = (section){ DDX_SEC_IDCHECK, b->ckpt.p, b->ckpt.len };
		secs[n++] = (section){ DDX_SEC_IDPOOL, b->pool.p, b->pool.len };
	}
	if (b->points.len) {
		secs[n++] = (section){ DDX_SEC_POINTS, b->points.p, b->points.len };
		secs[n++] = (section){ DDX_SEC_WINDOWS, b->windows.p, b->windows.len };
	}
	rc = write_index(b, out_path, secs, n, kind, bits, err);
out:
	dx__buf_free(&params);
	dx__buf_free(&sources);
	dx__buf_free(&table);
	return rc;
}

/* A scanned file's kind, size and access points join the index's. */
static int take_points(builder *b, source *src, dx_scan *scan, dx_err *err)
{
	src->kind = scan->kind;
	src->usize = scan->usize;
	src->first_point = b->points.len / sizeof(struct ddx_point);
	src->npoints = scan->points.len / sizeof(struct ddx_point);
	src->window_bytes = scan->windows.len;
	struct ddx_point *p = (struct ddx_point *)scan->points.p;
	for (uint64_t i = 0; i < src->npoints; i++)
		p[i].window_off += b->windows.len;
	if (dx__buf_add(&b->points, scan->points.p, scan->points.len) < 0 ||
	    dx__buf_add(&b->windows, scan->windows.p, scan->windows.len) < 0)
		return dx__fail_nomem(err);
	if (scan->warning[0] && !b->rep->warning[0]) {
		snprintf(b->rep->warning, sizeof b->rep->warning, "%s", scan->warning);
		snprintf(b->rep->warning_file, sizeof b->rep->warning_file, "%s", src->path);
	}
	return 0;
}

int dx_index_build(const char *const *files, size_t nfiles, const char *out_path,
                   const dx_build_opts *caller_opts, dx_build_report *report, dx_err *err)
{
	dx_build_report dummy;
	builder b = { .sequential = 1, .rep = report ? report : &dummy };
	memset(b.rep, 0, sizeof *b.rep);
	int rc = 0;
	dx_build_opts taken;
	const dx_build_opts *opts = &taken;
	if (dx__build_opts_take(&taken, caller_opts, err) < 0)
		return err->code;

	if (nfiles == 0 || nfiles > UINT32_MAX)
		return dx__fail(err, DX_EINVAL, 0, "", "no corpus file given");
	b.pm.format = opts->format;
	b.pm.id_column = opts->id_column ? opts->id_column : 1;
	b.pm.duplicates = opts->duplicates;
	b.pm.skip_bad = opts->skip_bad;
	if (opts->id_field)
		snprintf(b.pm.id_field, sizeof b.pm.id_field, "%s", opts->id_field);
	if (opts->columns)
		snprintf(b.pm.columns, sizeof b.pm.columns, "%s", opts->columns);
	if ((opts->id_field && strlen(opts->id_field) >= sizeof b.pm.id_field) ||
	    (opts->columns && strlen(opts->columns) >= sizeof b.pm.columns))
		return dx__fail(err, DX_EINVAL, 0, "", "id field name or column list too long");

	b.src = calloc(nfiles, sizeof *b.src);
	if (!b.src)
		return dx__fail_nomem(err);
	b.nsrc = nfiles;
	dx_scan scan = { .pm = &b.pm, .detect = opts->format == DX_FMT_AUTO, .complete = 1,
	                 .span = opts->span ? opts->span : DX_DEFAULT_SPAN, .packed = !opts->sparse_windows,
	                 .on_record = on_record, .ctx = &b,
	                 .progress = opts->progress, .progress_ctx = opts->progress_ctx };
	if (scan.span < DX_MIN_SPAN) {
		free(b.src);
		return dx__fail(err, DX_EINVAL, 0, "", "a span under 64 KiB");
	}
	for (size_t i = 0; i < nfiles; i++) {
		b.src[i].path = files[i];
		if (stat(files[i], &b.src[i].st) < 0) {
			rc = dx__fail_sys(err, files[i], "cannot open");
			goto out;
		}
		if (!S_ISREG(b.src[i].st.st_mode)) {
			rc = dx__fail(err, DX_EINVAL, 0, files[i], "not a regular file");
			goto out;
		}
		if (dx_same_file(out_path, files[i])) {
			rc = dx__fail(err, DX_EINVAL, 0, out_path, "the index would replace a corpus file");
			goto out;
		}
		b.src[i].abs = realpath(files[i], NULL);
		if (!b.src[i].abs) {
			rc = dx__fail_sys(err, files[i], "cannot resolve");
			goto out;
		}
		scan.total += (uint64_t)b.src[i].st.st_size;
	}
	for (size_t i = 0; i < nfiles; i++) {
		uint64_t skipped = b.rep->skipped;
		b.src[i].first = b.n;
		if ((rc = dx__scan_file(&scan, files[i], (uint32_t)i, err)) < 0 ||
		    (rc = take_points(&b, &b.src[i], &scan, err)) < 0)
			goto out;
		/* Bytes but not one record: a file of another format (--format
		 * trec over TSV), which an empty index would hide. */
		if (scan.usize && !b.src[i].count && b.rep->skipped == skipped) {
			char sz[32];
			rc = dx__fail(err, DX_EFORMAT, 0, files[i], "no %s record in %s of content, is it in another "
			              "format? (see --format)", dx_format_name(b.pm.format),
			              dx_format_bytes(scan.usize, sz, sizeof sz));
			goto out;
		}
	}
	if (b.pm.format == DX_FMT_AUTO) {
		rc = dx__fail(err, DX_EFORMAT, 0, files[0],
		              "empty corpus, nothing to tell its format from, give --format");
		goto out;
	}
	b.rep->records = b.n;
	b.rep->bytes = scan.done;
	rc = finish(&b, out_path, err);
out:
	for (size_t i = 0; i < b.nsrc; i++)
		free(b.src[i].abs);
	free(b.src);
	dx__buf_free(&b.recs);
	dx__buf_free(&b.longrecs);
	dx__buf_free(&b.pool);
	dx__buf_free(&b.ckpt);
	dx__buf_free(&b.points);
	dx__buf_free(&b.windows);
	dx__buf_free(&scan.points);
	dx__buf_free(&scan.windows);
	return rc;
}
