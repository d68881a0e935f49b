/*
 * gz_scan.c: decompressing a gzip file from start to end for a scan, and
 * laying its access points (see gz.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "err.h"
#include "fileutil.h"
#include "gz.h"
#include "inflate.h"
#include "le.h"

enum { IN_SIZE = 1 << 18, MEMBER_POINT_GAP = 1 << 16 };

/*
 * A point laid by the inflating thread, queued for dx__gzin_settle: a
 * member's start, or a block boundary with its window and the output after
 * it (32 KiB, or to the end of its member), made by the compressed bytes
 * [from, to) of the file.
 */
struct gz_job {
	struct gz_job *next;
	struct ddx_point pt;
	uint64_t from, to;
	unsigned char *window;    /* DDX_WINDOW bytes, then after: NULL for a member */
	unsigned char *after;
	size_t after_len;
};

/* A member's end, queued for dx__gzin_check: where its data ends in the
 * output, the CRC-32 its trailer gives, and that field's offset in the file. */
struct gz_crc {
	uint64_t uend;
	uint32_t crc;
	uint64_t field;
};

static void job_free(struct gz_job *j)
{
	if (j)
		free(j->window);
	free(j);
}

int dx__gz_kind(const unsigned char *p, size_t n)
{
	/* The magic alone says gzip: a header cut short or of another method
	 * is then a damaged gzip file, reported as such by zlib. */
	if (n < 2 || p[0] != 0x1f || p[1] != 0x8b)
		return 0;
	/* BGZF: the FEXTRA field holds a subfield "BC" of 2 bytes (SAM spec). */
	if (n >= 18 && p[2] == 8 && (p[3] & 4) && p[12] == 'B' && p[13] == 'C' && p[14] == 2 && p[15] == 0)
		return DX_SOURCE_BGZF;
	return DX_SOURCE_GZIP;
}

size_t dx__bgzf_block_size(const unsigned char *p, size_t n)
{
	if (n < DX_BGZF_HEADER || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || !(p[3] & 4) || p[10] != 6 ||
	    p[11] != 0 || p[12] != 'B' || p[13] != 'C' || p[14] != 2 || p[15] != 0)
		return 0;
	size_t total = (size_t)(p[16] | p[17] << 8) + 1;
	return total >= DX_BGZF_HEADER + DX_BGZF_TRAILER ? total : 0;
}

int dx__gzin_open(dx_gzin *g, int fd, const char *path, int kind, uint64_t span, dx_err *err)
{
	memset(g, 0, sizeof *g);
	g->fd = fd;
	g->path = path;
	g->kind = kind;
	g->span = span;
	g->at_member = 1;
	g->in_cap = IN_SIZE;
	g->in = malloc(g->in_cap);
	g->scratch = malloc(4 * DDX_WINDOW);
	g->blocks = kind == DX_SOURCE_BGZF ? dx__inflater_new() : NULL;
	g->own = dx__own_inflate_on() ? dx__inflate_new() : NULL;
	if (!g->in || !g->scratch || (kind == DX_SOURCE_BGZF && dx__libdeflate_on() && !g->blocks) ||
	    (dx__own_inflate_on() && !g->own) ||
	    inflateInit2(&g->z, 15 + 16) != Z_OK || inflateInit2(&g->zw, -15) != Z_OK) {
		free(g->in);
		free(g->scratch);
		dx__inflater_free(g->blocks);
		dx__inflate_free(g->own);
		g->in = g->scratch = NULL;
		g->blocks = NULL;
		g->own = NULL;
		return dx__fail_nomem(err);
	}
	g->z.next_in = g->in;
	pthread_mutex_init(&g->jobs_lock, NULL);
	return 0;
}

void dx__gzin_close(dx_gzin *g)
{
	if (!g->in)
		return;
	while (g->jobs) {
		struct gz_job *j = g->jobs;
		g->jobs = j->next;
		job_free(j);
	}
	job_free(g->pend);
	free(g->crcs);
	pthread_mutex_destroy(&g->jobs_lock);
	inflateEnd(&g->z);
	inflateEnd(&g->zw);
	if (g->zd_init)
		deflateEnd(&g->zd);
	dx__inflater_free(g->blocks);
	dx__inflate_free(g->own);
	dx__inflate_free(g->wown);
	dx__deflater_free(g->wdeflate);
	free(g->in);
	free(g->scratch);
	dx__buf_free(&g->points);
	dx__buf_free(&g->windows);
	g->in = NULL;
}

