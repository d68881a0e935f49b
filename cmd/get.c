/* get.c: docdex get, documents by id, by position or at random. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "lines.h"
#include "options.h"
#include "out.h"

static const char usage[] =
	"usage: docdex get [options] CORPUS_OR_INDEX [ID...]\n"
	"\n"
	"Print documents by id, in the order the ids come: from the arguments, or\n"
	"one a line from stdin when there are none ('-' reads stdin too).\n"
	"\n"
	"      --field NAMES        print these fields: TSV column numbers or names,\n"
	"                           JSON keys, TREC elements (text); raw joins them\n"
	"                           by a space, tsv and jsonl keep them apart\n"
	"      --format FORMAT      raw (default: the record as it is), tsv (the id and\n"
	"                           each field a column) or jsonl (an object: doc_id\n"
	"                           and each field under its name)\n"
	"      --position           read 0-based positions in corpus order, not ids\n"
	"      --random N           print N distinct documents drawn at random\n"
	"      --seed S             seed for --random (default: 0)\n"
	"      --missing POLICY     warn or skip: what to do with an id not in the corpus\n"
	"                           (default: warn, and exit with status 1 at the end)\n"
	"      --batch N            look up to N ids together, among those given or\n"
	"                           already waiting on stdin: a gzip corpus decompresses\n"
	"                           each stretch once per batch (default: 1024)\n"
	OPT_ACCESS_HELP
	OPT_INFLATE_CACHE_HELP
	"  -h, --help               show this help\n";

enum { OPT_FIELD = OPT_OWN, OPT_POSITION, OPT_RANDOM, OPT_MISSING, OPT_BATCH };

static const struct option options[] = {
	{ "field", required_argument, NULL, OPT_FIELD },
	OPTION_FORMAT,
	{ "position", no_argument, NULL, OPT_POSITION },
	{ "random", required_argument, NULL, OPT_RANDOM },
	OPTION_SEED,
	{ "missing", required_argument, NULL, OPT_MISSING },
	{ "batch", required_argument, NULL, OPT_BATCH },
	OPTION_ACCESS,
	OPTION_INFLATE_CACHE,
	OPTION_HELP,
	OPTION_END,
};

/* --format, by FMT_* number. */
enum { FMT_RAW, FMT_TSV, FMT_JSONL };
static const char *const formats[] = { "raw", "tsv", "jsonl", NULL };

/* An id or position as it came, and what it resolved to. */
typedef struct item {
	const char *s;       /* the id or position text; NULL for a drawn position */
	size_t n;
	uint64_t pos;
	enum { FOUND, MISSING, BEYOND, NOT_A_POSITION } state;
} item;

typedef struct getter {
	dx_corpus *c;
	dx_fields *fields;
	out o;
	int format;
	int by_position;
	int skip_missing;
	int status;          /* EXIT_FAIL once an id was not found */
	int stop;            /* output closed, or an error that ends the command */
	dx_err err;
	size_t batch;
	item *items;         /* the batch being gathered */
	size_t nitems;
	uint64_t *pos;       /* the positions found, for dx_corpus_records */
	dx_record *recs;
	const char **ids;    /* the batch's ids, for dx_corpus_find_many, */
	size_t *lens;
	uint64_t *idpos;     /* and what it found */
} getter;

static void fail(getter *g)
{
	cli_lib_error("get", &g->err);
	g->status = EXIT_FAIL;
	g->stop = 1;
}

/* The key of the id in --format jsonl: the name ir_datasets gives it. */
static const char id_key[] = "doc_id";

/* A field's value as JSON: a string, JSON text as it stands, or null for a
 * field the record lacks. */
static int json_value(out *o, const dx_value *v)
{
	switch (v->kind) {
	case DX_VALUE_JSON: return out_write(o, v->data, v->len);
	case DX_VALUE_ABSENT: return OUT_LIT(o, "null");
	}
	return out_json_string(o, v->data, v->len);
}

/* The record's fields after its id: those selected, or all but the one
 * that holds the id, each a TSV column or a member of the JSON object. */
static int emit_values(getter *g, const dx_value *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].is_id)
			continue;
		if (g->format == FMT_TSV) {
			if (out_char(&g->o, '\t') || out_tsv_field(&g->o, v[i].data, v[i].len))
				return -1;
			continue;
		}
		/* The id is there already, under its own key. */
		if (v[i].name_len == sizeof id_key - 1 && memcmp(v[i].name, id_key, v[i].name_len) == 0)
			continue;
		if (out_char(&g->o, ',') || out_json_string(&g->o, v[i].name, v[i].name_len) ||
		    out_char(&g->o, ':') || json_value(&g->o, &v[i]))
			return -1;
	}
	return 0;
}

