/* matrix.c: the shared command line and reports of bench and pin-test (see
 * matrix.h).  Options come from the command line and from an experiment
 * file (-c), whose keys are the long options' names; both go through
 * set_option, so a value means the same in either place. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "matrix.h"
#include "dxbench.h"
#include "version.h"

int matrix_parse_synthetic(const char *spec, dxb_synth_opts *o)
{
	const char *colon = strchr(spec, ':'), *num = spec;
	*o = (dxb_synth_opts){ .kind = DXB_SYN_PASSAGES, .layout = DXB_SYN_TSV };
	if (colon) {
		size_t n = (size_t)(colon - spec);
		if (n == 8 && strncmp(spec, "passages", 8) == 0)
			o->kind = DXB_SYN_PASSAGES;
		else if ((n == 4 && strncmp(spec, "docs", 4) == 0) ||
		         (n == 9 && strncmp(spec, "documents", 9) == 0))
			o->kind = DXB_SYN_DOCUMENTS;
		else
			return -1;
		num = colon + 1;
	}
	size_t len = strlen(num);
	int sized = len && strchr("KMG", num[len - 1]);
	uint64_t v;
	/* A bare number after "KIND:" counts records; alone it is a size. */
	if (cli_parse_size(num, &v) < 0 || v == 0)
		return -1;
	if (sized || !colon)
		o->size = v;
	else
		o->count = v;
	return 0;
}

static const struct option shared[] = {
	{ "workload", required_argument, NULL, MX_OPT_WORKLOAD },
	{ "batch", required_argument, NULL, MX_OPT_BATCH },
	{ "workers", required_argument, NULL, 'j' },
	{ "threads", required_argument, NULL, MX_OPT_THREADS },
	{ "duration", required_argument, NULL, MX_OPT_DURATION },
	{ "samples", required_argument, NULL, MX_OPT_SAMPLES },
	{ "warmup", required_argument, NULL, MX_OPT_WARMUP },
	{ "repeat", required_argument, NULL, MX_OPT_REPEAT },
	{ "mem-limit", required_argument, NULL, MX_OPT_MEM_LIMIT },
	{ "limit-by", required_argument, NULL, MX_OPT_LIMIT_BY },
	{ "queries", required_argument, NULL, MX_OPT_QUERIES },
	{ "qrels", required_argument, NULL, MX_OPT_QRELS },
	{ "run", required_argument, NULL, MX_OPT_RUN },
	{ "depth", required_argument, NULL, MX_OPT_DEPTH },
	{ "negatives", required_argument, NULL, MX_OPT_NEGATIVES },
	{ "inflate-cache", required_argument, NULL, MX_OPT_INFLATE_CACHE },
	OPTION_SEED,
	{ "synthetic", required_argument, NULL, MX_OPT_SYNTHETIC },
	{ "tmpdir", required_argument, NULL, MX_OPT_TMPDIR },
	OPTION_FORMAT,
	OPTION_OUTPUT,
	{ "plot", required_argument, NULL, MX_OPT_PLOT },
	{ "baseline", required_argument, NULL, MX_OPT_BASELINE },
	{ "tolerance", required_argument, NULL, MX_OPT_TOLERANCE },
	{ "from", required_argument, NULL, MX_OPT_FROM },
	{ "config", required_argument, NULL, 'c' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "wide", no_argument, NULL, MX_OPT_WIDE },
	OPTION_FORCE,
	OPTION_HELP,
	/* Only in an experiment file: the positional argument. */
	{ "corpus", required_argument, NULL, MX_OPT_CORPUS },
};

enum { NSHARED = sizeof shared / sizeof *shared };

/* The shared options and the command's own: for the keys of an
 * experiment file with file_keys, else for getopt_long; malloc'd. */
/* The help of the shared options, after the command's own (the first
 * lines of "What is measured:"). */
