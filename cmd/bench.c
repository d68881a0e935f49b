/*
 * bench.c: docdex bench, the loading strategies side by side.  The options
 * it shares with pin-test, their experiment file and the reports are
 * matrix.c's; --strategies is its own.  Each cell of the matrix (strategy x
 * workers x threads) is run --repeat times by workers.c; results.c
 * reports it.
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "matrix.h"
#include "signals.h"
#include "dxbench.h"

static const char usage[] =
	"usage: docdex bench [options] [CORPUS_OR_INDEX]\n"
	"\n"
	"Measure how fast each loading strategy delivers training samples, and\n"
	"what memory it takes, as worker processes and threads grow.  Without a\n"
	"corpus, a synthetic one shaped like MS MARCO passages is generated in a\n"
	"temporary directory and removed afterwards.\n"
	"\n"
	"What is measured:\n"
	"      --strategies LIST    memory, stdio, pread, mmap, gzip, bgzf, gzip-cached,\n"
	"                           bgzf-cached, or all\n"
	"                           (default: all that apply to the corpus)\n";

enum { OPT_STRATEGIES = MX_OPT_OWN };

static const struct option own_options[] = {
	{ "strategies", required_argument, NULL, OPT_STRATEGIES },
	{ NULL, 0, NULL, 0 },
};

typedef struct bench_opts {
	matrix_opts mx;
	int strategy[DXB_LOAD_LAST + 1];
	size_t nstrategies;       /* 0: all that apply */
} bench_opts;

/* One strategy of the list, once however often it is named. */
static int add_strategy(void *ctx, const char *w)
{
	bench_opts *b = ctx;
	int k = dxb_loader_parse(w);
	if (k < 0)
		return -1;
	for (size_t i = 0; i < b->nstrategies; i++)
		if (b->strategy[i] == k)
			return 0;
	b->strategy[b->nstrategies++] = k;
	return 0;
}

static int parse_strategies(const char *s, bench_opts *b)
{
	b->nstrategies = 0;
	if (strcmp(s, "all") == 0) {
		for (int k = DXB_LOAD_MEMORY; k <= DXB_LOAD_LAST; k++)
			b->strategy[b->nstrategies++] = k;
		return 0;
	}
	return cli_parse_list(s, add_strategy, b);
}

static int set_own(void *ctx, int id, const char *name, const char *v, const char *place)
{
	bench_opts *b = ctx;
	if (id == OPT_STRATEGIES && parse_strategies(v, b) < 0)
		return opt_bad_value("bench", name, place,
		                        "memory, stdio, pread, mmap, gzip, bgzf, gzip-cached, "
		                        "bgzf-cached or all", v);
	return 0;
}

/* ---- the corpus ------------------------------------------------------------ */

/* What the cells run on: for each strategy, the index it opens. */
typedef struct plan {
	matrix_corpus mc;         /* the plain index, or the user's */
	char index[2][2 * TC_PATH + 16]; /* a generated corpus's gzip and bgzf copies */
	const char *index_for[DXB_LOAD_LAST + 1];
	const char *skip_why[DXB_LOAD_LAST + 1]; /* NULL when the strategy applies */
	uint64_t index_size[DXB_LOAD_LAST + 1]; /* of the index each opens */
} plan;

/* Which strategies an index serves; the corpus is closed again, so that
 * the parent keeps nothing mapped and the workers' PSS divides shared
 * pages among the workers alone. */
static int inspect(plan *p, const char *index, dx_err *err)
{
	dx_corpus *c = dx_corpus_open(index, err);
	if (!c)
		return err->code;
	dx_index_info info;
	dx_index_get_info(dx_corpus_index(c), &info);
	/* Each strategy takes the first index it applies to; one that applies
	 * to none keeps the reason it gave the first. */
	for (int s = DXB_LOAD_MEMORY; s <= DXB_LOAD_LAST; s++) {
		const char *why = NULL;
		int applies = dxb_loader_applies(s, c, &why);
		if (p->index_for[s] && (!p->skip_why[s] || !applies))
			continue;
		p->index_for[s] = index;
		p->index_size[s] = info.file_size;
		p->skip_why[s] = applies ? NULL : why;
	}
	dx_corpus_close(c);
	return 0;
}

