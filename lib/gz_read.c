/*
 * gz_read.c: reading a gzip source at random through its access points
 * (see gz.h).  One z_stream serves every read: reset, primed with a
 * point's bits and window, then run forward; the next read goes on from
 * there when its bytes come later before another point would be nearer.  A
 * member that is a BGZF block (its "BC" extra field gives its size, at
 * most 64 KiB) is read whole instead (in place from the file's mapping
 * while it is in memory, else with pread: see via_map in gz.h): jumped to,
 * it is inflated by docdex's decoder (inflate.h) only as far as the reads
 * ask (a random record needs half a block on average); come to in
 * sequence by reads in sequence, whole by libdeflate where it serves
 * (codec.h).  Its CRC is checked once it is inflated to its end.  The
 * member after it likewise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codec.h"
#include "err.h"
#include "fileutil.h"
#include "gz.h"
#include "gzcache.h"
#include "hash.h"
#include "inflate.h"
#include "le.h"

/* IN_SIZE: more than DDX_PACK_INPUT, as unpack_window needs.  SKIP_SIZE:
 * output skipped on the way to a record goes there, 256 KiB a call: 64 KiB
 * took 1.035 times as long a random passage from the 1 GiB generated
 * passages' .gz (paired runs, medians of 9; 1 MiB was no better). */
enum { IN_SIZE = DX_BGZF_MAX, SKIP_SIZE = 1 << 18 };

int dx__gzsrc_open(dx_gzsrc *g, int fd, const char *path, uint64_t csize, uint64_t usize,
                   const struct ddx_point *pts, uint64_t npts, const unsigned char *windows,
                   uint64_t windows_size, dx_err *err)
{
	memset(g, 0, sizeof *g);
	g->fd = fd;
	g->path = path;
	g->csize = csize;
	g->usize = usize;
	g->pts = pts;
	g->npts = npts;
	g->windows = windows;
	g->windows_size = windows_size;
	g->inbuf = malloc(IN_SIZE);
	g->window = malloc(2 * DDX_WINDOW);
	g->skip = malloc(SKIP_SIZE);
	g->own = dx__own_inflate_on() ? dx__inflate_new() : NULL;
	g->whole = dx__inflater_new();
	/* A byte past the largest block, for the call that checks that the
	 * stream ends with it (block_inflate). */
	g->blk = g->own ? malloc(DX_BGZF_MAX + 1) : NULL;
	g->fast = dx__raw_new();
	if (!g->inbuf || !g->window || !g->skip || (dx__own_inflate_on() && !(g->own && g->blk)) ||
	    (dx__libdeflate_on() && !g->whole) ||
	    (dx__isal_on() && !g->fast) ||
	    inflateInit2(&g->z, -15) != Z_OK) {
		dx__gzsrc_close(g);
		return dx__fail_nomem(err);
	}
	g->zinit = 1;
	/* Mapped as a plain corpus file is (see dx__map_file); where it cannot
	 * be, every read goes through pread, as with via_map unset. */
	if (csize) {
		void *m = dx__map_file(fd, (size_t)csize);
		g->map = m == MAP_FAILED ? NULL : m;
	}
	return 0;
}

void dx__gzsrc_close(dx_gzsrc *g)
{
	if (g->zinit)
		inflateEnd(&g->z);
	if (g->map)
		munmap((void *)(uintptr_t)g->map, (size_t)g->csize);
	free(g->inbuf);
	free(g->window);
	free(g->skip);
	free(g->blk);
	dx__inflate_free(g->own);
	dx__inflate_free(g->unpack);
	free(g->dict);
	dx__inflater_free(g->whole);
	dx__raw_free(g->fast);
	dx__buf_free(&g->out);
	dx__gzcache_close(g->cache);
	dx__buf_free(&g->cached);
	memset(g, 0, sizeof *g);
}

static int block_corrupt(dx_gzsrc *g, uint64_t off, dx_err *err)
{
	g->in_block = 0;
	return dx__fail(err, DX_EFORMAT, 0, g->path, "corrupt gzip data near compressed byte %llu",
	                (unsigned long long)off);
}

static int bad_crc(dx_gzsrc *g, dx_err *err)
{
	g->in_block = 0;
	return dx__fail(err, DX_EFORMAT, 0, g->path, "gzip CRC mismatch at compressed byte %llu",
	                (unsigned long long)(g->blk_next - DX_BGZF_TRAILER));
}

