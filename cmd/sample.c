/* sample.c: docdex sample, training triples drawn from an indexed corpus. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "options.h"
#include "out.h"
#include "sample.h"
#include "signals.h"

static const char usage[] =
	"usage: docdex sample [options] CORPUS_OR_INDEX\n"
	"       docdex sample --format ids [options] [CORPUS_OR_INDEX]\n"
	"\n"
	"Write training triples (query, positive, negative) drawn from an indexed\n"
	"corpus, the same for the same seed on any machine.  --format ids needs no\n"
	"corpus (then no id is checked, and --random cannot be given).\n"
	"\n"
	"Inputs (plain or gzipped):\n"
	"      --queries FILE       query texts: qid TAB text, JSONL (BEIR queries.jsonl)\n"
	"                           or TREC topics (needed by tsv and jsonl)\n"
	"      --qrels FILE         judgements: TREC qrels (qid iter docid rel) or BEIR\n"
	"                           qrels (query-id corpus-id score)\n"
	"      --min-rel N          a judgement of N or more is a positive (default: 1)\n"
	"      --run FILE           negatives from a run: TREC (qid Q0 docid rank score\n"
	"                           tag) or MS MARCO (qid TAB pid TAB rank)\n"
	"      --depth K | A-B      keep each query's top K run lines (or its places A to\n"
	"                           B), by score (by rank for MS MARCO), ties by the\n"
	"                           rank column, then by document id; lines of\n"
	"                           documents not in the corpus keep their place\n"
	"                           (default: all)\n"
	"      --margin M | P%      a run negative scores at most its positive's run\n"
	"                           score less M, or less P% of it (TREC runs)\n"
	"      --weights W          uniform, or rank: the run's place p drawn with\n"
	"                           weight 1/p (default: uniform)\n"
	"      --exclude-judged     no judged document is a negative, whatever its\n"
	"                           relevance (positives never are)\n"
	"      --random             negatives drawn uniformly from the whole corpus\n"
	"      --run-ratio R        with --run and --random, the share of negatives\n"
	"                           from the run, 0 to 1 (default: 0.5)\n"
	"      --triples FILE       ID triples (qid TAB pos TAB neg) in the file's order,\n"
	"                           instead of --qrels, --run and --random\n"
	"      --pairs P            what an epoch visits: all (every query, positive\n"
	"                           pair) or query (each query once, its positives in\n"
	"                           turn) (default: all)\n"
	"\n"
	"Output:\n"
	"  -o, --output FILE        write to FILE, replaced only once complete\n"
	"                           (default: stdout)\n"
	"  -f, --force              replace FILE where it exists already\n"
	"      --format FORMAT      tsv (query, positive, negative texts), ids (their\n"
	"                           ids), jsonl (both, and the epoch), tevatron or\n"
	"                           flagembedding (those trainers' JSONL) (default: tsv)\n"
	"      --field NAMES        the document fields to print, joined by a space, as in\n"
	"                           docdex get (default: the text)\n"
	"      --negatives K        negatives per triple (default: 1); jsonl then\n"
	"                           gives lists\n"
	"\n"
	"How many, and which:\n"
	"      --count N            triples in all, over every shard\n"
	"      --epochs E           passes over all (query, positive) pairs, or over the\n"
	"                           triples file, when there is no --count (default: 1)\n"
	"      --seed S             the seed of the draws (default: 0)\n"
	"      --start N            begin at triple N of the whole sequence, at once (to\n"
	"                           resume a job, on any number of shards)\n"
	"      --rank R             this process's shard, 0 to W-1 (default: $RANK, or 0)\n"
	"      --world-size W       number of shards (default: $WORLD_SIZE, or 1); every\n"
	"                           shard gets as many triples, the last ones padded\n"
	"                           with the first triples\n"
	"      --drop-last          leave out the remainder instead of padding\n"
	"      --strict             stop at the first bad input line, or at an input\n"
	"                           shaped like another kind of file, instead of\n"
	"                           counting bad lines in a summary on stderr\n"
	"      --stats              print what was read and written to stderr\n"
	"  -q, --quiet              no progress bar\n"
	"      --no-readahead       do not ask the kernel for the next batch's documents\n"
	"                           while this one is written\n"
	OPT_ACCESS_HELP
	OPT_INFLATE_CACHE_HELP
	"  -h, --help               show this help\n";

enum {
	OPT_QUERIES = OPT_OWN, OPT_QRELS, OPT_MIN_REL, OPT_RUN, OPT_DEPTH, OPT_EXCLUDE_JUDGED,
	OPT_RANDOM, OPT_RUN_RATIO, OPT_TRIPLES, OPT_FIELD, OPT_NEGATIVES, OPT_COUNT, OPT_EPOCHS,
	OPT_RANK, OPT_WORLD_SIZE, OPT_STRICT, OPT_STATS, OPT_MARGIN, OPT_WEIGHTS, OPT_PAIRS,
	OPT_START, OPT_DROP_LAST, OPT_NO_READAHEAD
};

static const struct option options[] = {
	{ "queries", required_argument, NULL, OPT_QUERIES },
	{ "qrels", required_argument, NULL, OPT_QRELS },
	{ "min-rel", required_argument, NULL, OPT_MIN_REL },
	{ "run", required_argument, NULL, OPT_RUN },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "exclude-judged", no_argument, NULL, OPT_EXCLUDE_JUDGED },
	{ "random", no_argument, NULL, OPT_RANDOM },
	{ "run-ratio", required_argument, NULL, OPT_RUN_RATIO },
	{ "margin", required_argument, NULL, OPT_MARGIN },
	{ "weights", required_argument, NULL, OPT_WEIGHTS },
	{ "pairs", required_argument, NULL, OPT_PAIRS },
	{ "triples", required_argument, NULL, OPT_TRIPLES },
	OPTION_OUTPUT,
	OPTION_FORMAT,
	{ "field", required_argument, NULL, OPT_FIELD },
	{ "negatives", required_argument, NULL, OPT_NEGATIVES },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "epochs", required_argument, NULL, OPT_EPOCHS },
	OPTION_SEED,
	{ "start", required_argument, NULL, OPT_START },
	{ "drop-last", no_argument, NULL, OPT_DROP_LAST },
	{ "rank", required_argument, NULL, OPT_RANK },
	{ "world-size", required_argument, NULL, OPT_WORLD_SIZE },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "quiet", no_argument, NULL, 'q' },
	OPTION_FORCE,
	{ "no-readahead", no_argument, NULL, OPT_NO_READAHEAD },
	OPTION_ACCESS,
	OPTION_INFLATE_CACHE,
	OPTION_HELP,
	OPTION_END,
};

/* The command line, read. */
typedef struct sample_args {
	dx_sample_opts so;
	const char *corpus;       /* NULL with --format ids and no corpus */
	const char *output, *field;
	int format;
	int lists;                /* --negatives was given */
	int stats;
	int quiet;                /* -q: no progress bar */
	int force;                /* -f: replace an existing -o file */
	int readahead;
	int access;               /* DX_ACCESS_* */
	uint64_t inflate_cache;   /* bytes (0: none) */
	int rank_given, world_given;
	int pair_opts;            /* an option that --triples refuses was given */
} sample_args;

