/*
 * gz.h: gzip sources (internal).  A corpus file may be plain, gzip (one
 * member or several) or BGZF; records are found by their offsets in the
 * uncompressed stream.
 *
 * dx_gzin decompresses a whole file for a scan, checking every member's
 * CRC, and meanwhile lays access points: at each member start of a BGZF
 * file (or of a multi-member file, at most every 64 KiB), and in any
 * member at the first deflate block boundary after every `span` bytes of
 * output.  A point inside a member needs the 32 KiB of output before it as
 * dictionary; only the bytes that the following matches really reach are
 * kept, in the order they are first reached (a packed window: docdex's
 * decoder tells them, dx__inflate_lazy in inflate.h), proven by inflating
 * with them, and stored deflated.
 *
 * dx_gzsrc reads records at random from a gzip source through its points.
 */
#ifndef DX_GZ_H
#define DX_GZ_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "buf.h"
#include "docdex.h"
#include "index_format.h"

/* DX_SOURCE_GZIP or DX_SOURCE_BGZF for the first bytes of a gzip file,
 * 0 for anything else. */
int dx__gz_kind(const unsigned char *p, size_t n);

/* A BGZF block: a gzip header whose one extra subfield, "BC", holds the
 * block's size less 1; at most 64 KiB, and as much content (SAM spec 4.1). */
enum { DX_BGZF_HEADER = 18, DX_BGZF_TRAILER = 8, DX_BGZF_MAX = 1 << 16 };
/* The size of the BGZF block whose header starts at p (n bytes there), or
 * 0 when it is not one that can be inflated whole. */
size_t dx__bgzf_block_size(const unsigned char *p, size_t n);

/* At the end of a raw DEFLATE stream, the whole bytes zlib took from the
 * input but did not use: the low six bits of data_type count the unused
 * bits it holds.  What follows the stream starts that far before next_in. */
static inline unsigned dx__zlib_unused_bytes(const z_stream *z)
{
	return (unsigned)(z->data_type & 63) >> 3;
}

typedef struct dx_gzin {
	int fd;
	const char *path;
	int kind;                 /* DX_SOURCE_GZIP or _BGZF */
	z_stream z, zw;           /* the stream, and one for proving windows */
	struct dx_deflater *wdeflate; /* compresses the windows */
	struct dx_inflater *blocks; /* BGZF blocks inflated whole, where
	                             libdeflate serves (codec.h); else NULL */
	struct dx_inflate *own;   /* inflates the members' data (inflate.h)
	                             but under DOCDEX_CODEC=zlib: NULL then,
	                             and zlib does */
	unsigned char *in;        /* compressed input */
	size_t in_cap;
	uint64_t in_off;          /* file offset of in[0] */
	int in_eof;
	int at_member;            /* between members: a header comes next */
	int raw;                  /* past the member's header: its DEFLATE
	                             data is inflated raw, its length checked
	                             here and its CRC-32 by dx__gzin_check
	                             (ISA-L's or libdeflate's CRC, where
	                             they serve, is several times zlib's
	                             speed) */
	uint32_t isize;           /* of the member's data so far */
	int ended;                /* nothing follows the last member */
	uint64_t uout;            /* uncompressed bytes produced */
	uint64_t member_u;        /* uncompressed offset of the current member */
	/* Access points, when collecting them.  The inflating thread
	 * (dx__gzin_read) lays them and queues them; the thread that takes
	 * its output packs their windows and stores them
	 * (dx__gzin_settle), so that this work, a fifth of the build, is off
	 * the inflate's path. */
	uint64_t span;            /* 0: no points */
	int packed;               /* their windows packed, else sparse */
	/* Packed windows are deflated with the first 32 KiB of the content as
	 * dictionary (index_format.h): kept by the inflating thread, stored
	 * as the first point's window with the first packed window that uses
	 * it. */
	unsigned char dict[DDX_WINDOW];
	size_t dict_len;
	uint64_t npacked;         /* packed windows so far */
	z_stream zd;              /* deflates packed windows with it */
	int zd_init;
	uint64_t last_point;
	/* Where the next point is due: a span after the one before was due,
	 * not after where it fell (gz_scan.c, next_due). */
	uint64_t point_due;
	pthread_mutex_t jobs_lock;
	struct gz_job *jobs, *jobs_last; /* queued, oldest first */
	dx_buf points;            /* struct ddx_point[], settled */
	dx_buf windows;           /* their compressed windows */
	unsigned char ring[DDX_WINDOW]; /* the last output */
	size_t ring_len;
	struct gz_job *pend;      /* a point waiting for the output after it */
	/* The members' CRC-32s are checked by the thread that takes the
	 * output too (dx__gzin_check): the inflating thread queues where each
	 * member's data ends and the CRC its trailer gives (6% of its time
	 * went to the CRC).  An error met after a member's end in one read
	 * waits for the next read, so that the bytes up to that end are
	 * checked first, and a CRC mismatch is told before what follows it. */
	struct gz_crc *crcs;      /* queued, under jobs_lock: [crc_head, ncrc) */
	size_t ncrc, crc_cap, crc_head;
	uint64_t crc_upos;        /* output bytes checked so far */
	uint32_t crc_run;         /* CRC-32 of the member's bytes checked so far */
	int deferred;             /* an error kept for the next read, in deferred_err */
	dx_err deferred_err;
	unsigned char *scratch;   /* 4 * DDX_WINDOW for packing windows (settling) */
	struct dx_inflate *wown;  /* packs them, and proves them where docdex's
	                             decoder serves */
	char warning[256];        /* set when garbage follows the last member */
} dx_gzin;

