/*
 * bench.c: docdex bench, the loading strategies side by side.  Options come
 * from the command line and from an experiment file (-c), whose keys are
 * the long options' names; both go through set_option, so a value means
 * the same in either place.  Each cell of the matrix (strategy x workers x
 * threads) is run --repeat times by workers.c; results.c reports it.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "results.h"
#include "tempcorpus.h"
#include "version.h"
#include "workers.h"

static const char usage[] =
	"usage: docdex bench [options] [CORPUS_OR_INDEX]\n"
	"\n"
	"Measure how fast each loading strategy delivers training samples, and\n"
	"what memory it takes, as worker processes and threads grow.  Without a\n"
	"corpus, a synthetic one shaped like MS MARCO passages is generated in a\n"
	"temporary directory and removed afterwards.\n"
	"\n"
	"What is measured:\n"
	"      --strategies LIST    memory, stdio, pread, mmap, gzip, bgzf, or all\n"
	"                           (default: all that apply to the corpus)\n"
	"      --workload KIND      triples, random or scan (default: triples)\n"
	"      --batch N            samples per batch (default: 32)\n"
	"  -j, --workers LIST       worker processes, e.g. 1,2,4,8 (default: 1)\n"
	"      --threads LIST       loader threads in each worker (default: 1)\n"
	"      --duration SECS      measured time per repetition (default: 2)\n"
	"      --samples N          measure N samples per worker instead\n"
	"      --warmup SECS        unmeasured time before it (default: 0.5)\n"
	"      --repeat R           repetitions of each cell (default: 3)\n"
	"      --mem-limit SIZE     mark a cell OOM, and skip it, when its projected\n"
	"                           memory exceeds SIZE (default: available memory)\n"
	"\n"
	"Triples (as in docdex sample; without them, documents at random):\n"
	"      --queries FILE       query texts\n"
	"      --qrels FILE         judgements: the positives\n"
	"      --run FILE           negatives from a run (default: at random)\n"
	"      --depth K            the top K of the run per query (default: all)\n"
	"      --negatives K        negatives per sample (default: 1)\n"
	"      --seed S             the seed of the draws (default: 0)\n"
	"\n"
	"The corpus when none is given:\n"
	"      --synthetic SPEC     passages:N, docs:N (N records, or a size such as\n"
	"                           2G) or a size (default: passages:50000)\n"
	"      --tmpdir DIR         where it goes (default: $TMPDIR, or /tmp)\n"
	"\n"
	"Output:\n"
	"      --format FORMAT      table, csv, json or markdown (default: table, or\n"
	"                           as the -o file's name ends)\n"
	"  -o, --output FILE        write the report to FILE (the table still goes to\n"
	"                           stdout unless --quiet)\n"
	"      --plot FILE          samples/s and memory against workers, as SVG\n"
	"      --baseline FILE      compare with an earlier JSON report; exit 3 when a\n"
	"                           cell got slower or bigger\n"
	"      --tolerance PCT      what the baseline comparison forgives (default: 10)\n"
	"      --from FILE          report an earlier JSON report instead of measuring\n"
	"  -c, --config FILE        read options from a YAML experiment file\n"
	"                           (options given here override it)\n"
	"  -q, --quiet              no table when writing -o, no progress\n"
	"  -h, --help               show this help\n";

enum {
	OPT_STRATEGIES = 256, OPT_WORKLOAD, OPT_BATCH, OPT_THREADS, OPT_DURATION, OPT_SAMPLES,
	OPT_WARMUP, OPT_REPEAT, OPT_MEM_LIMIT, OPT_QUERIES, OPT_QRELS, OPT_RUN, OPT_DEPTH,
	OPT_NEGATIVES, OPT_SEED, OPT_SYNTHETIC, OPT_TMPDIR, OPT_FORMAT, OPT_PLOT, OPT_BASELINE,
	OPT_TOLERANCE, OPT_FROM, OPT_CORPUS
};

static const struct option options[] = {
	{ "strategies", required_argument, NULL, OPT_STRATEGIES },
	{ "workload", required_argument, NULL, OPT_WORKLOAD },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "workers", required_argument, NULL, 'j' },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "samples", required_argument, NULL, OPT_SAMPLES },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "mem-limit", required_argument, NULL, OPT_MEM_LIMIT },
	{ "queries", required_argument, NULL, OPT_QUERIES },
	{ "qrels", required_argument, NULL, OPT_QRELS },
	{ "run", required_argument, NULL, OPT_RUN },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "negatives", required_argument, NULL, OPT_NEGATIVES },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "synthetic", required_argument, NULL, OPT_SYNTHETIC },
	{ "tmpdir", required_argument, NULL, OPT_TMPDIR },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "baseline", required_argument, NULL, OPT_BASELINE },
	{ "tolerance", required_argument, NULL, OPT_TOLERANCE },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "config", required_argument, NULL, 'c' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Keys an experiment file may hold besides the long options. */
static const struct option file_only[] = {
	{ "corpus", required_argument, NULL, OPT_CORPUS },
	{ NULL, 0, NULL, 0 },
};