/* One line on stderr for what was skipped, when anything was. */
static void summary(const sampler_cli *x, const dx_sample_report *rep)
{
	char missing[100];
	if (x->depth)
		snprintf(missing, sizeof missing, "run lines in a query's top %u naming an id not in the corpus",
		         x->depth);
	else
		snprintf(missing, sizeof missing, "run lines naming an id not in the corpus");
	const char *const what[DX_SP_KINDS] = {
		[DX_SP_NO_TEXT] = "lines naming a query without a text",
		[DX_SP_UNKNOWN_ID] = "lines naming an id not in the corpus",
		[DX_SP_BAD_LINE] = "malformed lines",
		[DX_SP_DUP_QUERY] = "repeated query ids",
		[DX_SP_RUN_MISSING] = missing,
	};
	char line[4096];
	size_t n = 0;
	for (int k = 0; k < DX_SP_KINDS; k++)
		if (rep->problems[k] && n < sizeof line)
			n += (size_t)snprintf(line + n, sizeof line - n, "%s%s: %llu (first: %s)", n ? ", " : "",
			                      what[k], (unsigned long long)rep->problems[k], rep->first[k]);
	if (n)
		fprintf(stderr, "docdex sample: skipped: %s%s\n", line,
		        x->strict ? "" : "; --strict stops at the first bad line");
}

