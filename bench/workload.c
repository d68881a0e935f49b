/*
 * workload.c: one benchmark worker.  Each thread has its own corpus
 * handle, loader and sample generator, as the loader workers of a trainer
 * have; a memory loader's copy of the corpus is made once per process and
 * shared by its threads.  A batch is what a trainer receives: the query
 * texts and the documents' texts (the field docdex sample prints) copied
 * into one buffer, in the memory pin-test's mode asks for (batchbuf.c),
 * and copied on to the GPU in the CUDA modes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dxbench.h"
#include "err.h"

typedef struct thread_ctx {
	const dxb_workload_opts *o;
	unsigned shard, shards;   /* this thread among all threads of all workers */
	const dxb_loader *share;   /* the process's memory loader, or NULL */
	struct gate *gate, *release;
	double t_start;           /* the measured part starts here (set by main) */
	/* results */
	int failed;
	dx_err err;
	uint64_t samples, docs, bytes;
	double elapsed;
	uint64_t inflated;         /* by its corpus, over the measured part */
	double pin_s, copy_s;     /* batchbuf's, copied out before it closes */
	uint64_t copied;
	uint64_t hist[HIST_BUCKETS];
} thread_ctx;

/* The threads set up, then wait until the main thread has heard that every
 * worker process is ready too, and all start at once. */
struct gate {
	pthread_mutex_t m;
	pthread_cond_t cv;
	unsigned ready;
	int open, abort;
};

/* Counts the thread in as ready and waits for the gate to open; returns
 * whether the run goes on. */
static int gate_pass(struct gate *g)
{
	pthread_mutex_lock(&g->m);
	g->ready++;
	pthread_cond_broadcast(&g->cv);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->m);
	int go = !g->abort;
	pthread_mutex_unlock(&g->m);
	return go;
}

static void gate_wait_ready(struct gate *g, unsigned n)
{
	pthread_mutex_lock(&g->m);
	while (g->ready < n)
		pthread_cond_wait(&g->cv, &g->m);
	pthread_mutex_unlock(&g->m);
}

static void gate_open(struct gate *g, int abort)
{
	pthread_mutex_lock(&g->m);
	g->open = 1;
	g->abort = abort;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->m);
}

unsigned dxb_workload_docs_per_sample(const dxb_workload_opts *o)
{
	return o->kind == DXB_WL_TRIPLES ? 1 + o->negatives : 1;
}

static unsigned hist_index(uint64_t ns)
{
	if (ns < 16)
		return (unsigned)ns;
	unsigned e = 63 - (unsigned)__builtin_clzll(ns);
	return 16 + (e - 4) * 16 + (unsigned)((ns >> (e - 4)) & 15);
}

/* The middle of bucket i, in nanoseconds. */
static double hist_value(unsigned i)
{
	if (i < 16)
		return i;
	unsigned e = (i - 16) / 16 + 4, m = (i - 16) % 16;
	return ((double)(16 + m) + 0.5) * (double)(1ull << (e - 4));
}

double dxb_hist_quantile(const uint64_t *hist, double q)
{
	uint64_t total = 0, seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		total += hist[i];
	if (!total)
		return 0;
	uint64_t want = (uint64_t)(q * (double)total);
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += hist[i];
		if (seen >= want)
			return hist_value(i) * 1e-9;
	}
	return hist_value(HIST_BUCKETS - 1) * 1e-9;
}

/* Where the samples of a thread come from. */
typedef struct generator {
	dx_sampler *sampler;      /* triples from queries and qrels */
	dx_rng rng;               /* random positions */
	uint64_t next, step;      /* scan */
	uint64_t count;
	uint64_t *neg;
} generator;

static int generator_open(generator *g, thread_ctx *t, dx_corpus *c, dx_err *err)
{
	const dxb_workload_opts *o = t->o;
	g->count = dx_corpus_count(c);
	dx_rng_seed(&g->rng, o->seed ^ ((uint64_t)t->shard * 0x9E3779B97F4A7C15ull));
	g->next = t->shard % g->count;
	g->step = t->shards;
	if (o->kind != DXB_WL_TRIPLES || !o->qrels)
		return 0;
	dx_sample_opts so;
	dx_sample_opts_init(&so);
	so.queries = o->queries;
	so.qrels = o->qrels;
	so.run = o->run;
	so.min_rel = 1;
	so.depth = o->depth;
	so.random = !o->run;
	so.negatives = o->negatives;
	so.seed = o->seed;
	so.count = 1ull << 62;
	so.rank = t->shard;
	so.world_size = t->shards;
	if (!(g->neg = malloc(o->negatives * sizeof *g->neg)))
		return dx__fail_nomem(err);
	g->sampler = dx_sampler_open(c, &so, err);
	return g->sampler ? 0 : err->code;
}

static void generator_close(generator *g)
{
	dx_sampler_close(g->sampler);
	free(g->neg);
}