enum { MAX_LIST = 64, MAX_WORKERS = 1024 };
enum { FMT_TABLE = 1, FMT_CSV, FMT_JSON, FMT_MARKDOWN };

/* Exit status when a cell regressed against the baseline (docdex-bench(1)). */
enum { EXIT_REGRESSED = 3 };

typedef struct bench_opts {
	const char *corpus;
	int strategy[DX_LOAD_LAST + 1];
	size_t nstrategies;       /* 0: all that apply */
	workload_opts wl;
	unsigned workers[MAX_LIST], threads[MAX_LIST];
	size_t nworkers, nthreads;
	unsigned repeat;
	uint64_t mem_limit;       /* 0: the machine's available memory */
	const char *synthetic, *tmpdir;
	int corpus_in_file, synthetic_in_file; /* set by the experiment file */
	int format;               /* 0: from -o's name, else table */
	const char *output, *plot, *baseline, *from;
	double tolerance;
	int quiet;
	/* Paths made absolute for an experiment file's directory. */
	char *owned[32];
	size_t nowned;
} bench_opts;

static int parse_seconds(const char *s, double *v)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && *v >= 0 && *v < 1e6 ? 0 : -1;
}

/* "1,2,4" into list (each 1..max, at most MAX_LIST). */
static int parse_list(const char *s, unsigned *list, size_t *n, unsigned max)
{
	char item[32];
	*n = 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		uint64_t v;
		if (len == 0 || len >= sizeof item || *n == MAX_LIST)
			return -1;
		memcpy(item, s, len);
		item[len] = '\0';
		if (cli_parse_u64(item, &v) < 0 || v < 1 || v > max)
			return -1;
		list[(*n)++] = (unsigned)v;
		s += len + (s[len] == ',');
	}
	return *n ? 0 : -1;
}

static int parse_strategies(const char *s, bench_opts *b)
{
	char item[32];
	b->nstrategies = 0;
	if (strcmp(s, "all") == 0) {
		for (int k = DX_LOAD_MEMORY; k <= DX_LOAD_LAST; k++)
			b->strategy[b->nstrategies++] = k;
		return 0;
	}
	while (*s) {
		size_t len = strcspn(s, ",");
		if (len == 0 || len >= sizeof item)
			return -1;
		memcpy(item, s, len);
		item[len] = '\0';
		int k = dx_loader_parse(item);
		if (k < 0)
			return -1;
		int seen = 0;
		for (size_t i = 0; i < b->nstrategies; i++)
			seen |= b->strategy[i] == k;
		if (!seen)
			b->strategy[b->nstrategies++] = k;
		s += len + (s[len] == ',');
	}
	return b->nstrategies ? 0 : -1;
}

static int format_of(const char *s)
{
	static const char *const names[] = { [FMT_TABLE] = "table", [FMT_CSV] = "csv",
	                                     [FMT_JSON] = "json", [FMT_MARKDOWN] = "markdown" };
	for (int f = FMT_TABLE; f <= FMT_MARKDOWN; f++)
		if (strcmp(s, names[f]) == 0)
			return f;
	return strcmp(s, "md") == 0 ? FMT_MARKDOWN : 0;
}

/* A bad value: on the command line as cli_usage_error puts it, from an
 * experiment file with its place and key first. */
static int bad_value(const char *name, const char *place, const char *hint, const char *value)
{
	char what[512];
	if (place)
		snprintf(what, sizeof what, "%s: bad %s, give %s", place, name, hint);
	else
		snprintf(what, sizeof what, "bad --%s, give %s", name, hint);
	return cli_usage_error("bench", what, value);
}

static void set_path(bench_opts *b, int id, const char *v, int from_file);

/* Applies one option (from the command line when place is NULL, else from
 * the experiment file at place).  Returns 0 or EXIT_USAGE. */