/* The library's warnings, one line each: an input shaped like another
 * kind of file, pairs left out for want of a negative. */
static void warnings(const dx_sample_report *rep)
{
	for (unsigned i = 0; i < rep->nwarnings && i < DX_SAMPLE_WARNINGS; i++)
		cli_lib_error("sample", &rep->warning[i]);
}

/* Whether err is a file's shape, which a warning said already (the same
 * file and line): then that is why nothing could be read from the file,
 * and the error says it alone, without the warnings or the lines that the
 * wrong reader counted as bad. */
static int shape_error(const dx_err *err, const dx_sample_report *rep)
{
	for (unsigned i = 0; i < rep->nwarnings && i < DX_SAMPLE_WARNINGS; i++)
		if (err->code == DX_EFORMAT && strcmp(err->subject, rep->warning[i].subject) == 0)
			return 1;
	return 0;
}

/*
 * How many triples a batch holds.  A record of a gzip corpus is
 * decompressed from the access point before it, half a span (0.5 MiB) on
 * average, one of a BGZF corpus with its block (up to 64 KiB); the records
 * of a batch that share a stretch or a block share one run of
 * decompression, so a batch costs at most one pass over the file.  The
 * larger the batch, the less each record costs then: as many triples as
 * 64 MiB of their documents hold.  A plain file costs the same per record
 * whatever the batch.
 */
static size_t batch_size(sampler_cli *x)
{
	if (!x->c || x->format == FMT_IDS)
		return BATCH;
	dx_index *ix = dx_corpus_index(x->c);
	dx_index_info info;
	dx_index_get_info(ix, &info);
	uint64_t usize = 0;
	int compressed = 0;
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(ix, i, &si) == 0) {
			usize += si.usize;
			compressed |= si.kind != DX_SOURCE_PLAIN;
		}
	}
	if (!compressed || !info.records)
		return BATCH;
	uint64_t per_triple = (usize / info.records + 1) * (1 + x->k);
	uint64_t n = BATCH_BYTES / per_triple;
	return n < BATCH ? BATCH : n > BATCH_MAX ? BATCH_MAX : (size_t)n;
}

/* Draws up to a batch of triples into t: how many, and in *r what the
 * last draw returned (1, 0 at the end, or a negative code). */
static size_t draw(sampler_cli *x, dx_triple *t, int *r)
{
	size_t n = 0;
	*r = 1;
	while (n < x->batch && (*r = dx_sampler_next(x->s, &t[n], &x->err)) == 1)
		n++;
	return n;
}

/* Asks the kernel for the documents of n triples, which the next flush
 * reads: a cold corpus is then read while this batch is written. */
static void read_ahead(sampler_cli *x, const dx_triple *t, size_t n)
{
	size_t m = 0;
	if (!x->c || x->format == FMT_IDS)
		return;
	for (size_t i = 0; i < n; i++) {
		x->pos[m++] = t[i].pos;
		for (unsigned j = 0; j < x->k; j++)
			x->pos[m++] = t[i].neg[j];
	}
	dx_corpus_prefetch(x->c, x->pos, m);
}

/* Writes every triple of this shard.  Returns 0 or a library code, with
 * x->err filled, or 1 once output can go nowhere.  With read-ahead, the
 * next batch is drawn before this one is written: the sampler knows which
 * documents it needs. */
