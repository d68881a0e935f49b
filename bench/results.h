/*
 * results.h: the figures of a measurement matrix (docdex bench, pin-test)
 * and everything done with them: the terminal table, CSV, JSON and
 * Markdown reports, the SVG plot, and the comparison with a baseline.
 *
 * A matrix is a list of cells.  A cell is named by its dimensions (for
 * bench: strategy, workers, threads) and holds, for each repetition, one
 * value of every metric.  The command that measured it describes its
 * dimensions and metrics in tables, so the writers know nothing of bench.
 */
#ifndef DX_RESULTS_H
#define DX_RESULTS_H

#include <stddef.h>
#include <stdio.h>

#include "dxbench.h"

enum { DXB_RS_MAX_DIMS = 8 };

/* What a report read back (--from, --baseline) may hold.  A real one has a
 * few hundred cells of a handful of repetitions each; the largest matrix
 * the commands accept, pin-test's 24 settings by 64 worker and 64 thread
 * counts, has 98304 cells.  More is refused with one line instead of being
 * read into gigabytes; below the bounds, reading and reporting cost time
 * n log n and memory linear in the cells and repetitions. */
enum { DXB_RS_MAX_CELLS = 100000, DXB_RS_MAX_REPETITIONS = 1000000 };

typedef struct dxb_rs_dim {
	const char *key;       /* JSON/CSV name: "strategy", "workers", ... */
	const char *label;     /* table heading: "strategy", "j", ... */
	int numeric;           /* the values are integers (JSON numbers) */
	const char *note;      /* the table's footer on its heading ("worker
	                          processes"), or NULL */
} dxb_rs_dim;

enum { DXB_RS_LOWER = -1, DXB_RS_NEITHER = 0, DXB_RS_HIGHER = 1 };

typedef struct dxb_rs_metric {
	const char *key;       /* JSON/CSV name: "samples_per_s" */
	const char *label;     /* table heading: "samples/s" */
	const char *unit;      /* "1/s", "MiB", "ms", "s", "" */
	int better;            /* DXB_RS_HIGHER, DXB_RS_LOWER or DXB_RS_NEITHER */
	int gate;              /* compared with a baseline (--baseline) */
	int decimals;          /* shown in the table and Markdown */
	int hide;              /* DXB_RS_SHOW, DXB_RS_HIDE (left out of the
	                          table and Markdown, still in CSV and JSON)
	                          or DXB_RS_WIDE (in them with --wide only) */
	const char *note;      /* the table's footer on its heading, or NULL */
} dxb_rs_metric;

/* Where a metric shows.  The table fits 100 columns without --wide. */
enum { DXB_RS_SHOW = 0, DXB_RS_HIDE = 1, DXB_RS_WIDE = 2 };

enum { DXB_RS_OK = 0, DXB_RS_OOM, DXB_RS_FAILED, DXB_RS_SKIPPED };

typedef struct dxb_rs_cell {
	const char *dim[DXB_RS_MAX_DIMS]; /* a value for each dimension, as text */
	int status;            /* DXB_RS_OK, or why there are no figures */
	char reason[512];      /* what failed or why it was skipped or OOM */
	double projected;      /* projected footprint in bytes (0: unknown) */
	size_t nreps;          /* repetitions measured (0 unless DXB_RS_OK) */
	double *rep;           /* nreps x nmetrics values, repetition-major:
	                          rep[r * nmetrics + m] */
} dxb_rs_cell;

typedef struct dxb_rs_matrix {
	const char *command;   /* "bench" or "pin-test" */
	const dxb_rs_dim *dims;
	size_t ndims;
	const dxb_rs_metric *metrics;
	size_t nmetrics;
	size_t primary;        /* the metric the fastest cell is picked by */
	size_t group_dim;      /* the dimension the fastest is picked within
	                          (workers): one fastest cell per value */
	size_t x_dim;          /* the plot's x axis (workers) */
	size_t plot_metrics[2];/* the plot's two panels (samples/s, PSS) */
	dxb_rs_cell *cells;
	size_t ncells;
	/* JSON objects, rendered by the command, copied into the report as
	 * they are: */
	const char *machine_json; /* cores, memory, kernel, filesystem ... */
	const char *build_json;   /* version and build */
	const char *params_json;  /* the parameters of the run */
	const char *environment_json; /* pin-test's environment object, or NULL */
	const char *summary_json; /* an array after the cells, or NULL */
	/* Text before and after the table, in the table and Markdown reports
	 * (pin-test's environment and summary), or NULL: */
	const char *preamble, *epilogue;
	/* What was measured on what (corpus, workload, machine): the lines
	 * above the table and the plot's subtitle; NULL for none. */
	const char *header;
	int wide;                 /* the table with every column (--wide) */
	void *loaded;             /* what dxb_rs_read_report allocated */
} dxb_rs_matrix;

