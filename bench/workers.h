/*
 * workers.h: one repetition of a benchmark cell: W forked worker
 * processes, each a trainer rank with its own handles, started together
 * once all have set up; their figures and their memory, read from /proc
 * while all of them are still alive so that shared pages are divided
 * among them.  Shared by bench and pin-test.
 */
#ifndef DX_WORKERS_H
#define DX_WORKERS_H

#include "dxbench.h"

typedef struct dxb_workers_result {
	unsigned n;
	dxb_worker_result *w;         /* one per worker */
	dxb_mem_usage *mem;        /* one per worker, at the end of the run */
	dxb_meminfo machine;       /* the machine's memory at the same moment */
	int code;                 /* DXB_WORKERS_FAILED by a worker: its DX_E* code */
} dxb_workers_result;

enum { DXB_WORKERS_OK = 0, DXB_WORKERS_FAILED = -1, DXB_WORKERS_INTERRUPTED = -2 };

/*
 * Runs the workload in n worker processes.  Returns DXB_WORKERS_OK with res
 * filled (res->w and res->mem allocated; free with dxb_workers_result_free),
 * DXB_WORKERS_FAILED with why set when a worker failed or died (and res->code
 * set to the worker's DX_E* code, or 0 when it died), or
 * DXB_WORKERS_INTERRUPTED once SIGINT or SIGTERM arrived (every worker is
 * stopped and reaped before it returns, in all cases).
 */
int dxb_workers_run(const dxb_workload_opts *o, unsigned n, dxb_workers_result *res, char *why,
                    size_t whysz);

void dxb_workers_result_free(dxb_workers_result *res);

#endif
