/*
 * pin_test.c: docdex pin-test, what pinning memory, more loader workers and
 * a RAM disk do for loading on this machine.  Each cell of the matrix (pin
 * mode x placement x cache state x workers x threads) is run --repeat times
 * by workers.c as in bench, whose options, experiment file and reports it
 * shares (matrix.c); it adds the set-up each technique costs, the machine's
 * locked and shared memory, and a summary of what each technique gained
 * over the plain configuration.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dxbench.h"
#include "cli.h"
#include "commands.h"
#include "matrix.h"
#include "signals.h"

static const char usage[] =
	"usage: docdex pin-test [options] [CORPUS_OR_INDEX]\n"
	"\n"
	"Measure what pinned memory, more loader workers and a RAM disk do for\n"
	"loading training samples on this machine, alone and combined: samples/s,\n"
	"set-up cost and memory, against the plain configuration.  Without a\n"
	"corpus, a synthetic one shaped like MS MARCO passages is generated in a\n"
	"temporary directory and removed afterwards.\n"
	"\n"
	"What is measured:\n"
	"      --pin LIST           none, buffers (batch buffers locked with mlock),\n"
	"                           populate (corpus and index read into memory),\n"
	"                           corpus (populate, and locked; brings populate),\n"
	"                           cuda (batches copied to the GPU from pinned\n"
	"                           memory; brings cuda-pageable, the same from\n"
	"                           pageable memory), or all\n"
	"                           (default: none,buffers,corpus,cuda)\n"
	"      --placement LIST     disk (the corpus where it is) and ramdisk (copied\n"
	"                           to a RAM filesystem) (default: disk,ramdisk)\n"
	"      --ramdisk DIR        the tmpfs or ramfs directory for the copy\n"
	"                           (default: /dev/shm)\n"
	"      --cache LIST         warm (read in first) or cold (dropped from the\n"
	"                           page cache before each repetition) (default: warm)\n"
	"      --strategy NAME      how the workers read (default: mmap, or bgzf or\n"
	"                           gzip for a compressed corpus)\n";

enum { OPT_PIN = MX_OPT_OWN, OPT_PLACEMENT, OPT_CACHE, OPT_RAMDISK, OPT_STRATEGY };

static const struct option own_options[] = {
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "placement", required_argument, NULL, OPT_PLACEMENT },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "ramdisk", required_argument, NULL, OPT_RAMDISK },
	{ "strategy", required_argument, NULL, OPT_STRATEGY },
	{ NULL, 0, NULL, 0 },
};

enum { PLACE_DISK, PLACE_RAMDISK, NPLACES };
enum { CACHE_WARM, CACHE_COLD, NCACHES };
static const char *const place_names[NPLACES] = { "disk", "ramdisk" };
static const char *const cache_names[NCACHES] = { "warm", "cold" };

typedef struct pin_opts {
	matrix_opts mx;
	int pin[DXB_PIN_LAST + 1], place[NPLACES], cache[NCACHES];
	size_t npins, nplaces, ncaches;
	const char *ramdisk;
	int strategy;             /* DXB_LOAD_*, or -1: the first that applies */
} pin_opts;

/* A list of words, each one of names[0..n), without repeats, into out. */
typedef struct word_list {
	const char *const *names;
	int n;
	int *out;
	size_t *count;
} word_list;

static int add_word(void *ctx, const char *w)
{
	word_list *l = ctx;
	int k = 0;
	while (k < l->n && strcmp(w, l->names[k]) != 0)
		k++;
	if (k == l->n)
		return -1;
	for (size_t i = 0; i < *l->count; i++)
		if (l->out[i] == k)
			return 0;
	l->out[(*l->count)++] = k;
	return 0;
}

static int parse_words(const char *s, const char *const *names, int n, int *out, size_t *count)
{
	word_list l = { names, n, out, count };
	*count = 0;
	return cli_parse_list(s, add_word, &l);
}

/* --pin: "all" is every mode.  corpus brings populate, just before it:
 * the corpus read in without locking, which still runs where locking is
 * refused; cuda brings cuda-pageable, the same copies from ordinary
 * memory, which the summary compares it with. */
static int parse_pins(const char *s, pin_opts *p)
{
	static const char *const names[] = { "none", "buffers", "populate", "corpus", "cuda", "all" };
	enum { ALL = 5 };
	int words[6];
	size_t n;
	if (parse_words(s, names, 6, words, &n) < 0)
		return -1;
	p->npins = 0;
	for (int k = 0; k <= DXB_PIN_LAST; k++) {
		int want = 0;
		for (size_t i = 0; i < n; i++) {
			int w = words[i] == ALL ? k : dxb_pin_parse(names[words[i]]);
			want |= w == k || (k == DXB_PIN_POPULATE && w == DXB_PIN_CORPUS) ||
			        (k == DXB_PIN_CUDA_PAGEABLE && w == DXB_PIN_CUDA);
		}
		if (want)
			p->pin[p->npins++] = k;
	}
	return 0;
}

static int one_value(int id)
{
	return id == OPT_RAMDISK || id == OPT_STRATEGY;
}

static int set_own(void *ctx, int id, const char *name, const char *v, const char *place)
{
	pin_opts *p = ctx;
	switch (id) {
	case OPT_PIN:
		if (parse_pins(v, p) < 0)
			return opt_bad_value("pin-test", name, place,
			                        "none, buffers, populate, corpus, cuda or all", v);
		break;
	case OPT_PLACEMENT:
		if (parse_words(v, place_names, NPLACES, p->place, &p->nplaces) < 0)
			return opt_bad_value("pin-test", name, place, "disk or ramdisk", v);
		break;
	case OPT_CACHE:
		if (parse_words(v, cache_names, NCACHES, p->cache, &p->ncaches) < 0)
			return opt_bad_value("pin-test", name, place, "warm or cold", v);
		break;
	case OPT_RAMDISK:
		if (!*v)
			return opt_bad_value("pin-test", name, place, "a directory", v);
		p->ramdisk = v;
		break;
	case OPT_STRATEGY:
		if ((p->strategy = dxb_loader_parse(v)) < 0)
			return opt_bad_value("pin-test", name, place,
			                        "memory, stdio, pread, mmap, gzip, bgzf, gzip-cached or "
			                        "bgzf-cached", v);
		break;
	}
	return 0;
}

