/* test_pin.c: locking memory within the memory-lock limit, and what the
 * machine says about pinning and placement. */
#include <stdlib.h>
#include <sys/resource.h>

#include "dxbench.h"
#include "docdex.h"
#include "unit.h"

/* A corpus of 200 passages with its index, opened. */
static dx_corpus *small_corpus(void)
{
	dx_err err = { 0 };
	FILE *f = fopen(path("c.tsv"), "w");
	CHECK(f != NULL);
	for (int i = 0; i < 200; i++)
		fprintf(f, "%d\tpassage number %d, a few words long\n", i, i);
	fclose(f);
	const char *files[] = { path("c.tsv") };
	dx_build_opts bo;
	dx_build_opts_init(&bo);
	dx_build_report rep;
	CHECK(dx_index_build(files, 1, path("c.tsv.ddx"), &bo, &rep, &err) == 0);
	dx_corpus *c = dx_corpus_open(path("c.tsv"), &err);
	CHECK(c != NULL);
	return c;
}

static void corpus_resident(struct rlimit saved)
{
	dx_err err = { 0 };
	dx_corpus *c = small_corpus();
	dx_index_info info;
	dx_source_info si;
	uint64_t bytes;
	dx_index_get_info(dx_corpus_index(c), &info);
	CHECK(dx_index_get_source(dx_corpus_index(c), 0, &si) == 0);
	/* Read in: the index and the corpus file, whole. */
	CHECK(dxb_corpus_make_resident(c, 0, &bytes, &err) == 0);
	CHECK_EQ(bytes, info.file_size + si.size);
	/* Locked: refused under a limit of 0, taken under one that holds it. */
	struct rlimit rl = saved;
	rl.rlim_cur = 0;
	CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
	CHECK(dxb_corpus_make_resident(c, 1, &bytes, &err) == DX_ELIMIT);
	CHECK(strstr(err.what, "memory-lock limit is 0 B") != NULL);
	if (saved.rlim_cur == RLIM_INFINITY || saved.rlim_cur >= (rlim_t)(1 << 20)) {
		rl.rlim_cur = 1 << 20;
		CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
		CHECK(dxb_corpus_make_resident(c, 1, &bytes, &err) == 0);
		CHECK_EQ(bytes, info.file_size + si.size);
	}
	CHECK(setrlimit(RLIMIT_MEMLOCK, &saved) == 0);
	dx_corpus_close(c);
}

int main(void)
{
	CHECK(unit_mkdir());
	struct rlimit saved, rl;
	dx_err err = { 0 };
	size_t n = 16384;
	char *buf = aligned_alloc(4096, n);
	CHECK(buf != NULL);
	CHECK(getrlimit(RLIMIT_MEMLOCK, &saved) == 0);

	/* A limit of 0 refuses any lock, and the error names it and the cure,
	 * whatever privileges the process has. */
	rl = saved;
	rl.rlim_cur = 0;
	CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
	CHECK_EQ(dxb_memlock_limit(), 0);
	CHECK(dxb_mem_lock(buf, n, &err) == DX_ELIMIT);
	CHECK(strstr(err.what, "cannot lock 16.0 KiB: the memory-lock limit is 0 B") == err.what);
	CHECK(strstr(err.what, "ulimit -l") != NULL);

	/* Under a limit that holds it, the lock is taken. */
	if (saved.rlim_cur == RLIM_INFINITY || saved.rlim_cur >= (rlim_t)(1 << 20)) {
		rl.rlim_cur = 1 << 20;
		CHECK(setrlimit(RLIMIT_MEMLOCK, &rl) == 0);
		CHECK_EQ(dxb_memlock_limit(), 1 << 20);
		CHECK(dxb_mem_lock(buf, n, &err) == 0);
		dxb_mem_unlock(buf, n);
		/* More than the limit is refused before mlock is tried. */
		CHECK(dxb_mem_lock(buf, (size_t)(2 << 20), &err) == DX_ELIMIT);
	}
	CHECK(setrlimit(RLIMIT_MEMLOCK, &saved) == 0);

	dxb_machine m;
	dxb_machine_info(&m);
	CHECK(m.cores >= 1);
	CHECK(m.memlock_limit == dxb_memlock_limit());
	free(buf);
	corpus_resident(saved);
	CHECK(unit_rmdir());
	UNIT_DONE();
}