static int damaged(dx_gzsrc *g, dx_err *err, const char *what)
{
	return dx__fail(err, DX_ECORRUPT, 0, g->path, "cannot read the gzip corpus through its index (%s)",
	                what);
}

/* Whether the read under way takes the file's bytes in place from its
 * mapping (else with pread). */
static int in_place(const dx_gzsrc *g)
{
	return g->via_map && g->map;
}

/* The n bytes of the file at off (within it): in place in the mapping, or
 * read into buf.  NULL with err when pread fails; a fault on the mapping
 * is the caller's guard's (guard.h). */
static const unsigned char *file_bytes(dx_gzsrc *g, unsigned char *buf, size_t n, uint64_t off,
                                       dx_err *err)
{
	if (in_place(g))
		return g->map + off;
	return dx__pread_source(g->fd, g->path, buf, n, off, err) < 0 ? NULL : buf;
}

/* Loads compressed bytes from file offset off: up to IN_SIZE with pread,
 * or the rest of the file where it is mapped (as much as z's avail_in
 * counts). */
static int load(dx_gzsrc *g, uint64_t off, dx_err *err)
{
	if (off > g->csize)
		return damaged(g, err, "access point past the end of the file");
	uint64_t cap = in_place(g) ? UINT32_MAX : IN_SIZE;
	size_t want = (size_t)(g->csize - off < cap ? g->csize - off : cap);
	const unsigned char *in = file_bytes(g, g->inbuf, want, off, err);
	if (!in)
		return err->code;
	g->in = in;
	g->in_off = off;
	g->in_len = want;
	g->z.next_in = (Bytef *)(uintptr_t)in;
	g->z.avail_in = (uInt)want;
	return 0;
}

/* The block inflated to its end: checks its CRC.  0, or an error. */
static int block_done(dx_gzsrc *g, dx_err *err)
{
	if (dx__crc32(0, g->blk, g->blk_size) != g->blk_crc)
		return bad_crc(g, err);
	g->blk_in = NULL;
	return 0;
}

/* Inflates the block, from its start, whole, by ISA-L or else libdeflate:
 * 0, or an error. */
static int block_whole(dx_gzsrc *g, dx_err *err)
{
	if (g->fast ? dx__raw_prefix(g->fast, g->blk_in, g->blk_in_len, g->blk, g->blk_size, 1) < 0
	            : dx__inflate_whole(g->whole, g->blk_in, g->blk_in_len, g->blk, g->blk_size) < 0)
		return block_corrupt(g, g->blk_at, err);
	g->blk_len = g->blk_size;
	g->inflated += g->blk_size;
	return block_done(g, err);
}

/* Reads the member at file offset off as a BGZF block into g->blk: 1, or 0
 * when it is not one (another gzip member, or the end of the file: the
 * stream takes it), or an error.  A block come to in sequence, from the one
 * before, by reads that go on from each other, is inflated whole by ISA-L
 * or else libdeflate where they serve (codec.h; docdex's decoder takes 1.1
 * to 1.25 times as long a byte).  One jumped to, or come to by a read that
 * jumped to the block before (a random record running into it, or ending
 * the block before: it is read with the bytes after it, which the corpus
 * checks), is inflated as far as the reads ask: the generated documents'
 * BGZF file has a tenth of its records so, and random ones read in 0.89
 * of the time once that block was no longer inflated whole. */