static int run(sampler_cli *x)
{
	int r, rn = 0;
	size_t n = draw(x, x->t, &r), m = 0;
	for (;;) {
		if (cli_interrupted())
			return DX_ECANCELED;
		if (r < 0)
			return r;
		if (x->prefetch && n == x->batch) {
			m = draw(x, x->next, &rn);
			read_ahead(x, x->next, m);
		}
		if (n && (r = sample_flush(x, n)) != 0)
			return r;
		progress_update(&x->bar, x->written, x->total);
		if (n < x->batch)
			return 0;
		if (!x->prefetch) {
			n = draw(x, x->t, &r);
			continue;
		}
		dx_triple *t = x->t;
		x->t = x->next;
		x->next = t;
		n = m;
		r = rn;
	}
}

/* The progress callback of the sampler, every 65536 input lines: the bar
 * of the lines read while it reads its inputs; and a signal stops it
 * there, or in a long triples file of bad lines, or of another shard's. */
static int on_progress(void *ctx, uint64_t done, uint64_t total)
{
	sampler_cli *x = ctx;
	(void)total;
	if (x->reading)
		return progress_update(&x->bar, done, 0);
	return cli_interrupted();
}

static void stats(const sampler_cli *x)
{
	const dx_sample_report *r = dx_sampler_report(x->s);
	fprintf(stderr,
	        "queries\t%llu\npositives\t%llu\npairs\t%llu\nrun_entries\t%llu\ntriples\t%llu\n",
	        (unsigned long long)r->queries, (unsigned long long)r->positives,
	        (unsigned long long)r->pairs, (unsigned long long)r->run_entries,
	        (unsigned long long)x->written);
}

/* ---- the command line ----------------------------------------------------- */

/* A usage error about the value of the option being read. */
static int bad_value(const char *what)
{
	return cli_usage_error("sample", what, optarg);
}

/* The value of the option being read, an integer from min to max, into
 * *v.  0 or -1. */
static int number(uint64_t min, uint64_t max, uint64_t *v)
{
	uint64_t n;
	if (cli_parse_u64(optarg, &n) < 0 || n < min || n > max)
		return -1;
	*v = n;
	return 0;
}

static const char *const weight_names[] = { "uniform", "rank", NULL }; /* DX_WEIGHTS_* */
static const char *const pair_names[] = { "all", "query", NULL };     /* DX_PAIRS_* */

/* --depth K, or A-B: places A to B of each query's run. */
static int parse_depth(dx_sample_opts *so)
{
	uint64_t from = 1, to;
	const char *dash = strchr(optarg, '-');
	char head[32];
	if (dash) {
		size_t n = (size_t)(dash - optarg);
		if (n >= sizeof head)
			return bad_value("bad --depth, give a number of documents or places A-B");
		memcpy(head, optarg, n);
		head[n] = '\0';
	}
	if ((dash && (cli_parse_u64(head, &from) < 0 || cli_parse_u64(dash + 1, &to) < 0)) ||
	    (!dash && cli_parse_u64(optarg, &to) < 0) || from < 1 || to < from || to > UINT32_MAX)
		return bad_value("bad --depth, give a number of documents or places A-B");
	so->depth = (unsigned)to;
	so->depth_from = (unsigned)from;
	return 0;
}

/* --margin M, or P%: how far below its positive's run score a negative's is. */
static int parse_margin(dx_sample_opts *so)
{
	size_t n = strlen(optarg);
	char num[64];
	int percent = n && optarg[n - 1] == '%';
	if (n - (size_t)percent >= sizeof num)
		return bad_value("bad --margin, give a score difference, or a percentage such as 5%");
	memcpy(num, optarg, n - (size_t)percent);
	num[n - (size_t)percent] = '\0';
	if (cli_parse_double(num, &so->margin) != 0 || !(so->margin >= 0) || (percent && so->margin > 100))
		return bad_value("bad --margin, give a score difference, or a percentage such as 5%");
	so->margin_kind = percent ? DX_MARGIN_PERCENT : DX_MARGIN_SCORE;
	return 0;
}