static const char shared_usage[] =
	"      --workload KIND      triples, random or scan (default: triples)\n"
	"      --batch N            samples per batch (default: 32)\n"
	"  -j, --workers LIST       worker processes, e.g. 1,2,4,8 (default: 1)\n"
	"      --threads LIST       loader threads in each worker (default: 1)\n"
	"      --duration SECS      measured time per repetition (default: 2)\n"
	"      --samples N          measure N samples per worker instead\n"
	"      --warmup SECS        unmeasured time before it (default: 0.5)\n"
	"      --repeat R           repetitions of each cell (default: 3)\n"
	"      --mem-limit SIZE     the memory the workers of a cell may take (default:\n"
	"                           available memory); see --limit-by\n"
	"      --limit-by HOW       cgroup (the workers run in a memory cgroup of that\n"
	"                           size: a cell that passes it is killed, and reported\n"
	"                           oom) or projection (a cell whose projected memory\n"
	"                           passes it is reported oom and not run) (default:\n"
	"                           cgroup with --mem-limit where one can be made)\n"
	"      --inflate-cache SIZE the inflate cache of the gzip-cached and bgzf-cached\n"
	"                           strategies, shared by every worker and thread (in\n"
	"                           /dev/shm, or $DOCDEX_CACHE_DIR); see the column\n"
	"                           inflate MiB/s (--wide) (default: 1G)\n"
	"\n"
	"Triples (as in docdex sample; without them, documents at random):\n"
	"      --queries FILE       query texts\n"
	"      --qrels FILE         judgements: the positives\n"
	"      --run FILE           negatives from a TREC or MS MARCO run (default: at\n"
	"                           random)\n"
	"      --depth K            each query's top K run lines, those of documents\n"
	"                           not in the corpus in their place (default: all)\n"
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
	"      --wide               the table with every column (by default it fits\n"
	"                           100 columns; CSV and JSON hold them all)\n"
	"  -f, --force              replace an existing report or plot file\n"
	"  -q, --quiet              no table when writing -o, no progress\n"
	"  -h, --help               show this help\n";

static struct option *all_options(const matrix_cmd *cmd, int file_keys)
{
	size_t own = 0;
	while (cmd->own && cmd->own[own].name)
		own++;
	struct option *all = calloc(NSHARED + own + 1, sizeof *all);
	if (!all)
		return NULL;
	memcpy(all, cmd->own, own * sizeof *all);
	memcpy(all + own, shared, (NSHARED - !file_keys) * sizeof *all);
	return all;
}

void matrix_opts_init(matrix_opts *o)
{
	*o = (matrix_opts){
		.wl = { .kind = DXB_WL_TRIPLES, .batch = 32, .negatives = 1, .duration = 2, .warmup = 0.5 },
		.workers = { 1 }, .threads = { 1 }, .nworkers = 1, .nthreads = 1, .repeat = 3,
		.tolerance = 10,
	};
}

void matrix_opts_free(matrix_opts *o)
{
	for (size_t k = 0; k < o->nowned; k++)
		free(o->owned[k]);
	o->nowned = 0;
	dxb_config_free(o->config);
	o->config = NULL;
}

/* A number of seconds, or a percentage: from 0, below a million. */
static int parse_seconds(const char *s, double *v)
{
	return cli_parse_double(s, v) == 0 && *v >= 0 && *v < 1e6 ? 0 : -1;
}

/* A list of worker or thread counts: each 1..max, at most MX_MAX_LIST. */
typedef struct count_list {
	unsigned *list;
	size_t *n;
	unsigned max;
} count_list;

static int add_count(void *ctx, const char *w)
{
	count_list *c = ctx;
	uint64_t v;
	if (*c->n == MX_MAX_LIST || cli_parse_u64(w, &v) < 0 || v < 1 || v > c->max)
		return -1;
	c->list[(*c->n)++] = (unsigned)v;
	return 0;
}

/* "1,2,4" into list.  0 or -1. */
static int parse_counts(const char *s, unsigned *list, size_t *n, unsigned max)
{
	count_list c = { list, n, max };
	*n = 0;
	return cli_parse_list(s, add_count, &c);
}

/* --format: the names by MX_FMT_* number, less one; "md" is markdown too. */
static int parse_format(const char *cmd, const char *place, const char *v, int *format)
{
	static const char *const names[] = { "table", "csv", "json", "markdown", NULL };
	int rc = opt_format(cmd, place, strcmp(v, "md") == 0 ? "markdown" : v, names, format);
	if (rc == 0)
		*format += MX_FMT_TABLE;
	return rc;
}

static void set_path(matrix_opts *b, int id, const char *v, int from_file);