/* Starts decompressing fd (at offset 0); span 0 lays no points. */
int dx__gzin_open(dx_gzin *g, int fd, const char *path, int kind, uint64_t span, dx_err *err);
/* Reads up to cap uncompressed bytes: the count, 0 at the end, or an error. */
int64_t dx__gzin_read(dx_gzin *g, char *out, size_t cap, dx_err *err);
/* Checks the members' CRC-32s over the next n bytes that dx__gzin_read
 * gave (p, in order; n 0 at the end): 0, or an error.  In the thread that
 * takes the output, before it reads those bytes, at the same time as
 * dx__gzin_read runs in another. */
int dx__gzin_check(dx_gzin *g, const char *p, size_t n, dx_err *err);
/* Stores the points queued so far into points and windows, in order: 0,
 * or an error.  May run in another thread than dx__gzin_read, at the same
 * time; once more after the last read, before points is taken. */
int dx__gzin_settle(dx_gzin *g, dx_err *err);
void dx__gzin_close(dx_gzin *g);

/* Random access into one gzip source. */
typedef struct dx_gzsrc {
	int fd;
	const char *path;
	uint64_t csize, usize;
	const struct ddx_point *pts; /* from the index */
	uint64_t npts;
	const unsigned char *windows;
	uint64_t windows_size;
	z_stream z;
	int zinit;
	int raw;                  /* inside a member, without its header */
	/* The file mapped (NULL where it could not be): a read with via_map
	 * set takes its compressed bytes there in place, where the others
	 * copy them into inbuf with pread.  corpus.c sets via_map for each
	 * read as it goes for plain records (its access, and whether the
	 * pages were in memory when probed). */
	const unsigned char *map;
	int via_map;
	unsigned char *inbuf;
	const unsigned char *in;  /* the input loaded: in inbuf or the mapping */
	size_t in_len;            /* bytes loaded */
	uint64_t in_off;          /* file offset of in[0] */
	uint64_t cur;             /* uncompressed offset of the next output byte */
	int live;                 /* the stream can go on from cur */
	unsigned char *window;    /* a point's window decompressed (DDX_WINDOW), then room
	                             for as much output after it (a packed one's) */
	unsigned char *skip;      /* output that is not wanted */
	dx_buf out;               /* the bytes asked for last: [cur - out.len, cur) */
	/* A member that is a BGZF block is inflated into blk: by docdex's
	 * decoder (inflate.h) as far as the reads ask, its first part by
	 * ISA-L for reads at random where it serves (fast, below), or whole
	 * by ISA-L or else libdeflate when
	 * come to in sequence by reads in sequence (codec.h; whole is NULL
	 * where it does not serve).  Under DOCDEX_CODEC=zlib own is NULL too,
	 * and z streams it. */
	struct dx_inflate *own;
	struct dx_inflater *whole;
	struct dx_inflate *unpack; /* puts packed windows' bytes in place */
	unsigned char *dict;      /* the packed windows' dictionary, then room
	                             for a window's bytes (read_dict) */
	size_t dict_len;          /* once read (dict not NULL) */
	int first_use_order;      /* packed windows as index format version 3
	                             keeps them (set by the opener) */
	unsigned char *blk;       /* its content, up to 64 KiB */
	size_t blk_size;          /* its size, from its trailer */
	size_t blk_len, blk_pos;  /* the bytes inflated, and where the next is */
	const unsigned char *blk_in; /* its deflate data not yet read (in in),
	                              * NULL once inflated to its end */
	size_t blk_in_len;
	uint32_t blk_crc;         /* its CRC, from its trailer */
	uint64_t blk_at;          /* its file offset */
	uint64_t blk_read;        /* the read that began inflating it */
	int blk_prefix;           /* blk_len bytes of it came from ISA-L, and own
	                             is still at its start */
	uint64_t reads;           /* reads so far (dx__gzsrc_read calls) */
	uint64_t read_end;        /* where the read under way ends */
	int jumped;               /* it began at a point, not where the last one
	                             stopped */
	int jumped_before;        /* and so did the read before it: reads at
	                             random, which do not go on from each other */
	uint64_t blk_next;        /* the file offset of the member after it */
	int in_block;             /* output comes from blk, not from z */
	/* The raw stream from an access point, and a member's data once z
	 * has read its header, are run by ISA-L where it serves (codec.h;
	 * fast is NULL elsewhere), z keeping the input's place: */
	struct dx_raw *fast;
	int in_fast;              /* output comes from fast, not from z */
	/* Called on a window's bytes in the index before they are used. */
	int (*check)(void *ctx, uint64_t off, uint64_t len, dx_err *err);
	void *check_ctx;
	/* The stretches between points shared with other processes
	 * (gzcache.h), where asked for; a read through it lands in cached. */
	struct dx_gzcache *cache;
	dx_buf cached;
	uint64_t inflated;        /* bytes inflated, windows included */
} dx_gzsrc;