/* The options that shape the (query, positive) pairs and their negatives,
 * which --triples refuses.  Returns 0 or EXIT_USAGE. */
static int set_pair_option(sample_args *a, int c)
{
	dx_sample_opts *so = &a->so;
	a->pair_opts = 1;
	switch (c) {
	case OPT_EXCLUDE_JUDGED:
		so->exclude_judged = 1;
		return 0;
	case OPT_MIN_REL:
		if (cli_parse_double(optarg, &so->min_rel) < 0)
			return bad_value("bad --min-rel, give a number");
		return 0;
	case OPT_DEPTH:
		return parse_depth(so);
	case OPT_MARGIN:
		return parse_margin(so);
	case OPT_WEIGHTS:
		return opt_choice("sample", "weights", NULL, optarg, weight_names, &so->weights);
	case OPT_PAIRS:
		return opt_choice("sample", "pairs", NULL, optarg, pair_names, &so->pairs);
	default: /* OPT_RUN_RATIO */
		if (cli_parse_double(optarg, &so->run_ratio) < 0 || !(so->run_ratio >= 0 && so->run_ratio <= 1))
			return bad_value("bad --run-ratio, give a number from 0 to 1");
		return 0;
	}
}

/* How many triples, and which: negatives, count, draws, shard.  Returns 0
 * or EXIT_USAGE. */
static int set_count_option(sample_args *a, int c)
{
	dx_sample_opts *so = &a->so;
	uint64_t v;
	switch (c) {
	case OPT_NEGATIVES:
		if (number(1, 1024, &v) < 0)
			return bad_value("bad --negatives, give 1 to 1024");
		so->negatives = (unsigned)v;
		a->lists = 1;
		return 0;
	case OPT_COUNT:
		if (number(1, UINT64_MAX, &so->count) < 0)
			return bad_value("bad --count, give a number of triples");
		return 0;
	case OPT_EPOCHS:
		if (number(1, UINT64_MAX, &so->epochs) < 0)
			return bad_value("bad --epochs, give a number of passes");
		return 0;
	case OPT_RANK:
		if (number(0, UINT64_MAX, &so->rank) < 0)
			return bad_value("bad --rank, give a non-negative integer");
		a->rank_given = 1;
		return 0;
	case OPT_WORLD_SIZE:
		if (number(1, UINT64_MAX, &so->world_size) < 0)
			return bad_value("bad --world-size, give a positive integer");
		a->world_given = 1;
		return 0;
	case OPT_START:
		if (number(0, UINT64_MAX, &so->start) < 0)
			return bad_value("bad --start, give a triple number");
		return 0;
	default: /* OPT_SEED */
		return opt_seed("sample", NULL, optarg, &so->seed);
	}
}

/* Reads the option getopt_long returned as c.  Returns 0, -1 once --help
 * was printed, or EXIT_USAGE. */
static int set_option(sample_args *a, int c, char **argv)
{
	dx_sample_opts *so = &a->so;
	switch (c) {
	case OPT_QUERIES: so->queries = optarg; return 0;
	case OPT_QRELS: so->qrels = optarg; return 0;
	case OPT_RUN: so->run = optarg; return 0;
	case OPT_TRIPLES: so->triples = optarg; return 0;
	case OPT_RANDOM: so->random = 1; return 0;
	case OPT_STRICT: so->strict = 1; return 0;
	case OPT_STATS: a->stats = 1; return 0;
	case OPT_NO_READAHEAD: a->readahead = 0; return 0;
	case OPT_DROP_LAST: so->drop_last = 1; return 0;
	case OPT_FIELD: a->field = optarg; return 0;
	case 'o': a->output = optarg; return 0;
	case 'q': a->quiet = 1; return 0;
	case 'f': a->force = 1; return 0;
	case OPT_FORMAT: return opt_format("sample", NULL, optarg, sample_formats, &a->format);
	case OPT_ACCESS: return opt_access("sample", optarg, &a->access);
	case OPT_INFLATE_CACHE: return opt_inflate_cache("sample", optarg, &a->inflate_cache);
	case OPT_EXCLUDE_JUDGED:
	case OPT_MIN_REL:
	case OPT_DEPTH:
	case OPT_RUN_RATIO:
	case OPT_MARGIN:
	case OPT_WEIGHTS:
	case OPT_PAIRS:
		return set_pair_option(a, c);
	case OPT_NEGATIVES:
	case OPT_COUNT:
	case OPT_EPOCHS:
	case OPT_SEED:
	case OPT_RANK:
	case OPT_WORLD_SIZE:
	case OPT_START:
		return set_count_option(a, c);
	case 'h':
		fputs(usage, stdout);
		return -1;
	default:
		return cli_bad_option("sample", argv, c);
	}
}