static int set_option(bench_opts *b, int id, const char *name, const char *v, const char *place)
{
	uint64_t n;
	double d;
	workload_opts *w = &b->wl;
	switch (id) {
	case OPT_STRATEGIES:
		if (parse_strategies(v, b) < 0)
			return bad_value(name, place, "memory, stdio, pread, mmap, gzip, bgzf or all", v);
		break;
	case OPT_WORKLOAD:
		w->kind = strcmp(v, "triples") == 0 ? WL_TRIPLES
		        : strcmp(v, "random") == 0  ? WL_RANDOM
		        : strcmp(v, "scan") == 0    ? WL_SCAN : 0;
		if (!w->kind)
			return bad_value(name, place, "triples, random or scan", v);
		break;
	case OPT_BATCH:
		if (cli_parse_u64(v, &n) < 0 || n < 1 || n > 65536)
			return bad_value(name, place, "1 to 65536 samples", v);
		w->batch = (unsigned)n;
		break;
	case 'j':
		if (parse_list(v, b->workers, &b->nworkers, MAX_WORKERS) < 0)
			return bad_value(name, place, "a list of worker counts such as 1,2,4,8", v);
		break;
	case OPT_THREADS:
		if (parse_list(v, b->threads, &b->nthreads, 256) < 0)
			return bad_value(name, place, "a list of thread counts such as 1,2", v);
		break;
	case OPT_DURATION:
	case OPT_WARMUP:
		if (parse_seconds(v, &d) < 0 || (id == OPT_DURATION && d <= 0))
			return bad_value(name, place, "a number of seconds", v);
		*(id == OPT_DURATION ? &w->duration : &w->warmup) = d;
		break;
	case OPT_SAMPLES:
		if (cli_parse_u64(v, &n) < 0)
			return bad_value(name, place, "a number of samples", v);
		w->samples = n;
		break;
	case OPT_REPEAT:
		if (cli_parse_u64(v, &n) < 0 || n < 1 || n > 1000)
			return bad_value(name, place, "1 to 1000 repetitions", v);
		b->repeat = (unsigned)n;
		break;
	case OPT_MEM_LIMIT:
		if (cli_parse_size(v, &n) < 0 || n == 0)
			return bad_value(name, place, "a size such as 16G", v);
		b->mem_limit = n;
		break;
	case OPT_DEPTH:
		if (cli_parse_u64(v, &n) < 0 || n > UINT32_MAX)
			return bad_value(name, place, "a number of documents", v);
		w->depth = (unsigned)n;
		break;
	case OPT_NEGATIVES:
		if (cli_parse_u64(v, &n) < 0 || n < 1 || n > 1024)
			return bad_value(name, place, "1 to 1024", v);
		w->negatives = (unsigned)n;
		break;
	case OPT_SEED:
		if (cli_parse_u64(v, &n) < 0)
			return bad_value(name, place, "a non-negative integer", v);
		w->seed = n;
		break;
	case OPT_SYNTHETIC: {
		dx_synth_opts so;
		if (tempcorpus_parse(v, &so) < 0)
			return bad_value(name, place, "passages:N, docs:N or a size such as 500M", v);
		b->synthetic = v;
		b->synthetic_in_file = place != NULL;
		break;
	}
	case OPT_FORMAT:
		if (!(b->format = format_of(v)))
			return bad_value(name, place, "table, csv, json or markdown", v);
		break;
	case OPT_TOLERANCE:
		if (parse_seconds(v, &d) < 0 || d > 1000)
			return bad_value(name, place, "a percentage such as 10", v);
		b->tolerance = d;
		break;
	case 'q':
		if (place && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			return bad_value(name, place, "true or false", v);
		b->quiet = !place || strcmp(v, "true") == 0;
		break;
	case OPT_QUERIES:
	case OPT_QRELS:
	case OPT_RUN:
	case OPT_TMPDIR:
	case 'o':
	case OPT_PLOT:
	case OPT_BASELINE:
	case OPT_FROM:
	case OPT_CORPUS:
		if (!*v)
			return bad_value(name, place, "a file name", v);
		set_path(b, id, v, place != NULL);
		break;
	}
	return 0;
}

/* The options that name files, set once their value was checked. */
static void set_path(bench_opts *b, int id, const char *v, int from_file)
{
	workload_opts *w = &b->wl;
	switch (id) {
	case OPT_QUERIES: w->queries = v; break;
	case OPT_QRELS: w->qrels = v; break;
	case OPT_RUN: w->run = v; break;
	case OPT_TMPDIR: b->tmpdir = v; break;
	case 'o': b->output = v; break;
	case OPT_PLOT: b->plot = v; break;
	case OPT_BASELINE: b->baseline = v; break;
	case OPT_FROM: b->from = v; break;
	case OPT_CORPUS:
		b->corpus = v;
		b->corpus_in_file = from_file;
		break;
	}
}

static const struct option *find_key(const char *key)
{
	for (const struct option *o = options; o->name; o++)
		if (strcmp(o->name, key) == 0 && o->val != 'c' && o->val != 'h')
			return o;
	for (const struct option *o = file_only; o->name; o++)
		if (strcmp(o->name, key) == 0)
			return o;
	return NULL;
}

/* Whether a key names a file, which is found relative to the experiment
 * file rather than to the directory the command runs in. */
static int is_path_key(int id)
{
	return id == OPT_CORPUS || id == OPT_QUERIES || id == OPT_QRELS || id == OPT_RUN ||
	       id == OPT_TMPDIR || id == 'o' || id == OPT_PLOT || id == OPT_BASELINE ||
	       id == OPT_FROM;
}

static int apply_config(bench_opts *b, const char *path, dx_config **cfgp)
{
	dx_err err = { 0 };
	dx_config *cfg = dx_config_load(path, &err);
	if (!cfg) {
		cli_lib_error("bench", &err);
		return EXIT_USAGE;
	}
	*cfgp = cfg;
	char *copy = strdup(path);
	if (!copy) {
		cli_error("bench", "out of memory", NULL);
		return EXIT_FAIL;
	}
	const char *dir = dirname(copy);
	int rc = 0;
	for (size_t i = 0; i < dx_config_count(cfg) && rc == 0; i++) {
		const dx_config_item *it = dx_config_item_at(cfg, i);
		char place[TC_PATH + 32];
		snprintf(place, sizeof place, "%s:%u", path, it->line);
		const struct option *o = find_key(it->key);
		if (!o) {
			char what[sizeof place + 32];
			snprintf(what, sizeof what, "%s: unknown key", place);
			rc = cli_usage_error("bench", what, it->key);
			break;
		}
		const char *v = it->value;
		if (is_path_key(o->val) && v[0] && v[0] != '/' && strcmp(dir, ".") != 0 &&
		    b->nowned < sizeof b->owned / sizeof *b->owned) {
			char *abs = malloc(strlen(dir) + strlen(v) + 2);
			if (!abs) {
				cli_error("bench", "out of memory", NULL);
				rc = EXIT_FAIL;
				break;
			}
			sprintf(abs, "%s/%s", dir, v);
			b->owned[b->nowned++] = abs;
			v = abs;
		}
		if (it->is_list && o->val != OPT_STRATEGIES && o->val != 'j' && o->val != OPT_THREADS) {
			char what[sizeof place + 64];
			snprintf(what, sizeof what, "%s: %s takes one value, not a list", place, it->key);
			rc = cli_usage_error("bench", what, v);
			break;
		}
		rc = set_option(b, o->val, it->key, v, place);
	}
	free(copy);
	return rc;
}

/* Reads the options: the experiment file first (found in a first pass over
 * argv), then the command line over it. */
static int parse_args(bench_opts *b, int argc, char **argv, dx_config **cfg)
{
	static const char shorts[] = ":j:o:c:qh";
	int c, rc;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, options, NULL)) != -1) {
		if (c == 'c' && *cfg)
			return cli_usage_error("bench", "give one experiment file", optarg);
		if (c == 'c' && (rc = apply_config(b, optarg, cfg)) != 0)
			return rc;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, options, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return -1;
		}
		if (c == '?' || c == ':')
			return cli_bad_option("bench", argv, c);
		if (c == 'c')
			continue;
		const char *name = "";
		for (const struct option *o = options; o->name; o++)
			if (o->val == c)
				name = o->name;
		if ((rc = set_option(b, c, name, optarg ? optarg : "", NULL)) != 0)
			return rc;
	}
	if (optind < argc - 1)
		return cli_usage_error("bench", "more than one corpus given", argv[optind + 1]);
	if (optind < argc) {
		b->corpus = argv[optind];
		b->corpus_in_file = 0;
	}
	/* The command line overrides the file: a corpus there replaces the
	 * file's synthetic one, and --synthetic there the file's corpus. */
	if (b->corpus && b->synthetic && b->synthetic_in_file && !b->corpus_in_file)
		b->synthetic = NULL;
	if (b->corpus && b->synthetic && b->corpus_in_file && !b->synthetic_in_file)
		b->corpus = NULL;
	if (b->corpus && b->synthetic)
		return cli_usage_error("bench", "give a corpus or --synthetic, not both", b->corpus);
	if ((b->wl.run || b->wl.queries) && !b->wl.qrels)
		return cli_usage_error("bench", "--queries and --run need --qrels", NULL);
	if (b->wl.qrels && !b->wl.queries)
		return cli_usage_error("bench", "--qrels needs --queries", NULL);
	return 0;
}

