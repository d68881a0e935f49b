/*
 * batchbuf.c: a batch buffer in ordinary, locked or CUDA-pinned memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "batchbuf.h"
#include "err.h"

static const char *const names[] = {
	[PIN_NONE] = "none", [PIN_BUFFERS] = "buffers", [PIN_POPULATE] = "populate",
	[PIN_CORPUS] = "corpus", [PIN_CUDA_PAGEABLE] = "cuda-pageable", [PIN_CUDA] = "cuda",
};

const char *pin_name(int pin)
{
	return pin >= 0 && pin <= PIN_LAST ? names[pin] : "?";
}

int pin_parse(const char *s)
{
	for (int k = 0; k <= PIN_LAST; k++)
		if (strcmp(s, names[k]) == 0)
			return k;
	return -1;
}

static int is_cuda(int pin)
{
	return pin == PIN_CUDA || pin == PIN_CUDA_PAGEABLE;
}

/* Memory of n bytes in the mode's kind; NULL with err filled. */
static char *get_memory(batchbuf *b, size_t n, dx_err *err)
{
	if (b->pin == PIN_CUDA)
		return dx_cuda_host_alloc(b->cu, n, err);
	if (b->pin != PIN_BUFFERS) {
		char *p = malloc(n);
		if (!p)
			dx__fail_nomem(err);
		return p;
	}
	/* Whole pages of its own, so that unlocking it unlocks nothing else. */
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		dx__fail_nomem(err);
		return NULL;
	}
	if (dx_mem_lock(p, n, err) < 0) {
		munmap(p, n);
		return NULL;
	}
	return p;
}

static void put_memory(batchbuf *b, char *p, size_t n)
{
	if (!p)
		return;
	if (b->pin == PIN_CUDA) {
		dx_cuda_host_free(b->cu, p);
	} else if (b->pin == PIN_BUFFERS) {
		dx_mem_unlock(p, n);
		munmap(p, n);
	} else {
		free(p);
	}
}

/* Room for need bytes in all: a new buffer of twice as much, the batch so
 * far copied over; and the device buffer as large. */
static int grow(batchbuf *b, size_t need, dx_err *err)
{
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return dx__fail_nomem(err);
		cap *= 2;
	}
	double t0 = dx_now();
	char *p = get_memory(b, cap, err);
	if (!p)
		return err->code;
	if (b->len)
		memcpy(p, b->data, b->len);
	put_memory(b, b->data, b->cap);
	b->data = p;
	b->cap = cap;
	if (is_cuda(b->pin) && b->dev_cap < cap) {
		dx_cuda_device_free(b->cu, b->dev);
		b->dev_cap = 0;
		if (!(b->dev = dx_cuda_device_alloc(b->cu, cap, err)))
			return err->code;
		b->dev_cap = cap;
	}
	b->pin_s += dx_now() - t0;
	return 0;
}

int batchbuf_open(batchbuf *b, int pin, size_t hint, dx_err *err)
{
	memset(b, 0, sizeof *b);
	b->pin = pin;
	if (is_cuda(pin) && !(b->cu = dx_cuda_open(0, err)))
		return err->code;
	return grow(b, hint, err);
}

int batchbuf_add(batchbuf *b, const void *p, size_t n, dx_err *err)
{
	if (b->cap - b->len < n) {
		if (n > SIZE_MAX - b->len)
			return dx__fail_nomem(err);
		int rc = grow(b, b->len + n, err);
		if (rc < 0)
			return rc;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int batchbuf_to_device(batchbuf *b, dx_err *err)
{
	double t0 = dx_now();
	int rc = dx_cuda_copy_to_device(b->cu, b->dev, b->data, b->len, err);
	if (rc == 0)
		rc = dx_cuda_sync(b->cu, err);
	b->copy_s += dx_now() - t0;
	b->copied += b->len;
	return rc;
}

void batchbuf_close(batchbuf *b)
{
	put_memory(b, b->data, b->cap);
	dx_cuda_device_free(b->cu, b->dev);
	dx_cuda_close(b->cu);
	memset(b, 0, sizeof *b);
}