int dx__gzsrc_open(dx_gzsrc *g, int fd, const char *path, uint64_t csize, uint64_t usize,
                   const struct ddx_point *pts, uint64_t npts, const unsigned char *windows,
                   uint64_t windows_size, dx_err *err);
void dx__gzsrc_close(dx_gzsrc *g);

/*
 * The uncompressed bytes [off, off + len): *data points into g's buffer,
 * valid until the next call.  Goes on from where the last read stopped when
 * that is on the way, else starts from the last access point before off.
 */
int dx__gzsrc_read(dx_gzsrc *g, uint64_t off, uint64_t len, const char **data, dx_err *err);
/* Serves reads through the inflate cache shared by the processes that
 * read this source (gzcache.h) in dir, made at bytes bytes where it has to
 * be; bytes 0 closes it.  fingerprint is the source's, as indexed.  0, or
 * an error (DX_EINVAL: stretches too large for the cache, or it too small
 * for one; DX_ECORRUPT, DX_ESYS: see dx__gzcache_open); without a cache
 * then. */
int dx__gzsrc_cache(dx_gzsrc *g, const char *dir, uint64_t bytes, uint64_t fingerprint,
                    dx_err *err);
/* Asks the kernel to read ahead the compressed bytes that reading
 * [off, off + len) will inflate: from the access point before it to the
 * first after it (posix_fadvise WILLNEED; nothing waits). */
void dx__gzsrc_prefetch(const dx_gzsrc *g, uint64_t off, uint64_t len);
/* Whether the page of the compressed file where reading off would start
 * (at its access point) is in memory (mincore); 0 without the mapping. */
int dx__gzsrc_resident(const dx_gzsrc *g, uint64_t off);

#endif