/* Applies one option (from the command line when place is NULL, else from
 * the experiment file at place).  Returns 0 or EXIT_USAGE. */
static int set_option(const matrix_cmd *cmd, matrix_opts *b, int id, const char *name, const char *v,
                      const char *place)
{
	if (id >= MX_OPT_OWN)
		return cmd->set(cmd->ctx, id, name, v, place);
	uint64_t n;
	double d;
	dxb_workload_opts *w = &b->wl;
	switch (id) {
	case MX_OPT_WORKLOAD:
		w->kind = strcmp(v, "triples") == 0 ? DXB_WL_TRIPLES
		        : strcmp(v, "random") == 0  ? DXB_WL_RANDOM
		        : strcmp(v, "scan") == 0    ? DXB_WL_SCAN : 0;
		if (!w->kind)
			return opt_bad_value(cmd->name, name, place, "triples, random or scan", v);
		break;
	case MX_OPT_BATCH:
		if (cli_parse_u64(v, &n) < 0 || n < 1 || n > 65536)
			return opt_bad_value(cmd->name, name, place, "1 to 65536 samples", v);
		w->batch = (unsigned)n;
		break;
	case 'j':
		if (parse_counts(v, b->workers, &b->nworkers, MX_MAX_WORKERS) < 0)
			return opt_bad_value(cmd->name, name, place, "a list of worker counts such as 1,2,4,8", v);
		break;
	case MX_OPT_THREADS:
		if (parse_counts(v, b->threads, &b->nthreads, 256) < 0)
			return opt_bad_value(cmd->name, name, place, "a list of thread counts such as 1,2", v);
		break;
	case MX_OPT_DURATION:
	case MX_OPT_WARMUP:
		if (parse_seconds(v, &d) < 0 || (id == MX_OPT_DURATION && d <= 0))
			return opt_bad_value(cmd->name, name, place, "a number of seconds", v);
		*(id == MX_OPT_DURATION ? &w->duration : &w->warmup) = d;
		break;
	case MX_OPT_SAMPLES:
		if (cli_parse_u64(v, &n) < 0)
			return opt_bad_value(cmd->name, name, place, "a number of samples", v);
		w->samples = n;
		break;
	case MX_OPT_REPEAT:
		if (cli_parse_u64(v, &n) < 0 || n < 1 || n > 1000)
			return opt_bad_value(cmd->name, name, place, "1 to 1000 repetitions", v);
		b->repeat = (unsigned)n;
		break;
	case MX_OPT_MEM_LIMIT:
		if (cli_parse_size(v, &n) < 0 || n == 0)
			return opt_bad_value(cmd->name, name, place, "a size such as 16G", v);
		b->mem_limit = n;
		break;
	case MX_OPT_LIMIT_BY:
		if (strcmp(v, "cgroup") == 0)
			b->limit_by = MX_LIMIT_CGROUP;
		else if (strcmp(v, "projection") == 0)
			b->limit_by = MX_LIMIT_PROJECTION;
		else
			return opt_bad_value(cmd->name, name, place, "cgroup or projection", v);
		break;
	case MX_OPT_DEPTH:
		if (cli_parse_u64(v, &n) < 0 || n > UINT32_MAX)
			return opt_bad_value(cmd->name, name, place, "a number of documents", v);
		w->depth = (unsigned)n;
		break;
	case MX_OPT_INFLATE_CACHE:
		if (cli_parse_size(v, &n) < 0 || n == 0)
			return opt_bad_value(cmd->name, name, place, "a size such as 512M or 4G", v);
		w->inflate_cache = n;
		break;
	case MX_OPT_NEGATIVES:
		if (cli_parse_u64(v, &n) < 0 || n < 1 || n > 1024)
			return opt_bad_value(cmd->name, name, place, "1 to 1024", v);
		w->negatives = (unsigned)n;
		break;
	case OPT_SEED:
		return opt_seed(cmd->name, place, v, &w->seed);
	case MX_OPT_SYNTHETIC: {
		dxb_synth_opts so;
		if (matrix_parse_synthetic(v, &so) < 0)
			return opt_bad_value(cmd->name, name, place, "passages:N, docs:N or a size such as 500M", v);
		b->synthetic = v;
		b->synthetic_in_file = place != NULL;
		break;
	}
	case OPT_FORMAT:
		return parse_format(cmd->name, place, v, &b->format);
	case MX_OPT_TOLERANCE:
		if (parse_seconds(v, &d) < 0 || d > 1000)
			return opt_bad_value(cmd->name, name, place, "a percentage such as 10", v);
		b->tolerance = d;
		break;
	case 'q':
	case MX_OPT_WIDE:
	case 'f':
		if (place && strcmp(v, "true") != 0 && strcmp(v, "false") != 0)
			return opt_bad_value(cmd->name, name, place, "true or false", v);
		*(id == 'q' ? &b->quiet : id == 'f' ? &b->force : &b->wide) = !place || strcmp(v, "true") == 0;
		break;
	case MX_OPT_QUERIES:
	case MX_OPT_QRELS:
	case MX_OPT_RUN:
	case MX_OPT_TMPDIR:
	case 'o':
	case MX_OPT_PLOT:
	case MX_OPT_BASELINE:
	case MX_OPT_FROM:
	case MX_OPT_CORPUS:
		if (!*v)
			return opt_bad_value(cmd->name, name, place, "a file name", v);
		set_path(b, id, v, place != NULL);
		break;
	}
	return 0;
}