static int prepare(bench_opts *b, plan *p, dx_err *err)
{
	int rc;
	if ((rc = matrix_corpus_prepare(&b->mx, &p->mc, err)) < 0 ||
	    (rc = inspect(p, p->mc.index, err)) < 0)
		return rc;
	if (b->mx.corpus)
		return 0;
	/* A generated corpus has gzip and BGZF copies for those strategies. */
	snprintf(p->index[0], sizeof p->index[0], "%s.ddx", p->mc.t.gzip);
	snprintf(p->index[1], sizeof p->index[1], "%s.ddx", p->mc.t.bgzf);
	if ((rc = inspect(p, p->index[0], err)) < 0 || (rc = inspect(p, p->index[1], err)) < 0)
		return rc;
	return 0;
}

/* ---- the matrix ------------------------------------------------------------ */

static const dxb_rs_dim dims[] = {
	{ "strategy", "strategy", 0, NULL },
	{ "workers", "j", 1, "worker processes" },
	{ "threads", "t", 1, "loader threads in each" },
};

/* The memory a cell's workers would hold privately, for --mem-limit: a
 * memory worker holds the corpus and its table (an entry, two hash slots
 * and the id: 64 bytes a record), a stdio loader its table; the index
 * strategies share the index and the page cache.  Each thread holds its
 * batch twice (the records read, and the copy the trainer gets). */
static double projected(const bench_opts *b, const plan *p, int strategy, unsigned w, unsigned t)
{
	double per_record = 64, records = (double)p->mc.records;
	double mean = records > 0 ? (double)p->mc.usize / records : 0;
	double batch = 2 * mean * b->mx.wl.batch * dxb_workload_docs_per_sample(&b->mx.wl);
	switch (strategy) {
	case DXB_LOAD_MEMORY:
		return w * ((double)p->mc.usize + per_record * records + t * batch);
	case DXB_LOAD_STDIO:
		return (double)w * t * (per_record * records + batch);
	case DXB_LOAD_GZIP_CACHED:
	case DXB_LOAD_BGZF_CACHED:
		return (double)p->index_size[strategy] + (double)w * t * batch +
		       (double)(b->mx.wl.inflate_cache ? b->mx.wl.inflate_cache : DXB_INFLATE_CACHE_DEFAULT);
	default:
		return (double)p->index_size[strategy] + (double)w * t * batch;
	}
}

/* Runs every repetition of a cell; returns EXIT_INTERRUPTED or 0. */
static int run_cell(const bench_opts *b, const plan *p, const dxb_rs_matrix *m, dxb_rs_cell *c,
                    int strategy, unsigned w, unsigned t, size_t i)
{
	char key[256];
	dxb_rs_cell_key(m, c, key, sizeof key);
	c->projected = round(projected(b, p, strategy, w, t)); /* bytes: whole */
	if (p->skip_why[strategy] || !p->index_for[strategy]) {
		matrix_cell_mark(c, DXB_RS_SKIPPED, p->skip_why[strategy] ? p->skip_why[strategy]
		                                                      : "does not apply to this corpus");
		return 0;
	}
	dxb_workload_opts o = b->mx.wl;
	o.stop = cli_interrupted;
	o.corpus = p->index_for[strategy];
	o.strategy = strategy;
	o.threads = t;
	matrix_guard gd;
	if (matrix_cell_guard(&b->mx, c, &o, &gd))
		return 0;
	int rc = 0;
	if (!(c->rep = calloc((size_t)b->mx.repeat * FG_COUNT, sizeof *c->rep))) {
		matrix_cell_mark(c, DXB_RS_FAILED, "out of memory");
		goto out;
	}
	for (unsigned r = 0; r < b->mx.repeat; r++) {
		dxb_workers_result res;
		matrix_progress("bench", &b->mx, i, m->ncells, key, r);
		matrix_guard_rep(&gd);
		int wr = dxb_workers_run(&o, w, &res, c->reason, sizeof c->reason);
		if (wr == DXB_WORKERS_INTERRUPTED) {
			rc = EXIT_INTERRUPTED;
			goto out;
		}
		if (wr != DXB_WORKERS_OK) {
			if (!matrix_guard_killed(&b->mx, &gd, c)) {
				c->status = DXB_RS_FAILED;
				c->nreps = 0;
			}
			goto out;
		}
		dxb_figures_of(&res, c->rep + (size_t)r * FG_COUNT);
		c->nreps++;
		dxb_workers_result_free(&res);
	}
	c->status = DXB_RS_OK;
out:
	matrix_guard_end(&gd);
	return rc;
}

/* ---- reports ----------------------------------------------------------------- */

/* The JSON objects that go into the report as they are: what machine, what
 * build, what parameters, so that two reports can be compared later. */