/* A number from an option or, when the option is absent, the environment. */
static int env_number(const char *name, uint64_t *v)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return 0;
	if (cli_parse_u64(s, v) < 0) {
		char shown[CLI_SUBJECT_MAX];
		snprintf(shown, sizeof shown, "%s=%s", name, s);
		return cli_usage_error("sample", "bad number in the environment", shown);
	}
	return 0;
}

/* This process's shard: torchrun and other launchers say which process
 * this is in RANK and WORLD_SIZE, which the options override.  Returns 0
 * or EXIT_USAGE. */
static int check_shard(sample_args *a)
{
	dx_sample_opts *so = &a->so;
	if ((!a->rank_given && env_number("RANK", &so->rank)) ||
	    (!a->world_given && env_number("WORLD_SIZE", &so->world_size)))
		return EXIT_USAGE;
	if (so->world_size != 0 && so->rank < so->world_size)
		return 0;
	/* Say the values and where each came from. */
	char given[120];
	snprintf(given, sizeof given, "%s%llu, %s%llu", a->rank_given ? "--rank " : "RANK=",
	         (unsigned long long)so->rank, a->world_given ? "--world-size " : "WORLD_SIZE=",
	         (unsigned long long)so->world_size);
	return cli_usage_error("sample", "the rank must be below the world size", given);
}

/* Which inputs go together.  Returns 0 or EXIT_USAGE. */
static int check_inputs(const sample_args *a)
{
	const dx_sample_opts *so = &a->so;
	if (!so->queries && a->format != FMT_IDS)
		return cli_usage_error("sample", "no --queries given (only --format ids needs none)", NULL);
	if (so->triples && (so->qrels || so->run || so->random || a->pair_opts))
		return cli_usage_error("sample", "--triples takes no --qrels, --run, --random, --min-rel, "
		                                 "--depth, --exclude-judged, --run-ratio, --margin, --weights "
		                                 "or --pairs", NULL);
	if (!so->triples && !so->qrels)
		return cli_usage_error("sample", "give --qrels (with --run, --random or both) or --triples", NULL);
	if (so->qrels && !so->run && !so->random)
		return cli_usage_error("sample", "no negatives: give --run, --random or both", NULL);
	if (!so->run && (so->depth_from > 1 || so->margin_kind != DX_MARGIN_NONE ||
	                 so->weights != DX_WEIGHTS_UNIFORM))
		return cli_usage_error("sample", "--depth A-B, --margin and --weights choose among a run's "
		                                 "documents: give --run", NULL);
	if (so->count && so->epochs)
		return cli_usage_error("sample", "give --count or --epochs, not both", NULL);
	return 0;
}

/* Reads the command line into a.  Returns 0, -1 once --help was printed,
 * or EXIT_USAGE. */