/* The file offset of the next compressed byte. */
static uint64_t cpos(const dx_gzin *g)
{
	return g->in_off + (uint64_t)(g->z.next_in - g->in);
}

static int refill(dx_gzin *g, dx_err *err)
{
	size_t keep = g->z.avail_in;
	memmove(g->in, g->z.next_in, keep);
	g->in_off = cpos(g);
	g->z.next_in = g->in;
	while (keep < g->in_cap && !g->in_eof) {
		ssize_t n = read(g->fd, g->in + keep, g->in_cap - keep);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return dx__fail_sys(err, g->path, "cannot read");
		}
		if (n == 0)
			g->in_eof = 1;
		keep += (size_t)n;
	}
	g->z.avail_in = (uInt)keep;
	return 0;
}

static int gz_error(dx_gzin *g, dx_err *err, const char *what)
{
	return dx__fail(err, DX_EFORMAT, 0, g->path, "%s at compressed byte %llu", what,
	                (unsigned long long)cpos(g));
}

/* Starts decoder s at a point whose compressed bytes are comp (avail of
 * them at *in): its first bits bits of comp[0] primed, *in past them. */
static void own_at_point(dx_inflate *s, const unsigned char *comp, unsigned bits, const unsigned char **in,
                         size_t *avail)
{
	dx__inflate_reset(s);
	if (bits) {
		dx__inflate_prime(s, bits, comp[0] >> (8 - bits));
		++*in;
		--*avail;
	}
}

/* Inflates from point pt with the given window into g->scratch + 3 * DDX_WINDOW,
 * as much as after_len bytes: the count produced.  By docdex's decoder where
 * it serves, with the window copied in before the output, else by zlib
 * (whose trials were 17% of a build's CPU time: the 1 GiB passages' .gz
 * took 0.88 of the CPU time with this decoder, the same wall time). */
static size_t trial(dx_gzin *g, const unsigned char *comp, size_t clen, unsigned bits,
                    const unsigned char *window, size_t wlen, size_t want)
{
	unsigned char *out = g->scratch + 3 * DDX_WINDOW;
	if (dx__own_inflate_on()) {
		const unsigned char *in = comp;
		unsigned char *o = out;
		size_t avail = clen, room = want;
		memcpy(out - wlen, window, wlen);
		own_at_point(g->wown, comp, bits, &in, &avail);
		dx__inflate_contiguous(g->wown, out - wlen);
		dx__inflate_run(g->wown, &in, &avail, &o, &room, 1, DX_INF_NO_STOP);
		return want - room;
	}
	z_stream *z = &g->zw;
	inflateReset2(z, -15);
	size_t skip = 0;
	if (bits) {
		inflatePrime(z, bits, comp[0] >> (8 - bits));
		skip = 1;
	}
	if (wlen)
		inflateSetDictionary(z, window, (uInt)wlen);
	z->next_in = (unsigned char *)comp + skip;
	z->avail_in = (uInt)(clen - skip);
	z->next_out = out;
	z->avail_out = (uInt)want;
	while (z->avail_out) {
		int r = inflate(z, Z_NO_FLUSH);
		if (r != Z_OK)
			break;
	}
	return want - z->avail_out;
}

static void queue(dx_gzin *g, struct gz_job *j)
{
	j->next = NULL;
	pthread_mutex_lock(&g->jobs_lock);
	if (g->jobs_last)
		g->jobs_last->next = j;
	else
		g->jobs = j;
	g->jobs_last = j;
	pthread_mutex_unlock(&g->jobs_lock);
}

/* The output after the pending point is complete: the point is queued. */
static void finish_point(dx_gzin *g)
{
	struct gz_job *j = g->pend;
	g->pend = NULL;
	/* From the byte holding the point's first bits. */
	j->from = j->pt.coff - (j->pt.bits ? 1 : 0);
	j->to = cpos(g);
	queue(g, j);
}