/* Sets fastest[i] for each cell clearly the fastest of its group (as the
 * table marks it): fastest has room for m->ncells.  0, or -1 with errno. */
int dxb_rs_fastest(const dxb_rs_matrix *m, unsigned char *fastest);

/* What m measured, on what (header.c): lines on its corpus, workload and
 * machine from its params and machine objects, for the header field.
 * malloc'd, or NULL when out of memory. */
char *dxb_rs_header(const dxb_rs_matrix *m);

/* The status as a word: "ok", "oom", "failed", "skipped". */
const char *dxb_rs_status_name(int status);

/* "mmap/j4/t1": the cell's key, its dimension values joined by '/' with
 * each dimension's label before numeric values.  Baselines match cells by
 * it.  Writes into buf, returns buf. */
const char *dxb_rs_cell_key(const dxb_rs_matrix *m, const dxb_rs_cell *c, char *buf, size_t bufsz);

/* The median, smallest and largest value of metric k over the cell's
 * repetitions (all 0 when it has none). */
void dxb_rs_summary(const dxb_rs_matrix *m, const dxb_rs_cell *c, size_t k, double *median, double *min,
                double *max);

/* Report writers.  Each returns 0, or -1 with errno when writing failed. */
int dxb_rs_write_table(const dxb_rs_matrix *m, FILE *f);     /* for people; the fastest marked */
int dxb_rs_write_csv(const dxb_rs_matrix *m, FILE *f);
int dxb_rs_write_json(const dxb_rs_matrix *m, FILE *f);
int dxb_rs_write_markdown(const dxb_rs_matrix *m, FILE *f);
int dxb_rs_write_svg(const dxb_rs_matrix *m, FILE *f);       /* the plot */

/* A metric's name and the unit to write after its figures: labels carry
 * their units ("PSS MiB"), which is split off ("PSS", "MiB"); a rate's
 * ("1/s") goes unsaid.  *unit is NULL when there is none to write. */
void dxb_rs_split_label(const dxb_rs_metric *k, const char **name, int *namelen, const char **unit);

/* Text for people, broken at spaces to fit 100 columns, from column col
 * (what the line already holds); the lines after the first indented by
 * indent.  Ends the line. */
void dxb_rs_put_wrapped(FILE *f, const char *s, size_t col, size_t indent);

/* Compares m with the JSON report at path, cell by cell (matched by key,
 * metric by metric for the gate metrics).  A metric regressed when its
 * median is worse than the baseline's by more than tolerance percent and
 * also by more than the noise of both runs (their ranges do not overlap);
 * a cell that was DXB_RS_OK in the baseline and is not now regressed too.
 * Writes one line per regression to out, and a last line saying how many
 * cells were compared and regressed (keys and reasons with their control
 * bytes escaped).  Returns the number of regressed cells, or a negative
 * DX_E* code with err filled when the baseline cannot be read (missing,
 * not JSON, not a report of m->command, over 64 MiB or DXB_RS_MAX_CELLS). */
int dxb_rs_compare_baseline(const dxb_rs_matrix *m, const char *path, double tolerance, FILE *out,
                        dx_err *err);

/*
 * Reads a JSON report of m->command, as dxb_rs_write_json wrote it, into m,
 * whose dimensions and metrics the caller has set: every cell with each
 * repetition's figures (NaN for a metric the report lacks, null, or a
 * number beyond a double's range), and the machine, build, params and
 * environment objects (the summary is left to the command, which computes
 * it from the cells).  A dimension's value longer than 511 bytes is read
 * as "".  Returns 0, or a negative DX_E* code with err filled (missing
 * file, not JSON, not a report of m->command, over 64 MiB, DXB_RS_MAX_CELLS
 * or DXB_RS_MAX_REPETITIONS).  Free what it allocated with dxb_rs_free_report,
 * also after a failure.
 */
int dxb_rs_read_report(dxb_rs_matrix *m, const char *path, dx_err *err);
/* Frees the cells and their repetitions, read or measured, and what
 * dxb_rs_read_report kept besides. */
void dxb_rs_free_report(dxb_rs_matrix *m);

/* Member key of the JSON object text obj (as the report's objects are
 * kept): a string decoded, a number, true, false or null as written, into
 * buf.  Returns 0, or -1 when obj has no such member or it does not fit. */
int dxb_rs_json_get(const char *obj, const char *key, char *buf, size_t bufsz);

#endif
