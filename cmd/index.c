/* index.c: docdex index, building an index, or showing or verifying one. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "options.h"
#include "out.h"

static const char usage[] =
	"usage: docdex index [options] FILE...\n"
	"       docdex index --bgzf OUT.gz [options] FILE\n"
	"       docdex index --stats CORPUS_OR_INDEX\n"
	"       docdex index --verify CORPUS_OR_INDEX\n"
	"\n"
	"Scan corpus files (TSV, JSONL or TREC; plain or gzip) and write an index of\n"
	"their records, FILE.ddx beside a single file, or the path given with -o.\n"
	"\n"
	"  -o, --output PATH        where to write the index (needed for several files)\n"
	"      --format FORMAT      auto, tsv, jsonl or trec (default: auto, from the content)\n"
	"      --id-column N        TSV: the column holding the id, from 1 (default: 1)\n"
	"      --id-field NAME      JSONL: the key holding the id (default: the first of\n"
	"                           docid, _id, id, pid, doc_id in the first record)\n"
	"      --columns NAMES      TSV: comma-separated names of the columns, for fields\n"
	"                           (default with the id in column 1: id,text,\n"
	"                           id,title,text or id,url,title,body for 2, 3 or 4)\n"
	"      --duplicates POLICY  error, first or last: what to do with an id found on\n"
	"                           two records (default: error)\n"
	"      --skip-bad           skip records without an id instead of failing\n"
	"      --span SIZE          gzip: uncompressed bytes between access points\n"
	"                           (K, M or G suffix; default: 960K, at least 64K)\n"
	"      --sparse-windows     gzip: windows as version 2 of the index format kept\n"
	"                           them, for older docdex (1.7 times the bytes)\n"
	"      --bgzf OUT.gz        rewrite FILE as BGZF (gzip in blocks of up to 64 KiB,\n"
	"                           most ending at records) into OUT.gz, then index that\n"
	"      --level N            BGZF: compression level, 1 to 12 (default: 11; above 9\n"
	"                           libdeflate's levels, 9 where zlib compresses)\n"
	"  -@, --threads N          BGZF: threads compressing blocks, 1 to 256 (default:\n"
	"                           1); the file is the same for any number\n"
	"      --stats              print what an index holds, as TAB-separated lines\n"
	"      --verify             check every section's checksum, then re-read the\n"
	"                           corpus and check every record against the index\n"
	"  -f, --force              replace an existing output that is not a docdex\n"
	"                           index (an index is replaced without it)\n"
	"  -q, --quiet              no progress bar and no summary line\n"
	"  -h, --help               show this help\n";

enum { OPT_ID_COLUMN = OPT_OWN, OPT_ID_FIELD, OPT_COLUMNS, OPT_DUPLICATES, OPT_SKIP_BAD, OPT_STATS,
       OPT_VERIFY, OPT_SPAN, OPT_SPARSE, OPT_BGZF, OPT_LEVEL };

/* -@ as bgzip and samtools spell it. */
enum { OPT_THREADS = '@' };

static const struct option options[] = {
	OPTION_OUTPUT,
	OPTION_FORMAT,
	{ "id-column", required_argument, NULL, OPT_ID_COLUMN },
	{ "id-field", required_argument, NULL, OPT_ID_FIELD },
	{ "columns", required_argument, NULL, OPT_COLUMNS },
	{ "duplicates", required_argument, NULL, OPT_DUPLICATES },
	{ "skip-bad", no_argument, NULL, OPT_SKIP_BAD },
	{ "span", required_argument, NULL, OPT_SPAN },
	{ "sparse-windows", no_argument, NULL, OPT_SPARSE },
	{ "bgzf", required_argument, NULL, OPT_BGZF },
	{ "level", required_argument, NULL, OPT_LEVEL },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "quiet", no_argument, NULL, 'q' },
	OPTION_FORCE,
	OPTION_HELP,
	OPTION_END,
};

/* --format, by DX_FMT_* number, as the library names them. */
static const char *const formats[] = { "auto", "tsv", "jsonl", "trec", NULL };