typedef struct meta {
	char *machine, *build, *params;
	matrix_counts *counts;    /* each cell's workers and threads, as text */
} meta;

static int render_meta(const bench_opts *b, const plan *p, meta *mt)
{
	if (!(mt->machine = matrix_machine_json(p->mc.fs)) || !(mt->build = matrix_build_json()))
		return -1;
	dxb_json *j = dxb_json_new(0);
	dxb_json_begin_object(j, DXB_JSON_INLINE);
	matrix_json_params(j, &b->mx, &p->mc);
	dxb_json_end_object(j);
	return (mt->params = dxb_json_finish(j)) ? 0 : -1;
}

/* Runs the matrix: the corpus first (generated, or indexed when it has no
 * index), then every cell.  Returns 0, or the exit status of a failure. */
static int measure(bench_opts *b, dxb_rs_matrix *m, plan *p, meta *mt)
{
	dx_err err = { 0 };
	int lim = matrix_mem_limit("bench", &b->mx);
	if (lim)
		return lim;
	cli_catch_signals();
	int rc = prepare(b, p, &err);
	if (rc == DX_ECANCELED || cli_interrupted())
		return matrix_interrupted("bench", &b->mx);
	if (rc < 0)
		return cli_lib_failure("bench", rc, &err);
	/* By default every strategy that applies; the -cached ones where an
	 * --inflate-cache asks for them. */
	if (!b->nstrategies)
		for (int s = DXB_LOAD_MEMORY; s <= DXB_LOAD_LAST; s++)
			if (p->index_for[s] && !p->skip_why[s] &&
			    (!DXB_LOAD_CACHED(s) || b->mx.wl.inflate_cache))
				b->strategy[b->nstrategies++] = s;

	/* Cells by worker count, the dimension the fastest is picked within. */
	if (matrix_cells_alloc(m, b->mx.nworkers * b->mx.nthreads * b->nstrategies, &mt->counts) < 0) {
		cli_error("bench", "out of memory", NULL);
		return EXIT_FAIL;
	}
	size_t i = 0;
	for (size_t wi = 0; wi < b->mx.nworkers; wi++)
		for (size_t ti = 0; ti < b->mx.nthreads; ti++)
			for (size_t si = 0; si < b->nstrategies; si++, i++) {
				dxb_rs_cell *c = &m->cells[i];
				c->dim[0] = dxb_loader_name(b->strategy[si]);
				matrix_cell_counts(c, mt->counts[i], 1, 2, b->mx.workers[wi], b->mx.threads[ti]);
				if (run_cell(b, p, m, c, b->strategy[si], b->mx.workers[wi], b->mx.threads[ti],
				             i) != 0)
					return matrix_interrupted("bench", &b->mx);
			}
	matrix_progress("bench", &b->mx, 0, 0, NULL, 0);
	if (render_meta(b, p, mt) < 0) {
		cli_error("bench", "out of memory", NULL);
		return EXIT_FAIL;
	}
	m->machine_json = mt->machine;
	m->build_json = mt->build;
	m->params_json = mt->params;
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	bench_opts b = { 0 };
	const matrix_cmd cmd = { "bench", usage, own_options, set_own, &b, NULL };
	plan p = { 0 };
	meta mt = { 0 };
	dxb_rs_matrix m = { .command = "bench", .dims = dims, .ndims = 3, .metrics = dxb_figures_metrics,
	                .nmetrics = FG_COUNT, .primary = FG_SAMPLES, .group_dim = 1, .x_dim = 1,
	                .plot_metrics = { FG_SAMPLES, FG_PSS } };
	dx_err err = { 0 };
	matrix_opts_init(&b.mx);
	int rc = matrix_parse(&cmd, &b.mx, argc, argv);
	if (rc != 0) {
		rc = rc < 0 ? cli_stdout_done("bench") : rc;
		goto out;
	}
	if (b.mx.from) {
		if (dxb_rs_read_report(&m, b.mx.from, &err) < 0) {
			rc = cli_lib_failure("bench", err.code, &err);
			goto out;
		}
	} else if ((rc = measure(&b, &m, &p, &mt)) != 0) {
		goto out;
	}
	rc = matrix_report(&cmd, &b.mx, &m);
out:
	matrix_corpus_remove(&p.mc);
	dxb_rs_free_report(&m);
	free(mt.counts);
	free(mt.machine);
	free(mt.build);
	free(mt.params);
	matrix_opts_free(&b.mx);
	return rc;
}
