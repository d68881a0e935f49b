/*
 * dx-synth: writes a synthetic corpus, and queries, qrels and a run to go
 * with it, for the tests and benchmarks (see bench/synth.c).
 *
 *   dx-synth [--kind passages|documents] [--layout tsv|jsonl-v2|beir|trec]
 *            [--count N | --size BYTES[K|M|G]] [--seed S] [--bundle B] [-o FILE]
 *            [--queries FILE] [--qrels FILE] [--run FILE]
 *            [--nqueries N] [--positives K] [--depth D]
 *
 * The run is 100 deep unless --depth says, or as deep as a smaller corpus.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dxbench.h"
#include "docdex.h"

static int write_file(void *ctx, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, ctx) == len ? 0 : -1;
}

static int parse_size(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'K': n <<= 10; end++; break;
	case 'M': n <<= 20; end++; break;
	case 'G': n <<= 30; end++; break;
	}
	*v = n;
	return *end ? -1 : 0;
}

static FILE *open_out(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!f)
		fprintf(stderr, "dx-synth: cannot create: '%s': %s\n", path, strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if ((f == stdout ? fflush(f) : fclose(f)) != 0) {
		fprintf(stderr, "dx-synth: cannot write: '%s': %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kind", required_argument, NULL, 'k' },    { "layout", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'n' },   { "size", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },    { "output", required_argument, NULL, 'o' },
		{ "queries", required_argument, NULL, 'Q' }, { "qrels", required_argument, NULL, 'R' },
		{ "run", required_argument, NULL, 'U' },     { "nqueries", required_argument, NULL, 'q' },
		{ "positives", required_argument, NULL, 'p' }, { "depth", required_argument, NULL, 'd' },
		{ "bundle", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	dxb_synth_opts o = { .kind = DXB_SYN_PASSAGES, .layout = DXB_SYN_TSV };
	dxb_synth_topics_opts t = { .queries = 100, .positives = 1, .depth = 100 };
	const char *out = "-", *files[3] = { NULL, NULL, NULL };
	uint64_t v;
	int c, depth_given = 0;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			o.kind = strcmp(optarg, "documents") == 0 ? DXB_SYN_DOCUMENTS
			       : strcmp(optarg, "passages") == 0  ? DXB_SYN_PASSAGES : 0;
			break;
		case 'l':
			o.layout = strcmp(optarg, "tsv") == 0        ? DXB_SYN_TSV
			         : strcmp(optarg, "jsonl-v2") == 0   ? DXB_SYN_JSONL_V2
			         : strcmp(optarg, "beir") == 0       ? DXB_SYN_JSONL_BEIR
			         : strcmp(optarg, "trec") == 0       ? DXB_SYN_TREC : 0;
			break;
		case 'n': case 's': case 'S': case 'q': case 'p': case 'd': case 'b':
			if (parse_size(optarg, &v) < 0) {
				fprintf(stderr, "dx-synth: bad number: '%s'\n", optarg);
				return 2;
			}
			if (c == 'n') o.count = v;
			if (c == 's') o.size = v;
			if (c == 'S') o.seed = v;
			if (c == 'q') t.queries = v;
			if (c == 'p') t.positives = (unsigned)v;
			if (c == 'd') {
				t.depth = (unsigned)v;
				depth_given = 1;
			}
			if (c == 'b') o.bundle = (unsigned)v;
			break;
		case 'o': out = optarg; break;
		case 'Q': files[0] = optarg; break;
		case 'R': files[1] = optarg; break;
		case 'U': files[2] = optarg; break;
		default:
			fprintf(stderr, "usage: see the comment at the top of tests/dx-synth.c\n");
			return 2;
		}
	}
	if (!o.count && !o.size)
		o.count = 1000;
	dx_err err = { 0 };
	FILE *f = open_out(out);
	if (!f)
		return 1;
	dxb_writer w = { write_file, f };
	int64_t n = dxb_synth_corpus(&o, &w, &err);
	if (close_out(f, out) < 0)
		return 1;
	if (n < 0) {
		fprintf(stderr, "dx-synth: %s\n", err.what);
		return 1;
	}
	if (!files[0] && !files[1] && !files[2])
		return 0;
	t.records = (uint64_t)n;
	/* The run ranks every record of a corpus smaller than its depth. */
	if (!depth_given && t.depth > t.records)
		t.depth = (unsigned)t.records;
	FILE *fs[3] = { NULL, NULL, NULL };
	dxb_writer ws[3];
	for (int i = 0; i < 3; i++) {
		if (files[i] && !(fs[i] = open_out(files[i])))
			return 1;
		ws[i] = (dxb_writer){ write_file, fs[i] };
	}
	int rc = dxb_synth_topics(&o, &t, fs[0] ? &ws[0] : NULL, fs[1] ? &ws[1] : NULL,
	                          fs[2] ? &ws[2] : NULL, &err);
	for (int i = 0; i < 3; i++)
		if (fs[i] && close_out(fs[i], files[i]) < 0)
			rc = -1;
	if (rc < 0 && err.what[0])
		fprintf(stderr, "dx-synth: %s\n", err.what);
	return rc < 0 ? 1 : 0;
}