/* Deflates len bytes of a point's window into the windows section, with
 * the codec the build serves (libdeflate's windows are 4% smaller than
 * zlib's), and stores the point.  Level 6: 9 took a sixth longer to build
 * the index for 1.3% less, libdeflate's 12 two and a half times as long
 * for 4% less. */
static int store_point(dx_gzin *g, struct ddx_point *pt, const unsigned char *bytes, size_t len, dx_err *err)
{
	pt->window_off = g->windows.len;
	pt->window_clen = 0;
	if (len) {
		size_t bound = compressBound(len) + 64;
		if (dx__buf_reserve(&g->windows, bound) < 0)
			return dx__fail_nomem(err);
		if (!g->wdeflate && !(g->wdeflate = dx__deflater_new(6)))
			return dx__fail_nomem(err);
		size_t dlen = dx__deflate_whole(g->wdeflate, bytes, len, g->windows.p + g->windows.len, bound);
		if (!dlen)
			return dx__fail(err, DX_EINVAL, 0, g->path, "internal error: window compression");
		pt->window_clen = (uint32_t)dlen;
		g->windows.len += dlen;
	}
	return dx__buf_add(&g->points, pt, sizeof *pt) < 0 ? dx__fail_nomem(err) : 0;
}

/* Deflates len bytes raw at level 6 with zlib, with the content's first
 * bytes as dictionary (dict_len 0: none), onto the windows section: the
 * compressed length, or 0 when out of memory. */