/* ---- the corpus ------------------------------------------------------------ */

/* What the cells run on: for each strategy, the index it opens. */
typedef struct plan {
	char index[3][2 * TC_PATH + 16]; /* plain (or the user's), gzip, bgzf copies */
	const char *index_for[DX_LOAD_LAST + 1];
	const char *skip_why[DX_LOAD_LAST + 1]; /* NULL when the strategy applies */
	uint64_t index_size[DX_LOAD_LAST + 1]; /* of the index each opens */
	char corpus_label[TC_PATH];
	uint64_t records, usize;
	char fs[64];
} plan;

static const char *const synthetic_default = "passages:50000";

/* Reads what a cell needs to know of an index, and which strategies it
 * serves, then closes it: the parent keeps nothing mapped, so the workers'
 * PSS divides shared pages among the workers alone. */
static int inspect(plan *p, const char *index, int only, dx_err *err)
{
	dx_corpus *c = dx_corpus_open(index, err);
	if (!c)
		return err->code;
	dx_index *ix = dx_corpus_index(c);
	dx_index_info info;
	dx_index_get_info(ix, &info);
	if (only == 0 || only == DX_LOAD_MMAP) {
		p->records = info.records;
		p->usize = 0;
		for (uint32_t i = 0; i < info.sources; i++) {
			dx_source_info si;
			if (dx_index_get_source(ix, i, &si) == 0)
				p->usize += si.usize;
		}
	}
	for (int s = DX_LOAD_MEMORY; s <= DX_LOAD_LAST; s++) {
		const char *why = NULL;
		if (only && s != only && !(only == DX_LOAD_MMAP && s <= DX_LOAD_MMAP))
			continue;
		p->index_for[s] = index;
		p->index_size[s] = info.file_size;
		p->skip_why[s] = dx_loader_applies(s, c, &why) ? NULL : why;
	}
	dx_corpus_close(c);
	return 0;
}

