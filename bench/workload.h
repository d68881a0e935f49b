/*
 * workload.h: what one worker process of a benchmark does: open its own
 * handles, then deliver batches of samples (triples, random documents or a
 * scan) through a loading strategy, from one or more threads, measuring
 * throughput and batch latency.  Shared by bench and pin-test.
 */
#ifndef DX_WORKLOAD_H
#define DX_WORKLOAD_H

#include <stdint.h>

#include "dxbench.h"

enum { DXB_WL_TRIPLES = 1, DXB_WL_RANDOM, DXB_WL_SCAN };

/* Batch latencies in a log-linear histogram of nanoseconds: exact below
 * 16 ns, then 16 buckets per power of two (within 6.25%). */
enum { HIST_BUCKETS = 1024 };

/* The inflate cache of the -cached strategies when none is given. */
#define DXB_INFLATE_CACHE_DEFAULT ((uint64_t)1 << 30)

typedef struct dxb_workload_opts {
	const char *corpus;       /* the corpus or its index */
	int strategy;             /* DXB_LOAD_* */
	int kind;                 /* WL_* */
	unsigned batch;           /* samples per batch */
	unsigned negatives;       /* triples: negatives per sample */
	const char *queries, *qrels, *run; /* triples from these, when given */
	unsigned depth;
	uint64_t seed;
	unsigned threads;         /* loader threads in the process */
	double warmup;            /* seconds before measuring */
	double duration;          /* seconds measured, when samples is 0 */
	uint64_t samples;         /* samples to measure in each process */
	int pin;                  /* PIN_* (batchbuf.h): what memory batches are
	                             assembled in, and whether the corpus is
	                             locked; DXB_PIN_NONE for bench */
	size_t batch_hint;        /* bytes to reserve for a batch (0: grow) */
	int (*stop)(void);        /* asked in the parent while it waits on the
	                             workers: nonzero (an interrupt) stops them
	                             all; NULL: never */
	const struct dxb_memcg *memcg; /* the memory cgroup each worker joins
	                             before it sets up; NULL: none */
	uint64_t inflate_cache;   /* bytes of the inflate cache of the -cached
	                             strategies (0: DXB_INFLATE_CACHE_DEFAULT),
	                             where dx_corpus_set_inflate_cache puts it */
} dxb_workload_opts;

/* What a worker measured, sent to the parent through a pipe. */
typedef struct dxb_worker_result {
	int ok;
	int code;                 /* the DX_E* code of the failure, or 0 */
	char msg[512];            /* why it failed, when !ok */
	double setup_s;           /* from the start of the process to the
	                             moment every thread could serve */
	double elapsed_s;         /* of the measured part */
	uint64_t samples, docs, bytes;
	double pin_s;             /* of the set-up: locking the corpus, and the
	                             slowest thread's pinning of its buffers */
	double copy_s;            /* measured part, all threads: copying batches
	                             to the device (the CUDA modes) */
	uint64_t copied;          /* bytes copied to the device */
	uint64_t minor_faults, major_faults; /* over the process's life */
	uint64_t inflated;        /* bytes inflated, measured part, all threads */
	uint64_t hist[HIST_BUCKETS];
} dxb_worker_result;

/* How a worker tells its parent where it stands. */
typedef struct dxb_workload_hooks {
	/* Set up: returns once every worker is ready and the measurement
	 * starts, or non-zero to give up. */
	int (*ready)(void *ctx);
	/* Measured (or failed), with every handle and copy still held, so
	 * that the parent can read the process's memory before it returns. */
	void (*done)(void *ctx, const dxb_worker_result *r);
	void *ctx;
} dxb_workload_hooks;

/*
 * Runs the workload as worker `rank` of `world` processes: sets up, calls
 * ready, warms up, measures and calls done.  Fills r (r->ok = 0 and r->msg
 * on failure).  t0 is when the process started, for the set-up time.
 */
void dxb_workload_run(const dxb_workload_opts *o, unsigned rank, unsigned world, double t0,
                      const dxb_workload_hooks *hooks, dxb_worker_result *r);

/* The value at fraction q (0..1) of a histogram's count, in seconds. */
double dxb_hist_quantile(const uint64_t *hist, double q);

/* Samples in a batch: the documents each sample reads. */
unsigned dxb_workload_docs_per_sample(const dxb_workload_opts *o);

#endif
