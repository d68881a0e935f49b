/*
 * bgzf_write.c: rewriting a corpus as BGZF, the blocked gzip of the SAM
 * specification: gzip members of at most 64 KiB, each with a "BC" extra
 * field holding its size, and an empty member at the end.  A block ends
 * at the last record start that fits in it, so that most records are read
 * by inflating a single block, unless that would leave more than
 * BLOCK_SLACK bytes of it unused: then it is filled and the record goes on
 * in the next block.  Any gzip reader reads the file back as the original
 * bytes.
 */
#include <pthread.h>
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
	/* Ending every block at a record made the 1 GiB generated documents
	 * (6.4 KB a record) 10% more blocks, each compressed without the
	 * context of the one before: 2.5% larger than gzip -6 at level 11,
	 * 1.8% with this slack, where 4.2% of the records span two blocks. */
	BLOCK_SLACK = 4096,
	HEADER = 18, TRAILER = 8,
	MAX_BLOCK = 1 << 16,     /* a block's total size, BSIZE + 1 */
};

/* The empty block that ends a BGZF file. */
static const unsigned char eof_block[28] = {
	0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* One compressing thread's deflaters: at the level asked for, and at 0
 * for the blocks it cannot shrink. */
typedef struct packer {
	dx_deflater *level, *store;
} packer;

/* A block of a batch: its bytes in the pending buffer, and its gzip member. */
typedef struct block {
	size_t pos, len;
	size_t total;            /* bytes of out, 0 until packed (or failed) */
	unsigned char out[MAX_BLOCK];
} block;

typedef struct writer {
	dx_atomic out;
	dx_buf pending;          /* bytes not yet in a block, from pend_off */
	uint64_t pend_off;
	dx_buf cuts;             /* uint64_t record starts after pend_off, ascending */
	size_t cut_first;        /* cuts before this index are used up */
	unsigned threads;        /* compressing threads, 1 or more */
	packer *packers;         /* one a thread */
	block *batch;            /* BATCH blocks, compressed together */
	size_t nbatch;
	size_t next;             /* the next block of the batch to take */
	pthread_mutex_t lock;
	dx_bgzf_report *rep;
} writer;

/* Blocks planned and compressed at a time: enough to keep the threads busy. */
enum { BATCH = 64 };

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

/* Makes b's gzip member of its bytes p; b->total stays 0 when out of memory. */
static void pack(packer *k, block *b, const unsigned char *p)
{
	size_t room = MAX_BLOCK - HEADER - TRAILER;
	size_t clen = dx__deflate_whole(k->level, p, b->len, b->out + HEADER, room);
	if (!clen) { /* incompressible: stored blocks always fit */
		if (!k->store && !(k->store = dx__deflater_new(0)))
			return;
		clen = dx__deflate_whole(k->store, p, b->len, b->out + HEADER, room);
	}
	static const unsigned char head[HEADER - 2] = { 0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0 };
	memcpy(b->out, head, sizeof head);
	size_t total = HEADER + clen + TRAILER;
	put16(b->out + 16, (unsigned)(total - 1));
	put32(b->out + HEADER + clen, dx__crc32(0, p, b->len));
	put32(b->out + HEADER + clen + 4, (uint32_t)b->len);
	b->total = total;
}

typedef struct packing {
	writer *w;
	packer *k;
} packing;

/* A thread's share of the batch: the blocks not yet taken, in turn. */
static void *pack_some(void *arg)
{
	packing *pk = arg;
	writer *w = pk->w;
	for (;;) {
		pthread_mutex_lock(&w->lock);
		size_t i = w->next++;
		pthread_mutex_unlock(&w->lock);
		if (i >= w->nbatch)
			return NULL;
		pack(pk->k, &w->batch[i], (const unsigned char *)w->pending.p + w->batch[i].pos);
	}
}

/*
 * The length of the block that starts pos bytes into the pending bytes: up
 * to the last record start that fits, unless that leaves more than
 * BLOCK_SLACK bytes unused or none fits; else as much as fits.  *first moves
 * past the cuts at or before its start.  A block is only cut with more
 * than BLOCK_DATA bytes after its start (or at the end of the file): the
 * pending bytes hold whole records, so the start of a record just at the
 * limit is then known, and where a block ends does not depend on how the
 * input came in chunks, nor on the threads.
 */
static size_t block_len(const writer *w, size_t pos, size_t *first)
{
	const uint64_t *cuts = (const uint64_t *)w->cuts.p;
	size_t ncuts = w->cuts.len / 8, left = w->pending.len - pos;
	uint64_t start = w->pend_off + pos;
	while (*first < ncuts && cuts[*first] <= start)
		(*first)++;
	if (left <= BLOCK_DATA)
		return left;
	size_t best = 0;
	for (size_t i = *first; i < ncuts && cuts[i] <= start + BLOCK_DATA; i++)
		best = (size_t)(cuts[i] - start);
	return best && BLOCK_DATA - best <= BLOCK_SLACK ? best : BLOCK_DATA;
}

/* Compresses and writes the blocks that can be cut now (all that is left
 * when final), BATCH at a time, over the threads; in file order. */
static int flush_blocks(writer *w, int final, dx_err *err)
{
	for (;;) {
		size_t pos = 0, first = w->cut_first;
		w->nbatch = 0;
		while (w->nbatch < BATCH && (w->pending.len - pos > BLOCK_DATA || (final && w->pending.len > pos))) {
			block *b = &w->batch[w->nbatch++];
			b->pos = pos;
			b->len = block_len(w, pos, &first);
			b->total = 0;
			pos += b->len;
		}
		if (!w->nbatch)
			return 0;
		w->next = 0;
		unsigned helpers = w->threads - 1 < w->nbatch - 1 ? w->threads - 1 : (unsigned)w->nbatch - 1;
		pthread_t tid[DX_BGZF_MAX_THREADS];
		packing pk[DX_BGZF_MAX_THREADS];
		unsigned started = 0;
		for (unsigned t = 0; t <= helpers; t++)
			pk[t] = (packing){ w, &w->packers[t] };
		for (unsigned t = 1; t <= helpers; t++, started++)
			if (pthread_create(&tid[t], NULL, pack_some, &pk[t]) != 0)
				break; /* fewer threads: the blocks get packed all the same */
		pack_some(&pk[0]);
		for (unsigned t = 1; t <= started; t++)
			pthread_join(tid[t], NULL);
		for (size_t i = 0; i < w->nbatch; i++) {
			block *b = &w->batch[i];
			if (!b->total)
				return dx__fail_nomem(err);
			w->rep->blocks++;
			w->rep->bytes_out += b->total;
			if (dx__atomic_write(&w->out, b->out, b->total, err) < 0)
				return err->code;
		}
		memmove(w->pending.p, w->pending.p + pos, w->pending.len - pos);
		w->pending.len -= pos;
		w->pend_off += pos;
		w->cut_first = first;
		/* Drop used cuts now and then so that the list stays short. */
		size_t ncuts = w->cuts.len / 8;
		while (w->cut_first < ncuts && ((const uint64_t *)w->cuts.p)[w->cut_first] <= w->pend_off)
			w->cut_first++;
		if (w->cut_first > 4096) {
			memmove(w->cuts.p, w->cuts.p + w->cut_first * 8, (ncuts - w->cut_first) * 8);
			w->cuts.len -= w->cut_first * 8;
			w->cut_first = 0;
		}
	}
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
	/* A batch's worth for the threads; a block at a time for one. */
	size_t enough = w->threads > 1 ? (size_t)BATCH * BLOCK_DATA : BLOCK_DATA;
	return w->pending.len > enough ? flush_blocks(w, 0, err) : 0;
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
	int lvl = level < 0 ? 6 : level > DX_BGZF_LEVEL_MAX ? DX_BGZF_LEVEL_MAX : level;
	w->threads = opts->threads ? opts->threads : 1;
	if (w->threads > DX_BGZF_MAX_THREADS)
		w->threads = DX_BGZF_MAX_THREADS;
	pthread_mutex_init(&w->lock, NULL);
	w->packers = calloc(w->threads, sizeof *w->packers);
	w->batch = malloc(BATCH * sizeof *w->batch);
	rc = w->packers && w->batch ? 0 : dx__fail_nomem(err);
	for (unsigned t = 0; rc == 0 && t < w->threads; t++)
		if (!(w->packers[t].level = dx__deflater_new(lvl)))
			rc = dx__fail_nomem(err);
	if (rc < 0 || (rc = dx__atomic_open(&w->out, out_path, err)) < 0 ||
	    (rc = dx__scan_file(&scan, in_path, 0, err)) < 0 || (rc = flush_blocks(w, 1, err)) < 0)
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
	for (unsigned t = 0; w->packers && t < w->threads; t++) {
		dx__deflater_free(w->packers[t].level);
		dx__deflater_free(w->packers[t].store);
	}
	free(w->packers);
	free(w->batch);
	pthread_mutex_destroy(&w->lock);
	dx__buf_free(&w->pending);
	dx__buf_free(&w->cuts);
	dx__buf_free(&scan.points);
	dx__buf_free(&scan.windows);
	free(w);
	return rc;
}