static int prepare(bench_opts *b, plan *p, tempcorpus *t, progress *pr, dx_err *err)
{
	int rc;
	if (!b->corpus) {
		dx_synth_opts so;
		const char *spec = b->synthetic ? b->synthetic : synthetic_default;
		tempcorpus_parse(spec, &so);
		if ((rc = tempcorpus_mkdir(t, b->tmpdir, err)) < 0 ||
		    (rc = tempcorpus_make(t, &so, progress_update, pr, err)) < 0)
			return rc;
		snprintf(p->corpus_label, sizeof p->corpus_label, "synthetic %s", spec);
		snprintf(p->index[0], sizeof p->index[0], "%s.ddx", t->plain);
		snprintf(p->index[1], sizeof p->index[1], "%s.ddx", t->gzip);
		snprintf(p->index[2], sizeof p->index[2], "%s.ddx", t->bgzf);
		if (!b->wl.qrels) {
			b->wl.queries = t->queries;
			b->wl.qrels = t->qrels;
			b->wl.run = t->run;
		}
		if ((rc = inspect(p, p->index[0], DX_LOAD_MMAP, err)) < 0 ||
		    (rc = inspect(p, p->index[1], DX_LOAD_GZIP, err)) < 0 ||
		    (rc = inspect(p, p->index[2], DX_LOAD_BGZF, err)) < 0)
			return rc;
		dx_fs_type(t->dir, p->fs, sizeof p->fs);
		return 0;
	}
	snprintf(p->corpus_label, sizeof p->corpus_label, "%s", b->corpus);
	if ((rc = dx_index_path_for(b->corpus, p->index[0], sizeof p->index[0], err)) < 0)
		return rc;
	if (access(p->index[0], F_OK) < 0 && errno == ENOENT) {
		/* No index beside the corpus: one in the temporary directory,
		 * so that a corpus on read-only storage can be measured too. */
		char *copy = strdup(b->corpus);
		if (!copy)
			return err->code = DX_ENOMEM;
		if ((rc = tempcorpus_mkdir(t, b->tmpdir, err)) == 0) {
			snprintf(p->index[0], sizeof p->index[0], "%s/%s.ddx", t->dir, basename(copy));
			dx_build_opts bo = { .progress = progress_update, .progress_ctx = pr };
			dx_build_report rep;
			const char *files[] = { b->corpus };
			rc = dx_index_build(files, 1, p->index[0], &bo, &rep, err);
		}
		free(copy);
		if (rc < 0)
			return rc;
	}
	if ((rc = inspect(p, p->index[0], 0, err)) < 0)
		return rc;
	dx_fs_type(b->corpus, p->fs, sizeof p->fs);
	return 0;
}

/* ---- the matrix ------------------------------------------------------------ */

static const rs_dim dims[] = {
	{ "strategy", "strategy", 0 },
	{ "workers", "j", 1 },
	{ "threads", "t", 1 },
};

enum {
	M_SAMPLES, M_DOCS, M_MB, M_P50, M_P95, M_P99, M_SETUP, M_PSS, M_USS, M_RSS, M_MINFLT,
	M_MAJFLT, NMETRICS
};

static const rs_metric metrics[NMETRICS] = {
	[M_SAMPLES] = { "samples_per_s", "samples/s", "1/s", RS_HIGHER, 1, 1 },
	[M_DOCS] = { "docs_per_s", "docs/s", "1/s", RS_HIGHER, 0, 0 },
	[M_MB] = { "mb_per_s", "MB/s", "MB/s", RS_HIGHER, 0, 1 },
	[M_P50] = { "latency_p50_ms", "p50 ms", "ms", RS_LOWER, 0, 3 },
	[M_P95] = { "latency_p95_ms", "p95 ms", "ms", RS_LOWER, 0, 3 },
	[M_P99] = { "latency_p99_ms", "p99 ms", "ms", RS_LOWER, 0, 3 },
	[M_SETUP] = { "setup_s", "setup s", "s", RS_LOWER, 0, 2 },
	[M_PSS] = { "pss_mib", "PSS MiB", "MiB", RS_LOWER, 1, 1 },
	[M_USS] = { "uss_per_worker_mib", "USS/w MiB", "MiB", RS_LOWER, 0, 1 },
	[M_RSS] = { "rss_per_worker_mib", "RSS/w MiB", "MiB", RS_LOWER, 0, 1 },
	[M_MINFLT] = { "minor_faults", "minflt", "", RS_LOWER, 0, 0 },
	[M_MAJFLT] = { "major_faults", "majflt", "", RS_LOWER, 0, 0 },
};

/* The memory a cell's workers would hold privately, for --mem-limit: a
 * memory worker holds the corpus and its table (an entry, two hash slots
 * and the id: 64 bytes a record), a stdio loader its table; the index
 * strategies share the index and the page cache.  Each thread holds its
 * batch twice (the records read, and the copy the trainer gets). */
static double projected(const bench_opts *b, const plan *p, int strategy, unsigned w, unsigned t)
{
	double per_record = 64, records = (double)p->records;
	double mean = records > 0 ? (double)p->usize / records : 0;
	double batch = 2 * mean * b->wl.batch * workload_docs_per_sample(&b->wl);
	switch (strategy) {
	case DX_LOAD_MEMORY:
		return w * ((double)p->usize + per_record * records + t * batch);
	case DX_LOAD_STDIO:
		return (double)w * t * (per_record * records + batch);
	default:
		return (double)p->index_size[strategy] + (double)w * t * batch;
	}
}