/* Prints a record; id is the id it was asked by, or NULL to look it up. */
static void emit(getter *g, const dx_record *rec, const char *id, size_t idlen)
{
	const char *text = rec->data;
	size_t len = rec->len;
	const dx_value *vals = NULL;
	size_t nvals = 0;
	int r;
	if (g->format == FMT_RAW)
		r = g->fields ? dx_corpus_fields(g->c, g->fields, rec, &text, &len, &g->err) : 0;
	else
		r = dx_corpus_values(g->c, g->fields, rec, &vals, &nvals, &g->err);
	if (r < 0 || (g->format != FMT_RAW && !id && dx_corpus_id(g->c, rec->pos, &id, &idlen, &g->err) < 0)) {
		fail(g);
		return;
	}
	switch (g->format) {
	case FMT_TSV:
		r = out_tsv_field(&g->o, id, idlen) || emit_values(g, vals, nvals) || out_char(&g->o, '\n');
		break;
	case FMT_JSONL:
		r = out_char(&g->o, '{') || out_json_string(&g->o, id_key, sizeof id_key - 1) ||
		    out_char(&g->o, ':') || out_json_string(&g->o, id, idlen) ||
		    emit_values(g, vals, nvals) || OUT_LIT(&g->o, "}\n");
		break;
	default:
		/* A raw record in a mapped corpus is handed over, not copied. */
		r = (text == rec->data && rec->stable ? out_write_ref(&g->o, text, len)
		                                      : out_write(&g->o, text, len)) ||
		    out_char(&g->o, '\n');
	}
	if (r)
		g->stop = 1;
}

static void report(getter *g, const item *it)
{
	static const char *const what[] = {
		[MISSING] = "id not found",
		[BEYOND] = "position beyond the last record",
		[NOT_A_POSITION] = "not a position",
	};
	if (g->skip_missing && it->state != NOT_A_POSITION)
		return;
	char shown[CLI_SUBJECT_MAX];
	fprintf(stderr, "docdex get: %s: '%s'\n", what[it->state], dx_escape(it->s, it->n, shown, sizeof shown));
	g->status = EXIT_FAIL;
}

/* Resolves the batch, reads its records together, prints them in order. */
static void flush(getter *g)
{
	size_t found = 0, nids = 0;
	for (size_t i = 0; i < g->nitems && !g->by_position; i++)
		if (g->items[i].s) {
			g->ids[nids] = g->items[i].s;
			g->lens[nids++] = g->items[i].n;
		}
	if (nids && dx_corpus_find_many(g->c, g->ids, g->lens, nids, g->idpos, &g->err) < 0)
		fail(g);
	for (size_t i = 0, k = 0; i < g->nitems && !g->stop; i++) {
		item *it = &g->items[i];
		if (it->s && g->by_position) {
			/* Digits past 64 bits are a position too, beyond any corpus. */
			uint64_t v = 0;
			int r = cli_parse_digits(it->s, it->n, &v);
			it->state = r == -1 ? NOT_A_POSITION : r == 0 && v < dx_corpus_count(g->c) ? FOUND : BEYOND;
			it->pos = v;
		} else if (it->s) {
			it->pos = g->idpos[k++];
			it->state = it->pos == DX_NOT_FOUND ? MISSING : FOUND;
		}
		if (it->state == FOUND)
			g->pos[found++] = it->pos;
	}
	if (!g->stop && (dx_corpus_records(g->c, g->pos, found, g->recs, &g->err) < 0 ||
	                 dx_corpus_check_ids(g->c, g->recs, found, &g->err) < 0))
		fail(g);
	for (size_t i = 0, j = 0; i < g->nitems && !g->stop; i++) {
		const item *it = &g->items[i];
		if (it->state != FOUND)
			report(g, it);
		else
			emit(g, &g->recs[j++], g->by_position ? NULL : it->s, it->n);
	}
	g->nitems = 0;
}

static void add(getter *g, const char *s, size_t n, uint64_t pos)
{
	if (s && n == 0)
		return; /* an empty line asks for nothing, id or position */
	g->items[g->nitems++] = (item){ .s = s, .n = n, .pos = pos, .state = FOUND };
	if (g->nitems == g->batch)
		flush(g);
}

static void from_stdin(getter *g)
{
	lines l;
	const char *s;
	size_t n;
	int r = 0;
	if (lines_open(&l, STDIN_FILENO) < 0) {
		cli_error("get", "out of memory", NULL);
		g->status = EXIT_FAIL;
		g->stop = 1;
		return;
	}
	/* A batch is what stdin already holds: never wait for more ids before
	 * answering those that came, so that get can serve a conversation. */
	while (!g->stop && (r = lines_next(&l, &s, &n)) == 1) {
		add(g, s, n, 0);
		/* Before waiting for more ids, the answers so far go out. */
		if (!lines_ready(&l)) {
			flush(g);
			if (out_flush(&g->o) < 0)
				g->stop = 1;
		}
	}
	flush(g);
	if (!g->stop && r < 0) {
		dx_err e = { .sys = errno };
		snprintf(e.what, sizeof e.what, "cannot read ids");
		snprintf(e.subject, sizeof e.subject, "stdin");
		cli_lib_error("get", &e);
		g->status = EXIT_FAIL;
	}
	lines_close(&l);
}

