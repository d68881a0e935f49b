/* Building, reading and damaging indexes through the public API. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "docdex.h"
#include "unit.h"

static int build(const char *name, const dx_build_opts *o, dx_build_report *rep, dx_err *err)
{
	const char *files[] = { path(name) };
	char out[512];
	snprintf(out, sizeof out, "%s.ddx", path(name));
	return dx_index_build(files, 1, out, o, rep, err);
}

/* Every record's id finds it, and its bytes are the line of the corpus. */
static void check_lines(const char *name, const char *const *ids, const char *const *lines, int n)
{
	dx_err err = { 0 };
	dx_corpus *c = dx_corpus_open(path(name), &err);
	CHECK(c != NULL);
	if (!c) {
		fprintf(stderr, "%s: %s\n", err.what, err.subject);
		return;
	}
	CHECK_EQ(dx_corpus_count(c), n);
	for (int i = 0; i < n; i++) {
		uint64_t pos = 99;
		CHECK(dx_corpus_find(c, ids[i], strlen(ids[i]), &pos, &err) == 1);
		CHECK_EQ(pos, i);
		dx_record rec;
		CHECK(dx_corpus_record(c, pos, &rec, &err) == 0);
		CHECK_MEM(rec.data, rec.len, lines[i]);
		const char *id;
		size_t len;
		CHECK(dx_corpus_id(c, pos, &id, &len, &err) == 0);
		CHECK_MEM(id, len, ids[i]);
	}
	uint64_t pos;
	CHECK(dx_corpus_find(c, "absent", 6, &pos, &err) == 0);
	CHECK(dx_corpus_find(c, "", 0, &pos, &err) == 0);
	dx_corpus_close(c);
}

static void roundtrip(void)
{
	const char *ids[] = { "D1", "D22", "msmarco_doc_00_0", "a#b:c<d>", "5" };
	const char *lines[] = { "D1\tone", "D22\ttwo", "msmarco_doc_00_0\tthree", "a#b:c<d>\tfour", "5\tfive" };
	const char *data = "D1\tone\nD22\ttwo\r\nmsmarco_doc_00_0\tthree\n\na#b:c<d>\tfour\n5\tfive";
	unit_write("r.tsv", data, strlen(data));
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_build_report rep;
	dx_err err = { 0 };
	CHECK(build("r.tsv", &o, &rep, &err) == 0);
	CHECK_EQ(rep.records, 5);
	CHECK_EQ(rep.id_kind, DX_ID_HASH);
	check_lines("r.tsv", ids, lines, 5);
}

/* Integer ids that count up need no table, until one breaks the run. */
static void sequential(void)
{
	char data[4096], idbuf[40][16], linebuf[40][32];
	const char *ids[40], *lines[40];
	size_t n = 0;
	for (int i = 0; i < 40; i++) {
		snprintf(idbuf[i], sizeof idbuf[i], i == 37 ? "x%d" : "%d", 100 + i);
		snprintf(linebuf[i], sizeof linebuf[i], "%s\tt%d", idbuf[i], i);
		ids[i] = idbuf[i];
		lines[i] = linebuf[i];
		n += (size_t)snprintf(data + n, sizeof data - n, "%s\n", linebuf[i]);
	}
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_build_report rep;
	dx_err err = { 0 };
	unit_write("s.tsv", data, n);
	CHECK(build("s.tsv", &o, &rep, &err) == 0);
	CHECK_EQ(rep.id_kind, DX_ID_HASH);
	check_lines("s.tsv", ids, lines, 40);

	/* Without the break: sequential, and "0100" or "99" are not ids. */
	n = 0;
	for (int i = 0; i < 37; i++)
		n += (size_t)snprintf(data + n, sizeof data - n, "%s\n", linebuf[i]);
	unit_write("s2.tsv", data, n);
	CHECK(build("s2.tsv", &o, &rep, &err) == 0);
	CHECK_EQ(rep.id_kind, DX_ID_SEQUENTIAL);
	check_lines("s2.tsv", ids, lines, 37);
	dx_corpus *c = dx_corpus_open(path("s2.tsv"), &err);
	uint64_t pos;
	CHECK(dx_corpus_find(c, "0100", 4, &pos, &err) == 0);
	CHECK(dx_corpus_find(c, "99", 2, &pos, &err) == 0);
	CHECK(dx_corpus_find(c, "137", 3, &pos, &err) == 0);
	dx_corpus_close(c);
}