/* One repetition's figures from what the workers sent. */
static void figures(const workers_result *res, double *row)
{
	uint64_t hist[HIST_BUCKETS] = { 0 };
	double mib = 1024.0 * 1024.0;
	memset(row, 0, NMETRICS * sizeof *row);
	for (unsigned i = 0; i < res->n; i++) {
		const worker_result *w = &res->w[i];
		double secs = w->elapsed_s > 0 ? w->elapsed_s : 1e-9;
		row[M_SAMPLES] += (double)w->samples / secs;
		row[M_DOCS] += (double)w->docs / secs;
		row[M_MB] += (double)w->bytes / secs / 1e6;
		if (w->setup_s > row[M_SETUP])
			row[M_SETUP] = w->setup_s;
		row[M_PSS] += (double)res->mem[i].pss / mib;
		row[M_USS] += (double)res->mem[i].uss / mib / res->n;
		row[M_RSS] += (double)res->mem[i].rss / mib / res->n;
		row[M_MINFLT] += (double)w->minor_faults;
		row[M_MAJFLT] += (double)w->major_faults;
		for (unsigned k = 0; k < HIST_BUCKETS; k++)
			hist[k] += w->hist[k];
	}
	row[M_P50] = hist_quantile(hist, 0.50) * 1e3;
	row[M_P95] = hist_quantile(hist, 0.95) * 1e3;
	row[M_P99] = hist_quantile(hist, 0.99) * 1e3;
}

/* A line on a terminal saying which cell runs, redrawn in place. */
static void show_progress(const bench_opts *b, size_t i, size_t n, const char *key, unsigned r)
{
	if (b->quiet || !isatty(STDERR_FILENO))
		return;
	if (!key)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\r\033[Kdocdex bench: cell %zu/%zu %s, repetition %u/%u", i + 1, n,
		        key, r + 1, b->repeat);
	fflush(stderr);
}

/* Runs every repetition of a cell; returns EXIT_INTERRUPTED or 0. */
static int run_cell(const bench_opts *b, const plan *p, const rs_matrix *m, rs_cell *c,
                    int strategy, unsigned w, unsigned t, size_t i)
{
	char key[256];
	rs_cell_key(m, c, key, sizeof key);
	c->projected = projected(b, p, strategy, w, t);
	if (p->skip_why[strategy] || !p->index_for[strategy]) {
		c->status = RS_SKIPPED;
		snprintf(c->reason, sizeof c->reason, "%s", p->skip_why[strategy] ? p->skip_why[strategy]
		                                               : "does not apply to this corpus");
		return 0;
	}
	if (c->projected > (double)b->mem_limit) {
		char need[32], limit[32];
		c->status = RS_OOM;
		snprintf(c->reason, sizeof c->reason, "projected %s > limit %s",
		         cli_bytes((uint64_t)c->projected, need, sizeof need),
		         cli_bytes(b->mem_limit, limit, sizeof limit));
		return 0;
	}
	workload_opts o = b->wl;
	o.corpus = p->index_for[strategy];
	o.strategy = strategy;
	o.threads = t;
	if (!(c->rep = calloc((size_t)b->repeat * NMETRICS, sizeof *c->rep))) {
		c->status = RS_FAILED;
		snprintf(c->reason, sizeof c->reason, "out of memory");
		return 0;
	}
	for (unsigned r = 0; r < b->repeat; r++) {
		workers_result res;
		show_progress(b, i, m->ncells, key, r);
		int rc = workers_run(&o, w, &res, c->reason, sizeof c->reason);
		if (rc == WORKERS_INTERRUPTED)
			return EXIT_INTERRUPTED;
		if (rc != WORKERS_OK) {
			c->status = RS_FAILED;
			c->nreps = 0;
			return 0;
		}
		figures(&res, c->rep + (size_t)r * NMETRICS);
		c->nreps++;
		workers_result_free(&res);
	}
	c->status = RS_OK;
	return 0;
}

/* ---- reports ----------------------------------------------------------------- */

/* The JSON objects that go into the report as they are: what machine, what
 * build, what parameters, so that two reports can be compared later. */
typedef struct meta {
	char *machine, *build, *params;
	char (*labels)[2][16];    /* each cell's workers and threads, as text */
} meta;

static void json_list(FILE *f, const unsigned *v, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? ", " : "", v[i]);
	fputc(']', f);
}

static void json_path(FILE *f, const char *key, const char *v, int comma)
{
	fprintf(f, "\"%s\": ", key);
	if (v)
		rs_json_string(f, v);
	else
		fputs("null", f);
	fputs(comma ? ", " : "", f);
}