/* ---- the environment ----------------------------------------------------- */

/* What the machine offers the techniques; filled by looking, or from the
 * environment object of a report (--from). */
typedef struct env {
	char memlock[32];         /* "64.0 MiB", "unlimited" */
	char thp[32];
	char shm[96];             /* "/dev/shm: 11.7 GiB, 11.7 GiB free" */
	char ramdisk[TC_PATH + 64]; /* "/dev/shm (tmpfs)" */
	char numa[16];            /* the count as text, or as a report has it */
	unsigned numa_nodes;      /* the count, when looked at */
	char kernel[256];
	char cuda[512];           /* "found", or why not */
	char cuda_device[256], cuda_driver[16], cuda_runtime[16];
	int cuda_found;
	uint64_t memlock_limit;   /* bytes; UINT64_MAX when unlimited */
} env;

/* "12.4" from CUDA's 12040. */
static void cuda_version(int v, char *buf, size_t n)
{
	snprintf(buf, n, "%d.%d", v / 1000, v % 1000 / 10);
}

/*
 * Whether CUDA works here, asked in a child process: a process that has
 * initialised CUDA must not fork workers that use it, so the parent never
 * does.
 */
static void probe_cuda(env *e)
{
	struct probe { int ok; char why[400]; dxb_cuda_info info; } pr = { 0 };
	int fd[2];
	snprintf(e->cuda, sizeof e->cuda, "not found: cannot ask");
	if (pipe(fd) < 0)
		return;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		dx_err err = { 0 };
		close(fd[0]);
		dxb_cuda *cu = dxb_cuda_open(0, &err);
		if (cu) {
			pr.ok = 1;
			dxb_cuda_get_info(cu, &pr.info);
			dxb_cuda_close(cu);
		} else {
			dx_describe(&err, pr.why, sizeof pr.why);
		}
		_exit(write(fd[1], &pr, sizeof pr) == (ssize_t)sizeof pr ? 0 : 1);
	}
	close(fd[1]);
	ssize_t got = -1;
	if (pid > 0) {
		/* A runtime that hangs in its initialisation (a wedged driver)
		 * is given up for an interrupt, which measure then reports. */
		while ((got = read(fd[0], &pr, sizeof pr)) < 0 && errno == EINTR)
			if (cli_interrupted()) {
				kill(pid, SIGKILL);
				break;
			}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	close(fd[0]);
	if (got != (ssize_t)sizeof pr)
		return;
	e->cuda_found = pr.ok;
	if (!pr.ok) {
		snprintf(e->cuda, sizeof e->cuda, "not found: %s", pr.why);
		return;
	}
	snprintf(e->cuda, sizeof e->cuda, "found: %s", pr.info.library);
	snprintf(e->cuda_device, sizeof e->cuda_device, "%s", pr.info.device_name);
	cuda_version(pr.info.driver_version, e->cuda_driver, sizeof e->cuda_driver);
	cuda_version(pr.info.runtime_version, e->cuda_runtime, sizeof e->cuda_runtime);
}

static void look_around(const pin_opts *p, env *e)
{
	dxb_machine mc;
	char a[32], b[32], fs[64];
	dxb_machine_info(&mc);
	e->memlock_limit = mc.memlock_limit;
	if (mc.memlock_limit == UINT64_MAX)
		snprintf(e->memlock, sizeof e->memlock, "unlimited");
	else
		dx_format_bytes(mc.memlock_limit, e->memlock, sizeof e->memlock);
	snprintf(e->thp, sizeof e->thp, "%s", mc.thp[0] ? mc.thp : "unknown");
	if (mc.shm_size)
		snprintf(e->shm, sizeof e->shm, "%s, %s free", dx_format_bytes(mc.shm_size, a, sizeof a),
		         dx_format_bytes(mc.shm_free, b, sizeof b));
	else
		snprintf(e->shm, sizeof e->shm, "none");
	dxb_fs_type(p->ramdisk, fs, sizeof fs);
	snprintf(e->ramdisk, sizeof e->ramdisk, "%s (%s)", p->ramdisk, fs[0] ? fs : "missing");
	e->numa_nodes = mc.numa_nodes;
	snprintf(e->numa, sizeof e->numa, "%u", mc.numa_nodes);
	snprintf(e->kernel, sizeof e->kernel, "%s", mc.kernel);
	probe_cuda(e);
}

/* The environment as a report's JSON object, and back. */
static char *env_json(const env *e)
{
	dxb_json *j = dxb_json_new(0);
	dxb_json_begin_object(j, DXB_JSON_INLINE);
	dxb_json_key(j, "memlock_limit_bytes");
	if (e->memlock_limit == UINT64_MAX)
		dxb_json_null(j);
	else
		dxb_json_uint(j, e->memlock_limit);
	matrix_json_string(j, "memlock_limit", e->memlock);
	matrix_json_string(j, "transparent_hugepages", e->thp);
	matrix_json_string(j, "dev_shm", e->shm);
	matrix_json_string(j, "ramdisk", e->ramdisk);
	dxb_json_key(j, "numa_nodes");
	dxb_json_uint(j, e->numa_nodes);
	matrix_json_string(j, "kernel", e->kernel);
	matrix_json_string(j, "cuda", e->cuda);
	matrix_json_string(j, "cuda_device", e->cuda_found ? e->cuda_device : NULL);
	matrix_json_string(j, "cuda_driver", e->cuda_found ? e->cuda_driver : NULL);
	matrix_json_string(j, "cuda_runtime", e->cuda_found ? e->cuda_runtime : NULL);
	dxb_json_end_object(j);
	return dxb_json_finish(j);
}

