/*
 * bgzf_write.c: rewriting a corpus as BGZF, the blocked gzip of the SAM
 * specification: gzip members of at most 64 KiB, each with a "BC" extra
 * field holding its size, and an empty member at the end.  Blocks end at
 * record boundaries wherever a record fits in one, so that any record of
 * up to 64 KiB is read by inflating a single block.  Any gzip reader reads
 * the file back as the original bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "buf.h"
#include "codec.h"
#include "err.h"
#include "opts.h"
#include "scan.h"

enum {
	BLOCK_DATA = 0xff00,     /* uncompressed bytes per block at most, as bgzip */
	HEADER = 18, TRAILER = 8,
	MAX_BLOCK = 1 << 16,     /* a block's total size, BSIZE + 1 */
};

/* The empty block that ends a BGZF file. */
static const unsigned char eof_block[28] = {
	0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

typedef struct writer {
	dx_atomic out;
	dx_deflater *level, *store; /* at the level asked for, and at 0 */
	dx_buf pending;          /* bytes not yet in a block, from pend_off */
	uint64_t pend_off;
	dx_buf cuts;             /* uint64_t record starts after pend_off, ascending */
	size_t cut_first;        /* cuts before this index are used up */
	unsigned char block[MAX_BLOCK];
	dx_bgzf_report *rep;
} writer;

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

/* Deflates n bytes into w->block after the header; the compressed size,
 * or 0 when it does not fit a block at this level. */
static size_t deflate_block(writer *w, dx_deflater *c, const unsigned char *p, size_t n)
{
	return dx__deflate_whole(c, p, n, w->block + HEADER, MAX_BLOCK - HEADER - TRAILER);
}

static int write_block(writer *w, const unsigned char *p, size_t n, dx_err *err)
{
	size_t clen = deflate_block(w, w->level, p, n);
	if (!clen) { /* incompressible: stored blocks always fit */
		if (!w->store && !(w->store = dx__deflater_new(0)))
			return dx__fail_nomem(err);
		clen = deflate_block(w, w->store, p, n);
	}
	static const unsigned char head[HEADER - 2] = { 0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0 };
	memcpy(w->block, head, sizeof head);
	size_t total = HEADER + clen + TRAILER;
	put16(w->block + 16, (unsigned)(total - 1));
	put32(w->block + HEADER + clen, dx__crc32(0, p, n));
	put32(w->block + HEADER + clen + 4, (uint32_t)n);
	w->rep->blocks++;
	w->rep->bytes_out += total;
	return dx__atomic_write(&w->out, w->block, total, err);
}

/* Writes one block from the front of the pending bytes: up to the last
 * record start that fits, else as much as fits. */
static int emit(writer *w, dx_err *err)
{
	size_t n = w->pending.len < BLOCK_DATA ? w->pending.len : BLOCK_DATA;
	const uint64_t *cuts = (const uint64_t *)w->cuts.p;
	size_t ncuts = w->cuts.len / 8;
	if (n == BLOCK_DATA) {
		uint64_t limit = w->pend_off + n;
		size_t best = 0;
		for (size_t i = w->cut_first; i < ncuts && cuts[i] <= limit; i++)
			if (cuts[i] > w->pend_off)
				best = (size_t)(cuts[i] - w->pend_off);
		if (best)
			n = best;
	}
	if (write_block(w, (const unsigned char *)w->pending.p, n, err) < 0)
		return err->code;
	memmove(w->pending.p, w->pending.p + n, w->pending.len - n);
	w->pending.len -= n;
	w->pend_off += n;
	while (w->cut_first < ncuts && cuts[w->cut_first] <= w->pend_off)
		w->cut_first++;
	/* Drop used cuts now and then so that the list stays short. */
	if (w->cut_first > 4096) {
		memmove(w->cuts.p, w->cuts.p + w->cut_first * 8, (ncuts - w->cut_first) * 8);
		w->cuts.len -= w->cut_first * 8;
		w->cut_first = 0;
	}
	return 0;
}

static int on_record(void *ctx, const dx_scan_item *it, dx_err *err)
{
	writer *w = ctx;
	w->rep->records++;
	return dx__buf_add(&w->cuts, &it->offset, 8) < 0 ? dx__fail_nomem(err) : 0;
}

static int on_bytes(void *ctx, const char *p, size_t n, dx_err *err)
{
	writer *w = ctx;
	w->rep->bytes_in += n;
	if (dx__buf_add(&w->pending, p, n) < 0)
		return dx__fail_nomem(err);
	while (w->pending.len >= BLOCK_DATA)
		if (emit(w, err) < 0)
			return err->code;
	return 0;
}

int dx_bgzf_write(const char *in_path, const char *out_path, const dx_build_opts *caller_opts, int level,
                  dx_bgzf_report *rep, dx_err *err)
{
	dx_bgzf_report dummy;
	dx_build_opts taken;
	const dx_build_opts *opts = &taken;
	if (dx__build_opts_take(&taken, caller_opts, err) < 0) {
		if (rep)
			memset(rep, 0, sizeof *rep);
		return err->code;
	}
	writer *w = calloc(1, sizeof *w);
	if (!w)
		return dx__fail_nomem(err);
	w->rep = rep ? rep : &dummy;
	memset(w->rep, 0, sizeof *w->rep);
	w->out.fd = -1;
	dx_params pm = { .format = opts->format, .id_column = opts->id_column ? opts->id_column : 1 };
	if (opts->id_field)
		snprintf(pm.id_field, sizeof pm.id_field, "%s", opts->id_field);
	/* Only record boundaries matter here, not ids. */
	dx_scan scan = { .pm = &pm, .detect = opts->format == DX_FMT_AUTO,
	                 .on_record = on_record, .on_bytes = on_bytes, .ctx = w,
	                 .progress = opts->progress, .progress_ctx = opts->progress_ctx };
	int rc;
	struct stat st;
	if (stat(in_path, &st) == 0)
		scan.total = (uint64_t)st.st_size;
	if (dx_same_file(out_path, in_path)) {
		free(w);
		return dx__fail(err, DX_EINVAL, 0, out_path, "the BGZF output is the input file");
	}
	/* gzip's default level, 6, when none is given. */
	if (!(w->level = dx__deflater_new(level < 0 ? 6 : level > 9 ? 9 : level))) {
		free(w);
		return dx__fail_nomem(err);
	}
	if ((rc = dx__atomic_open(&w->out, out_path, err)) < 0 ||
	    (rc = dx__scan_file(&scan, in_path, 0, err)) < 0)
		goto out;
	while (w->pending.len)
		if ((rc = emit(w, err)) < 0)
			goto out;
	w->rep->bytes_out += sizeof eof_block;
	if ((rc = dx__atomic_write(&w->out, eof_block, sizeof eof_block, err)) < 0 ||
	    (rc = dx__atomic_commit(&w->out, err)) < 0)
		goto out;
	if (scan.warning[0]) {
		snprintf(w->rep->warning, sizeof w->rep->warning, "%s", scan.warning);
		snprintf(w->rep->warning_file, sizeof w->rep->warning_file, "%s", in_path);
	}
out:
	dx__atomic_abort(&w->out);
	dx__deflater_free(w->level);
	dx__deflater_free(w->store);
	dx__buf_free(&w->pending);
	dx__buf_free(&w->cuts);
	dx__buf_free(&scan.points);
	dx__buf_free(&scan.windows);
	free(w);
	return rc;
}
