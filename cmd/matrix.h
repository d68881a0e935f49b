/*
 * matrix.h: what docdex bench and pin-test share on the command line: the
 * options of a measurement matrix (workers, threads, durations, workload,
 * corpus, outputs, baseline), read alike from the command line and from a
 * YAML experiment file (-c, whose keys are the long options' names), and
 * the writing of the reports they ask for.
 */
#ifndef DX_MATRIX_H
#define DX_MATRIX_H

#include <getopt.h>
#include <stdio.h>

#include "docdex.h"
#include "dxbench.h"
#include "options.h"

enum { MX_MAX_LIST = 64, MX_MAX_WORKERS = 1024 };
enum { MX_FMT_TABLE = 1, MX_FMT_CSV, MX_FMT_JSON, MX_FMT_MARKDOWN };

/* Exit status when a cell regressed against the baseline. */
enum { EXIT_REGRESSED = 3 };

/* The shared options' ids (with 'j', 'o', 'c', 'q', 'h', and OPT_FORMAT
 * and OPT_SEED of options.h); a command's own start at MX_OPT_OWN. */
enum {
	MX_OPT_WORKLOAD = OPT_OWN, MX_OPT_BATCH, MX_OPT_THREADS, MX_OPT_DURATION, MX_OPT_SAMPLES,
	MX_OPT_WARMUP, MX_OPT_REPEAT, MX_OPT_MEM_LIMIT, MX_OPT_QUERIES, MX_OPT_QRELS, MX_OPT_RUN,
	MX_OPT_DEPTH, MX_OPT_NEGATIVES, MX_OPT_SYNTHETIC, MX_OPT_TMPDIR, MX_OPT_PLOT, MX_OPT_BASELINE,
	MX_OPT_TOLERANCE, MX_OPT_FROM, MX_OPT_CORPUS, MX_OPT_LIMIT_BY, MX_OPT_WIDE, MX_OPT_INFLATE_CACHE,
	MX_OPT_OWN = 512
};

/* --limit-by: how --mem-limit holds. */
enum { MX_LIMIT_AUTO = 0, MX_LIMIT_CGROUP, MX_LIMIT_PROJECTION };

typedef struct matrix_opts {
	const char *corpus;
	dxb_workload_opts wl;
	unsigned workers[MX_MAX_LIST], threads[MX_MAX_LIST];
	size_t nworkers, nthreads;
	unsigned repeat;
	uint64_t mem_limit;       /* 0: the machine's available memory */
	int limit_by;             /* MX_LIMIT_* */
	const char *limit_kind;   /* how it holds: "cgroup v1", "cgroup v2" or
	                             "projection" (matrix_mem_limit) */
	const char *synthetic, *tmpdir;
	int corpus_in_file, synthetic_in_file; /* set by the experiment file */
	int format;               /* 0: from -o's name, else table */
	const char *output, *plot, *baseline, *from;
	double tolerance;
	int quiet;
	int wide;               /* --wide: the table with every column */
	int force;              /* -f: replace an existing report or plot */
	dxb_config *config;        /* the experiment file read, if any */
	const char *config_path;  /* and its name */
	/* Paths made absolute for an experiment file's directory. */
	char *owned[32];
	size_t nowned;
} matrix_opts;

/* The defaults: triples in batches of 32, 1 worker of 1 thread, 2 s after
 * 0.5 s of warm-up, 3 repetitions, a tolerance of 10%. */
void matrix_opts_init(matrix_opts *o);
void matrix_opts_free(matrix_opts *o);

/* A command: its name and usage, and its own options with the function
 * that sets them (same contract as the shared ones: place is NULL on the
 * command line, "FILE:LINE" from an experiment file; returns 0 or an exit
 * status after saying what is wrong, as opt_bad_value does). */
typedef struct matrix_cmd {
	const char *name;
	const char *usage;        /* up to its own options; the shared ones
	                             follow in --help */
	const struct option *own; /* ends with a zero entry */
	int (*set)(void *ctx, int id, const char *name, const char *value, const char *place);
	void *ctx;
	/* Whether an own option takes one value, which an experiment file may
	 * not give as a list; NULL when every own option takes a list. */
	int (*one_value)(int id);
} matrix_cmd;

/* Reads the experiment file (-c), then the command line over it.  Returns
 * 0, -1 once --help was printed, or the exit status of a usage error; or
 * EXIT_FAIL, after saying so, when -o or --plot names a file the command
 * reads (the corpus, its index or a source, --queries, --qrels, --run,
 * --from, --baseline, the experiment file) or both name one file. */
int matrix_parse(const matrix_cmd *cmd, matrix_opts *o, int argc, char **argv);


/* The machine (cores, memory, kernel, cpu, hostname, and the filesystem
 * named fs) and the build, as JSON objects for dxb_rs_matrix; malloc'd, NULL
 * when out of memory. */