static void env_from_json(const char *obj, env *e)
{
	memset(e, 0, sizeof *e);
	dxb_rs_json_get(obj, "memlock_limit", e->memlock, sizeof e->memlock);
	dxb_rs_json_get(obj, "transparent_hugepages", e->thp, sizeof e->thp);
	dxb_rs_json_get(obj, "dev_shm", e->shm, sizeof e->shm);
	dxb_rs_json_get(obj, "ramdisk", e->ramdisk, sizeof e->ramdisk);
	dxb_rs_json_get(obj, "numa_nodes", e->numa, sizeof e->numa);
	dxb_rs_json_get(obj, "kernel", e->kernel, sizeof e->kernel);
	dxb_rs_json_get(obj, "cuda", e->cuda, sizeof e->cuda);
	e->cuda_found = dxb_rs_json_get(obj, "cuda_device", e->cuda_device, sizeof e->cuda_device) == 0 &&
	                strcmp(e->cuda_device, "null") != 0;
	dxb_rs_json_get(obj, "cuda_driver", e->cuda_driver, sizeof e->cuda_driver);
	dxb_rs_json_get(obj, "cuda_runtime", e->cuda_runtime, sizeof e->cuda_runtime);
}

/* "  kernel             Linux ...": a value too long for the line (a
 * library's path in CUDA's reason) goes on under itself. */
enum { ENV_LABEL = 19 };
static void env_line(FILE *f, const char *label, const char *value)
{
	fprintf(f, "  %-*s", ENV_LABEL, label);
	dxb_rs_put_wrapped(f, value, 2 + ENV_LABEL, 2 + ENV_LABEL);
}

/* The section the table starts with. */
static char *env_text(const env *e)
{
	char *text = NULL;
	size_t len;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	fprintf(f, "environment\n");
	char memlock[sizeof e->memlock + 16];
	snprintf(memlock, sizeof memlock, "%s (ulimit -l)", e->memlock);
	env_line(f, "memory-lock limit", memlock);
	env_line(f, "huge pages (THP)", e->thp);
	env_line(f, "/dev/shm", e->shm);
	env_line(f, "RAM disk", e->ramdisk);
	env_line(f, "NUMA nodes", e->numa);
	env_line(f, "kernel", e->kernel);
	env_line(f, "CUDA", e->cuda);
	if (e->cuda_found) {
		char dev[sizeof e->cuda_device + sizeof e->cuda_driver + sizeof e->cuda_runtime + 32];
		snprintf(dev, sizeof dev, "%s, driver %s, runtime %s", e->cuda_device, e->cuda_driver,
		         e->cuda_runtime);
		env_line(f, "CUDA device", dev);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- the matrix ------------------------------------------------------------ */

enum { D_PIN, D_PLACE, D_CACHE, D_WORKERS, D_THREADS, NDIMS };

static const dxb_rs_dim dims[NDIMS] = {
	[D_PIN] = { "pin", "pin", 0, NULL },
	[D_PLACE] = { "placement", "placement", 0, NULL },
	[D_CACHE] = { "cache", "cache", 0, NULL },
	[D_WORKERS] = { "workers", "j", 1, "worker processes" },
	[D_THREADS] = { "threads", "t", 1, "loader threads in each" },
};

/* The figures bench reports, then pin-test's own. */
enum { M_PIN_S = FG_COUNT, M_COPY_S, M_CACHED, M_MLOCKED, M_SHMEM, M_H2D, NMETRICS };

static const dxb_rs_metric own_metrics[NMETRICS - FG_COUNT] = {
	[M_PIN_S - FG_COUNT] = { "pin_s", "pin s", "s", DXB_RS_LOWER, 0, 2, DXB_RS_WIDE,
	                         "time to lock or populate" },
	[M_COPY_S - FG_COUNT] = { "copy_s", "copy s", "s", DXB_RS_LOWER, 0, 2, DXB_RS_WIDE,
	                          "time to copy the corpus to the RAM disk" },
	[M_CACHED - FG_COUNT] = { "cached_pct", "cached %", "%", DXB_RS_NEITHER, 0, 0, DXB_RS_WIDE,
	                          "of the corpus in the page cache before a repetition" },
	[M_MLOCKED - FG_COUNT] = { "mlocked_mib", "locked MiB", "MiB", DXB_RS_LOWER, 0, 1, DXB_RS_SHOW,
	                           "memory locked (Mlocked)" },
	[M_SHMEM - FG_COUNT] = { "shmem_mib", "Shmem MiB", "MiB", DXB_RS_LOWER, 0, 1, DXB_RS_SHOW,
	                         "RAM disk and shared memory" },
	[M_H2D - FG_COUNT] = { "h2d_gb_s", "H2D GB/s", "GB/s", DXB_RS_HIGHER, 0, 2, DXB_RS_SHOW,
	                       "copies to the GPU" },
};

/* bench's figures, and pin-test's own; what the table shows by default
 * fits 100 columns: the cost of each technique in memory, the rest with
 * --wide (set-up, latency and page faults are in the summary or CSV). */
static void make_metrics(dxb_rs_metric *m)
{
	static const int wide[] = { FG_MB, FG_P50, FG_P99, FG_SETUP, FG_FILE, FG_MAJFLT };
	memcpy(m, dxb_figures_metrics, sizeof dxb_figures_metrics);
	memcpy(m + FG_COUNT, own_metrics, sizeof own_metrics);
	for (size_t i = 0; i < sizeof wide / sizeof *wide; i++)
		m[wide[i]].hide = DXB_RS_WIDE;
}

/* What the cells share: the corpus and what was learnt of it. */
typedef struct plan {
	matrix_corpus mc;
	int strategy;
	uint64_t lockable;        /* what corpus locks: the index and the
	                             plain sources (compressed ones are read,
	                             not mapped) */
	env e;
} plan;

static const double mib = 1024.0 * 1024.0;

/* The batch buffer's first size: a batch of documents of the mean size,
 * with room to spare, as dxb_batchbuf rounds it (a power of two). */
static size_t batch_bytes(const pin_opts *p, const plan *pl, size_t *rounded)
{
	double mean = pl->mc.records ? (double)pl->mc.usize / (double)pl->mc.records : 0;
	double docs = (double)p->mx.wl.batch * dxb_workload_docs_per_sample(&p->mx.wl);
	size_t hint = (size_t)(1.25 * mean * docs) + 256u * p->mx.wl.batch;
	size_t cap = 4096;
	while (cap < hint)
		cap *= 2;
	*rounded = cap;
	return hint;
}

/* A cell's error: what, about the cell's label. */
static int cell_error(dx_err *err, const char *label, const char *what)
{
	*err = (dx_err){ .code = DX_EINVAL };
	snprintf(err->what, sizeof err->what, "%s", what);
	dx_escape(label, strlen(label), err->subject, sizeof err->subject);
	return DX_EINVAL;
}

static int prepare(pin_opts *p, plan *pl, dx_err *err)
{
	int rc = matrix_corpus_prepare(&p->mx, &pl->mc, err);
	if (rc < 0)
		return rc;
	dx_corpus *c = dx_corpus_open(pl->mc.index, err);
	if (!c)
		return err->code;
	dx_index_info info;
	dx_index_get_info(dx_corpus_index(c), &info);
	pl->lockable = info.file_size;
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(dx_corpus_index(c), i, &si) == 0 && si.kind == DX_SOURCE_PLAIN)
			pl->lockable += si.size;
	}
	static const int prefer[] = { DXB_LOAD_MMAP, DXB_LOAD_BGZF, DXB_LOAD_GZIP };
	const char *why = NULL;
	pl->strategy = p->strategy;
	for (size_t i = 0; pl->strategy < 0 && i < sizeof prefer / sizeof *prefer; i++)
		if (dxb_loader_applies(prefer[i], c, &why))
			pl->strategy = prefer[i];
	char what[sizeof err->what];
	if (pl->strategy < 0) {
		rc = cell_error(err, pl->mc.label,
		                "no strategy applies to the corpus by itself: give --strategy");
	} else if (!dxb_loader_applies(pl->strategy, c, &why)) {
		snprintf(what, sizeof what, "the %s strategy %s", dxb_loader_name(pl->strategy), why);
		rc = cell_error(err, pl->mc.label, what);
	}
	dx_corpus_close(c);
	return rc;
}

