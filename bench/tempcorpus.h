/*
 * tempcorpus.h: a temporary directory for what a benchmark makes and
 * removes afterwards (an index for a corpus that has none, a generated
 * corpus), and the built-in synthetic corpus shaped like MS MARCO, with
 * gzip and BGZF copies and queries, qrels and a run to go with it.
 */
#ifndef DX_TEMPCORPUS_H
#define DX_TEMPCORPUS_H

#include <stdint.h>

#include "dxbench.h"

enum { TC_PATH = 4096 };

typedef struct dxb_tempcorpus {
	char dir[TC_PATH];        /* "" until made */
	int lock;                 /* held on dir once made (dxb_tempdir_make) */
	char plain[TC_PATH], gzip[TC_PATH], bgzf[TC_PATH];
	char queries[TC_PATH], qrels[TC_PATH], run[TC_PATH];
	uint64_t records;
} dxb_tempcorpus;

/* Makes the temporary directory under parent ($TMPDIR or /tmp when NULL),
 * docdex.HOST.PID.XXXXXX, after removing those that killed processes of
 * this host left there (dxb_tempdir_sweep).  Returns 0, or a DX_E* code
 * with err filled. */
int dxb_tempcorpus_mkdir(dxb_tempcorpus *t, const char *parent, dx_err *err);

/*
 * Writes the synthetic corpus of o in t's directory (made first), its gzip
 * and BGZF copies, their indexes, and 1 query for every 10 records (at
 * most 100,000) with one positive each and a run 100 deep.  progress is
 * called as in dx_index_build (and may cancel).  Returns 0 or a DX_E* code.
 */
int dxb_tempcorpus_make(dxb_tempcorpus *t, const dxb_synth_opts *o, dx_progress_fn on_progress, void *ctx,
                        dx_err *err);

/* Removes the directory and everything in it; safe to call when it was
 * never made (t zeroed), and more than once. */
void dxb_tempcorpus_remove(dxb_tempcorpus *t);

#endif