static void duplicates(void)
{
	unit_write("d.tsv", "a\t1\nb\t2\na\t3\n", 12);
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_build_report rep;
	dx_err err = { 0 };
	CHECK(build("d.tsv", &o, &rep, &err) == DX_EDUPID);
	CHECK(strcmp(err.subject, "a") == 0);
	CHECK(strstr(err.what, "d.tsv:1") && strstr(err.what, "d.tsv:3"));
	CHECK(access(path("d.tsv.ddx"), F_OK) < 0); /* nothing written */
	const char *ids[] = { "a", "b" };
	for (int policy = DX_DUP_FIRST; policy <= DX_DUP_LAST; policy++) {
		o.duplicates = policy;
		CHECK(build("d.tsv", &o, &rep, &err) == 0);
		CHECK_EQ(rep.duplicates, 1);
		dx_corpus *c = dx_corpus_open(path("d.tsv"), &err);
		uint64_t pos;
		CHECK(dx_corpus_find(c, ids[0], 1, &pos, &err) == 1);
		CHECK_EQ(pos, policy == DX_DUP_FIRST ? 0 : 2);
		dx_corpus_close(c);
	}
}

/* A record of 16 MiB or more goes to the long-records section. */
static void long_record(void)
{
	size_t big = (16u << 20) + 5;
	char *data = malloc(big + 64);
	size_t n = (size_t)sprintf(data, "small\tx\nhuge\t");
	memset(data + n, 'y', big);
	n += big;
	n += (size_t)sprintf(data + n, "\nafter\tz\n");
	unit_write("l.tsv", data, n);
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_err err = { 0 };
	CHECK(build("l.tsv", &o, NULL, &err) == 0);
	dx_corpus *c = dx_corpus_open(path("l.tsv"), &err);
	CHECK(c != NULL);
	uint64_t pos;
	dx_record rec;
	CHECK(dx_corpus_find(c, "huge", 4, &pos, &err) == 1);
	CHECK(dx_corpus_record(c, pos, &rec, &err) == 0);
	CHECK_EQ(rec.len, big + 5);
	CHECK(dx_corpus_find(c, "after", 5, &pos, &err) == 1);
	CHECK(dx_corpus_record(c, pos, &rec, &err) == 0);
	CHECK_MEM(rec.data, rec.len, "after\tz");
	dx_corpus_close(c);
	free(data);
}

/*
 * Flips every byte of an index in turn: the damage is refused at open or
 * by the full check, and a lookup never answers with a wrong record.
 */
static void damage(void)
{
	char data[8192];
	size_t n = 0;
	for (int i = 0; i < 100; i++)
		n += (size_t)snprintf(data + n, sizeof data - n, "id%d\ttext of %d\n", i * 7, i);
	unit_write("x.tsv", data, n);
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_err err = { 0 };
	CHECK(build("x.tsv", &o, NULL, &err) == 0);
	const char *ix = path("x.tsv.ddx");
	int fd = open(ix, O_RDWR);
	struct stat st;
	fstat(fd, &st);
	size_t size = (size_t)st.st_size, undetected = 0, wrong = 0;
	unsigned char *orig = malloc(size);
	CHECK(pread(fd, orig, size, 0) == (ssize_t)size);
	for (size_t at = 0; at < size; at++) {
		unsigned char b = orig[at] ^ 0x20;
		CHECK(pwrite(fd, &b, 1, (off_t)at) == 1);
		dx_corpus *c = dx_corpus_open(path("x.tsv"), &err);
		if (c) {
			for (int i = 0; i < 100; i++) {
				char id[16], want[32];
				int l = snprintf(id, sizeof id, "id%d", i * 7);
				snprintf(want, sizeof want, "id%d\ttext of %d", i * 7, i);
				uint64_t pos;
				dx_record rec;
				int r = dx_corpus_find(c, id, (size_t)l, &pos, &err);
				if (r == 1 && dx_corpus_record(c, pos, &rec, &err) == 0 &&
				    (rec.len != strlen(want) || memcmp(rec.data, want, rec.len) != 0))
					wrong++;
			}
			if (dx_index_check(dx_corpus_index(c), &err) == 0 && orig[at] != b)
				undetected++;
			dx_corpus_close(c);
		}
		CHECK(pwrite(fd, &orig[at], 1, (off_t)at) == 1);
	}
	CHECK_EQ(wrong, 0);
	CHECK_EQ(undetected, 0);

	/* Truncated anywhere: refused at open. */
	for (size_t len = 0; len < size; len += 7) {
		CHECK(ftruncate(fd, (off_t)len) == 0);
		dx_index *x = dx_index_open(ix, &err);
		CHECK(x == NULL && err.code == DX_ECORRUPT);
		dx_index_close(x);
	}
	CHECK(pwrite(fd, orig, size, 0) == (ssize_t)size);
	close(fd);
	free(orig);
}