static int render_meta(const bench_opts *b, const plan *p, const tempcorpus *t, meta *mt)
{
	static const char *const kinds[] = { [WL_TRIPLES] = "triples", [WL_RANDOM] = "random",
	                                     [WL_SCAN] = "scan" };
	size_t len;
	dx_machine mc;
	dx_machine_info(&mc);
	FILE *f = open_memstream(&mt->machine, &len);
	if (!f)
		return -1;
	fprintf(f, "{\"cores\": %u, \"memory_bytes\": %llu, \"available_bytes\": %llu, ", mc.cores,
	        (unsigned long long)mc.mem_total, (unsigned long long)mc.mem_available);
	json_path(f, "kernel", mc.kernel, 1);
	json_path(f, "cpu", mc.cpu, 1);
	json_path(f, "hostname", mc.hostname, 1);
	json_path(f, "corpus_filesystem", p->fs, 0);
	fputc('}', f);
	if (fclose(f) != 0)
		return -1;

	char *text = NULL;
	if (!(f = open_memstream(&text, &len)))
		return -1;
	print_version(f);
	if (fclose(f) != 0)
		return -1;
	if (len && text[len - 1] == '\n')
		text[len - 1] = '\0';
	if (!(f = open_memstream(&mt->build, &len))) {
		free(text);
		return -1;
	}
	fprintf(f, "{\"version\": \"%s\", ", dx_version());
	json_path(f, "text", text, 0);
	fputc('}', f);
	free(text);
	if (fclose(f) != 0)
		return -1;

	const workload_opts *w = &b->wl;
	int own = t->dir[0] != '\0' && w->qrels == t->qrels;
	int triples = w->kind == WL_TRIPLES;
	if (!(f = open_memstream(&mt->params, &len)))
		return -1;
	fputc('{', f);
	json_path(f, "corpus", p->corpus_label, 1);
	fprintf(f, "\"records\": %llu, \"corpus_bytes\": %llu, \"index_bytes\": %llu, ",
	        (unsigned long long)p->records, (unsigned long long)p->usize,
	        (unsigned long long)p->index_size[DX_LOAD_MMAP]);
	fprintf(f, "\"workload\": \"%s\", \"batch\": %u, \"negatives\": %u, ", kinds[w->kind],
	        w->batch, w->negatives);
	/* The inputs of the triples, when it draws them. */
	json_path(f, "queries", !triples ? NULL : own ? "synthetic" : w->queries, 1);
	json_path(f, "qrels", !triples ? NULL : own ? "synthetic" : w->qrels, 1);
	json_path(f, "run", !triples ? NULL : own ? "synthetic" : w->run, 1);
	fprintf(f, "\"depth\": %u, \"seed\": %llu, \"workers\": ", w->depth,
	        (unsigned long long)w->seed);
	json_list(f, b->workers, b->nworkers);
	fputs(", \"threads\": ", f);
	json_list(f, b->threads, b->nthreads);
	fprintf(f, ", \"duration_s\": %g, \"samples\": %llu, \"warmup_s\": %g, \"repeat\": %u, "
	           "\"mem_limit_bytes\": %llu}",
	        w->duration, (unsigned long long)w->samples, w->warmup, b->repeat,
	        (unsigned long long)b->mem_limit);
	return fclose(f);
}

static int writer_for(int format, int (**fn)(const rs_matrix *, FILE *))
{
	switch (format) {
	case FMT_CSV: *fn = rs_write_csv; break;
	case FMT_JSON: *fn = rs_write_json; break;
	case FMT_MARKDOWN: *fn = rs_write_markdown; break;
	default: *fn = rs_write_table; break;
	}
	return 0;
}

/* The format -o's name asks for: .json, .csv, .md; else the table. */
static int format_for_name(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot)
		return FMT_TABLE;
	return strcmp(dot, ".json") == 0 ? FMT_JSON
	     : strcmp(dot, ".csv") == 0  ? FMT_CSV
	     : strcmp(dot, ".md") == 0   ? FMT_MARKDOWN : FMT_TABLE;
}

/* Writes a report to path through a file that replaces it only once
 * complete.  Returns 0 or EXIT_FAIL after saying why. */
static int write_file(const char *path, int (*fn)(const rs_matrix *, FILE *), const rs_matrix *m)
{
	dx_err err = { 0 };
	dx_output *out = dx_output_open(path, &err);
	if (!out) {
		cli_lib_error("bench", &err);
		return EXIT_FAIL;
	}
	int fd = dup(dx_output_fd(out));
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	int e = 0;
	if (!f || fn(m, f) < 0 || fflush(f) != 0)
		e = errno ? errno : EIO;
	if (f && fclose(f) != 0 && !e)
		e = errno;
	else if (!f && fd >= 0)
		close(fd);
	if (e) {
		dx_output_abort(out);
		errno = e;
		cli_error("bench", "cannot write", path);
		return EXIT_FAIL;
	}
	if (dx_output_commit(out, &err) < 0) {
		cli_lib_error("bench", &err);
		return EXIT_FAIL;
	}
	return 0;
}

static int write_reports(const bench_opts *b, const rs_matrix *m)
{
	int (*fn)(const rs_matrix *, FILE *);
	int format = b->format ? b->format : b->output ? format_for_name(b->output) : FMT_TABLE;
	int rc = 0;
	writer_for(format, &fn);
	if (b->output) {
		if ((rc = write_file(b->output, fn, m)) != 0)
			return rc;
		if (b->quiet)
			fn = NULL;
		else
			fn = rs_write_table;
	}
	if (fn && (fn(m, stdout) < 0 || fflush(stdout) != 0) && errno != EPIPE) {
		cli_output_error("bench", errno);
		return EXIT_FAIL;
	}
	if (b->plot && (rc = write_file(b->plot, rs_write_svg, m)) != 0)
		return rc;
	return 0;
}

