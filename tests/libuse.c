/*
 * libuse.c: a program of another project's that uses the installed
 * library, built with pkg-config --cflags --libs docdex
 * (tests/library.bats).  Indexes CORPUS, then prints the record of ID:
 *
 *   libuse CORPUS ID
 */
#include <docdex.h>
#include <stdio.h>
#include <string.h>

static int fail(const dx_err *err)
{
	char line[1400];
	fprintf(stderr, "libuse: %s\n", dx_describe(err, line, sizeof line));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: libuse CORPUS ID\n");
		return 2;
	}
	dx_err err = { 0 };
	if (dx_sigbus_guard_install(&err) < 0)
		return fail(&err);
	char index[4096];
	snprintf(index, sizeof index, "%s.ddx", argv[1]);
	dx_build_opts o;
	dx_build_opts_init(&o);
	const char *files[] = { argv[1] };
	dx_build_report rep;
	if (dx_index_build(files, 1, index, &o, &rep, &err) < 0)
		return fail(&err);

	dx_corpus *c = dx_corpus_open(argv[1], &err);
	if (!c)
		return fail(&err);
	uint64_t pos;
	dx_record rec;
	int found = dx_corpus_find(c, argv[2], strlen(argv[2]), &pos, &err);
	if (found < 0 || (found == 1 && dx_corpus_record(c, pos, &rec, &err) < 0)) {
		dx_corpus_close(c);
		return fail(&err);
	}
	if (found == 1)
		printf("%s %llu records, %s: %.*s\n", dx_version(), (unsigned long long)rep.records, argv[2],
		       (int)rec.len, rec.data);
	else
		printf("%s: not found\n", argv[2]);
	dx_corpus_close(c);
	return found == 1 ? 0 : 1;
}
