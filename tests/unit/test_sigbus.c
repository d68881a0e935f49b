/*
 * A corpus file cut short under a process that reads it, as a host program
 * (not docdex) meets it: with dx_sigbus_guard_install, the read that
 * faults returns DX_ESTALE and the process goes on, in every thread; a
 * fault outside docdex's mappings still reaches the handler installed
 * before the guard.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "docdex.h"
#include "unit.h"

enum { RECORDS = 3000, THREADS = 4, ROUNDS = 200 };

static void make_corpus(const char *name)
{
	FILE *f = fopen(path(name), "wb");
	CHECK(f != NULL);
	for (int i = 0; f && i < RECORDS; i++)
		fprintf(f, "d%d\t%0200d\n", i, i);
	fclose(f);
	dx_build_opts o;
	dx_build_opts_init(&o);
	o.format = DX_FMT_TSV;
	char out[512];
	snprintf(out, sizeof out, "%s.ddx", path(name));
	const char *files[] = { path(name) };
	dx_err err = { 0 };
	CHECK(dx_index_build(files, 1, out, &o, NULL, &err) == 0);
}

/* The handler a host had before the guard: it gets the faults that are
 * not docdex's and jumps back to where the test made one. */
static sigjmp_buf host_jmp;
static volatile sig_atomic_t host_faults;

static void host_handler(int sig)
{
	(void)sig;
	host_faults++;
	siglongjmp(host_jmp, 1);
}

static void *reader(void *arg)
{
	dx_corpus *c = arg;
	dx_err err = { 0 };
	if (!c)
		return NULL;
	for (int i = 0; i < ROUNDS; i++) {
		dx_record rec;
		CHECK(dx_corpus_record(c, RECORDS - 1 - (uint64_t)i, &rec, &err) == DX_ESTALE);
		CHECK(dx_corpus_record(c, 0, &rec, &err) == 0);
	}
	return NULL;
}

/* Whether err is the error of a plain file read with pread and found cut
 * short, naming the file. */
static int cut_short(const dx_err *err, const char *file)
{
	return err->code == DX_ESTALE &&
	       strcmp(err->what, "corpus file shorter than when it was opened, it was changed while in use") == 0 &&
	       strcmp(err->subject, file) == 0;
}

/*
 * The same cut under DX_ACCESS_PREAD, before any guard is installed: a
 * record read with pread is a copy, so the read that meets the new end
 * returns DX_ESTALE (no fault to catch), what is still there reads as
 * before, and a record read before the cut can still be copied.
 */
static void pread_cut_short(void)
{
	make_corpus("p.tsv");
	dx_err err = { 0 };
	dx_corpus *c = dx_corpus_open(path("p.tsv"), &err);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(dx_corpus_set_access(c, DX_ACCESS_PREAD, &err) == 0);
	CHECK_EQ(dx_corpus_access(c), DX_ACCESS_PREAD);

	/* The first record that runs past byte 8192, where the file will end. */
	dx_record rec;
	uint64_t across = 0;
	while (across < RECORDS && dx_corpus_record(c, across, &rec, &err) == 0 &&
	       rec.offset + rec.len <= 8192)
		across++;
	CHECK(across > 0 && across < RECORDS && rec.offset < 8192);
	CHECK(!rec.stable);

	/* Records read before the cut, together (one pread for the two). */
	uint64_t before[2] = { 3, 4 };
	dx_record kept[2];
	CHECK(dx_corpus_records(c, before, 2, kept, &err) == 0);
	CHECK(!kept[0].stable && !kept[1].stable);
	CHECK(truncate(path("p.tsv"), 8192) == 0);

	char buf[256];
	CHECK(dx_corpus_copy(c, &kept[1], buf, &err) == 0);
	CHECK_MEM(buf, kept[1].len, "d4\t00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000004");

	/* Past the new end, and across it: errors naming the file. */
	memset(&err, 0, sizeof err);
	CHECK(dx_corpus_record(c, RECORDS - 2, &rec, &err) == DX_ESTALE);
	CHECK(cut_short(&err, path("p.tsv")));
	memset(&err, 0, sizeof err);
	CHECK(dx_corpus_record(c, across, &rec, &err) == DX_ESTALE);
	CHECK(cut_short(&err, path("p.tsv")));
	uint64_t pos[3] = { 1, RECORDS - 3, 2 };
	dx_record recs[3];
	memset(&err, 0, sizeof err);
	CHECK(dx_corpus_records(c, pos, 3, recs, &err) == DX_ESTALE);
	CHECK(cut_short(&err, path("p.tsv")));

	/* What is still there reads as before, alone and together. */
	CHECK(dx_corpus_record(c, 0, &rec, &err) == 0);
	CHECK_MEM(rec.data, rec.len, "d0\t00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000");
	uint64_t still[3] = { across - 1, 0, across - 1 };
	CHECK(dx_corpus_records(c, still, 3, recs, &err) == 0);
	CHECK(dx_corpus_check_ids(c, recs, 3, &err) == 0);
	CHECK(recs[0].len == recs[2].len && memcmp(recs[0].data, recs[2].data, recs[0].len) == 0);
	CHECK_MEM(recs[1].data, recs[1].len, "d0\t00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000");
	dx_corpus_close(c);
}