static void draw(getter *g, uint64_t n, uint64_t seed)
{
	uint64_t count = dx_corpus_count(g->c);
	if (n > count) {
		char what[96];
		snprintf(what, sizeof what, "cannot draw %llu distinct documents from %llu records",
		         (unsigned long long)n, (unsigned long long)count);
		cli_error("get", what, NULL);
		g->status = EXIT_FAIL;
		return;
	}
	dx_perm p;
	dx_perm_init(&p, count, seed);
	for (uint64_t i = 0; i < n && !g->stop; i++)
		add(g, NULL, 0, dx_perm_at(&p, i));
	flush(g);
}

int cmd_get(int argc, char **argv)
{
	getter g = { .format = FMT_RAW, .batch = 1024 };
	const char *field = NULL;
	uint64_t nrandom = 0, seed = 0, cache = 0, v;
	int random = 0, access = DX_ACCESS_AUTO, c, rc;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		switch (c) {
		case OPT_FIELD:
			field = optarg;
			break;
		case OPT_FORMAT:
			if ((rc = opt_format("get", NULL, optarg, formats, &g.format)))
				return rc;
			break;
		case OPT_POSITION:
			g.by_position = 1;
			break;
		case OPT_RANDOM:
			if (cli_parse_u64(optarg, &nrandom) < 0)
				return cli_usage_error("get", "bad --random, give a number of documents", optarg);
			random = 1;
			break;
		case OPT_SEED:
			if ((rc = opt_seed("get", NULL, optarg, &seed)))
				return rc;
			break;
		case OPT_MISSING:
			if (strcmp(optarg, "warn") == 0)
				g.skip_missing = 0;
			else if (strcmp(optarg, "skip") == 0)
				g.skip_missing = 1;
			else
				return cli_usage_error("get", "bad --missing, give warn or skip", optarg);
			break;
		case OPT_BATCH:
			if (cli_parse_u64(optarg, &v) < 0 || v == 0 || v > (1u << 20))
				return cli_usage_error("get", "bad --batch, give 1 to 1048576 ids", optarg);
			g.batch = (size_t)v;
			break;
		case OPT_ACCESS:
			if ((rc = opt_access("get", optarg, &access)))
				return rc;
			break;
		case OPT_INFLATE_CACHE:
			if ((rc = opt_inflate_cache("get", optarg, &cache)))
				return rc;
			break;
		case 'h':
			fputs(usage, stdout);
			return cli_stdout_done("get");
		default:
			return cli_bad_option("get", argv, c);
		}
	}
	if (optind >= argc)
		return cli_usage_error("get", "no corpus or index given", NULL);
	const char *corpus = argv[optind++];
	if (random && (optind < argc || g.by_position))
		return cli_usage_error("get", "--random takes no ids and no --position", NULL);

	if (!(g.c = dx_corpus_open(corpus, &g.err)) || dx_corpus_set_access(g.c, access, &g.err) < 0) {
		cli_lib_error("get", &g.err);
		dx_corpus_close(g.c);
		return EXIT_FAIL;
	}
	if (opt_set_inflate_cache("get", g.c, cache) != 0) {
		dx_corpus_close(g.c);
		return EXIT_FAIL;
	}
	if (field && !(g.fields = dx_fields_parse(g.c, field, &g.err))) {
		cli_lib_error("get", &g.err);
		dx_corpus_close(g.c);
		return EXIT_USAGE;
	}
	g.items = malloc(g.batch * sizeof *g.items);
	g.pos = malloc(g.batch * sizeof *g.pos);
	g.recs = malloc(g.batch * sizeof *g.recs);
	g.ids = malloc(g.batch * sizeof *g.ids);
	g.lens = malloc(g.batch * sizeof *g.lens);
	g.idpos = malloc(g.batch * sizeof *g.idpos);
	if (!g.items || !g.pos || !g.recs || !g.ids || !g.lens || !g.idpos || out_open(&g.o, STDOUT_FILENO) < 0) {
		cli_error("get", "out of memory", NULL);
		g.status = EXIT_FAIL;
	} else if (random) {
		draw(&g, nrandom, seed);
	} else if (optind == argc) {
		from_stdin(&g);
	} else {
		for (int i = optind; i < argc && !g.stop; i++) {
			if (strcmp(argv[i], "-") == 0) {
				flush(&g);
				from_stdin(&g);
			} else {
				add(&g, argv[i], strlen(argv[i]), 0);
			}
		}
		flush(&g);
	}
	if (g.o.buf && out_close(&g.o) < 0) {
		cli_output_error("get", g.o.error);
		g.status = EXIT_FAIL;
	}
	free(g.items);
	free(g.pos);
	free(g.recs);
	free(g.ids);
	free(g.idpos);
	free(g.lens);
	dx_fields_free(g.fields);
	dx_corpus_close(g.c);
	return g.status;
}