/* The positions of one sample into pos (dxb_workload_docs_per_sample of them),
 * and its query text when it has one. */
static int generate(generator *g, const dxb_workload_opts *o, uint64_t *pos, const char **query,
                    size_t *qlen, dx_err *err)
{
	*query = NULL;
	*qlen = 0;
	if (g->sampler) {
		dx_triple tr = { .neg = g->neg };
		int r = dx_sampler_next(g->sampler, &tr, err);
		if (r < 0)
			return r;
		if (r == 0) /* it was asked for 2^62 triples */
			return dx__fail(err, DX_EINVAL, 0, "", "the triples ran out");
		pos[0] = tr.pos;
		for (unsigned k = 0; k < o->negatives; k++)
			pos[1 + k] = tr.neg[k < tr.nneg ? k : 0];
		*query = tr.query;
		*qlen = tr.query_len;
		return 0;
	}
	if (o->kind == DXB_WL_SCAN) {
		pos[0] = g->next;
		g->next = (g->next + g->step) % g->count;
		return 0;
	}
	for (unsigned k = 0; k < dxb_workload_docs_per_sample(o); k++)
		pos[k] = dx_rng_below(&g->rng, g->count);
	return 0;
}

static void *thread_main(void *arg)
{
	thread_ctx *t = arg;
	const dxb_workload_opts *o = t->o;
	unsigned per = dxb_workload_docs_per_sample(o);
	size_t ndocs = (size_t)o->batch * per;
	dx_corpus *c = NULL;
	dxb_loader *l = NULL;
	generator g = { 0 };
	uint64_t *pos = malloc(ndocs * sizeof *pos);
	dx_record *recs = malloc(ndocs * sizeof *recs);
	dx_record *queries = calloc(o->batch, sizeof *queries); /* their texts */
	dx_fields *fields = NULL;
	dxb_batchbuf batch = { 0 };

	if (!pos || !recs || !queries)
		t->failed = dx__fail_nomem(&t->err) < 0;
	else if (!(c = dx_corpus_open(o->corpus, &t->err)) ||
	         (DXB_LOAD_CACHED(o->strategy) &&
	          dx_corpus_set_inflate_cache(c, o->inflate_cache ? o->inflate_cache
	                                                          : DXB_INFLATE_CACHE_DEFAULT,
	                                      NULL, &t->err) < 0) ||
	         generator_open(&g, t, c, &t->err) < 0 ||
	         !(fields = dx_fields_parse(c, NULL, &t->err)) ||
	         !(l = dxb_loader_open(o->strategy, c, t->share, &t->err)) ||
	         dxb_batchbuf_open(&batch, o->pin, o->batch_hint, &t->err) < 0)
		t->failed = 1;
	else if (!g.count)
		t->failed = dx__fail(&t->err, DX_EINVAL, 0, o->corpus, "the corpus is empty") < 0;
	t->pin_s = batch.pin_s;
	if (!gate_pass(t->gate) || t->failed)
		goto out;

	/* Batches until the warm-up is over are not counted; the measured
	 * part starts after the first batch that ends past it. */
	double warm_end = t->t_start + o->warmup, end = 0, now = dxb_now();
	int measuring = 0;
	unsigned nt = o->threads ? o->threads : 1;
	uint64_t goal = o->samples ? (o->samples + nt - 1) / nt : 0;
	for (;;) {
		double b0 = now;
		for (unsigned s = 0; s < o->batch; s++) {
			if (generate(&g, o, pos + (size_t)s * per, &queries[s].data, &queries[s].len,
			             &t->err) < 0)
				goto fail;
		}
		if (dxb_loader_get(l, pos, ndocs, recs, &t->err) < 0)
			goto fail;
		/* The batch a trainer gets: each sample's query and document
		 * texts, copied into one buffer for its tokenizer. */
		batch.len = 0;
		for (size_t s = 0; s < o->batch; s++) {
			if (dxb_batchbuf_add(&batch, queries[s].data, queries[s].len, &t->err) < 0)
				goto fail;
			for (size_t i = s * per; i < (s + 1) * per; i++) {
				const char *text;
				size_t len;
				if (dx_corpus_fields(c, fields, &recs[i], &text, &len, &t->err) < 0)
					goto fail;
				if (dxb_batchbuf_add(&batch, text, len, &t->err) < 0)
					goto fail;
			}
		}
		/* Delivered into device memory, when a CUDA mode asks. */
		if (batch.cu && dxb_batchbuf_to_device(&batch, &t->err) < 0)
			goto fail;
		now = dxb_now();
		if (!measuring) {
			if (now < warm_end)
				continue;
			measuring = 1;
			t->t_start = now;
			t->inflated = dx_corpus_inflated(c);
			end = now + o->duration;
			batch.copy_s = 0;
			batch.copied = 0;
			continue;
		}
		t->samples += o->batch;
		t->docs += ndocs;
		t->bytes += batch.len;
		t->hist[hist_index((uint64_t)((now - b0) * 1e9))]++;
		if (goal ? t->samples >= goal : now >= end)
			break;
	}
	t->elapsed = now - t->t_start;
	t->inflated = dx_corpus_inflated(c) - t->inflated;
	t->copy_s = batch.copy_s;
	t->copied = batch.copied;
	goto out;
fail:
	t->failed = 1;
out:
	/* Everything stays held until the process's memory was read. */
	gate_pass(t->release);
	dxb_loader_close(l);
	generator_close(&g);
	dx_corpus_close(c);
	free(pos);
	free(recs);
	free(queries);
	dxb_batchbuf_close(&batch);
	dx_fields_free(fields);
	return NULL;
}

