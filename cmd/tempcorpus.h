/*
 * tempcorpus.h: a temporary directory for what a benchmark makes and
 * removes afterwards (an index for a corpus that has none, a generated
 * corpus), and the built-in synthetic corpus shaped like MS MARCO, with
 * gzip and BGZF copies and queries, qrels and a run to go with it.
 */
#ifndef DX_TEMPCORPUS_H
#define DX_TEMPCORPUS_H

#include <stdint.h>

#include "docdex.h"

enum { TC_PATH = 4096 };

typedef struct tempcorpus {
	char dir[TC_PATH];        /* "" until made */
	int lock;                 /* held on dir once made (dx_tempdir_make) */
	char plain[TC_PATH], gzip[TC_PATH], bgzf[TC_PATH];
	char queries[TC_PATH], qrels[TC_PATH], run[TC_PATH];
	uint64_t records;
} tempcorpus;

/*
 * Parses a synthetic corpus spec: "passages:N" or "docs:N" (N records, or
 * bytes when N has a K, M or G suffix), or a size alone (passages).
 * Returns 0, or -1 when it is not one.
 */
int tempcorpus_parse(const char *spec, dx_synth_opts *o);

/* Makes the temporary directory under parent ($TMPDIR or /tmp when NULL),
 * docdex.HOST.PID.XXXXXX, after removing those that killed processes of
 * this host left there (dx_tempdir_sweep).  Returns 0, or a DX_E* code
 * with err filled. */
int tempcorpus_mkdir(tempcorpus *t, const char *parent, dx_err *err);

/*
 * Writes the synthetic corpus of o in t's directory (made first), its gzip
 * and BGZF copies, their indexes, and 1 query for every 10 records (at
 * most 100,000) with one positive each and a run 100 deep.  progress is
 * called as in dx_index_build (and may cancel).  Returns 0 or a DX_E* code.
 */
int tempcorpus_make(tempcorpus *t, const dx_synth_opts *o, dx_progress_fn on_progress, void *ctx,
                    dx_err *err);

/* Removes the directory and everything in it; safe to call when it was
 * never made (t zeroed), and more than once. */
void tempcorpus_remove(tempcorpus *t);

#endif