/* The options that name files, set once their value was checked. */
static void set_path(matrix_opts *b, int id, const char *v, int from_file)
{
	dxb_workload_opts *w = &b->wl;
	switch (id) {
	case MX_OPT_QUERIES: w->queries = v; break;
	case MX_OPT_QRELS: w->qrels = v; break;
	case MX_OPT_RUN: w->run = v; break;
	case MX_OPT_TMPDIR: b->tmpdir = v; break;
	case 'o': b->output = v; break;
	case MX_OPT_PLOT: b->plot = v; break;
	case MX_OPT_BASELINE: b->baseline = v; break;
	case MX_OPT_FROM: b->from = v; break;
	case MX_OPT_CORPUS:
		b->corpus = v;
		b->corpus_in_file = from_file;
		break;
	}
}

static const struct option *find_key(const struct option *options, const char *key)
{
	for (const struct option *o = options; o->name; o++)
		if (strcmp(o->name, key) == 0 && o->val != 'c' && o->val != 'h')
			return o;
	return NULL;
}

/* Whether a key names a file, which is found relative to the experiment
 * file rather than to the directory the command runs in. */
static int is_path_key(int id)
{
	return id == MX_OPT_CORPUS || id == MX_OPT_QUERIES || id == MX_OPT_QRELS || id == MX_OPT_RUN ||
	       id == MX_OPT_TMPDIR || id == 'o' || id == MX_OPT_PLOT || id == MX_OPT_BASELINE ||
	       id == MX_OPT_FROM;
}

static int apply_config(const matrix_cmd *cmd, matrix_opts *b, const char *path)
{
	dx_err err = { 0 };
	dxb_config *cfg = dxb_config_load(path, &err);
	if (!cfg) {
		cli_lib_error(cmd->name, &err);
		return EXIT_USAGE;
	}
	b->config = cfg;
	b->config_path = path;
	char *copy = strdup(path);
	struct option *options = all_options(cmd, 1);
	if (!copy || !options) {
		free(copy);
		free(options);
		cli_error(cmd->name, "out of memory", NULL);
		return EXIT_FAIL;
	}
	const char *dir = dirname(copy);
	int rc = 0;
	for (size_t i = 0; i < dxb_config_count(cfg) && rc == 0; i++) {
		const dxb_config_item *it = dxb_config_item_at(cfg, i);
		/* The file and the key go into the message's text, where the
		 * subject's escaping does not reach: escaped here. */
		char place[TC_PATH + 32], shown[TC_PATH], key[128];
		dx_escape(path, strlen(path), shown, sizeof shown);
		dx_escape(it->key, strlen(it->key), key, sizeof key);
		snprintf(place, sizeof place, "%s:%u", shown, it->line);
		const struct option *o = find_key(options, it->key);
		if (!o) {
			char what[sizeof place + 32];
			snprintf(what, sizeof what, "%s: unknown key", place);
			rc = cli_usage_error(cmd->name, what, it->key);
			break;
		}
		const char *v = it->value;
		if (is_path_key(o->val) && v[0] && v[0] != '/' && strcmp(dir, ".") != 0 &&
		    b->nowned < sizeof b->owned / sizeof *b->owned) {
			char *abs = malloc(strlen(dir) + strlen(v) + 2);
			if (!abs) {
				cli_error(cmd->name, "out of memory", NULL);
				rc = EXIT_FAIL;
				break;
			}
			sprintf(abs, "%s/%s", dir, v);
			b->owned[b->nowned++] = abs;
			v = abs;
		}
		int one = o->val < MX_OPT_OWN ? o->val != 'j' && o->val != MX_OPT_THREADS
		                                : cmd->one_value && cmd->one_value(o->val);
		if (it->is_list && one) {
			char what[sizeof place + sizeof key + 32];
			snprintf(what, sizeof what, "%s: %s takes one value, not a list", place, key);
			rc = cli_usage_error(cmd->name, what, v);
			break;
		}
		rc = set_option(cmd, b, o->val, it->key, v, place);
	}
	free(copy);
	free(options);
	return rc;
}