char *matrix_machine_json(const char *fs);
char *matrix_build_json(void);
/* A member of a JSON object: "key": [1, 2], and "key": "value" (null for
 * NULL). */
void matrix_json_list(dxb_json *j, const char *key, const unsigned *v, size_t n);
void matrix_json_string(dxb_json *j, const char *key, const char *v);

/* Sets o->mem_limit, when not given, to the machine's available memory,
 * and how it holds (o->limit_kind): a memory cgroup per cell under
 * --limit-by cgroup, or with --mem-limit where one can be made; else the
 * projection.  Returns 0, or EXIT_FAIL after saying why no cgroup can be
 * made under --limit-by cgroup. */
int matrix_mem_limit(const char *cmd, matrix_opts *o);

/* The text of a cell's worker and thread counts, which its dims point to. */
typedef char matrix_counts[2][16];

/* m's n cells, zeroed, and the counts text of each (the caller frees
 * both).  Returns 0, or -1 when out of memory. */
int matrix_cells_alloc(dxb_rs_matrix *m, size_t n, matrix_counts **counts);
/* Sets c's dims wdim and tdim to w workers and t threads, as text in counts. */
void matrix_cell_counts(dxb_rs_cell *c, matrix_counts counts, size_t wdim, size_t tdim, unsigned w,
                        unsigned t);
/* Marks a cell with no figures: its status and why. */
void matrix_cell_mark(dxb_rs_cell *c, int status, const char *why);
/* What holds a cell to the memory limit while it runs. */
typedef struct matrix_guard {
	struct dxb_memcg *group;  /* the cell's memory cgroup, or NULL */
	uint64_t kills;           /* its OOM kills before the repetition */
} matrix_guard;
/* Before a cell runs (c->projected set): under a cgroup, makes the cell's
 * group and has wl's workers join it; under the projection, marks c
 * DXB_RS_OOM, with both sizes, when the projection is over the limit.
 * Returns 0 to run the cell, 1 when c is marked (OOM, or failed when no
 * group could be made) and is not to be run. */
int matrix_cell_guard(const matrix_opts *o, dxb_rs_cell *c, dxb_workload_opts *wl, matrix_guard *gd);
/* Before each repetition. */
void matrix_guard_rep(matrix_guard *gd);
/* After a repetition failed: whether the kernel killed a worker for the
 * group's limit, in which case c is marked DXB_RS_OOM with what the group
 * saw. */
int matrix_guard_killed(const matrix_opts *o, const matrix_guard *gd, dxb_rs_cell *c);
/* After the cell: removes its group. */
void matrix_guard_end(matrix_guard *gd);
/* Clears the progress line and says that cmd was interrupted; returns
 * EXIT_INTERRUPTED. */
int matrix_interrupted(const char *cmd, const matrix_opts *o);

/* The corpus the cells run on (matrix_corpus.c). */
typedef struct matrix_corpus {
	dxb_tempcorpus t;             /* what was generated or built for it */
	char index[2 * TC_PATH + 16]; /* the index the cells open (of the
	                             plain file, for a generated corpus) */
	char label[TC_PATH];      /* "synthetic passages:50000", or its path */
	char fs[64];              /* the filesystem it is on */
	uint64_t records, usize, index_bytes;
} matrix_corpus;

/* The corpus o names, and its index, built in a temporary directory when
 * it has none; without one, the synthetic corpus (--synthetic) generated
 * there, whose queries, qrels and run the workload takes unless it was
 * given its own.  A progress bar on a terminal; SIGINT and SIGTERM cancel.
 * Returns 0 or a DX_E* code with err filled. */
int matrix_corpus_prepare(matrix_opts *o, matrix_corpus *mc, dx_err *err);
/* Removes what prepare made; safe to call more than once. */
void matrix_corpus_remove(matrix_corpus *mc);

/* The params members bench and pin-test share (the corpus, the workload,
 * workers, threads, durations), in the object j has open. */
void matrix_json_params(dxb_json *j, const matrix_opts *o, const matrix_corpus *mc);

/* On a terminal, a line on stderr saying which cell and repetition runs,
 * redrawn in place; key NULL clears it. */
void matrix_progress(const char *cmd, const matrix_opts *o, size_t i, size_t n, const char *key,
                     unsigned r);

/* Writes the reports the options ask for (-o, --format, the table on
 * stdout, --plot), then compares with --baseline.  Returns 0, EXIT_FAIL
 * or EXIT_REGRESSED. */
int matrix_report(const matrix_cmd *cmd, const matrix_opts *o, const dxb_rs_matrix *m);

/*
 * Parses a synthetic corpus spec: "passages:N" or "docs:N" (N records, or
 * bytes when N has a K, M or G suffix), or a size alone (passages).
 * Returns 0, or -1 when it is not one.
 */
int matrix_parse_synthetic(const char *spec, dxb_synth_opts *o);

#endif