static int parse_args(sample_args *a, int argc, char **argv)
{
	int c, rc;
	*a = (sample_args){ .format = FMT_TSV, .readahead = 1 };
	dx_sample_opts_init(&a->so); /* min_rel 1, negatives 1, run_ratio 0.5, world_size 1 */
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:qfh", options, NULL)) != -1)
		if ((rc = set_option(a, c, argv)) != 0)
			return rc;
	if (optind + 1 < argc)
		return cli_usage_error("sample", "one corpus or index only", argv[optind + 1]);
	a->corpus = optind < argc ? argv[optind] : NULL;
	/* The ids need no corpus; texts and random negatives do. */
	if (!a->corpus && a->format != FMT_IDS)
		return cli_usage_error("sample", "no corpus or index given (only --format ids needs none)", NULL);
	if (!a->corpus && a->so.random)
		return cli_usage_error("sample", "--random draws from a corpus: give one", NULL);
	if ((rc = check_shard(a)) != 0)
		return rc;
	return check_inputs(a);
}

/* ---- the run ---------------------------------------------------------------- */

/* Says that the command was interrupted; returns EXIT_INTERRUPTED. */
static int interrupted(const char *output)
{
	cli_error("sample", "interrupted", output);
	return EXIT_INTERRUPTED;
}

/* Opens the corpus, when one is given, its fields and the sampler over the
 * inputs.  Returns EXIT_OK, or the exit status after saying why not. */
static int open_sampler(sampler_cli *x, const sample_args *a)
{
	dx_sample_report rep;
	dx_sample_opts so = a->so;
	so.report = &rep;
	so.progress = on_progress;
	so.progress_ctx = x;
	if (a->corpus && (!(x->c = dx_corpus_open(a->corpus, &x->err)) ||
	                  dx_corpus_set_access(x->c, a->access, &x->err) < 0)) {
		cli_lib_error("sample", &x->err);
		return EXIT_FAIL;
	}
	if (x->c && opt_set_inflate_cache("sample", x->c, a->inflate_cache) != 0)
		return EXIT_FAIL;
	/* Nothing this command reads may be replaced by its output. */
	const char *const inputs[] = { so.queries, so.qrels, so.run, so.triples };
	if (cli_check_output("sample", a->output, inputs, sizeof inputs / sizeof *inputs, x->c) != EXIT_OK ||
	    cli_check_replace("sample", a->output, a->force, 0) != EXIT_OK)
		return EXIT_FAIL;
	if (x->c && !(x->fields = dx_fields_parse(x->c, a->field, &x->err))) {
		cli_lib_error("sample", &x->err);
		return EXIT_USAGE;
	}
	/* Tevatron's passages have a title: the corpus's title field where
	 * it has one (a TSV column, a JSON key, a TREC element so named). */
	if (x->c && a->format == FMT_TEVATRON) {
		dx_err ignored;
		x->title = dx_fields_parse(x->c, "title", &ignored);
	}
	/* From here an interrupt stops the command cleanly: the sampler's
	 * readers ask on_progress every 65536 lines, and a read that the
	 * signal interrupts (a FIFO, a pipe) fails with it. */
	progress_init(&x->bar, "reading the inputs", a->quiet);
	x->bar.unit = "lines";
	x->reading = 1;
	x->s = dx_sampler_open(x->c, &so, &x->err);
	x->reading = 0;
	progress_done(&x->bar, NULL);
	if (x->s) {
		warnings(&rep);
		return EXIT_OK;
	}
	if (x->err.code == DX_ECANCELED || cli_interrupted()) {
		warnings(&rep);
		return interrupted(a->output);
	}
	if (shape_error(&x->err, &rep)) {
		cli_lib_error("sample", &x->err);
		return EXIT_FAIL;
	}
	warnings(&rep);
	cli_lib_error("sample", &x->err);
	summary(x, &rep);
	return EXIT_FAIL;
}

/* The batch: its triples, their negatives, the records they read.  0, or
 * -1 when out of memory. */