static size_t deflate_dict(dx_gzin *g, const unsigned char *bytes, size_t len, size_t dict_len)
{
	if (!g->zd_init) {
		if (deflateInit2(&g->zd, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return 0;
		g->zd_init = 1;
	}
	size_t bound = deflateBound(&g->zd, (uLong)len) + 64;
	if (deflateReset(&g->zd) != Z_OK || dx__buf_reserve(&g->windows, bound) < 0 ||
	    (dict_len && deflateSetDictionary(&g->zd, g->dict, (uInt)dict_len) != Z_OK))
		return 0;
	g->zd.next_in = (unsigned char *)(uintptr_t)bytes;
	g->zd.avail_in = (uInt)len;
	g->zd.next_out = (unsigned char *)g->windows.p + g->windows.len;
	g->zd.avail_out = (uInt)bound;
	if (deflate(&g->zd, Z_FINISH) != Z_STREAM_END)
		return 0;
	g->windows.len += bound - g->zd.avail_out;
	return bound - g->zd.avail_out;
}

/* A point with a packed window stored.  From the DICT_AFTER-th on (the
 * dictionary, some 12 KiB deflated, saved some 800 bytes a window on the
 * generated passages: a source with fewer points is better without), its
 * bytes are deflated with the dictionary (DDX_POINT_DICT); the dictionary
 * itself first, as the window of the source's first point (flagged so
 * too), a member point at offset 0 settled already: a packed point lies a
 * span (64 KiB or more) after it, and the inflating thread kept the
 * dictionary before it laid the point. */
enum { DICT_AFTER = 16 };
static int store_packed(dx_gzin *g, struct ddx_point *pt, const unsigned char *bytes, size_t len, dx_err *err)
{
	pt->flags |= DDX_POINT_PACKED;
	if (++g->npacked < DICT_AFTER)
		return store_point(g, pt, bytes, len, err);
	if (g->npacked == DICT_AFTER) {
		struct ddx_point *first = (struct ddx_point *)g->points.p;
		if (!g->points.len || first->uoff != 0 || !(first->flags & DDX_POINT_MEMBER) ||
		    g->dict_len != DDX_WINDOW)
			return dx__fail(err, DX_EINVAL, 0, g->path, "internal error: no dictionary for packed windows");
		uint64_t off = g->windows.len;
		size_t n = deflate_dict(g, g->dict, g->dict_len, 0);
		if (!n)
			return dx__fail_nomem(err);
		first->window_off = off;
		first->window_clen = (uint32_t)n;
		first->window_len = (uint16_t)g->dict_len;
		first->flags |= DDX_POINT_DICT;
	}
	pt->window_off = g->windows.len;
	pt->flags |= DDX_POINT_DICT;
	size_t n = deflate_dict(g, bytes, len, g->dict_len);
	if (!n)
		return dx__fail_nomem(err);
	pt->window_clen = (uint32_t)n;
	return dx__buf_add(&g->points, pt, sizeof *pt) < 0 ? dx__fail_nomem(err) : 0;
}

/*
 * A block boundary's point stored with as little of its window as the
 * output after it needs: the bytes that output reads, which docdex's
 * decoder marks whatever the codec (dx__inflate_lazy), as a sparse window
 * (those bytes at their places, the rest zero), or where asked (g->packed)
 * and a reader can unpack it (the output's first 32 KiB come from at most
 * DDX_PACK_INPUT compressed bytes), packed: those bytes alone, in their
 * order in the window (docdex-index(5)).  Readers find their places as the
 * decoder found them here, from the compressed data alone; the sparse
 * window is proven on the real output through the codec's inflate, which
 * readers are given.  A point whose output reads no window byte gets no
 * window; one that fails the proof, its whole window.
 */
static int settle_window(dx_gzin *g, struct gz_job *p, dx_err *err)
{
	size_t wlen = p->pt.window_len, want = p->after_len;
	/* The compressed bytes that made that output. */
	uint64_t from = p->from, to = p->to;
	size_t clen = (size_t)(to - from);
	unsigned char *comp = malloc(clen ? clen : 1);
	if (!comp)
		return dx__fail_nomem(err);
	if (dx__pread_full(g->fd, comp, clen, from) < 0) {
		free(comp);
		return dx__fail_sys(err, g->path, "cannot read");
	}
	if (!g->wown && !(g->wown = dx__inflate_new())) {
		free(comp);
		return dx__fail_nomem(err);
	}
	unsigned char *packed = g->scratch, *sparse = g->scratch + DDX_WINDOW;
	/* The bytes read marked as a reader marks them, with a window of
	 * zeros (the decoder's lazy window lies just before its output). */
	unsigned char *out = g->scratch + 3 * DDX_WINDOW, *o = out;
	const unsigned char *in = comp;
	size_t avail = clen, room = want;
	memset(out - wlen, 0, wlen);
	own_at_point(g->wown, comp, p->pt.bits, &in, &avail);
	if (dx__inflate_lazy(g->wown, DX_LAZY_MARK, out - wlen, wlen, NULL, 0) < 0) {
		free(comp);
		return dx__fail_nomem(err);
	}
	dx__inflate_run(g->wown, &in, &avail, &o, &room, 1, DX_INF_NO_STOP);
	int64_t used = dx__inflate_lazy_end(g->wown);
	size_t took = clen - avail;
	int proven = 0;
	if (!room) {
		dx__inflate_lazy_gather(g->wown, p->window, packed);
		memset(sparse, 0, wlen);
		dx__inflate_lazy_scatter(g->wown, sparse, packed);
		proven = trial(g, comp, clen, p->pt.bits, sparse, wlen, want) == want &&
		         memcmp(out, p->after, want) == 0;
	}
	free(comp);
	if (!proven)
		return store_point(g, &p->pt, p->window, wlen, err);
	if (used == 0) {
		p->pt.window_len = 0;
		return store_point(g, &p->pt, NULL, 0, err);
	}
	if (!g->packed || took > DDX_PACK_INPUT)
		return store_point(g, &p->pt, sparse, wlen, err);
	return store_packed(g, &p->pt, packed, (size_t)used, err);
}

/*
 * A point laid here (at a member's start, or else at a block boundary):
 * the next is due a span after this one was due, rather than a span after
 * where it fell, so that points lie a span apart on average whatever the
 * blocks' size (as long as blocks are shorter than a span).  Laid a span
 * after the point before, at the first boundary past it, they lay as far
 * apart as whole blocks made it: the generated passages' gzip -6 blocks
 * hold about 192 KiB each, and spans from 896 to 944 KiB all gave 1,093
 * points to the GiB (960 KiB apart), 1 MiB gave 911 (1,152 KiB apart).
 * After a block longer than a span, the next is due a span on.
 */
static void next_due(dx_gzin *g, int member)
{
	uint64_t due = member ? g->uout + g->span : g->point_due + g->span;
	g->last_point = g->uout;
	g->point_due = due > g->uout ? due : g->uout + g->span;
}

/* A point at a block boundary inside a member, pending its output. */
static int start_point(dx_gzin *g, const unsigned char *out, size_t produced, dx_err *err)
{
	struct gz_job *p = calloc(1, sizeof *p);
	if (!p || !(p->window = malloc(2 * DDX_WINDOW))) {
		free(p);
		return dx__fail_nomem(err);
	}
	p->after = p->window + DDX_WINDOW;
	size_t wlen = g->uout - g->member_u < DDX_WINDOW ? (size_t)(g->uout - g->member_u) : DDX_WINDOW;
	/* The window is the last wlen bytes of output: in this call's output,
	 * preceded by the ring of earlier output. */
	size_t from_out = produced < wlen ? produced : wlen, from_ring = wlen - from_out;
	memcpy(p->window, g->ring + g->ring_len - from_ring, from_ring);
	memcpy(p->window + from_ring, out + produced - from_out, from_out);
	p->pt = (struct ddx_point){ .uoff = g->uout, .coff = cpos(g), .window_len = (uint16_t)wlen,
	                            .bits = (uint8_t)(g->own ? dx__inflate_bits(g->own) : g->z.data_type & 7) };
	p->after_len = 0;
	g->pend = p;
	next_due(g, 0);
	return 0;
}

/* A member's start, queued as a point (it needs no window). */
static int member_point(dx_gzin *g, dx_err *err)
{
	struct gz_job *j = calloc(1, sizeof *j);
	if (!j)
		return dx__fail_nomem(err);
	j->pt = (struct ddx_point){ .uoff = g->uout, .coff = cpos(g), .flags = DDX_POINT_MEMBER };
	next_due(g, 1);
	queue(g, j);
	return 0;
}

static int settle_member(dx_gzin *g, const struct ddx_point *pt, dx_err *err)
{
	/* After an empty member (gzip of nothing, then cat with another), the
	 * next member starts at the same uncompressed offset: it takes the
	 * place of the last point, so that points stay strictly increasing. */
	size_t n = g->points.len / sizeof *pt;
	struct ddx_point *last = n ? (struct ddx_point *)g->points.p + n - 1 : NULL;
	if (last && last->uoff == pt->uoff) {
		*last = *pt;
		return 0;
	}
	return dx__buf_add(&g->points, pt, sizeof *pt) < 0 ? dx__fail_nomem(err) : 0;
}

int dx__gzin_settle(dx_gzin *g, dx_err *err)
{
	for (;;) {
		pthread_mutex_lock(&g->jobs_lock);
		struct gz_job *j = g->jobs;
		if (j && !(g->jobs = j->next))
			g->jobs_last = NULL;
		pthread_mutex_unlock(&g->jobs_lock);
		if (!j)
			return 0;
		int rc = j->pt.flags & DDX_POINT_MEMBER ? settle_member(g, &j->pt, err)
		                                        : settle_window(g, j, err);
		job_free(j);
		if (rc < 0)
			return rc;
	}
}

/* Keeps the last DDX_WINDOW bytes of output in the ring. */
static void remember(dx_gzin *g, const unsigned char *out, size_t n)
{
	if (n >= DDX_WINDOW) {
		memcpy(g->ring, out + n - DDX_WINDOW, DDX_WINDOW);
		g->ring_len = DDX_WINDOW;
		return;
	}
	size_t keep = g->ring_len + n > DDX_WINDOW ? DDX_WINDOW - n : g->ring_len;
	memmove(g->ring, g->ring + g->ring_len - keep, keep);
	memcpy(g->ring + keep, out, n);
	g->ring_len = keep + n;
}

/* Queues the CRC-32 of the member whose data ends here (the trailer's,
 * at next_in) for dx__gzin_check: 0, or an error. */
static int queue_crc(dx_gzin *g, dx_err *err)
{
	struct gz_crc c = { .uend = g->uout, .crc = dx__le32(g->z.next_in), .field = cpos(g) };
	int rc = 0;
	pthread_mutex_lock(&g->jobs_lock);
	/* The entries checked make room: the array holds what the other
	 * thread has yet to check, a few reads' worth. */
	if (g->ncrc == g->crc_cap && g->crc_head) {
		memmove(g->crcs, g->crcs + g->crc_head, (g->ncrc - g->crc_head) * sizeof *g->crcs);
		g->ncrc -= g->crc_head;
		g->crc_head = 0;
	}
	if (dx__grow(&g->crcs, &g->crc_cap, g->ncrc + 1, 64, sizeof *g->crcs) == 0)
		g->crcs[g->ncrc++] = c;
	else
		rc = dx__fail_nomem(err);
	pthread_mutex_unlock(&g->jobs_lock);
	return rc;
}

int dx__gzin_check(dx_gzin *g, const char *p, size_t n, dx_err *err)
{
	for (;;) {
		pthread_mutex_lock(&g->jobs_lock);
		struct gz_crc c = { .uend = UINT64_MAX };
		if (g->crc_head < g->ncrc)
			c = g->crcs[g->crc_head];
		pthread_mutex_unlock(&g->jobs_lock);
		if (c.uend > g->crc_upos + n)
			break;
		size_t k = (size_t)(c.uend - g->crc_upos);
		g->crc_run = dx__crc32(g->crc_run, p, k);
		p += k;
		n -= k;
		g->crc_upos += k;
		if (g->crc_run != c.crc)
			return dx__fail(err, DX_EFORMAT, 0, g->path, "gzip CRC mismatch at compressed byte %llu",
			                (unsigned long long)c.field);
		g->crc_run = 0;
		pthread_mutex_lock(&g->jobs_lock);
		g->crc_head++;
		pthread_mutex_unlock(&g->jobs_lock);
	}
	if (n)
		g->crc_run = dx__crc32(g->crc_run, p, n);
	g->crc_upos += n;
	return 0;
}

/* After a member's DEFLATE data, inflated raw: its trailer, the CRC-32
 * (queued for dx__gzin_check; *member_end then set to produced, the bytes
 * of this read up to the member's end) and the length of its data,
 * checked and passed.  A mismatch is named at the field's own offset, as
 * the random reader names a BGZF block's. */
static int trailer(dx_gzin *g, size_t produced, size_t *member_end, dx_err *err)
{
	/* Bytes zlib took but did not use are still in the buffer, just
	 * before next_in (docdex's inflater stops at the stream's end). */
	unsigned unused = g->own ? 0 : dx__zlib_unused_bytes(&g->z);
	g->z.next_in -= unused;
	g->z.avail_in += unused;
	if (g->z.avail_in < 8 && !g->in_eof && refill(g, err) < 0)
		return err->code;
	if (g->z.avail_in < 8) {
		g->z.next_in += g->z.avail_in;
		g->z.avail_in = 0;
		return gz_error(g, err, "truncated gzip file, it ends inside a member");
	}
	if (queue_crc(g, err) < 0)
		return err->code;
	*member_end = produced;
	g->z.next_in += 4;
	g->z.avail_in -= 4;
	if (dx__le32(g->z.next_in) != g->isize)
		return gz_error(g, err, "gzip length mismatch");
	g->z.next_in += 4;
	g->z.avail_in -= 4;
	return 0;
}

/* The start of a member: a gzip header, or garbage after the last one. */
static int next_member(dx_gzin *g, dx_err *err)
{
	if (g->z.avail_in < 18 && !g->in_eof && refill(g, err) < 0)
		return err->code;
	if (g->z.avail_in == 0) {
		g->ended = 1;
		return 0;
	}
	if (g->z.avail_in < 2 || g->z.next_in[0] != 0x1f || g->z.next_in[1] != 0x8b) {
		if (g->uout == 0 && cpos(g) == 0)
			return gz_error(g, err, "not a gzip file");
		/* As gzip does: warn, and keep what came before. */
		snprintf(g->warning, sizeof g->warning,
		         "garbage after the last gzip member at compressed byte %llu, ignored",
		         (unsigned long long)cpos(g));
		g->ended = 1;
		return 0;
	}
	inflateReset2(&g->z, 15 + 16);
	g->raw = 0;
	g->member_u = g->uout;
	g->ring_len = 0;
	g->at_member = 0;
	if (g->span && (g->kind == DX_SOURCE_BGZF || g->uout == 0 ||
	                g->uout - g->last_point >= MEMBER_POINT_GAP))
		return member_point(g, err);
	return 0;
}

/* At a member of a BGZF file, where libdeflate serves: inflates the whole
 * block into out, which has room for any.  1 when it did (*n bytes), 0
 * when the member is not a whole BGZF block within the file (zlib streams
 * it, and says what is wrong), or an error. */
static int whole_block(dx_gzin *g, unsigned char *out, size_t *n, dx_err *err)
{
	if (g->z.avail_in < DX_BGZF_MAX && !g->in_eof && refill(g, err) < 0)
		return err->code;
	const unsigned char *b = g->z.next_in;
	size_t total = dx__bgzf_block_size(b, g->z.avail_in);
	if (!total || total > g->z.avail_in)
		return 0;
	uint32_t isize = dx__le32(b + total - 4);
	if (isize > DX_BGZF_MAX)
		return 0;
	g->member_u = g->uout;
	if (g->span && member_point(g, err) < 0)
		return err->code;
	if (dx__inflate_whole(g->blocks, b + DX_BGZF_HEADER, total - DX_BGZF_HEADER - DX_BGZF_TRAILER, out,
	                      isize) < 0)
		return gz_error(g, err, "corrupt gzip data");
	g->uout += isize;
	/* Its CRC, for dx__gzin_check, named at its own offset. */
	g->z.next_in += total - 8;
	g->z.avail_in -= (uInt)(total - 8);
	if (queue_crc(g, err) < 0)
		return err->code;
	g->z.next_in += 8;
	g->z.avail_in -= 8;
	*n = isize;
	return 1;
}

/* What one call of an inflater did (n bytes out). */
enum {
	STEP_MORE,      /* went on: more output room or input wanted */
	STEP_NEED,      /* wants input first (docdex's inflater) */
	STEP_HEADER,    /* read a member's header (zlib): the data goes on raw */
	STEP_BOUNDARY,  /* stopped at a block boundary, not the last */
	STEP_END,       /* the member's data ended: its trailer follows */
	STEP_TRUNCATED,
	STEP_CORRUPT,
	STEP_NOMEM,
};

/* Points are laid at block boundaries, where the inflater stops. */
static int at_blocks(const dx_gzin *g)
{
	return g->span && g->kind == DX_SOURCE_GZIP;
}

/* Output still to come before a point is due at the next block boundary:
 * 0 once a point is due (next_due). */
static uint64_t point_due_in(const dx_gzin *g)
{
	return g->uout >= g->point_due ? 0 : g->point_due - g->uout;
}

/* zlib, for the member's header, and for its data under DOCDEX_CODEC=zlib
 * (with Z_BLOCK, it stops after the header and at block boundaries). */
static int zlib_step(dx_gzin *g, unsigned char *out, size_t room, size_t *n)
{
	g->z.next_out = out;
	g->z.avail_out = (uInt)(room > (1u << 30) ? (1u << 30) : room);
	uInt before = g->z.avail_out;
	int r = inflate(&g->z, !g->raw || at_blocks(g) ? Z_BLOCK : Z_NO_FLUSH);
	*n = before - g->z.avail_out;
	if (!g->raw && r == Z_OK && (g->z.data_type & 128)) {
		/* The header read, byte-aligned: the data goes on raw. */
		inflateReset2(&g->z, -15);
		if (g->own)
			dx__inflate_reset(g->own);
		g->raw = 1;
		g->isize = 0;
		return STEP_HEADER;
	}
	if (r == Z_STREAM_END)
		return STEP_END;
	if (r == Z_BUF_ERROR || (r == Z_OK && *n == 0 && g->z.avail_in == 0))
		return g->in_eof && g->z.avail_in == 0 ? STEP_TRUNCATED : STEP_MORE;
	if (r == Z_MEM_ERROR)
		return STEP_NOMEM;
	if (r != Z_OK)
		return STEP_CORRUPT;
	return g->raw && (g->z.data_type & 128) && !(g->z.data_type & 64) ? STEP_BOUNDARY : STEP_MORE;
}

/* docdex's inflater (inflate.h), for a member's data.  It stops only at
 * the boundaries where a point may be due: each stop costs it a copy of
 * its history. */
static int own_step(dx_gzin *g, unsigned char *out, size_t room, size_t *n)
{
	const unsigned char *in = g->z.next_in;
	size_t avail = g->z.avail_in, left = room;
	size_t after = at_blocks(g) ? (size_t)point_due_in(g) : DX_INF_NO_STOP;
	int r = dx__inflate_run(g->own, &in, &avail, &out, &left, g->in_eof, after);
	g->z.next_in = (Bytef *)(uintptr_t)in;
	g->z.avail_in = (uInt)avail;
	*n = room - left;
	switch (r) {
	case DX_INF_END:
		return STEP_END;
	case DX_INF_BLOCK:
		return STEP_BOUNDARY;
	case DX_INF_TRUNC:
		/* Named at the file's end, where it is cut, as zlib's. */
		g->z.next_in += g->z.avail_in;
		g->z.avail_in = 0;
		return STEP_TRUNCATED;
	case DX_INF_BAD:
		return STEP_CORRUPT;
	}
	return left ? STEP_NEED : STEP_MORE;
}

/* dx__gzin_read's work: *member_end is set to the bytes of this read up to
 * the last member's end in it. */
static int64_t gzin_read(dx_gzin *g, unsigned char *out, size_t cap, size_t *member_end, dx_err *err)
{
	size_t produced = 0;
	int rc;
	while (produced < cap && !g->ended) {
		if (g->at_member && g->blocks) {
			/* A block whole, when there is room for the largest. */
			size_t n = 0;
			if (cap - produced < DX_BGZF_MAX && produced)
				break;
			if (cap - produced >= DX_BGZF_MAX && (rc = whole_block(g, out + produced, &n, err)) != 0) {
				if (rc < 0)
					return rc;
				produced += n;
				*member_end = produced;
				continue;
			}
		}
		if (g->at_member) {
			if ((rc = next_member(g, err)) < 0)
				return rc;
			continue;
		}
		if (g->z.avail_in == 0 && !g->in_eof && (rc = refill(g, err)) < 0)
			return rc;
		size_t n;
		int r = g->raw && g->own ? own_step(g, out + produced, cap - produced, &n)
		                         : zlib_step(g, out + produced, cap - produced, &n);
		if (r == STEP_HEADER)
			continue;
		if (r == STEP_NEED && (rc = refill(g, err)) < 0)
			return rc;
		if (r == STEP_TRUNCATED)
			return gz_error(g, err, "truncated gzip file, it ends inside a member");
		if (r == STEP_CORRUPT)
			return gz_error(g, err, "corrupt gzip data");
		if (r == STEP_NOMEM)
			return dx__fail_nomem(err);
		g->isize += (uint32_t)n;
		/* The output after a pending point is kept until it has 32 KiB. */
		if (g->pend && n) {
			size_t take = DDX_WINDOW - g->pend->after_len < n ? DDX_WINDOW - g->pend->after_len : n;
			memcpy(g->pend->after + g->pend->after_len, out + produced, take);
			g->pend->after_len += take;
		}
		if (g->packed && g->uout < DDX_WINDOW) {
			size_t take = DDX_WINDOW - g->dict_len < n ? DDX_WINDOW - g->dict_len : n;
			memcpy(g->dict + g->dict_len, out + produced, take);
			g->dict_len += take;
		}
		produced += n;
		g->uout += n;
		if (r == STEP_END) {
			if ((rc = trailer(g, produced, member_end, err)) < 0)
				return rc;
			g->at_member = 1;
		}
		if (g->pend && (g->pend->after_len == DDX_WINDOW || g->at_member))
			finish_point(g);
		/* A block boundary that is not the member's end, where a point is due (next_due). */
		if (r == STEP_BOUNDARY && at_blocks(g) && !g->pend && point_due_in(g) == 0 &&
		    (rc = start_point(g, out, produced, err)) < 0)
			return rc;
	}
	remember(g, out, produced);
	return (int64_t)produced;
}

int64_t dx__gzin_read(dx_gzin *g, char *out, size_t cap, dx_err *err)
{
	if (g->deferred) {
		*err = g->deferred_err;
		return err->code;
	}
	size_t member_end = 0;
	int64_t n = gzin_read(g, (unsigned char *)out, cap, &member_end, err);
	if (n >= 0 || member_end == 0)
		return n;
	/* The bytes up to the last member's end are given, their CRC still
	 * to be checked; the error waits for the next read. */
	g->deferred = 1;
	g->deferred_err = *err;
	return (int64_t)member_end;
}
