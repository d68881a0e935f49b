/*
 * matrix_corpus.c: the corpus a measurement matrix runs on, for bench and
 * pin-test alike: the one given, with its index (built in a temporary
 * directory when it has none), or a synthetic one generated there; what
 * the reports say of it; and the progress line of the cells.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "matrix.h"

static const char *const synthetic_default = "passages:50000";

/* The size of the corpus the index describes, and of the index. */
static int measure_index(matrix_corpus *mc, dx_err *err)
{
	dx_index *ix = dx_index_open(mc->index, err);
	if (!ix)
		return err->code;
	dx_index_info info;
	dx_index_get_info(ix, &info);
	mc->records = info.records;
	mc->index_bytes = info.file_size;
	mc->usize = 0;
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(ix, i, &si) == 0)
			mc->usize += si.usize;
	}
	dx_index_close(ix);
	return 0;
}

static int prepare(matrix_opts *o, matrix_corpus *mc, progress *pr, dx_err *err)
{
	dxb_tempcorpus *t = &mc->t;
	int rc;
	if (!o->corpus) {
		dxb_synth_opts so;
		const char *spec = o->synthetic ? o->synthetic : synthetic_default;
		matrix_parse_synthetic(spec, &so);
		if ((rc = dxb_tempcorpus_mkdir(t, o->tmpdir, err)) < 0 ||
		    (rc = dxb_tempcorpus_make(t, &so, progress_update, pr, err)) < 0)
			return rc;
		snprintf(mc->label, sizeof mc->label, "synthetic %s", spec);
		snprintf(mc->index, sizeof mc->index, "%s.ddx", t->plain);
		if (!o->wl.qrels) {
			o->wl.queries = t->queries;
			o->wl.qrels = t->qrels;
			o->wl.run = t->run;
		}
		dxb_fs_type(t->dir, mc->fs, sizeof mc->fs);
		return measure_index(mc, err);
	}
	snprintf(mc->label, sizeof mc->label, "%s", o->corpus);
	if ((rc = dx_index_path_for(o->corpus, mc->index, sizeof mc->index, err)) < 0)
		return rc;
	if (access(mc->index, F_OK) < 0 && errno == ENOENT) {
		/* No index beside the corpus: one in the temporary directory,
		 * so that a corpus on read-only storage can be measured too. */
		char *copy = strdup(o->corpus);
		if (!copy)
			return err->code = DX_ENOMEM;
		if ((rc = dxb_tempcorpus_mkdir(t, o->tmpdir, err)) == 0) {
			snprintf(mc->index, sizeof mc->index, "%s/%s.ddx", t->dir, basename(copy));
			dx_build_opts bo;
			dx_build_opts_init(&bo);
			bo.progress = progress_update;
			bo.progress_ctx = pr;
			dx_build_report rep;
			const char *files[] = { o->corpus };
			rc = dx_index_build(files, 1, mc->index, &bo, &rep, err);
		}
		free(copy);
		if (rc < 0)
			return rc;
	}
	dxb_fs_type(o->corpus, mc->fs, sizeof mc->fs);
	return measure_index(mc, err);
}

int matrix_corpus_prepare(matrix_opts *o, matrix_corpus *mc, dx_err *err)
{
	progress pr;
	/* The bar names what it makes. */
	char label[TC_PATH + 64];
	if (o->corpus)
		snprintf(label, sizeof label, "indexing %s", o->corpus);
	else
		snprintf(label, sizeof label, "generating the corpus %s",
		         o->synthetic ? o->synthetic : synthetic_default);
	progress_init(&pr, label, o->quiet);
	int rc = prepare(o, mc, &pr, err);
	progress_done(&pr, NULL);
	return rc;
}

void matrix_corpus_remove(matrix_corpus *mc)
{
	dxb_tempcorpus_remove(&mc->t);
}

static void json_uint(dxb_json *j, const char *key, uint64_t v)
{
	dxb_json_key(j, key);
	dxb_json_uint(j, v);
}

void matrix_json_params(dxb_json *j, const matrix_opts *o, const matrix_corpus *mc)
{
	static const char *const kinds[] = { [DXB_WL_TRIPLES] = "triples", [DXB_WL_RANDOM] = "random",
	                                     [DXB_WL_SCAN] = "scan" };
	const dxb_workload_opts *w = &o->wl;
	int own = mc->t.dir[0] != '\0' && w->qrels == mc->t.qrels;
	int triples = w->kind == DXB_WL_TRIPLES;
	matrix_json_string(j, "corpus", mc->label);
	json_uint(j, "records", mc->records);
	json_uint(j, "corpus_bytes", mc->usize);
	json_uint(j, "index_bytes", mc->index_bytes);
	matrix_json_string(j, "workload", kinds[w->kind]);
	json_uint(j, "batch", w->batch);
	json_uint(j, "negatives", w->negatives);
	/* The inputs of the triples, when it draws them. */
	matrix_json_string(j, "queries", !triples ? NULL : own ? "synthetic" : w->queries);
	matrix_json_string(j, "qrels", !triples ? NULL : own ? "synthetic" : w->qrels);
	matrix_json_string(j, "run", !triples ? NULL : own ? "synthetic" : w->run);
	json_uint(j, "depth", w->depth);
	json_uint(j, "seed", w->seed);
	matrix_json_list(j, "workers", o->workers, o->nworkers);
	matrix_json_list(j, "threads", o->threads, o->nthreads);
	dxb_json_key(j, "duration_s");
	dxb_json_double(j, w->duration, 6);
	json_uint(j, "samples", w->samples);
	dxb_json_key(j, "warmup_s");
	dxb_json_double(j, w->warmup, 6);
	json_uint(j, "repeat", o->repeat);
	json_uint(j, "mem_limit_bytes", o->mem_limit);
	matrix_json_string(j, "mem_limit_by", o->limit_kind);
}

void matrix_progress(const char *cmd, const matrix_opts *o, size_t i, size_t n, const char *key,
                     unsigned r)
{
	if (o->quiet || !isatty(STDERR_FILENO))
		return;
	/* The time left, from the repetitions run so far: cells of a run
	 * take about the same time (--duration), less the skipped ones. */
	static double started;
	double now = dxb_now(), done = (double)i * o->repeat + r, all = (double)n * o->repeat;
	char eta[48] = "", t[32];
	if (i == 0 && r == 0)
		started = now;
	else if (key && done > 0 && all > done)
		snprintf(eta, sizeof eta, ", %s left",
		         cli_time_left((now - started) / done * (all - done), t, sizeof t));
	if (!key)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\r\033[Kdocdex %s: cell %zu/%zu %s, repetition %u/%u%s", cmd, i + 1, n,
		        key, r + 1, o->repeat, eta);
	fflush(stderr);
}