/* The records a --synthetic spec asks for; 0 when it gives a size. */
static uint64_t synthetic_records(const char *spec)
{
	dxb_synth_opts so;
	return matrix_parse_synthetic(spec, &so) == 0 ? so.count : 0;
}

/* The file a path would be written as: the same file when it exists (any
 * link to it), else the same name in the same directory once resolved
 * ("./r.json" and "r.json").  Devices and FIFOs are written through, not
 * replaced: two outputs may share one (/dev/null).  1 or 0. */
static int same_output(const char *a, const char *b)
{
	struct stat x, y;
	int ha = stat(a, &x) == 0, hb = stat(b, &y) == 0;
	if (ha || hb)
		return ha && hb && S_ISREG(x.st_mode) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
	char *ca = strdup(a), *cb = strdup(b), *ra = NULL, *rb = NULL;
	int same = 0;
	if (ca && cb && (ra = realpath(dirname(ca), NULL)) && (rb = realpath(dirname(cb), NULL))) {
		const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
		same = strcmp(ra, rb) == 0 && strcmp(na ? na + 1 : a, nb ? nb + 1 : b) == 0;
	}
	free(ca);
	free(cb);
	free(ra);
	free(rb);
	return same;
}

/* Refuses a report or plot that would replace what the command reads, or
 * each other (bench --plot c.tsv c.tsv once replaced the corpus with an
 * SVG): one line and EXIT_FAIL, before anything is measured or written. */
static int check_outputs(const char *cmd, const matrix_opts *b)
{
	dx_err err = { 0 };
	/* The corpus opened finds its index and every source; one that does
	 * not open (no index yet) is compared by its name, and its error is
	 * the measurement's to report. */
	dx_corpus *c = b->corpus && !b->from ? dx_corpus_open(b->corpus, &err) : NULL;
	const char *in[] = { b->from ? NULL : b->corpus, b->wl.queries, b->wl.qrels, b->wl.run,
	                     b->from, b->baseline, b->config_path };
	size_t n = sizeof in / sizeof *in;
	int rc = cli_check_output(cmd, b->output, in, n, c);
	if (rc == 0)
		rc = cli_check_output(cmd, b->plot, in, n, c);
	if (rc == 0 && b->output && b->plot && same_output(b->output, b->plot)) {
		cli_error(cmd, "the report and the plot would be the same file", b->plot);
		rc = EXIT_FAIL;
	}
	/* A baseline not there yet is the output by name only: written first,
	 * it would be compared with itself and pass. */
	const char *outs[] = { b->output, b->plot };
	for (size_t i = 0; i < 2 && rc == 0 && b->baseline; i++)
		if (outs[i] && same_output(outs[i], b->baseline)) {
			cli_error(cmd, "the output would replace a file this command reads", outs[i]);
			rc = EXIT_FAIL;
		}
	/* Nor a file already there, without --force, as gzip does: found now,
	 * not after the run. */
	if (rc == 0)
		rc = cli_check_replace(cmd, b->output, b->force, 0);
	if (rc == 0)
		rc = cli_check_replace(cmd, b->plot, b->force, 0);
	dx_corpus_close(c);
	return rc;
}

/* Reads the options: the experiment file first (found in a first pass over
 * argv), then the command line over it. */