static int block_at(dx_gzsrc *g, uint64_t off, int in_sequence, dx_err *err)
{
	if (!g->own || off >= g->csize)
		return 0;
	size_t want = g->csize - off < DX_BGZF_MAX ? (size_t)(g->csize - off) : DX_BGZF_MAX;
	if (want < DX_BGZF_HEADER + DX_BGZF_TRAILER)
		return 0;
	const unsigned char *b = file_bytes(g, g->inbuf, DX_BGZF_HEADER, off, err);
	if (!b)
		return err->code;
	size_t total = dx__bgzf_block_size(b, DX_BGZF_HEADER);
	if (!total)
		return 0;
	if (total > want)
		return damaged(g, err, "BGZF block past the end of the file");
	/* The rest of it follows the header, in the mapping as in inbuf. */
	if (!file_bytes(g, g->inbuf + DX_BGZF_HEADER, total - DX_BGZF_HEADER, off + DX_BGZF_HEADER, err))
		return err->code;
	g->blk_size = dx__le32(b + total - 4);
	g->blk_crc = dx__le32(b + total - 8);
	if (g->blk_size > DX_BGZF_MAX)
		return block_corrupt(g, off, err);
	g->blk_len = g->blk_pos = 0;
	g->blk_prefix = 0;
	g->blk_at = off;
	g->blk_read = g->reads;
	g->blk_next = off + total;
	g->in_block = 1;
	g->in_fast = 0; /* no ISA-L stream runs now: fast may inflate the block */
	dx__inflate_reset(g->own);
	dx__inflate_contiguous(g->own, g->blk);
	g->blk_in = b + DX_BGZF_HEADER;
	g->blk_in_len = total - DX_BGZF_HEADER - DX_BGZF_TRAILER;
	if (in_sequence && !g->jumped && (g->fast || g->whole) && block_whole(g, err) < 0)
		return err->code;
	return 1;
}

/* Inflates the block on to at least its byte upto (at most its size); at
 * its end, checks that it came to the size and CRC its trailer gives.
 * 0, or an error. */
static int block_inflate(dx_gzsrc *g, size_t upto, dx_err *err)
{
	/* A read that wants more of a block whose start ISA-L inflated: the
	 * block is inflated again from its start, where docdex's decoder
	 * still is (ISA-L's part cannot be gone on from).  So ISA-L takes the
	 * part only for reads at random, which seldom go on in the block they
	 * jumped to; a read that jumps after reads in order, or the first, may
	 * be the start of more in order, and docdex's decoder, which they go
	 * on with, takes it. */
	if (g->blk_prefix) {
		g->blk_prefix = 0;
		g->blk_len = 0;
	}
	if (g->blk_len == 0 && upto >= g->blk_size && (g->fast || g->whole))
		return block_whole(g, err);
	if (g->blk_len == 0 && upto > 0 && upto < g->blk_size && g->fast && g->jumped && g->jumped_before) {
		if (dx__raw_prefix(g->fast, g->blk_in, g->blk_in_len, g->blk, upto, 0) < 0)
			return block_corrupt(g, g->blk_at, err);
		g->blk_len = upto;
		g->inflated += upto;
		g->blk_prefix = 1;
		return 0;
	}
	unsigned char *out = g->blk + g->blk_len;
	/* Room to the block's end, stopping once upto is out. */
	size_t room = g->blk_size - g->blk_len;
	dx__inflate_stop_at(g->own, upto < g->blk_size ? g->blk + upto : NULL);
	int r = dx__inflate_run(g->own, &g->blk_in, &g->blk_in_len, &out, &room, 1, DX_INF_NO_STOP);
	size_t got = (size_t)(out - (g->blk + g->blk_len));
	g->blk_len += got;
	g->inflated += got;
	/* Its last byte out, the stream must end there: a call with room for
	 * one byte more says whether it does. */
	if (r == DX_INF_MORE && g->blk_len == g->blk_size) {
		unsigned char *x = g->blk + g->blk_len;
		size_t one = 1;
		r = dx__inflate_run(g->own, &g->blk_in, &g->blk_in_len, &x, &one, 1, DX_INF_NO_STOP);
		if (one == 0)
			return block_corrupt(g, g->blk_at, err);
	}
	if (r == DX_INF_MORE && got)
		return 0;
	if (r != DX_INF_END || g->blk_len != g->blk_size || g->blk_in_len != 0)
		return block_corrupt(g, g->blk_at, err);
	return block_done(g, err);
}

/* The member at file offset off, come to from the one before or jumped to:
 * a BGZF block, or else streamed through z from its header. */
static int member_at(dx_gzsrc *g, uint64_t off, int in_sequence, dx_err *err)
{
	int r = block_at(g, off, in_sequence, err);
	if (r != 0)
		return r < 0 ? r : 0;
	g->in_block = 0;
	g->in_fast = 0;
	inflateReset2(&g->z, 15 + 16);
	g->raw = 0;
	return load(g, off, err);
}

/*
 * The last point at or before uncompressed offset off (0 when none is).
 * Points lie about evenly (a BGZF block, or a span, apart): the search
 * starts where the average stretch puts off and widens from there by
 * doubling steps, so that it reads a few neighbouring points rather than
 * the dozen scattered ones of a binary search over them all, which was a
 * tenth of a read served by the inflate cache.  Points out of order (a
 * damaged index) give some point, which the caller checks.
 */