/* A changed corpus is refused, whatever changed. */
static void stale(void)
{
	unit_write("st.tsv", "a\tone\nb\ttwo\n", 12);
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_err err = { 0 };
	CHECK(build("st.tsv", &o, NULL, &err) == 0);
	struct stat st;
	stat(path("st.tsv"), &st);
	/* Same size and mtime, other bytes: the fingerprint tells. */
	unit_write("st.tsv", "a\tONE\nb\ttwo\n", 12);
	struct timespec times[2] = { st.st_atim, st.st_mtim };
	utimensat(AT_FDCWD, path("st.tsv"), times, 0);
	dx_corpus *c = dx_corpus_open(path("st.tsv"), &err);
	CHECK(c == NULL && err.code == DX_ESTALE && strstr(err.what, "contents"));
	unit_write("st.tsv", "a\tone\nb\ttwo\nc\tthree\n", 20);
	c = dx_corpus_open(path("st.tsv"), &err);
	CHECK(c == NULL && err.code == DX_ESTALE && strstr(err.what, "size"));
	unlink(path("st.tsv"));
	c = dx_corpus_open(path("st.tsv.ddx"), &err);
	CHECK(c == NULL && err.code == DX_ESYS && err.sys == ENOENT);
}

/* dx_corpus_in_memory: a plain corpus just written is found in memory once
 * a read has looked at its pages, under DX_ACCESS_AUTO only; a gzip corpus
 * never is (its pages are not what is read). */
static void in_memory(void)
{
	char data[64 * 100 + 1], *p = data;
	for (int i = 0; i < 100; i++)
		p += sprintf(p, "m%d\t%055d\n", i, i);
	unit_write("m.tsv", data, strlen(data));
	gzFile gz = gzopen(path("m.tsv.gz"), "wb");
	CHECK(gz != NULL && gzwrite(gz, data, (unsigned)strlen(data)) == (int)strlen(data));
	gzclose(gz);
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_err err = { 0 };
	CHECK(build("m.tsv", &o, NULL, &err) == 0);
	CHECK(build("m.tsv.gz", &o, NULL, &err) == 0);
	const char *names[] = { "m.tsv", "m.tsv.gz" };
	for (int gzipped = 0; gzipped < 2; gzipped++) {
		dx_corpus *c = dx_corpus_open(path(names[gzipped]), &err);
		CHECK(c != NULL);
		if (!c)
			return;
		CHECK(!dx_corpus_in_memory(c)); /* nothing looked at yet */
		dx_record rec;
		CHECK(dx_corpus_record(c, 7, &rec, &err) == 0);
		/* Just written, so in memory: the gzip file's compressed bytes
		 * are probed as the plain file's records are. */
		CHECK(dx_corpus_in_memory(c));
		CHECK(dx_corpus_set_access(c, DX_ACCESS_MMAP, &err) == 0);
		CHECK(dx_corpus_record(c, 8, &rec, &err) == 0);
		CHECK(!dx_corpus_in_memory(c));
		dx_corpus_close(c);
	}
}

int main(void)
{
	CHECK(unit_mkdir());
	roundtrip();
	sequential();
	duplicates();
	long_record();
	damage();
	stale();
	in_memory();
	CHECK(unit_rmdir());
	UNIT_DONE();
}