int matrix_parse(const matrix_cmd *cmd, matrix_opts *b, int argc, char **argv)
{
	static const char shorts[] = ":j:o:c:qfh";
	struct option *options = all_options(cmd, 0);
	int c, rc = 0;
	if (!options) {
		cli_error(cmd->name, "out of memory", NULL);
		return EXIT_FAIL;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, options, NULL)) != -1) {
		if (c == 'c' && b->config) {
			rc = cli_usage_error(cmd->name, "give one experiment file", optarg);
			goto out;
		}
		if (c == 'c' && (rc = apply_config(cmd, b, optarg)) != 0)
			goto out;
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, options, NULL)) != -1) {
		if (c == 'h') {
			fputs(cmd->usage, stdout);
			fputs(shared_usage, stdout);
			rc = -1;
			goto out;
		}
		if (c == '?' || c == ':') {
			rc = cli_bad_option(cmd->name, argv, c);
			goto out;
		}
		if (c == 'c')
			continue;
		const char *name = "";
		for (const struct option *o = options; o->name; o++)
			if (o->val == c)
				name = o->name;
		if ((rc = set_option(cmd, b, c, name, optarg ? optarg : "", NULL)) != 0)
			goto out;
	}
	if (optind < argc - 1) {
		rc = cli_usage_error(cmd->name, "more than one corpus given", argv[optind + 1]);
		goto out;
	}
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
		rc = cli_usage_error(cmd->name, "give a corpus or --synthetic, not both", b->corpus);
	else if ((b->wl.run || b->wl.queries) && !b->wl.qrels)
		rc = cli_usage_error(cmd->name, "--queries and --run need --qrels", NULL);
	else if (b->wl.qrels && !b->wl.queries)
		rc = cli_usage_error(cmd->name, "--qrels needs --queries", NULL);
	else if (b->synthetic && b->wl.kind == DXB_WL_TRIPLES && synthetic_records(b->synthetic) == 1)
		rc = cli_usage_error(cmd->name, "a triple needs 2 records or more, its negative "
		                                "besides its positive", b->synthetic);
	else
		rc = check_outputs(cmd->name, b);
out:
	free(options);
	return rc;
}

void matrix_json_list(dxb_json *j, const char *key, const unsigned *v, size_t n)
{
	dxb_json_key(j, key);
	dxb_json_begin_array(j, DXB_JSON_INLINE);
	for (size_t i = 0; i < n; i++)
		dxb_json_uint(j, v[i]);
	dxb_json_end_array(j);
}

void matrix_json_string(dxb_json *j, const char *key, const char *v)
{
	dxb_json_key(j, key);
	dxb_json_string(j, v);
}

int matrix_mem_limit(const char *cmd, matrix_opts *o)
{
	int given = o->mem_limit != 0;
	if (!given) {
		dxb_meminfo mi;
		dxb_meminfo_read(&mi);
		o->mem_limit = mi.available ? mi.available : UINT64_MAX;
	}
	o->limit_kind = "projection";
	if (o->limit_by == MX_LIMIT_PROJECTION || (o->limit_by == MX_LIMIT_AUTO && !given))
		return 0;
	dx_err err;
	const char *kind = dxb_memcg_possible(&err);
	if (kind) {
		o->limit_kind = kind;
		return 0;
	}
	if (o->limit_by == MX_LIMIT_AUTO)
		return 0;
	char why[600];
	dx_describe(&err, why, sizeof why);
	cli_error(cmd, "--limit-by cgroup: no memory cgroup can be made here", why);
	return EXIT_FAIL;
}

int matrix_cells_alloc(dxb_rs_matrix *m, size_t n, matrix_counts **counts)
{
	m->ncells = n;
	m->cells = calloc(n, sizeof *m->cells);
	*counts = calloc(n, sizeof **counts);
	return m->cells && *counts ? 0 : -1;
}

void matrix_cell_counts(dxb_rs_cell *c, matrix_counts counts, size_t wdim, size_t tdim, unsigned w,
                        unsigned t)
{
	snprintf(counts[0], sizeof counts[0], "%u", w);
	snprintf(counts[1], sizeof counts[1], "%u", t);
	c->dim[wdim] = counts[0];
	c->dim[tdim] = counts[1];
}

void matrix_cell_mark(dxb_rs_cell *c, int status, const char *why)
{
	c->status = status;
	c->nreps = 0;
	snprintf(c->reason, sizeof c->reason, "%s", why);
}

