/*
 * figures.h: the figures bench and pin-test both report for a repetition
 * of a cell, from what its workers sent and their memory: throughput,
 * batch latency, set-up time, memory and page faults.  A command's own
 * metrics follow these in its table of metrics.
 */
#ifndef DX_FIGURES_H
#define DX_FIGURES_H

#include "dxbench.h"


enum {
	FG_SAMPLES, FG_DOCS, FG_MB, FG_P50, FG_P95, FG_P99, FG_SETUP, FG_PSS, FG_USS, FG_RSS,
	FG_MINFLT, FG_MAJFLT, FG_PRIVATE, FG_FILE, FG_INFLATE, FG_COUNT
};

/* Their descriptions, for a command's table of metrics. */
extern const dxb_rs_metric dxb_figures_metrics[FG_COUNT];

/* Fills row[0 .. FG_COUNT) from one repetition. */
void dxb_figures_of(const dxb_workers_result *res, double *row);

#endif