static uint64_t point_for(const dx_gzsrc *g, uint64_t off)
{
	uint64_t n = g->npts, lo = 0, hi = n, step = 1;
	/* In doubles, converted only when in range. */
	double at = g->usize ? (double)off * (double)n / (double)g->usize : 0;
	uint64_t guess = at < (double)n ? (uint64_t)at : n - 1;
	if (g->pts[guess].uoff <= off) {
		lo = guess;
		while (step < n - lo && g->pts[lo + step].uoff <= off) {
			lo += step;
			step *= 2;
		}
		hi = step < n - lo ? lo + step : n;
	} else {
		hi = guess;
		while (step <= hi && g->pts[hi - step].uoff > off) {
			hi -= step;
			step *= 2;
		}
		lo = step <= hi ? hi - step : 0;
	}
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (g->pts[mid].uoff <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The raw stream goes on from the input loaded (z's) with the given window,
 * bits of byte unread before it: by ISA-L where it serves, else by z. */
static int stream_from(dx_gzsrc *g, const unsigned char *window, size_t wlen, unsigned bits, unsigned char byte,
                       dx_err *err)
{
	if (g->fast) {
		if (dx__raw_start(g->fast, window, wlen, bits, byte) < 0)
			return damaged(g, err, "bad window");
		g->in_fast = 1;
		return 0;
	}
	inflateReset2(&g->z, -15);
	if (bits)
		inflatePrime(&g->z, bits, byte >> (8 - bits));
	if (wlen)
		inflateSetDictionary(&g->z, window, wlen);
	return 0;
}

/* Whether point p's window lies within the windows section and is no
 * longer than a window. */
static int window_fits(const dx_gzsrc *g, const struct ddx_point *p)
{
	return p->window_len <= DDX_WINDOW && p->window_off <= g->windows_size &&
	       p->window_clen <= g->windows_size - p->window_off;
}

/* Inflates point p's window (its whole deflate stream) by g->unpack into
 * out, with room bytes there, after history from base on (NULL: none):
 * the bytes it gave, or -1 when the stream is bad, longer than room or not
 * all of window_clen. */
static int64_t own_window(dx_gzsrc *g, const struct ddx_point *p, unsigned char *base, unsigned char *out,
                          size_t room)
{
	const unsigned char *in = g->windows + p->window_off;
	unsigned char *o = out;
	size_t avail = p->window_clen;
	dx__inflate_reset(g->unpack);
	if (base)
		dx__inflate_contiguous(g->unpack, base);
	if (dx__inflate_run(g->unpack, &in, &avail, &o, &room, 1, DX_INF_NO_STOP) != DX_INF_END || avail)
		return -1;
	return o - out;
}

/* The packed windows' dictionary, the window of the source's first point
 * where it is flagged so (index_format.h), else none (dict_len 0), into
 * g->dict, ending at g->dict + DDX_WINDOW: the bytes of a window go after
 * it, and inflate with it before them as history. */
static int read_dict(dx_gzsrc *g, dx_err *err)
{
	/* A byte more, for the check that a window's bytes end there. */
	if (!(g->dict = malloc(2 * DDX_WINDOW + 1)))
		return dx__fail_nomem(err);
	const struct ddx_point *p = g->npts ? &g->pts[0] : NULL;
	g->dict_len = 0;
	if (!p || !(p->flags & DDX_POINT_DICT))
		return 0;
	int rc = 0;
	if (!window_fits(g, p)) {
		rc = damaged(g, err, "bad access point");
	} else if (g->check && g->check(g->check_ctx, p->window_off, p->window_clen, err) < 0) {
		rc = err->code;
	} else {
		/* With room for more, so that the stream's end is read. */
		unsigned char *start = g->dict + DDX_WINDOW - p->window_len;
		if (own_window(g, p, NULL, start, (size_t)(g->dict + 2 * DDX_WINDOW + 1 - start)) != p->window_len)
			rc = damaged(g, err, "bad dictionary");
	}
	if (rc) {
		free(g->dict);
		g->dict = NULL;
		return rc;
	}
	g->dict_len = p->window_len;
	g->inflated += g->dict_len;
	return 0;
}

/*
 * A packed window (DDX_POINT_PACKED, index_format.h) into g->window: its
 * bytes inflated, then put in their places, which inflating the output
 * after the point, up to 32 KiB of it, with a lazy window marks (inflate.h):
 * in their order in the window, once that output is inflated, or in the
 * order it first reads them, as it reads them (first_use_order); the
 * window's other bytes are zero, as in a sparse one.  The compressed data
 * after the point is the input loaded (z's), left where it is for the
 * stream that then starts there.  (docdex's decoder cannot hand the stream
 * over at once: ISA-L and zlib start at a block boundary, and the first
 * after those 32 KiB came 100 KiB further on and more in the generated
 * passages' .gz.)
 */
static int unpack_window(dx_gzsrc *g, const struct ddx_point *p, unsigned char byte, dx_err *err)
{
	if (!g->unpack && !(g->unpack = dx__inflate_new()))
		return dx__fail_nomem(err);
	if (!g->dict && read_dict(g, err) < 0)
		return err->code;
	if ((p->flags & DDX_POINT_DICT) && !g->dict_len)
		return damaged(g, err, "no dictionary");
	/* The bytes, after the dictionary, with it as history where they use
	 * it; with room for more than a window's bytes, so that the stream's
	 * end is read. */
	unsigned char *bytes = g->dict + DDX_WINDOW;
	unsigned char *base = p->flags & DDX_POINT_DICT ? bytes - g->dict_len : bytes;
	int64_t got = own_window(g, p, base, bytes, DDX_WINDOW + 1);
	if (got <= 0 || got > p->window_len)
		return damaged(g, err, "bad window");
	size_t n = (size_t)got;
	const unsigned char *in = g->z.next_in;
	size_t avail = g->z.avail_in, room = DDX_WINDOW;
	unsigned char *o = g->window + p->window_len;
	int final = g->in_off + g->in_len == g->csize;
	int mode = g->first_use_order ? DX_LAZY_FILL : DX_LAZY_MARK;
	dx__inflate_reset(g->unpack);
	if (p->bits)
		dx__inflate_prime(g->unpack, p->bits, byte >> (8 - p->bits));
	memset(g->window, 0, p->window_len);
	if (dx__inflate_lazy(g->unpack, mode, g->window, p->window_len, bytes, n) < 0)
		return dx__fail_nomem(err);
	int r = dx__inflate_run(g->unpack, &in, &avail, &o, &room, final, DX_INF_NO_STOP);
	if (dx__inflate_lazy_end(g->unpack) != (int64_t)n || r < 0 || (room && r != DX_INF_END))
		return damaged(g, err, "bad window");
	if (mode == DX_LAZY_MARK)
		dx__inflate_lazy_scatter(g->unpack, g->window, bytes);
	g->inflated += n + DDX_WINDOW - room;
	return 0;
}

/* Positions the stream at point i. */
static int start_at(dx_gzsrc *g, uint64_t i, dx_err *err)
{
	const struct ddx_point *p = &g->pts[i];
	g->live = 0;
	g->in_block = 0;
	g->in_fast = 0;
	int packed = (p->flags & DDX_POINT_PACKED) != 0;
	if (p->uoff > g->usize || !window_fits(g, p) || p->bits > 7 || (p->bits && p->coff == 0) ||
	    (packed && ((p->flags & DDX_POINT_MEMBER) || !p->window_len)))
		return damaged(g, err, "bad access point");
	if (p->flags & DDX_POINT_MEMBER) {
		/* A member from its header: zlib reads the header and checks the
		 * CRC, or the member is a BGZF block. */
		if (member_at(g, p->coff, 0, err) < 0)
			return err->code;
	} else {
		/* The window first, through the same stream. */
		if (p->window_len && g->check && g->check(g->check_ctx, p->window_off, p->window_clen, err) < 0)
			return err->code;
		if (p->window_len && !packed) {
			/* libdeflate where it serves: zlib's inflate of the
			 * window was a tenth of a random record's time. */
			const unsigned char *w = g->windows + p->window_off;
			int r;
			if (g->whole) {
				r = dx__inflate_whole(g->whole, w, p->window_clen, g->window, p->window_len);
			} else {
				inflateReset2(&g->z, -15);
				g->z.next_in = (unsigned char *)w;
				g->z.avail_in = p->window_clen;
				g->z.next_out = g->window;
				g->z.avail_out = p->window_len;
				r = inflate(&g->z, Z_FINISH) == Z_STREAM_END && !g->z.avail_out ? 0 : -1;
			}
			if (r < 0)
				return damaged(g, err, "bad window");
			g->inflated += p->window_len;
		}
		inflateReset2(&g->z, -15);
		g->raw = 1;
		if (load(g, p->coff - (p->bits ? 1 : 0), err) < 0)
			return err->code;
		unsigned char byte = 0;
		if (p->bits) {
			if (g->z.avail_in == 0)
				return damaged(g, err, "access point past the end of the file");
			byte = g->z.next_in[0];
			g->z.next_in++;
			g->z.avail_in--;
		}
		if ((packed && unpack_window(g, p, byte, err) < 0) ||
		    stream_from(g, g->window, p->window_len, p->bits, byte, err) < 0)
			return err->code;
	}
	g->cur = p->uoff;
	g->live = 1;
	return 0;
}

/* After the end of a member's deflate data: its 8-byte trailer (read by
 * zlib, or by ISA-L, from the member's header on; left unread where the
 * member was entered raw, at a window's point), then the next member's
 * header. */
static int next_member(dx_gzsrc *g, dx_err *err)
{
	uint64_t at = g->in_off + (uint64_t)(g->z.next_in - g->in);
	if (g->in_fast)
		at -= dx__raw_unused(g->fast);
	else if (g->raw)
		at -= dx__zlib_unused_bytes(&g->z);
	if (g->raw)
		at += 8;
	return member_at(g, at, 1, err);
}

/* Takes up to n bytes of the block (into dst unless NULL); at its end, moves
 * to the member after it.  The bytes taken, or an error. */
static int64_t from_block(dx_gzsrc *g, unsigned char *dst, uint64_t n, dx_err *err)
{
	if (g->blk_pos == g->blk_len && g->blk_in) {
		/* As far as the read under way ends, in one call (its skip and
		 * its bytes together): each call's return costs a copy of the
		 * history.  A block that a later read comes back to is being
		 * read in sequence: the rest of it then, in one call more. */
		uint64_t need = g->read_end > g->cur ? g->read_end - g->cur : n;
		size_t upto = g->blk_read == g->reads && need < g->blk_size - g->blk_pos
		                      ? g->blk_pos + (size_t)need
		                      : g->blk_size;
		if (block_inflate(g, upto, err) < 0)
			return err->code;
	}
	if (g->blk_pos == g->blk_len) {
		if (g->blk_next >= g->csize)
			return damaged(g, err, "record past the end of the compressed data");
		return member_at(g, g->blk_next, 1, err) < 0 ? err->code : 0;
	}
	size_t step = g->blk_len - g->blk_pos < n ? g->blk_len - g->blk_pos : (size_t)n;
	if (dst)
		memcpy(dst, g->blk + g->blk_pos, step);
	g->blk_pos += step;
	g->cur += step;
	return (int64_t)step;
}

static int corrupt(dx_gzsrc *g, dx_err *err)
{
	g->live = 0;
	return dx__fail(err, DX_EFORMAT, 0, g->path, "corrupt gzip data near compressed byte %llu",
	                (unsigned long long)(g->in_off + (uint64_t)(g->z.next_in - g->in)));
}

/* Takes up to step bytes from the ISA-L stream (into dst unless NULL); at
 * its end, moves to the member after it.  The bytes taken, or an error. */
static int64_t from_fast(dx_gzsrc *g, unsigned char *dst, size_t step, dx_err *err)
{
	const unsigned char *in = g->z.next_in;
	size_t avail = g->z.avail_in, room = step;
	int r = dx__raw_run(g->fast, &in, &avail, dst ? dst : g->skip, &room);
	size_t used = g->z.avail_in - avail, got = step - room;
	g->z.next_in = (unsigned char *)in;
	g->z.avail_in = (uInt)avail;
	g->cur += got;
	g->inflated += got;
	if (r < 0)
		return corrupt(g, err);
	if (r == 1 && next_member(g, err) < 0)
		return err->code;
	/* No progress: more input was needed, and there is none. */
	if (r == 0 && got == 0 && used == 0)
		return damaged(g, err, "record past the end of the compressed data");
	return (int64_t)got;
}

/* Produces exactly n bytes into dst, or into the skip buffer when dst is NULL. */
static int pump(dx_gzsrc *g, unsigned char *dst, uint64_t n, dx_err *err)
{
	while (n) {
		uint64_t cap = dst ? 1u << 30 : SKIP_SIZE;
		size_t step = (size_t)(n < cap ? n : cap);
		if (!g->in_block && g->z.avail_in == 0 &&
		    load(g, g->in_off + (uint64_t)(g->z.next_in - g->in), err) < 0)
			return err->code;
		/* A whole block, or ISA-L's stream: each says what it took. */
		if (g->in_block || g->in_fast) {
			int64_t got = g->in_block ? from_block(g, dst, n, err) : from_fast(g, dst, step, err);
			if (got < 0)
				return (int)got;
			n -= (uint64_t)got;
			if (dst)
				dst += got;
			continue;
		}
		g->z.next_out = dst ? dst : g->skip;
		g->z.avail_out = (uInt)step;
		uInt in_before = g->z.avail_in;
		/* A member from its header: z reads the header (as the scan's z
		 * did), and ISA-L the data and the trailer.  Every read of a file
		 * of many small members starts so: 5,000 random passages from 257
		 * gzip members of 1 MiB took 0.38 of the time z took. */
		int header = g->fast && !g->raw;
		int r = inflate(&g->z, header ? Z_BLOCK : Z_NO_FLUSH);
		if (header && r == Z_OK && (g->z.data_type & 128)) {
			dx__raw_start_member(g->fast);
			g->in_fast = 1;
			continue;
		}
		size_t got = step - g->z.avail_out;
		g->cur += got;
		g->inflated += got;
		n -= got;
		if (dst)
			dst += got;
		if (r == Z_STREAM_END) {
			if (next_member(g, err) < 0)
				return err->code;
			if (n && !g->in_block && g->z.avail_in == 0)
				return damaged(g, err, "record past the end of the compressed data");
		} else if (r == Z_BUF_ERROR && got == 0) {
			/* No progress: more input is needed, and there must be some. */
			if (g->z.avail_in != 0 || in_before != 0 || g->in_off + g->in_len >= g->csize)
				return damaged(g, err, "record past the end of the compressed data");
		} else if (r != Z_OK && r != Z_BUF_ERROR) {
			return corrupt(g, err);
		}
	}
	return 0;
}

static int read_direct(dx_gzsrc *g, uint64_t off, uint64_t len, const char **data, dx_err *err)
{
	g->reads++;
	g->read_end = off + len;
	uint64_t i = point_for(g, off);
	/* The last read's end may be this one's start (a record is read with
	 * the bytes after it, where the next record starts): those are kept,
	 * and the stream goes on after them. */
	uint64_t keep = 0;
	g->jumped_before = g->jumped;
	g->jumped = 0;
	if (g->live && off < g->cur && g->cur - off <= g->out.len && off + len >= g->cur) {
		keep = g->cur - off;
	/* Going on is cheaper than starting again when no point lies between. */
	} else if (!(g->live && g->cur <= off && g->pts[i].uoff <= g->cur)) {
		g->jumped = 1;
		if (start_at(g, i, err) < 0)
			return err->code;
	}
	g->live = 0;
	size_t had = g->out.len;
	g->out.len = 0;
	if (dx__buf_reserve(&g->out, len + 1) < 0)
		return dx__fail_nomem(err);
	memmove(g->out.p, g->out.p + had - keep, keep);
	if (pump(g, NULL, off + keep - g->cur, err) < 0 ||
	    pump(g, (unsigned char *)g->out.p + keep, len - keep, err) < 0)
		return err->code;
	g->out.len = len;
	g->live = 1;
	*data = g->out.p;
	return 0;
}

/* Where the stretch from point i ends: at the next point. */
static uint64_t stretch_end(const dx_gzsrc *g, uint64_t i)
{
	return i + 1 < g->npts ? g->pts[i + 1].uoff : g->usize;
}

/*
 * Each stretch the bytes lie in, from the cache where it holds them, else
 * inflated and offered to it.  A cache with a slot for every stretch keeps
 * whatever it is given, so a stretch is inflated whole, once.  A smaller
 * one evicts stretches, so a miss inflates from the point to the bytes'
 * end, as without the cache, and offers that much, the stretch growing in
 * the cache as later records ask for more of it: inflating whole made such
 * a cache slower than none (1,396 against 2,146 samples/s, 256 MiB for
 * 1 GiB of passages), and this about as fast (but 27% slower with 3 GiB
 * for 12 GiB: storing has its cost).  A BGZF block likewise: inflated
 * whole (by libdeflate) on every miss, a cache of 256 MiB made 1 GiB of
 * documents slower to read at random than none (13,957 against 18,909 a
 * second, one worker), and as far as the record 17,532.  Records of a
 * batch in file order go on from where the last read stopped (read_direct
 * keeps its bytes).
 */
static int read_cached(dx_gzsrc *g, uint64_t off, uint64_t len, const char **data, dx_err *err)
{
	if (dx__buf_reserve(&g->cached, len + 1) < 0)
		return dx__fail_nomem(err);
	for (uint64_t at = off, end = off + len; at < end;) {
		uint64_t i = point_for(g, at), from = g->pts[i].uoff, to = stretch_end(g, i);
		if (from > at || to <= at || to > g->usize)
			return damaged(g, err, "bad access point");
		uint64_t n = (end < to ? end : to) - at;
		char *dst = g->cached.p + (at - off);
		if (!dx__gzcache_get(g->cache, i, at - from, (size_t)n, dst)) {
			const char *s;
			int whole = dx__gzcache_slots(g->cache) >= g->npts;
			uint64_t upto = whole ? to - from : at + n - from;
			if (read_direct(g, from, upto, &s, err) < 0)
				return err->code;
			dx__gzcache_put(g->cache, i, s, (size_t)upto);
			memcpy(dst, s + (at - from), (size_t)n);
		}
		at += n;
	}
	*data = g->cached.p;
	return 0;
}

int dx__gzsrc_read(dx_gzsrc *g, uint64_t off, uint64_t len, const char **data, dx_err *err)
{
	if (g->npts == 0 || off > g->usize || len > g->usize - off)
		return damaged(g, err, "record beyond the uncompressed size");
	if (g->cache && len)
		return read_cached(g, off, len, data, err);
	return read_direct(g, off, len, data, err);
}

/* Stretches larger than this are not cached: an index built with a span of
 * many MiB is for sequential reads. */
enum { CACHE_STRETCH_MAX = 64 << 20 };

int dx__gzsrc_cache(dx_gzsrc *g, const char *dir, uint64_t bytes, uint64_t fingerprint,
                    dx_err *err)
{
	dx__gzcache_close(g->cache);
	g->cache = NULL;
	if (!bytes || !g->npts)
		return 0;
	uint64_t slot = 0;
	for (uint64_t i = 0; i < g->npts; i++) {
		uint64_t from = g->pts[i].uoff, to = stretch_end(g, i);
		if (to > from && to - from > slot)
			slot = to - from;
	}
	if (slot > CACHE_STRETCH_MAX)
		return dx__fail(err, DX_EINVAL, 0, g->path, "stretches between access points of up to "
		                "%llu bytes, too large for the inflate cache (index with a smaller --span)",
		                (unsigned long long)slot);
	/* Named after what its stretches are: the source as indexed, and
	 * where its points lie. */
	uint64_t id[4] = { fingerprint, g->csize, g->usize, g->npts };
	uint64_t fp = dx__hash64(g->pts, g->npts * sizeof *g->pts, dx__hash64(id, sizeof id, 0));
	g->cache = dx__gzcache_open(dir, fp, bytes, slot, err);
	return g->cache ? 0 : err->code;
}

int dx__gzsrc_resident(const dx_gzsrc *g, uint64_t off)
{
	if (!g->map || !g->npts)
		return 0;
	uint64_t at = g->pts[point_for(g, off)].coff;
	return at < g->csize && dx__map_resident(g->map, at);
}

void dx__gzsrc_prefetch(const dx_gzsrc *g, uint64_t off, uint64_t len)
{
	if (!g->npts)
		return;
	uint64_t i = point_for(g, off), j = point_for(g, off + len);
	uint64_t from = g->pts[i].coff ? g->pts[i].coff - 1 : 0; /* its bits start a byte early */
	uint64_t to = j + 1 < g->npts ? g->pts[j + 1].coff : g->csize;
	if (to > from)
		posix_fadvise(g->fd, (off_t)from, (off_t)(to - from), POSIX_FADV_WILLNEED);
}