int matrix_cell_guard(const matrix_opts *o, dxb_rs_cell *c, dxb_workload_opts *wl, matrix_guard *gd)
{
	char need[32], limit[32], why[sizeof c->reason];
	*gd = (matrix_guard){ 0 };
	dx_format_bytes(o->mem_limit, limit, sizeof limit);
	if (strcmp(o->limit_kind, "projection") != 0) {
		dx_err err;
		if (!(gd->group = dxb_memcg_new(o->mem_limit, &err))) {
			dx_describe(&err, why, sizeof why);
			matrix_cell_mark(c, DXB_RS_FAILED, why);
			return 1;
		}
		wl->memcg = gd->group;
		return 0;
	}
	if (c->projected <= (double)o->mem_limit)
		return 0;
	snprintf(why, sizeof why, "projected %s > limit %s",
	         dx_format_bytes((uint64_t)c->projected, need, sizeof need), limit);
	matrix_cell_mark(c, DXB_RS_OOM, why);
	return 1;
}

void matrix_guard_rep(matrix_guard *gd)
{
	if (gd->group)
		gd->kills = dxb_memcg_oom_kills(gd->group);
}

int matrix_guard_killed(const matrix_opts *o, const matrix_guard *gd, dxb_rs_cell *c)
{
	if (!gd->group)
		return 0;
	uint64_t kills = dxb_memcg_oom_kills(gd->group) - gd->kills;
	if (!kills)
		return 0;
	char limit[32], peak[32], why[160];
	snprintf(why, sizeof why, "killed for memory: %llu worker%s over the limit of %s (%s; peak %s)",
	         (unsigned long long)kills, kills == 1 ? "" : "s",
	         dx_format_bytes(o->mem_limit, limit, sizeof limit), o->limit_kind,
	         dx_format_bytes(dxb_memcg_peak(gd->group), peak, sizeof peak));
	matrix_cell_mark(c, DXB_RS_OOM, why);
	return 1;
}

void matrix_guard_end(matrix_guard *gd)
{
	dxb_memcg_free(gd->group);
	gd->group = NULL;
}

int matrix_interrupted(const char *cmd, const matrix_opts *o)
{
	matrix_progress(cmd, o, 0, 0, NULL, 0);
	cli_error(cmd, "interrupted", NULL);
	return EXIT_INTERRUPTED;
}

char *matrix_machine_json(const char *fs)
{
	dxb_machine mc;
	dxb_machine_info(&mc);
	dxb_json *j = dxb_json_new(0);
	dxb_json_begin_object(j, DXB_JSON_INLINE);
	dxb_json_key(j, "cores");
	dxb_json_uint(j, mc.cores);
	dxb_json_key(j, "memory_bytes");
	dxb_json_uint(j, mc.mem_total);
	dxb_json_key(j, "available_bytes");
	dxb_json_uint(j, mc.mem_available);
	dxb_json_key(j, "kernel");
	dxb_json_string(j, mc.kernel);
	dxb_json_key(j, "cpu");
	dxb_json_string(j, mc.cpu);
	dxb_json_key(j, "hostname");
	dxb_json_string(j, mc.hostname);
	dxb_json_key(j, "corpus_filesystem");
	dxb_json_string(j, fs);
	dxb_json_end_object(j);
	return dxb_json_finish(j);
}

char *matrix_build_json(void)
{
	char *version = NULL, *text = NULL;
	size_t len;
	FILE *f = open_memstream(&version, &len);
	if (!f)
		return NULL;
	print_version(f);
	if (fclose(f) != 0)
		goto out;
	if (len && version[len - 1] == '\n')
		version[len - 1] = '\0';
	dxb_json *j = dxb_json_new(0);
	dxb_json_begin_object(j, DXB_JSON_INLINE);
	dxb_json_key(j, "version");
	dxb_json_string(j, dx_version());
	dxb_json_key(j, "text");
	dxb_json_string(j, version);
	dxb_json_end_object(j);
	text = dxb_json_finish(j);
out:
	free(version);
	return text;
}

