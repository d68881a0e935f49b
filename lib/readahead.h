/*
 * readahead.h: reading a corpus file's content (plain, or inflated) in a
 * second thread, a few chunks ahead of the scan (internal).  The copy out
 * of the page cache, or the inflating, then overlaps the parsing.
 *
 * Each chunk has headroom before its data, into which the scan moves the
 * unfinished record of the chunk before, so that records are contiguous
 * without copying whole chunks.
 */
#ifndef DX_READAHEAD_H
#define DX_READAHEAD_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "docdex.h"

/* Fills buf with up to cap bytes: the count, 0 at the end, or a DX_E* code;
 * *pos is set to how far into the file it has read. */
typedef int64_t (*dx_fill_fn)(void *ctx, char *buf, size_t cap, uint64_t *pos, dx_err *err);

enum { DX_RA_CHUNKS = 3, DX_RA_ALIGN = 4096 };

typedef struct dx_chunk {
	char *mem;            /* headroom, then data */
	size_t len;           /* bytes of data */
	int last;             /* the end of the file, or an error, follows */
	int rc;               /* DX_E* code when the fill failed */
	uint64_t pos;         /* file bytes read once it was filled */
	dx_err err;
} dx_chunk;

typedef struct dx_readahead {
	dx_fill_fn fill;
	void *ctx;
	size_t head, size;    /* headroom and data bytes of every chunk */
	dx_chunk chunk[DX_RA_CHUNKS];
	/* Chunks filled, taken and given back, counting from 0: the one taken
	 * last stays the scan's until it asks for the next. */
	unsigned filled, taken, released;
	int stop;             /* the scan is done with the file */
	int threaded, locks;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
} dx_readahead;

/* Starts reading; without a thread (none could be started) chunks are
 * filled when taken.  Each chunk's memory is aligned to DX_RA_ALIGN, its
 * data too when head is a multiple of it.  Returns 0 or DX_ENOMEM. */
int dx__ra_start(dx_readahead *ra, dx_fill_fn fill, void *ctx, size_t head, size_t size, dx_err *err);

/* The next chunk, in order, once filled; valid until the next call. */
dx_chunk *dx__ra_next(dx_readahead *ra);

/* Stops the thread (at any point) and frees the chunks. */
void dx__ra_stop(dx_readahead *ra);

#endif