void dxb_workload_run(const dxb_workload_opts *o, unsigned rank, unsigned world, double t0,
                      const dxb_workload_hooks *hooks, dxb_worker_result *r)
{
	unsigned nt = o->threads ? o->threads : 1;
	thread_ctx *t = calloc(nt, sizeof *t);
	pthread_t *tid = calloc(nt, sizeof *tid);
	struct gate gate = { .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	struct gate release = { .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	dx_corpus *c = NULL, *locked = NULL;
	dxb_loader *shared = NULL;
	dx_err err = { 0 };
	unsigned started = 0;

	memset(r, 0, sizeof *r);
	if (!t || !tid) {
		snprintf(r->msg, sizeof r->msg, "out of memory");
		goto out;
	}
	/* One copy of the corpus for all threads of a memory worker. */
	if (o->strategy == DXB_LOAD_MEMORY &&
	    (!(c = dx_corpus_open(o->corpus, &err)) ||
	     !(shared = dxb_loader_open(o->strategy, c, NULL, &err))))
		goto failed;
	/* The corpus made resident, or locked, once for the process: its
	 * threads' mappings are of the same pages. */
	if (o->pin == DXB_PIN_CORPUS || o->pin == DXB_PIN_POPULATE) {
		uint64_t bytes;
		double p0 = dxb_now();
		if (!(locked = dx_corpus_open(o->corpus, &err)) ||
		    dxb_corpus_make_resident(locked, o->pin == DXB_PIN_CORPUS, &bytes, &err) < 0)
			goto failed;
		r->pin_s = dxb_now() - p0;
	}
	for (; started < nt; started++) {
		t[started] = (thread_ctx){ .o = o, .shard = rank * nt + started, .shards = world * nt,
		                           .share = shared, .gate = &gate,
		                           .release = &release };
		if (pthread_create(&tid[started], NULL, thread_main, &t[started]) != 0) {
			snprintf(r->msg, sizeof r->msg, "cannot start %u threads", nt);
			break;
		}
	}
	gate_wait_ready(&gate, started);
	r->setup_s = dxb_now() - t0;
	double slowest = 0;
	for (unsigned i = 0; i < started; i++) {
		if (t[i].failed && !r->msg[0]) {
			dx_describe(&t[i].err, r->msg, sizeof r->msg);
			r->code = t[i].err.code;
		}
		slowest = t[i].pin_s > slowest ? t[i].pin_s : slowest;
	}
	r->pin_s += slowest;
	int abort_run = r->msg[0] || hooks->ready(hooks->ctx) != 0;
	double start = dxb_now();
	for (unsigned i = 0; i < started; i++)
		t[i].t_start = start;
	gate_open(&gate, abort_run);
	gate_wait_ready(&release, started);
	for (unsigned i = 0; i < started; i++) {
		if (t[i].failed && !r->msg[0]) {
			dx_describe(&t[i].err, r->msg, sizeof r->msg);
			r->code = t[i].err.code;
		}
		r->samples += t[i].samples;
		r->copy_s += t[i].copy_s;
		r->copied += t[i].copied;
		r->docs += t[i].docs;
		r->bytes += t[i].bytes;
		r->inflated += t[i].inflated;
		if (t[i].elapsed > r->elapsed_s)
			r->elapsed_s = t[i].elapsed;
		for (unsigned k = 0; k < HIST_BUCKETS; k++)
			r->hist[k] += t[i].hist[k];
	}
	r->ok = !r->msg[0] && !abort_run;
	if (!r->ok && !r->msg[0])
		snprintf(r->msg, sizeof r->msg, "stopped before it was measured");
	dxb_page_faults(&r->minor_faults, &r->major_faults);
	hooks->done(hooks->ctx, r);
	gate_open(&release, 0);
	for (unsigned i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	goto freed;
failed:
	dx_describe(&err, r->msg, sizeof r->msg);
	r->code = err.code;
out:
	hooks->done(hooks->ctx, r);
freed:
	dxb_loader_close(shared);
	dx_corpus_close(c);
	dx_corpus_close(locked);
	free(t);
	free(tid);
}