static void free_cells(rs_matrix *m)
{
	for (size_t i = 0; m->cells && i < m->ncells; i++)
		free(m->cells[i].rep);
	free(m->cells);
}

/* Runs the matrix: the corpus first (generated, or indexed when it has no
 * index), then every cell.  Returns 0, or the exit status of a failure. */
static int measure(bench_opts *b, rs_matrix *m, plan *p, tempcorpus *t, meta *mt)
{
	dx_err err = { 0 };
	progress pr;
	if (!b->mem_limit) {
		dx_machine mc;
		dx_machine_info(&mc);
		b->mem_limit = mc.mem_available ? mc.mem_available : UINT64_MAX;
	}
	cli_catch_signals();
	progress_init(&pr, b->corpus ? "indexing" : "generating", b->quiet);
	int rc = prepare(b, p, t, &pr, &err);
	progress_done(&pr, NULL);
	if (rc < 0)
		return cli_lib_failure("bench", rc, &err);
	if (!b->nstrategies)
		for (int s = DX_LOAD_MEMORY; s <= DX_LOAD_LAST; s++)
			if (p->index_for[s] && !p->skip_why[s])
				b->strategy[b->nstrategies++] = s;

	/* Cells by worker count, the dimension the fastest is picked within. */
	m->ncells = b->nworkers * b->nthreads * b->nstrategies;
	m->cells = calloc(m->ncells, sizeof *m->cells);
	mt->labels = calloc(m->ncells, sizeof *mt->labels);
	if (!m->cells || !mt->labels) {
		cli_error("bench", "out of memory", NULL);
		return EXIT_FAIL;
	}
	size_t i = 0;
	for (size_t wi = 0; wi < b->nworkers; wi++)
		for (size_t ti = 0; ti < b->nthreads; ti++)
			for (size_t si = 0; si < b->nstrategies; si++, i++) {
				rs_cell *c = &m->cells[i];
				snprintf(mt->labels[i][0], sizeof mt->labels[i][0], "%u", b->workers[wi]);
				snprintf(mt->labels[i][1], sizeof mt->labels[i][1], "%u", b->threads[ti]);
				c->dim[0] = dx_loader_name(b->strategy[si]);
				c->dim[1] = mt->labels[i][0];
				c->dim[2] = mt->labels[i][1];
				if (run_cell(b, p, m, c, b->strategy[si], b->workers[wi], b->threads[ti],
				             i) != 0) {
					show_progress(b, 0, 0, NULL, 0);
					cli_error("bench", "interrupted", NULL);
					return EXIT_INTERRUPTED;
				}
			}
	show_progress(b, 0, 0, NULL, 0);
	if (render_meta(b, p, t, mt) < 0) {
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
	bench_opts b = {
		.wl = { .kind = WL_TRIPLES, .batch = 32, .negatives = 1, .duration = 2, .warmup = 0.5 },
		.workers = { 1 }, .threads = { 1 }, .nworkers = 1, .nthreads = 1, .repeat = 3,
		.tolerance = 10,
	};
	dx_config *cfg = NULL;
	tempcorpus t = { 0 };
	plan p = { 0 };
	meta mt = { 0 };
	rs_matrix m = { .command = "bench", .dims = dims, .ndims = 3, .metrics = metrics,
	                .nmetrics = NMETRICS, .primary = M_SAMPLES, .group_dim = 1, .x_dim = 1,
	                .plot_metrics = { M_SAMPLES, M_PSS } };
	dx_err err = { 0 };
	int rc = parse_args(&b, argc, argv, &cfg);
	if (rc != 0) {
		rc = rc < 0 ? EXIT_OK : rc;
		goto out;
	}
	if (b.from) {
		if (rs_read_report(&m, b.from, &err) < 0) {
			rc = cli_lib_failure("bench", err.code, &err);
			goto out;
		}
	} else if ((rc = measure(&b, &m, &p, &t, &mt)) != 0) {
		goto out;
	}
	if ((rc = write_reports(&b, &m)) != 0)
		goto out;
	for (size_t i = 0; i < m.ncells && !b.from; i++)
		if (m.cells[i].status == RS_FAILED)
			rc = EXIT_FAIL;
	if (b.baseline) {
		int n = rs_compare_baseline(&m, b.baseline, b.tolerance, stderr, &err);
		if (n < 0)
			rc = cli_lib_failure("bench", n, &err);
		else if (n > 0)
			rc = EXIT_REGRESSED;
	}
out:
	tempcorpus_remove(&t);
	if (b.from)
		rs_free_report(&m);
	else
		free_cells(&m);
	free(mt.labels);
	free(mt.machine);
	free(mt.build);
	free(mt.params);
	for (size_t k = 0; k < b.nowned; k++)
		free(b.owned[k]);
	dx_config_free(cfg);
	return rc;
}
