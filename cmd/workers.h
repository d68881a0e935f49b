/*
 * workers.h: one repetition of a benchmark cell: W forked worker
 * processes, each a trainer rank with its own handles, started together
 * once all have set up; their figures and their memory, read from /proc
 * while all of them are still alive so that shared pages are divided
 * among them.  Shared by bench and pin-test.
 */
#ifndef DX_WORKERS_H
#define DX_WORKERS_H

#include "docdex.h"
#include "workload.h"

typedef struct workers_result {
	unsigned n;
	worker_result *w;         /* one per worker */
	dx_mem_usage *mem;        /* one per worker, at the end of the run */
	dx_meminfo machine;       /* the machine's memory at the same moment */
	int code;                 /* WORKERS_FAILED by a worker: its DX_E* code */
} workers_result;

enum { WORKERS_OK = 0, WORKERS_FAILED = -1, WORKERS_INTERRUPTED = -2 };

/*
 * Runs the workload in n worker processes.  Returns WORKERS_OK with res
 * filled (res->w and res->mem allocated; free with workers_result_free),
 * WORKERS_FAILED with why set when a worker failed or died (and res->code
 * set to the worker's DX_E* code, or 0 when it died), or
 * WORKERS_INTERRUPTED once SIGINT or SIGTERM arrived (every worker is
 * stopped and reaped before it returns, in all cases).
 */
int workers_run(const workload_opts *o, unsigned n, workers_result *res, char *why,
                size_t whysz);

void workers_result_free(workers_result *res);

#endif