static int alloc_batch(sampler_cli *x)
{
	x->batch = batch_size(x);
	x->t = calloc(x->batch, sizeof *x->t);
	x->neg = malloc(x->batch * x->k * sizeof *x->neg);
	x->pos = malloc(x->batch * (1 + x->k) * sizeof *x->pos);
	x->recs = malloc(x->batch * (1 + x->k) * sizeof *x->recs);
	if (!x->t || !x->neg || !x->pos || !x->recs)
		return -1;
	for (size_t i = 0; i < x->batch; i++)
		x->t[i].neg = x->neg + i * x->k;
	if (!x->prefetch)
		return 0;
	x->next = calloc(x->batch, sizeof *x->next);
	x->next_neg = malloc(x->batch * x->k * sizeof *x->next_neg);
	if (!x->next || !x->next_neg)
		return -1;
	for (size_t i = 0; i < x->batch; i++)
		x->next[i].neg = x->next_neg + i * x->k;
	return 0;
}

/* Writes every triple through x->o, opened, then closes it.  Returns the
 * exit status, having said what went wrong. */
static int write_triples(sampler_cli *x, const char *output)
{
	int status = EXIT_OK, r = run(x);
	progress_done(&x->bar, NULL);
	/* A signal may surface as a library error (a read that it
	 * interrupted): the interrupt is what happened. */
	if (r < 0 && (r == DX_ECANCELED || cli_interrupted())) {
		status = interrupted(output);
	} else if (r < 0) {
		cli_lib_error("sample", &x->err);
		x->shape_failed = shape_error(&x->err, dx_sampler_report(x->s));
		status = EXIT_FAIL;
	}
	if (out_close(&x->o) < 0) {
		/* With -o, the file is what could not be written, not stdout. */
		if (output)
			cli_sys_error("sample", "cannot write output", output, x->o.error);
		else
			cli_output_error("sample", x->o.error);
		status = status == EXIT_INTERRUPTED ? status : EXIT_FAIL;
	}
	return status;
}

/* Writes the triples to -o's file, which replaces the old one only once
 * complete, or to stdout; then says what was skipped and, with --stats,
 * what was read and written.  Returns the exit status. */
static int write_output(sampler_cli *x, const sample_args *a)
{
	dx_output *f = NULL;
	if (a->output && !(f = dx_output_open(a->output, &x->err))) {
		cli_lib_error("sample", &x->err);
		return EXIT_FAIL;
	}
	if (alloc_batch(x) < 0 || out_open(&x->o, f ? dx_output_fd(f) : STDOUT_FILENO) < 0) {
		cli_error("sample", "out of memory", NULL);
		dx_output_abort(f);
		return EXIT_FAIL;
	}
	/* The bar of the triples, unless they go to the same terminal. */
	progress_init(&x->bar, "sampling", a->quiet || (!a->output && isatty(STDOUT_FILENO)));
	x->bar.unit = "triples";
	x->total = dx_sampler_report(x->s)->shard;
	int status = write_triples(x, a->output);
	if (status == EXIT_OK && f) {
		dx_output *g = f;
		f = NULL;
		if (dx_output_commit(g, &x->err) < 0) {
			cli_lib_error("sample", &x->err);
			status = EXIT_FAIL;
		}
	}
	if (status != EXIT_INTERRUPTED && !x->shape_failed)
		summary(x, dx_sampler_report(x->s));
	if (a->stats)
		stats(x);
	dx_output_abort(f);
	return status;
}

static void sampler_cli_free(sampler_cli *x)
{
	free(x->t);
	free(x->neg);
	free(x->next);
	free(x->next_neg);
	free(x->pos);
	free(x->recs);
	dx_sampler_close(x->s);
	dx_fields_free(x->fields);
	dx_fields_free(x->title);
	dx_corpus_close(x->c);
}

int cmd_sample(int argc, char **argv)
{
	sample_args a;
	int status = parse_args(&a, argc, argv);
	if (status != 0)
		return status < 0 ? cli_stdout_done("sample") : status;
	sampler_cli x = { .format = a.format, .lists = a.lists, .strict = a.so.strict,
	                  .k = a.so.negatives, .depth = a.so.depth, .prefetch = a.readahead };
	status = open_sampler(&x, &a);
	if (status == EXIT_OK)
		status = write_output(&x, &a);
	sampler_cli_free(&x);
	return status;
}