/* The memory a cell takes beyond the page cache, for --mem-limit: the
 * index, each thread's batch twice (read and copied), the RAM disk's copy,
 * the locked corpus, and a memory loader's copies. */
static double projected(const pin_opts *p, const plan *pl, int pin, int place, unsigned w,
                        unsigned t)
{
	size_t cap;
	batch_bytes(p, pl, &cap);
	double corpus = (double)pl->mc.usize, index = (double)pl->mc.index_bytes;
	double need = index + 2.0 * w * t * (double)cap;
	if (place == PLACE_RAMDISK)
		need += corpus + index;
	if (pin == DXB_PIN_CORPUS || pin == DXB_PIN_POPULATE)
		need += corpus;
	if (pl->strategy == DXB_LOAD_MEMORY)
		need += w * (corpus + 64.0 * (double)pl->mc.records);
	return need;
}

/* Why a cell cannot run on this machine, into why; 0 when it can. */
static int cannot_run(const pin_opts *p, const plan *pl, int pin, unsigned t, char *why,
                      size_t n)
{
	uint64_t need = 0;
	size_t cap;
	char a[32], b[32];
	if ((pin == DXB_PIN_CUDA || pin == DXB_PIN_CUDA_PAGEABLE) && !pl->e.cuda_found) {
		snprintf(why, n, "CUDA %.500s", pl->e.cuda);
		return 1;
	}
	batch_bytes(p, pl, &cap);
	if (pin == DXB_PIN_BUFFERS)
		need = (uint64_t)t * cap;
	else if (pin == DXB_PIN_CORPUS)
		need = pl->lockable;
	if (!need || pl->e.memlock_limit == UINT64_MAX || need <= pl->e.memlock_limit)
		return 0;
	snprintf(why, n, "needs %s locked in each worker: the memory-lock limit is %s (raise it with "
	         "ulimit -l, or memlock in /etc/security/limits.conf)",
	         dx_format_bytes(need, a, sizeof a), dx_format_bytes(pl->e.memlock_limit, b, sizeof b));
	return 1;
}

/* Before a repetition: the corpus read in (warm) or dropped from the page
 * cache (cold), and the fraction of it cached then.  The parent's handle is
 * closed again before the workers start, so that it shares no pages. */
static int set_cache(const char *index, int cache, double *cached, dx_err *err)
{
	uint64_t bytes;
	progress quiet; /* no bar (the cell's line is showing): an interrupt stops the read */
	progress_init(&quiet, "", 1);
	dx_corpus *c = dx_corpus_open(index, err);
	if (!c)
		return err->code;
	int rc = cache == CACHE_COLD ? dxb_corpus_cache_evict(c, err)
	                             : dxb_corpus_cache_load(c, progress_update, &quiet, err);
	if (rc == 0)
		rc = dxb_corpus_cache_resident(c, cached, &bytes, err);
	dx_corpus_close(c);
	return rc;
}

/* A cell's settings. */
typedef struct cell_of {
	int pin, place, cache;
	unsigned w, t;
} cell_of;