int main(void)
{
	CHECK(unit_mkdir());
	make_corpus("c.tsv");
	dx_err err = { 0 };
	dx_corpus *c = dx_corpus_open(path("c.tsv"), &err);
	CHECK(c != NULL);
	if (!c)
		UNIT_DONE();

	pread_cut_short();

	struct sigaction sa = { .sa_handler = host_handler };
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	CHECK(sigaction(SIGBUS, &sa, NULL) == 0);
	CHECK(dx_sigbus_guard_install(&err) == 0);
	CHECK(dx_sigbus_guard_install(&err) == 0); /* once is enough, twice harmless */

	/* Threads, each with its own corpus (a dx_corpus is one thread's at a
	 * time), opened before the file is cut. */
	dx_corpus *tc[THREADS];
	for (int i = 0; i < THREADS; i++)
		CHECK((tc[i] = dx_corpus_open(path("c.tsv"), &err)) != NULL);

	dx_record last, first;
	CHECK(dx_corpus_record(c, RECORDS - 1, &last, &err) == 0);
	CHECK(last.stable && last.len == 206);
	CHECK(truncate(path("c.tsv"), 8192) == 0);

	/* A record past the new end: an error, not a crash. */
	dx_record rec;
	memset(&err, 0, sizeof err);
	CHECK(dx_corpus_record(c, RECORDS - 2, &rec, &err) == DX_ESTALE);
	CHECK_EQ(err.code, DX_ESTALE);
	CHECK(strstr(err.what, "could not be read where it was mapped") != NULL);
	uint64_t pos[3] = { 1, RECORDS - 3, 2 };
	dx_record recs[3];
	CHECK(dx_corpus_records(c, pos, 3, recs, &err) == DX_ESTALE);
	/* One read before the cut, copied after it. */
	char buf[256];
	CHECK(dx_corpus_copy(c, &last, buf, &err) == DX_ESTALE);
	/* What is still there reads as before. */
	CHECK(dx_corpus_record(c, 0, &first, &err) == 0);
	CHECK(dx_corpus_copy(c, &first, buf, &err) == 0);
	CHECK_MEM(buf, first.len, "d0\t00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000");
	CHECK_EQ(host_faults, 0);

	/* Every thread gets its errors and goes on. */
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, reader, tc[i]) == 0);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		dx_corpus_close(tc[i]);
	}
	CHECK_EQ(host_faults, 0);

	/* A fault in a mapping of the host's own, even during a docdex call's
	 * guard on another thread, goes to the host's handler. */
	int fd = open(path("c.tsv"), O_RDONLY);
	CHECK(fd >= 0);
	const volatile char *m = mmap(NULL, 65536, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	if (sigsetjmp(host_jmp, 1) == 0)
		(void)m[40000];
	CHECK_EQ(host_faults, 1);
	munmap((void *)m, 65536);
	close(fd);

	/* The index cut short: lookups fail the same way. */
	CHECK(truncate(path("c.tsv.ddx"), 0) == 0);
	uint64_t p;
	CHECK(dx_corpus_find(c, "d5", 2, &p, &err) == DX_ESTALE);
	const char *id;
	size_t idlen;
	CHECK(dx_corpus_id(c, 5, &id, &idlen, &err) == DX_ESTALE);
	CHECK_EQ(host_faults, 1);
	dx_corpus_close(c);
	CHECK(unit_rmdir());
	UNIT_DONE();
}
