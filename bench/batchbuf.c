/*
 * batchbuf.c: a batch buffer in ordinary, locked or CUDA-pinned memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dxbench.h"
#include "err.h"

static const char *const names[] = {
	[DXB_PIN_NONE] = "none", [DXB_PIN_BUFFERS] = "buffers", [DXB_PIN_POPULATE] = "populate",
	[DXB_PIN_CORPUS] = "corpus", [DXB_PIN_CUDA_PAGEABLE] = "cuda-pageable", [DXB_PIN_CUDA] = "cuda",
};

const char *dxb_pin_name(int pin)
{
	return pin >= 0 && pin <= DXB_PIN_LAST ? names[pin] : "?";
}

int dxb_pin_parse(const char *s)
{
	for (int k = 0; k <= DXB_PIN_LAST; k++)
		if (strcmp(s, names[k]) == 0)
			return k;
	return -1;
}

static int is_cuda(int pin)
{
	return pin == DXB_PIN_CUDA || pin == DXB_PIN_CUDA_PAGEABLE;
}

/* Memory of n bytes in the mode's kind; NULL with err filled. */
static char *get_memory(dxb_batchbuf *b, size_t n, dx_err *err)
{
	if (b->pin == DXB_PIN_CUDA)
		return dxb_cuda_host_alloc(b->cu, n, err);
	if (b->pin != DXB_PIN_BUFFERS) {
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
	if (dxb_mem_lock(p, n, err) < 0) {
		munmap(p, n);
		return NULL;
	}
	return p;
}

static void put_memory(dxb_batchbuf *b, char *p, size_t n)
{
	if (!p)
		return;
	if (b->pin == DXB_PIN_CUDA) {
		dxb_cuda_host_free(b->cu, p);
	} else if (b->pin == DXB_PIN_BUFFERS) {
		dxb_mem_unlock(p, n);
		munmap(p, n);
	} else {
		free(p);
	}
}

/* Room for need bytes in all: a new buffer of twice as much, the batch so
 * far copied over; and the device buffer as large. */
static int grow(dxb_batchbuf *b, size_t need, dx_err *err)
{
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return dx__fail_nomem(err);
		cap *= 2;
	}
	double t0 = dxb_now();
	char *p = get_memory(b, cap, err);
	if (!p)
		return err->code;
	if (b->len)
		memcpy(p, b->data, b->len);
	put_memory(b, b->data, b->cap);
	b->data = p;
	b->cap = cap;
	if (is_cuda(b->pin) && b->dev_cap < cap) {
		dxb_cuda_device_free(b->cu, b->dev);
		b->dev_cap = 0;
		if (!(b->dev = dxb_cuda_device_alloc(b->cu, cap, err)))
			return err->code;
		b->dev_cap = cap;
	}
	b->pin_s += dxb_now() - t0;
	return 0;
}

int dxb_batchbuf_open(dxb_batchbuf *b, int pin, size_t hint, dx_err *err)
{
	memset(b, 0, sizeof *b);
	b->pin = pin;
	if (is_cuda(pin) && !(b->cu = dxb_cuda_open(0, err)))
		return err->code;
	return grow(b, hint, err);
}

int dxb_batchbuf_add(dxb_batchbuf *b, const void *p, size_t n, dx_err *err)
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

int dxb_batchbuf_to_device(dxb_batchbuf *b, dx_err *err)
{
	double t0 = dxb_now();
	int rc = dxb_cuda_copy_to_device(b->cu, b->dev, b->data, b->len, err);
	if (rc == 0)
		rc = dxb_cuda_sync(b->cu, err);
	b->copy_s += dxb_now() - t0;
	b->copied += b->len;
	return rc;
}

void dxb_batchbuf_close(dxb_batchbuf *b)
{
	put_memory(b, b->data, b->cap);
	dxb_cuda_device_free(b->cu, b->dev);
	dxb_cuda_close(b->cu);
	memset(b, 0, sizeof *b);
}