/* One repetition's figures. */
static void figures(const dxb_workers_result *res, const dxb_meminfo *before, double cached,
                    double copy_s, int pin, double *row)
{
	double pin_s = 0, h2d_s = 0, h2d_bytes = 0;
	dxb_figures_of(res, row);
	for (unsigned i = 0; i < res->n; i++) {
		pin_s = res->w[i].pin_s > pin_s ? res->w[i].pin_s : pin_s;
		h2d_s += res->w[i].copy_s;
		h2d_bytes += (double)res->w[i].copied;
	}
	row[M_PIN_S] = pin_s;
	row[M_COPY_S] = copy_s;
	row[M_CACHED] = 100 * cached;
	/* The machine's counters, before and during the cell: other processes
	 * move them too, and what they gave back is not the cell's to report
	 * (a cell cannot lock or share less than nothing). */
	row[M_MLOCKED] = fmax(0, ((double)res->machine.mlocked - (double)before->mlocked) / mib);
	row[M_SHMEM] = fmax(0, ((double)res->machine.shmem - (double)before->shmem) / mib);
	/* Each stream's rate: the bytes over the time spent copying them. */
	int cuda = pin == DXB_PIN_CUDA || pin == DXB_PIN_CUDA_PAGEABLE;
	row[M_H2D] = cuda && h2d_s > 0 ? h2d_bytes / h2d_s / 1e9 : NAN;
}

/* Runs every repetition of a cell; returns EXIT_INTERRUPTED or 0. */
static int run_cell(const pin_opts *p, const plan *pl, const dxb_rs_matrix *m, dxb_rs_cell *c,
                    const cell_of *s, size_t i)
{
	char key[256], why[512];
	dx_err err = { 0 };
	dxb_ramdisk *rd = NULL;
	dxb_meminfo before;
	double copy_s = 0;
	int rc = 0;
	if (cli_interrupted())
		return EXIT_INTERRUPTED;
	dxb_rs_cell_key(m, c, key, sizeof key);
	c->projected = round(projected(p, pl, s->pin, s->place, s->w, s->t)); /* bytes: whole */
	if (cannot_run(p, pl, s->pin, s->t, why, sizeof why)) {
		matrix_cell_mark(c, DXB_RS_SKIPPED, why);
		return 0;
	}
	dxb_workload_opts o = p->mx.wl;
	matrix_guard gd;
	if (matrix_cell_guard(&p->mx, c, &o, &gd))
		return 0;
	if (!(c->rep = calloc((size_t)p->mx.repeat * NMETRICS, sizeof *c->rep))) {
		matrix_cell_mark(c, DXB_RS_FAILED, "out of memory");
		goto out;
	}
	dxb_meminfo_read(&before);
	o.stop = cli_interrupted;
	o.corpus = pl->mc.index;
	o.strategy = pl->strategy;
	o.threads = s->t;
	o.pin = s->pin;
	o.batch_hint = batch_bytes(p, pl, &(size_t){ 0 });
	/* A warm-up would warm the cache a cold cell is to start from. */
	if (s->cache == CACHE_COLD)
		o.warmup = 0;
	if (s->place == PLACE_RAMDISK) {
		/* A cold copy is read from a cold disk. */
		double cached;
		if (s->cache == CACHE_COLD && set_cache(pl->mc.index, CACHE_COLD, &cached, &err) < 0)
			goto failed;
		progress pr;
		progress_init(&pr, "copying to the RAM disk", p->mx.quiet);
		double t0 = dxb_now();
		rd = dxb_ramdisk_copy(pl->mc.index, p->ramdisk, progress_update, &pr, &err);
		copy_s = dxb_now() - t0;
		progress_done(&pr, NULL);
		if (!rd && err.code == DX_ECANCELED) {
			rc = EXIT_INTERRUPTED;
			goto out;
		}
		if (!rd && err.code == DX_ELIMIT) {
			dx_describe(&err, why, sizeof why);
			matrix_cell_mark(c, DXB_RS_SKIPPED, why);
			goto out;
		}
		if (!rd)
			goto failed;
		o.corpus = dxb_ramdisk_index(rd);
	}
	for (unsigned r = 0; r < p->mx.repeat; r++) {
		dxb_workers_result res;
		double cached;
		matrix_progress("pin-test", &p->mx, i, m->ncells, key, r);
		if (set_cache(o.corpus, s->cache, &cached, &err) < 0)
			goto failed;
		matrix_guard_rep(&gd);
		int wr = dxb_workers_run(&o, s->w, &res, why, sizeof why);
		if (wr == DXB_WORKERS_INTERRUPTED) {
			rc = EXIT_INTERRUPTED;
			goto out;
		}
		if (wr != DXB_WORKERS_OK) {
			/* The memory-lock limit is the machine's, not a failure. */
			if (!matrix_guard_killed(&p->mx, &gd, c))
				matrix_cell_mark(c, res.code == DX_ELIMIT ? DXB_RS_SKIPPED : DXB_RS_FAILED, why);
			goto out;
		}
		figures(&res, &before, cached, copy_s, s->pin, c->rep + (size_t)r * NMETRICS);
		c->nreps++;
		dxb_workers_result_free(&res);
	}
	c->status = DXB_RS_OK;
	goto out;
failed:
	dx_describe(&err, why, sizeof why);
	matrix_cell_mark(c, DXB_RS_FAILED, why);
out:
	dxb_ramdisk_remove(rd);
	matrix_guard_end(&gd);
	return cli_interrupted() ? EXIT_INTERRUPTED : rc;
}

/* ---- the summary ------------------------------------------------------------ */

static double cell_median(const dxb_rs_matrix *m, const dxb_rs_cell *c, size_t k)
{
	double md, lo, hi;
	dxb_rs_summary(m, c, k, &md, &lo, &hi);
	return md;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of the values that are numbers (NaN: not applicable), which
 * are left sorted at the front of v. */
static double median_of(double *v, size_t n)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i]))
			v[m++] = v[i];
	if (!m)
		return NAN;
	qsort(v, m, sizeof *v, cmp_double);
	return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

/* Cells in the order of their dimension values, then of the matrix, so
 * that a cell's partner is found by binary search: a pass over every cell
 * for every cell took seconds on a report read back with --from. */