typedef struct index_args {
	const char *output;
	const char *bgzf;
	int level;
	dx_build_opts build;
	int stats, verify, quiet, force;
} index_args;

/* Whether a source file is still the one indexed. */
static const char *source_state(dx_index *ix, uint32_t i)
{
	dx_err err = { 0 };
	int rc = dx_index_check_source(ix, i, &err);
	if (rc == DX_ESYS)
		return err.sys == ENOENT ? "missing" : "unreadable";
	return rc == 0 ? "ok" : rc == DX_ESTALE ? "changed" : "unreadable";
}

/* --stats: one "key<TAB>value..." line each, keys as in docdex-index(1). */
static int show_stats(const char *arg)
{
	char path[4096];
	dx_err err = { 0 };
	if (dx_index_path_for(arg, path, sizeof path, &err) < 0) {
		cli_lib_error("index", &err);
		return EXIT_FAIL;
	}
	dx_index *ix = dx_index_open(path, &err);
	if (!ix) {
		/* A corpus not indexed yet: worded as get and --verify word it. */
		if (err.sys == ENOENT && strcmp(path, arg) != 0)
			cli_error("index", "no index, build it with docdex index", path);
		else
			cli_lib_error("index", &err);
		return EXIT_FAIL;
	}
	dx_index_info in;
	dx_index_get_info(ix, &in);
	out o;
	if (out_open(&o, STDOUT_FILENO) < 0) {
		dx_index_close(ix);
		cli_error("index", "out of memory", NULL);
		return EXIT_FAIL;
	}
	char line[8192];
	int n = snprintf(line, sizeof line,
	                 "index\t%s\nversion\t%u\nbytes\t%llu\nrecords\t%llu\nformat\t%s\nid-kind\t%s\n",
	                 path, in.version, (unsigned long long)in.file_size,
	                 (unsigned long long)in.records, dx_format_name(in.format),
	                 dx_id_kind_name(in.id_kind));
	out_write(&o, line, (size_t)n);
	if (in.id_kind == DX_ID_SEQUENTIAL) {
		n = snprintf(line, sizeof line, "id-base\t%llu\n", (unsigned long long)in.id_base);
		out_write(&o, line, (size_t)n);
	}
	n = snprintf(line, sizeof line, "bytes-per-record\t%.2f\n",
	             in.records ? (double)in.file_size / (double)in.records : 0.0);
	out_write(&o, line, (size_t)n);
	for (uint32_t i = 0; i < in.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(ix, i, &si) < 0)
			continue;
		n = snprintf(line, sizeof line, "source\t%s\t%llu\t%llu\t%llu\t%s\t%s\t%llu\t%llu\t%llu\n",
		             si.path, (unsigned long long)si.size, (unsigned long long)si.first_record,
		             (unsigned long long)si.records, source_state(ix, i), dx_source_kind_name(si.kind),
		             (unsigned long long)si.usize, (unsigned long long)si.points,
		             (unsigned long long)si.window_bytes);
		out_write(&o, line, (size_t)n);
	}
	for (uint32_t i = 0; i < dx_index_sections(ix); i++) {
		dx_section_info s;
		if (dx_index_get_section(ix, i, &s) < 0)
			continue;
		n = snprintf(line, sizeof line, "section\t%s\t%llu\t%llu\n", s.name,
		             (unsigned long long)s.offset, (unsigned long long)s.size);
		out_write(&o, line, (size_t)n);
	}
	/* The build parameters, one "param<TAB>key=value" each. */
	for (const char *p = in.params, *end = in.params + in.params_len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		out_write(&o, "param\t", 6);
		out_write(&o, p, len);
		out_char(&o, '\n');
		p += len + 1;
	}
	dx_index_close(ix);
	if (out_close(&o) < 0) {
		cli_output_error("index", o.error);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int verify(const char *arg, int quiet)
{
	dx_err err = { 0 };
	dx_corpus *c = dx_corpus_open(arg, &err);
	if (!c) {
		cli_lib_error("index", &err);
		return EXIT_FAIL;
	}
	progress p;
	progress_init(&p, "verifying", quiet);
	dx_verify_report rep = { 0 };
	int rc = dx_corpus_verify(c, progress_update, &p, &rep, &err);
	progress_done(&p, NULL);
	dx_corpus_close(c);
	if (rc < 0)
		return cli_lib_failure("index", rc, &err);
	/* A subset of MS MARCO v2 keeps ids that name offsets in the full
	 * bundles: worth a line, not a failure. */
	if (rep.v2_elsewhere) {
		char what[200];
		snprintf(what, sizeof what, "%llu MS MARCO v2 ids name a byte offset where their record is "
		         "not (a subset of a bundle?), the first at", (unsigned long long)rep.v2_elsewhere);
		cli_error("index", what, rep.v2_first);
	}
	printf("ok\t%llu records\t%llu bytes\n", (unsigned long long)rep.records,
	       (unsigned long long)rep.bytes);
	if (fflush(stdout) != 0) {
		cli_output_error("index", errno);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* The build options given, reporting to a progress bar. */
static dx_build_opts with_progress(const index_args *a, progress *p, const char *label)
{
	dx_build_opts opts = a->build;
	progress_init(p, label, a->quiet);
	opts.progress = progress_update;
	opts.progress_ctx = p;
	return opts;
}

/* --bgzf's default level: libdeflate's 11 wrote files 1.5% and 2.5%
 * larger than gzip -6 (the 1 GiB generated passages and documents, when
 * every block ended at a record; the documents 1.8% since blocks are
 * filled), where its 9 wrote 5% and 6.5% more, at 2.6 times the time; 12
 * is 15% slower still for 0.1% less.  A build with zlib alone compresses
 * at 9. */
enum { BGZF_LEVEL = 11 };

/* --bgzf: the corpus rewritten in blocks, to be indexed next. */
static int rewrite_bgzf(index_args *a, const char *file, dx_bgzf_report *rep)
{
	progress p;
	dx_build_opts opts = with_progress(a, &p, "rewriting as BGZF");
	dx_err err = { 0 };
	int rc = dx_bgzf_write(file, a->bgzf, &opts, a->level ? a->level : BGZF_LEVEL, rep, &err);
	progress_done(&p, NULL);
	if (rc < 0)
		return cli_lib_failure("index", rc, &err);
	if (rep->warning[0])
		cli_error("index", rep->warning, rep->warning_file);
	return EXIT_OK;
}

/* Where the index goes: -o, else beside the first file (the BGZF copy
 * with --bgzf).  Returns 0, or EXIT_USAGE for a path too long. */
static int index_path(const index_args *a, const char *first, char *path, size_t pathsz)
{
	if (a->output)
		snprintf(path, pathsz, "%s", a->output);
	else if ((size_t)snprintf(path, pathsz, "%s.ddx", a->bgzf ? a->bgzf : first) >= pathsz)
		return cli_usage_error("index", "path too long", a->bgzf ? a->bgzf : first);
	return 0;
}

/* Builds the index of files; bgzf, when they are the copy --bgzf made of
 * src, has the summary say so too. */
static int build(const index_args *a, int nfiles, char **files, const char *src,
                 const dx_bgzf_report *bgzf)
{
	char out_path[4096];
	int rc = index_path(a, files[0], out_path, sizeof out_path);
	if (rc)
		return rc;
	progress p;
	dx_build_opts opts = with_progress(a, &p, "indexing");
	dx_build_report rep;
	dx_err err = { 0 };
	rc = dx_index_build((const char *const *)files, (size_t)nfiles, out_path, &opts, &rep, &err);
	if (rc < 0) {
		progress_done(&p, NULL);
		return cli_lib_failure("index", rc, &err);
	}
	/* One line, on a terminal only (progress_done): "indexed 8841823
	 * records (2.9 GiB) into collection.tsv.ddx (67.5 MiB)", preceded
	 * with --bgzf by what the copy became. */
	char summary[9000], sz[32], isz[32], bsz[32];
	const char *plural = rep.records == 1 ? "" : "s";
	dx_format_bytes(rep.index_size, isz, sizeof isz);
	if (bgzf)
		snprintf(summary, sizeof summary,
		         "rewrote %s (%s) as BGZF into %s (%s) and indexed %llu record%s into %s (%s)", src,
		         dx_format_bytes(bgzf->bytes_in, sz, sizeof sz), files[0],
		         dx_format_bytes(bgzf->bytes_out, bsz, sizeof bsz), (unsigned long long)rep.records,
		         plural, out_path, isz);
	else
		snprintf(summary, sizeof summary, "indexed %llu record%s (%s) into %s (%s)",
		         (unsigned long long)rep.records, plural, dx_format_bytes(rep.bytes, sz, sizeof sz),
		         out_path, isz);
	progress_done(&p, summary);
	/* What was left out is worth a line even without a terminal. */
	if (rep.warning[0])
		cli_error("index", rep.warning, rep.warning_file);
	if (rep.skipped) {
		char what[128];
		snprintf(what, sizeof what, "skipped %llu records without an id, the first at",
		         (unsigned long long)rep.skipped);
		cli_error("index", what, rep.first_skipped);
	}
	if (rep.duplicates) {
		char what[128];
		snprintf(what, sizeof what, "%llu records had an id already taken, kept the %s",
		         (unsigned long long)rep.duplicates,
		         a->build.duplicates == DX_DUP_FIRST ? "first" : "last");
		cli_error("index", what, NULL);
	}
	return EXIT_OK;
}

int cmd_index(int argc, char **argv)
{
	index_args a = { 0 };
	dx_build_opts_init(&a.build);
	uint64_t v;
	int c, rc;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:fqh@:", options, NULL)) != -1) {
		switch (c) {
		case 'o':
			a.output = optarg;
			break;
		case OPT_FORMAT:
			if ((rc = opt_format("index", NULL, optarg, formats, &a.build.format)))
				return rc;
			break;
		case OPT_ID_COLUMN:
			if (cli_parse_u64(optarg, &v) < 0 || v == 0 || v > 1000000)
				return cli_usage_error("index", "bad --id-column, give a column number from 1", optarg);
			a.build.id_column = (unsigned)v;
			break;
		case OPT_ID_FIELD:
			if (!*optarg)
				return cli_usage_error("index", "empty --id-field", NULL);
			if (strlen(optarg) > DX_ID_FIELD_MAX)
				return cli_usage_error("index", "--id-field too long, give at most 255 bytes", optarg);
			a.build.id_field = optarg;
			break;
		case OPT_COLUMNS:
			if (strlen(optarg) > DX_COLUMNS_MAX)
				return cli_usage_error("index", "--columns too long, give at most 1023 bytes", optarg);
			/* A column without a name could not be asked for by name. */
			if (!*optarg || *optarg == ',' || optarg[strlen(optarg) - 1] == ',' || strstr(optarg, ",,"))
				return cli_usage_error("index", "bad --columns, give names separated by commas", optarg);
			a.build.columns = optarg;
			break;
		case OPT_DUPLICATES:
			if (strcmp(optarg, "error") == 0)
				a.build.duplicates = DX_DUP_ERROR;
			else if (strcmp(optarg, "first") == 0)
				a.build.duplicates = DX_DUP_FIRST;
			else if (strcmp(optarg, "last") == 0)
				a.build.duplicates = DX_DUP_LAST;
			else
				return cli_usage_error("index", "bad --duplicates, give error, first or last", optarg);
			break;
		case OPT_SKIP_BAD:
			a.build.skip_bad = 1;
			break;
		case OPT_BGZF:
			a.bgzf = optarg;
			break;
		case OPT_LEVEL:
			if (cli_parse_u64(optarg, &v) < 0 || v < 1 || v > DX_BGZF_LEVEL_MAX)
				return cli_usage_error("index", "bad --level, give 1 to 12", optarg);
			a.level = (int)v;
			break;
		case OPT_THREADS:
			if (cli_parse_u64(optarg, &v) < 0 || v < 1 || v > DX_BGZF_MAX_THREADS)
				return cli_usage_error("index", "bad --threads, give 1 to 256", optarg);
			a.build.threads = (unsigned)v;
			break;
		case OPT_SPAN:
			if (cli_parse_size(optarg, &v) < 0 || v < DX_MIN_SPAN)
				return cli_usage_error("index", "bad --span, give a size of at least 64K", optarg);
			a.build.span = v;
			break;
		case OPT_SPARSE:
			a.build.sparse_windows = 1;
			break;
		case OPT_STATS:
			a.stats = 1;
			break;
		case OPT_VERIFY:
			a.verify = 1;
			break;
		case 'q':
			a.quiet = 1;
			break;
		case 'f':
			a.force = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return cli_stdout_done("index");
		default:
			return cli_bad_option("index", argv, c);
		}
	}
	int nfiles = argc - optind;
	char **files = argv + optind;
	if (nfiles == 0)
		return cli_usage_error("index", "no corpus file given", NULL);
	if (a.stats || a.verify) {
		if (nfiles != 1)
			return cli_usage_error("index", "--stats and --verify take one corpus or index", NULL);
		rc = a.stats ? show_stats(files[0]) : EXIT_OK;
		if (rc == EXIT_OK && a.verify)
			rc = verify(files[0], a.quiet);
		return rc;
	}
	if (a.bgzf && nfiles != 1)
		return cli_usage_error("index", "--bgzf rewrites one file", NULL);
	if (a.level && !a.bgzf)
		return cli_usage_error("index", "--level goes with --bgzf", NULL);
	if (a.build.threads && !a.bgzf)
		return cli_usage_error("index", "--threads goes with --bgzf", NULL);
	if (nfiles > 1 && !a.output)
		return cli_usage_error("index", "several files need -o PATH for the index", NULL);
	for (int i = 0; i < nfiles; i++)
		if (strcmp(files[i], "-") == 0)
			return cli_usage_error("index", "cannot index stdin, give a file", "-");
	/* A directory named where a corpus file goes: said as get says it. */
	for (int i = 0; i < nfiles; i++) {
		struct stat st;
		if (stat(files[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			cli_error("index", "a directory, not a corpus file", files[i]);
			return EXIT_FAIL;
		}
	}
	/* The index of a --bgzf copy must not replace the file it was made
	 * from; --force does not change that. */
	if (cli_check_output("index", a.output, (const char *const *)files, (size_t)nfiles, NULL) != EXIT_OK)
		return EXIT_FAIL;
	if (a.bgzf && dx_same_file(a.bgzf, files[0])) {
		cli_error("index", "the BGZF output is the input file", a.bgzf);
		return EXIT_FAIL;
	}
	/* The copy is indexed next, which takes a regular file at its own
	 * name: a FIFO or a device would be written through to the end, then
	 * refused, and a descriptor named as /dev/stdout would get an index
	 * at /dev/stdout.ddx.  Those are what an output path that exists but
	 * would not be replaced is.  (A directory is refused where the copy
	 * is created, as for -o.) */
	struct stat bst;
	if (a.bgzf && stat(a.bgzf, &bst) == 0 && !S_ISDIR(bst.st_mode) && !dx_output_replaces(a.bgzf)) {
		cli_error("index", "the BGZF output must be a regular file, to be indexed", a.bgzf);
		return EXIT_FAIL;
	}
	/* Both outputs are checked before either is written. */
	char out_path[4096];
	if ((rc = index_path(&a, files[0], out_path, sizeof out_path)))
		return rc;
	if (cli_check_replace("index", a.bgzf, a.force, 0) != EXIT_OK ||
	    cli_check_replace("index", out_path, a.force, 1) != EXIT_OK)
		return EXIT_FAIL;
	if (!a.bgzf)
		return build(&a, nfiles, files, NULL, NULL);
	dx_bgzf_report rep;
	if ((rc = rewrite_bgzf(&a, files[0], &rep)) != EXIT_OK)
		return rc;
	return build(&a, nfiles, (char **)&a.bgzf, files[0], &rep);
}
