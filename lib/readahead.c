/* readahead.c: see readahead.h. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "readahead.h"

static void fill_one(dx_readahead *ra, dx_chunk *c)
{
	c->len = 0;
	c->rc = 0;
	c->last = 0;
	int64_t n = ra->fill(ra->ctx, c->mem + ra->head, ra->size, &c->pos, &c->err);
	if (n < 0) {
		c->rc = (int)n;
		c->last = 1;
	} else {
		c->len = (size_t)n;
		c->last = n == 0;
	}
}

static void *producer(void *arg)
{
	dx_readahead *ra = arg;
	pthread_mutex_lock(&ra->lock);
	for (;;) {
		/* Wait for a free chunk: one the scan has given back. */
		while (!ra->stop && ra->filled - ra->released == DX_RA_CHUNKS)
			pthread_cond_wait(&ra->cond, &ra->lock);
		if (ra->stop)
			break;
		dx_chunk *c = &ra->chunk[ra->filled % DX_RA_CHUNKS];
		pthread_mutex_unlock(&ra->lock);
		fill_one(ra, c);
		pthread_mutex_lock(&ra->lock);
		ra->filled++;
		pthread_cond_broadcast(&ra->cond);
		if (c->last)
			break;
	}
	pthread_mutex_unlock(&ra->lock);
	return NULL;
}

int dx__ra_start(dx_readahead *ra, dx_fill_fn fill, void *ctx, size_t head, size_t size, dx_err *err)
{
	memset(ra, 0, sizeof *ra);
	ra->fill = fill;
	ra->ctx = ctx;
	ra->head = head;
	ra->size = size;
	/* Page-aligned, with headroom of whole pages: the kernel's copy out of
	 * the page cache into a misaligned buffer ran at a sixth of its speed
	 * on an AMD EPYC (1 GiB in 1 MiB reads: 0.57 s against 0.085 s). */
	for (int i = 0; i < DX_RA_CHUNKS; i++)
		if (posix_memalign((void **)&ra->chunk[i].mem, DX_RA_ALIGN, head + size) != 0) {
			ra->chunk[i].mem = NULL;
			dx__ra_stop(ra);
			return dx__fail_nomem(err);
		}
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->cond, NULL);
	ra->locks = 1;
	ra->threaded = pthread_create(&ra->thread, NULL, producer, ra) == 0;
	return 0;
}

dx_chunk *dx__ra_next(dx_readahead *ra)
{
	dx_chunk *c;
	if (!ra->threaded) {
		c = &ra->chunk[ra->taken++ % DX_RA_CHUNKS];
		fill_one(ra, c);
		return c;
	}
	pthread_mutex_lock(&ra->lock);
	/* The chunk taken last time goes back to the producer now. */
	ra->released = ra->taken;
	pthread_cond_broadcast(&ra->cond);
	while (ra->filled == ra->taken)
		pthread_cond_wait(&ra->cond, &ra->lock);
	c = &ra->chunk[ra->taken % DX_RA_CHUNKS];
	ra->taken++;
	pthread_mutex_unlock(&ra->lock);
	return c;
}

void dx__ra_stop(dx_readahead *ra)
{
	if (ra->threaded) {
		pthread_mutex_lock(&ra->lock);
		ra->stop = 1;
		pthread_cond_broadcast(&ra->cond);
		pthread_mutex_unlock(&ra->lock);
		pthread_join(ra->thread, NULL);
		ra->threaded = 0;
	}
	if (ra->locks) {
		pthread_mutex_destroy(&ra->lock);
		pthread_cond_destroy(&ra->cond);
		ra->locks = 0;
	}
	for (int i = 0; i < DX_RA_CHUNKS; i++) {
		free(ra->chunk[i].mem);
		ra->chunk[i].mem = NULL;
	}
}
