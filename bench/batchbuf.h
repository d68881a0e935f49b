/*
 * batchbuf.h: the buffer a trainer's batch is assembled in, in the memory
 * a pinning mode asks for (docdex pin-test): ordinary heap memory, memory
 * locked with mlock (the host side of a pinned-memory loader), or CUDA's
 * page-locked host memory; in the CUDA modes, with a device buffer each
 * batch is copied into.  It is reused from batch to batch and grows by
 * doubling, so that pinning is paid once, at set-up, when the first
 * reservation is large enough.
 */
#ifndef DX_BATCHBUF_H
#define DX_BATCHBUF_H

#include <stddef.h>
#include <stdint.h>

#include "dxbench.h"

/* Pinning modes, what pin-test's --pin names: batch buffers in ordinary
 * memory, or locked; the corpus made resident (populate) or locked; batches
 * copied to the GPU from ordinary (pageable) or page-locked memory. */
enum {
	DXB_PIN_NONE = 0, DXB_PIN_BUFFERS, DXB_PIN_POPULATE, DXB_PIN_CORPUS, DXB_PIN_CUDA_PAGEABLE, DXB_PIN_CUDA,
	DXB_PIN_LAST = DXB_PIN_CUDA
};

/* "none", "buffers", "populate", "corpus", "cuda-pageable", "cuda"; and
 * back (-1 when it is none of them). */
const char *dxb_pin_name(int pin);
int dxb_pin_parse(const char *s);

typedef struct dxb_batchbuf {
	int pin;                  /* PIN_* */
	dxb_cuda *cu;              /* the CUDA modes: this thread's handle */
	char *data;
	size_t len, cap;
	void *dev;                /* the CUDA modes: the device copy */
	size_t dev_cap;
	double pin_s;             /* spent allocating and pinning memory */
	double copy_s;            /* spent copying to the device */
	uint64_t copied;          /* bytes copied to the device */
} dxb_batchbuf;

/* Opens CUDA for the CUDA modes, and reserves hint bytes.  Returns 0 or a
 * DX_E* code (DX_ELIMIT when the memory-lock limit refuses). */
int dxb_batchbuf_open(dxb_batchbuf *b, int pin, size_t hint, dx_err *err);
int dxb_batchbuf_add(dxb_batchbuf *b, const void *p, size_t n, dx_err *err);
/* The CUDA modes: copies the batch to the device and waits for it. */
int dxb_batchbuf_to_device(dxb_batchbuf *b, dx_err *err);
void dxb_batchbuf_close(dxb_batchbuf *b);

#endif