static int dims_cmp(const char *const *a, const char *const *b)
{
	for (size_t j = 0; j < NDIMS; j++) {
		int r = strcmp(a[j], b[j]);
		if (r)
			return r;
	}
	return 0;
}

static int by_dims(const void *a, const void *b)
{
	const dxb_rs_cell *x = *(const dxb_rs_cell *const *)a, *y = *(const dxb_rs_cell *const *)b;
	int r = dims_cmp(x->dim, y->dim);
	return r ? r : (x > y) - (x < y);
}

/* The first cell (in the matrix's order) that differs from c only in
 * dimension d, whose value is ref; sorted holds the m->ncells cells in
 * by_dims order. */
static const dxb_rs_cell *partner(const dxb_rs_matrix *m, const dxb_rs_cell *const *sorted, const dxb_rs_cell *c,
                              size_t d, const char *ref)
{
	const char *want[NDIMS];
	for (size_t j = 0; j < NDIMS; j++)
		want[j] = j == d ? ref : c->dim[j];
	size_t lo = 0, hi = m->ncells;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (dims_cmp(sorted[mid]->dim, want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->ncells && dims_cmp(sorted[lo]->dim, want) == 0 ? sorted[lo] : NULL;
}

/* A technique: dimension d at value, against the same cells at ref. */
typedef struct technique {
	size_t d;
	const char *value, *ref;
} technique;

/* Compares every pair of OK cells of a technique.  Returns the number of
 * pairs, and the medians over them into out: gain %, its least and most,
 * and the changes of PSS, Mlocked, Shmem, set-up and H2D GB/s. */
enum { S_GAIN, S_GAIN_MIN, S_GAIN_MAX, S_PSS, S_MLOCKED, S_SHMEM, S_SETUP, S_H2D, S_H2D_REF, NS };

static size_t compare(const dxb_rs_matrix *m, const dxb_rs_cell *const *sorted, const technique *t,
                      double *out)
{
	size_t n = 0;
	double *v[NS] = { 0 };
	for (size_t k = 0; k < NS; k++)
		if (!(v[k] = calloc(m->ncells + 1, sizeof *v[k])))
			goto out;
	for (size_t i = 0; i < m->ncells; i++) {
		const dxb_rs_cell *c = &m->cells[i], *r;
		if (c->status != DXB_RS_OK || strcmp(c->dim[t->d], t->value) != 0 ||
		    !(r = partner(m, sorted, c, t->d, t->ref)) || r->status != DXB_RS_OK)
			continue;
		double base = cell_median(m, r, FG_SAMPLES);
		if (!(base > 0))
			continue;
		v[S_GAIN][n] = 100 * (cell_median(m, c, FG_SAMPLES) / base - 1);
		v[S_PSS][n] = cell_median(m, c, FG_PSS) - cell_median(m, r, FG_PSS);
		v[S_MLOCKED][n] = cell_median(m, c, M_MLOCKED) - cell_median(m, r, M_MLOCKED);
		v[S_SHMEM][n] = cell_median(m, c, M_SHMEM) - cell_median(m, r, M_SHMEM);
		v[S_SETUP][n] = cell_median(m, c, FG_SETUP) + cell_median(m, c, M_COPY_S) -
		                cell_median(m, r, FG_SETUP) - cell_median(m, r, M_COPY_S);
		v[S_H2D][n] = cell_median(m, c, M_H2D);
		v[S_H2D_REF][n] = cell_median(m, r, M_H2D);
		n++;
	}
	if (n) {
		for (size_t k = 0; k < NS; k++)
			out[k] = k == S_GAIN_MIN || k == S_GAIN_MAX ? 0 : median_of(v[k], n);
		out[S_GAIN_MIN] = v[S_GAIN][0];
		out[S_GAIN_MAX] = v[S_GAIN][n - 1]; /* sorted by median_of */
	}
out:
	for (size_t k = 0; k < NS; k++)
		free(v[k]);
	return n;
}

/* What a pin mode is compared with: pinned copies to the GPU with
 * pageable ones, the others with no pinning. */
static const char *pin_reference(const char *pin)
{
	return strcmp(pin, "cuda") == 0 ? "cuda-pageable" : "none";
}

/* The techniques the matrix holds: each pin mode against its reference,
 * ramdisk against disk, and each worker count against the first. */
static size_t techniques(const dxb_rs_matrix *m, technique *t, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < m->ncells; i++) {
		const dxb_rs_cell *c = &m->cells[i];
		for (size_t d = 0; d < NDIMS && n < max; d++) {
			const char *ref = d == D_PIN ? pin_reference(c->dim[d])
			                : d == D_PLACE ? "disk"
			                : d == D_WORKERS ? m->cells[0].dim[D_WORKERS]
			                                 : NULL;
			if (!ref || strcmp(c->dim[d], ref) == 0)
				continue;
			size_t k = 0;
			while (k < n && !(t[k].d == d && strcmp(t[k].value, c->dim[d]) == 0))
				k++;
			if (k == n)
				t[n++] = (technique){ d, c->dim[d], ref };
		}
	}
	return n;
}

static void technique_name(const technique *t, char *buf, size_t n)
{
	if (t->d == D_WORKERS)
		snprintf(buf, n, "%s workers vs %s", t->value, t->ref);
	else
		snprintf(buf, n, "%s %s vs %s", dims[t->d].key, t->value, t->ref);
}

/* A signed change for people: "+1.5", or "0" for one that rounds to
 * nothing either way (no "-0.0" of noise). */
static const char *change(char *buf, size_t n, double x, int decimals)
{
	snprintf(buf, n, "%+.*f", decimals, x);
	if (strspn(buf + 1, "0.") == strlen(buf + 1))
		snprintf(buf, n, "0");
	return buf;
}

/* What the range of a technique's gain lets one say of it. */
static const char *verdict(const double *s, size_t pairs)
{
	if (pairs < 2)
		return "one pair: no noise to judge by";
	if (s[S_GAIN_MIN] <= 0 && s[S_GAIN_MAX] >= 0)
		return "within the noise";
	return s[S_GAIN] > 0 ? "faster in every pair" : "slower in every pair";
}

/* The summary after the table, and as JSON. */
static int summarize(const dxb_rs_matrix *m, char **text, char **json)
{
	technique t[64];
	size_t nt = techniques(m, t, 64), tl;
	const dxb_rs_cell **sorted = malloc((m->ncells ? m->ncells : 1) * sizeof *sorted);
	FILE *f = open_memstream(text, &tl);
	/* An array that the report's top-level object holds: indented one
	 * level deeper. */
	dxb_json *g = dxb_json_new(1);
	if (!f || !g || !sorted) {
		if (f)
			fclose(f);
		free(dxb_json_finish(g));
		free(sorted);
		return -1;
	}
	for (size_t i = 0; i < m->ncells; i++)
		sorted[i] = &m->cells[i];
	qsort(sorted, m->ncells, sizeof *sorted, by_dims);
	fprintf(f, "summary: the median change of samples/s over the same cells without the "
	           "technique (all\nelse equal), its range over the pairs, and what it costs in "
	           "memory and set-up\n");
	dxb_json_begin_array(g, DXB_JSON_BLOCK);
	for (size_t i = 0; i < nt; i++) {
		double s[NS];
		char name[128];
		size_t pairs = compare(m, sorted, &t[i], s);
		technique_name(&t[i], name, sizeof name);
		if (!pairs) {
			fprintf(f, "  %-28s no pairs of measured cells\n", name);
			continue;
		}
		char fig[4][32];
		fprintf(f, "  %-28s %7s%% (%s%% to %s%%, %zu pair%s): %s\n", name,
		        change(fig[0], sizeof fig[0], s[S_GAIN], 1), change(fig[1], sizeof fig[1], s[S_GAIN_MIN], 1),
		        change(fig[2], sizeof fig[2], s[S_GAIN_MAX], 1), pairs, pairs == 1 ? "" : "s",
		        verdict(s, pairs));
		fprintf(f, "  %-28s PSS %s MiB, locked %s MiB, Shmem %s MiB, set-up %s s", "",
		        change(fig[0], sizeof fig[0], s[S_PSS], 1), change(fig[1], sizeof fig[1], s[S_MLOCKED], 1),
		        change(fig[2], sizeof fig[2], s[S_SHMEM], 1), change(fig[3], sizeof fig[3], s[S_SETUP], 2));
		/* The copies' rates, for the CUDA modes against each other. */
		int h2d = t[i].d == D_PIN && !isnan(s[S_H2D]) && !isnan(s[S_H2D_REF]);
		if (h2d)
			fprintf(f, "; H2D %.2f vs %.2f GB/s", s[S_H2D], s[S_H2D_REF]);
		fputc('\n', f);
		dxb_json_begin_object(g, DXB_JSON_INLINE);
		matrix_json_string(g, "technique", name);
		matrix_json_string(g, "dimension", dims[t[i].d].key);
		matrix_json_string(g, "value", t[i].value);
		matrix_json_string(g, "reference", t[i].ref);
		dxb_json_key(g, "pairs");
		dxb_json_uint(g, pairs);
		static const struct { int k; const char *key; } fields[] = {
			{ S_GAIN, "gain_pct" }, { S_GAIN_MIN, "gain_min_pct" },
			{ S_GAIN_MAX, "gain_max_pct" }, { S_PSS, "pss_mib" },
			{ S_MLOCKED, "mlocked_mib" }, { S_SHMEM, "shmem_mib" }, { S_SETUP, "setup_s" },
			{ S_H2D, "h2d_gb_s" }, { S_H2D_REF, "h2d_reference_gb_s" },
		};
		for (size_t k = 0; k < sizeof fields / sizeof *fields; k++) {
			double x = s[fields[k].k];
			dxb_json_key(g, fields[k].key);
			/* A figure the cells lack (an older report's) is null. */
			if (isnan(x) || (fields[k].k >= S_H2D && !h2d))
				dxb_json_null(g);
			else
				dxb_json_double(g, x, 6);
		}
		dxb_json_end_object(g);
	}
	dxb_json_end_array(g);
	free(sorted);
	int bad = fclose(f) != 0;
	bad |= !(*json = dxb_json_finish(g));
	return bad ? -1 : 0;
}

/* ---- the run ------------------------------------------------------------- */

typedef struct meta {
	char *machine, *build, *params, *environment, *preamble, *summary, *summary_json;
	matrix_counts *counts;    /* each cell's workers and threads, as text */
} meta;

/* A member whose value is a list of names. */
static void json_names(dxb_json *j, const char *key, const char *const *names, const int *v,
                       size_t n)
{
	dxb_json_key(j, key);
	dxb_json_begin_array(j, DXB_JSON_INLINE);
	for (size_t i = 0; i < n; i++)
		dxb_json_string(j, names[v[i]]);
	dxb_json_end_array(j);
}

static int render_params(const pin_opts *p, const plan *pl, meta *mt)
{
	dxb_json *j = dxb_json_new(0);
	dxb_json_begin_object(j, DXB_JSON_INLINE);
	matrix_json_params(j, &p->mx, &pl->mc);
	dxb_json_key(j, "pin");
	dxb_json_begin_array(j, DXB_JSON_INLINE);
	for (size_t i = 0; i < p->npins; i++)
		dxb_json_string(j, dxb_pin_name(p->pin[i]));
	dxb_json_end_array(j);
	json_names(j, "placement", place_names, p->place, p->nplaces);
	json_names(j, "cache", cache_names, p->cache, p->ncaches);
	matrix_json_string(j, "ramdisk", p->ramdisk);
	matrix_json_string(j, "strategy", dxb_loader_name(pl->strategy));
	dxb_json_end_object(j);
	return (mt->params = dxb_json_finish(j)) ? 0 : -1;
}

/* Refuses a RAM disk directory that is not one, before anything runs. */
static int check_ramdisk(const pin_opts *p)
{
	dx_err err = { 0 };
	for (size_t i = 0; i < p->nplaces; i++)
		if (p->place[i] == PLACE_RAMDISK && dxb_ramdisk_check(p->ramdisk, &err) < 0)
			return cli_lib_failure("pin-test", err.code, &err);
	return 0;
}

static int measure(pin_opts *p, dxb_rs_matrix *m, plan *pl, meta *mt)
{
	dx_err err = { 0 };
	int rc;
	if ((rc = check_ramdisk(p)) != 0)
		return rc;
	int lim = matrix_mem_limit("pin-test", &p->mx);
	if (lim)
		return lim;
	cli_catch_signals();
	look_around(p, &pl->e);
	if (cli_interrupted())
		return matrix_interrupted("pin-test", &p->mx);
	if ((rc = prepare(p, pl, &err)) < 0)
		return rc == DX_ECANCELED ? matrix_interrupted("pin-test", &p->mx)
		                          : cli_lib_failure("pin-test", rc, &err);

	/* Cells by worker count, the dimension the fastest is picked within. */
	if (matrix_cells_alloc(m, p->mx.nworkers * p->mx.nthreads * p->nplaces * p->ncaches * p->npins,
	                       &mt->counts) < 0) {
		cli_error("pin-test", "out of memory", NULL);
		return EXIT_FAIL;
	}
	size_t i = 0;
	for (size_t wi = 0; wi < p->mx.nworkers; wi++)
		for (size_t ti = 0; ti < p->mx.nthreads; ti++)
			for (size_t li = 0; li < p->nplaces; li++)
				for (size_t ci = 0; ci < p->ncaches; ci++)
					for (size_t pi = 0; pi < p->npins; pi++, i++) {
						dxb_rs_cell *c = &m->cells[i];
						cell_of s = { p->pin[pi], p->place[li], p->cache[ci],
						              p->mx.workers[wi], p->mx.threads[ti] };
						c->dim[D_PIN] = dxb_pin_name(s.pin);
						c->dim[D_PLACE] = place_names[s.place];
						c->dim[D_CACHE] = cache_names[s.cache];
						matrix_cell_counts(c, mt->counts[i], D_WORKERS, D_THREADS, s.w, s.t);
						if (run_cell(p, pl, m, c, &s, i) != 0)
							return matrix_interrupted("pin-test", &p->mx);
					}
	matrix_progress("pin-test", &p->mx, 0, 0, NULL, 0);
	if (!(mt->machine = matrix_machine_json(pl->mc.fs)) || !(mt->build = matrix_build_json()) ||
	    !(mt->environment = env_json(&pl->e)) || render_params(p, pl, mt) < 0) {
		cli_error("pin-test", "out of memory", NULL);
		return EXIT_FAIL;
	}
	m->machine_json = mt->machine;
	m->build_json = mt->build;
	m->params_json = mt->params;
	m->environment_json = mt->environment;
	return 0;
}

int cmd_pin_test(int argc, char **argv)
{
	pin_opts p = { .strategy = -1, .ramdisk = "/dev/shm" };
	const matrix_cmd cmd = { "pin-test", usage, own_options, set_own, &p, one_value };
	plan pl = { 0 };
	meta mt = { 0 };
	dxb_rs_metric metrics[NMETRICS];
	dxb_rs_matrix m = { .command = "pin-test", .dims = dims, .ndims = NDIMS, .metrics = metrics,
	                .nmetrics = NMETRICS, .primary = FG_SAMPLES, .group_dim = D_WORKERS,
	                .x_dim = D_WORKERS, .plot_metrics = { FG_SAMPLES, FG_PSS } };
	dx_err err = { 0 };
	make_metrics(metrics);
	matrix_opts_init(&p.mx);
	parse_pins("none,buffers,corpus,cuda", &p);
	parse_words("disk,ramdisk", place_names, NPLACES, p.place, &p.nplaces);
	parse_words("warm", cache_names, NCACHES, p.cache, &p.ncaches);
	int rc = matrix_parse(&cmd, &p.mx, argc, argv);
	if (rc != 0) {
		rc = rc < 0 ? cli_stdout_done("pin-test") : rc;
		goto out;
	}
	if (p.mx.from) {
		if (dxb_rs_read_report(&m, p.mx.from, &err) < 0) {
			rc = cli_lib_failure("pin-test", err.code, &err);
			goto out;
		}
		env_from_json(m.environment_json, &pl.e);
	} else if ((rc = measure(&p, &m, &pl, &mt)) != 0) {
		goto out;
	}
	/* A cold cache's residency is what the run is about: then shown. */
	for (size_t i = 0; i < m.ncells; i++)
		if (m.cells[i].dim[D_CACHE] && strcmp(m.cells[i].dim[D_CACHE], "cold") == 0)
			metrics[M_CACHED].hide = DXB_RS_SHOW;
	if (!(mt.preamble = env_text(&pl.e)) || summarize(&m, &mt.summary, &mt.summary_json) < 0) {
		cli_error("pin-test", "out of memory", NULL);
		rc = EXIT_FAIL;
		goto out;
	}
	m.preamble = mt.preamble;
	m.epilogue = mt.summary;
	m.summary_json = mt.summary_json;
	rc = matrix_report(&cmd, &p.mx, &m);
out:
	matrix_corpus_remove(&pl.mc);
	dxb_rs_free_report(&m);
	free(mt.counts);
	free(mt.machine);
	free(mt.build);
	free(mt.params);
	free(mt.environment);
	free(mt.preamble);
	free(mt.summary);
	free(mt.summary_json);
	matrix_opts_free(&p.mx);
	return rc;
}