static int writer_for(int format, int (**fn)(const dxb_rs_matrix *, FILE *))
{
	switch (format) {
	case MX_FMT_CSV: *fn = dxb_rs_write_csv; break;
	case MX_FMT_JSON: *fn = dxb_rs_write_json; break;
	case MX_FMT_MARKDOWN: *fn = dxb_rs_write_markdown; break;
	default: *fn = dxb_rs_write_table; break;
	}
	return 0;
}

/* The format -o's name asks for: .json, .csv, .md; else the table. */
static int format_for_name(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot)
		return MX_FMT_TABLE;
	return strcmp(dot, ".json") == 0 ? MX_FMT_JSON
	     : strcmp(dot, ".csv") == 0  ? MX_FMT_CSV
	     : strcmp(dot, ".md") == 0   ? MX_FMT_MARKDOWN : MX_FMT_TABLE;
}

/* Writes a report to path through a file that replaces it only once
 * complete.  Returns 0 or EXIT_FAIL after saying why. */
static int write_file(const matrix_cmd *cmd, const char *path, int (*fn)(const dxb_rs_matrix *, FILE *), const dxb_rs_matrix *m)
{
	dx_err err = { 0 };
	dx_output *out = dx_output_open(path, &err);
	if (!out) {
		cli_lib_error(cmd->name, &err);
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
		cli_sys_error(cmd->name, "cannot write", path, e);
		return EXIT_FAIL;
	}
	if (dx_output_commit(out, &err) < 0) {
		cli_lib_error(cmd->name, &err);
		return EXIT_FAIL;
	}
	return 0;
}

static int write_reports(const matrix_cmd *cmd, const matrix_opts *b, const dxb_rs_matrix *m)
{
	int (*fn)(const dxb_rs_matrix *, FILE *);
	int format = b->format ? b->format : b->output ? format_for_name(b->output) : MX_FMT_TABLE;
	int rc = 0;
	writer_for(format, &fn);
	if (b->output) {
		if ((rc = write_file(cmd, b->output, fn, m)) != 0)
			return rc;
		if (b->quiet)
			fn = NULL;
		else
			fn = dxb_rs_write_table;
	}
	if (fn && (fn(m, stdout) < 0 || fflush(stdout) != 0) && errno != EPIPE) {
		cli_output_error(cmd->name, errno);
		return EXIT_FAIL;
	}
	if (b->plot && (rc = write_file(cmd, b->plot, dxb_rs_write_svg, m)) != 0)
		return rc;
	return 0;
}


int matrix_report(const matrix_cmd *cmd, const matrix_opts *o, const dxb_rs_matrix *measured)
{
	dx_err err = { 0 };
	/* The reports for people say what was measured on what. */
	dxb_rs_matrix shown = *measured;
	const dxb_rs_matrix *m = &shown;
	shown.wide = o->wide;
	if (!(shown.header = dxb_rs_header(measured))) {
		cli_sys_error(cmd->name, "cannot report", "", ENOMEM);
		return EXIT_FAIL;
	}
	int rc = write_reports(cmd, o, m);
	free((char *)shown.header);
	if (rc != 0)
		return rc;
	/* A cell that failed in this run fails the command, after the report,
	 * with a line that says why, the report perhaps being in a file only;
	 * one read back with --from was reported when it failed. */
	size_t failed = 0, first = 0;
	for (size_t i = 0; i < m->ncells && !o->from; i++)
		if (m->cells[i].status == DXB_RS_FAILED && failed++ == 0)
			first = i;
	if (failed) {
		char key[256], what[320], reason[CLI_SUBJECT_MAX];
		const dxb_rs_cell *c = &m->cells[first];
		dxb_rs_cell_key(m, c, key, sizeof key);
		if (failed == 1)
			snprintf(what, sizeof what, "a cell failed");
		else
			snprintf(what, sizeof what, "%zu cells failed, the first", failed);
		fprintf(stderr, "docdex %s: %s: '%s': %s\n", cmd->name, what, key,
		        dx_escape(c->reason, strlen(c->reason), reason, sizeof reason));
		rc = EXIT_FAIL;
	}
	if (o->baseline) {
		int n = dxb_rs_compare_baseline(m, o->baseline, o->tolerance, stderr, &err);
		if (n < 0)
			rc = cli_lib_failure(cmd->name, n, &err);
		else if (n > 0)
			rc = EXIT_REGRESSED;
	}
	return rc;
}
