/* Copies of a corpus on a RAM filesystem, and the page-cache probes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dxbench.h"
#include "docdex.h"
#include "unit.h"

#define TMPFS_MAGIC_ 0x01021994ul

/* A directory of the test's own on /dev/shm, so that what other processes
 * do in /dev/shm cannot change what is counted there; "" when there is no
 * tmpfs at /dev/shm. */
static char shm_dir[64];

static int is_tmpfs(const char *p)
{
	struct statfs st;
	return statfs(p, &st) == 0 && ((unsigned long)st.f_type & 0xFFFFFFFFul) == TMPFS_MAGIC_;
}

static uint64_t file_size(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (uint64_t)st.st_size : UINT64_MAX;
}

/* Entries of dir named docdex-ramdisk.*: what a copy leaves behind. */
static int leftovers(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += strncmp(e->d_name, "docdex-ramdisk.", 15) == 0;
	closedir(d);
	return n;
}

/* A TSV corpus of n lines with ids PREFIX0, PREFIX1, ...; long lines so
 * that the file passes 1 MiB (the fingerprint samples it then). */
static void write_tsv(const char *name, const char *prefix, int n)
{
	FILE *f = fopen(path(name), "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s%d\t", prefix, i);
		for (int k = 0; k < 20; k++)
			fprintf(f, "word%d ", (i * 31 + k) % 977);
		fputc('\n', f);
	}
	fclose(f);
}

static int build(const char *const *names, size_t n, const char *out, dx_err *err)
{
	const char *files[4];
	char buf[4][512];
	for (size_t i = 0; i < n; i++) {
		snprintf(buf[i], sizeof buf[i], "%s", path(names[i]));
		files[i] = buf[i];
	}
	dx_build_opts o;
	dx_build_opts_init(&o);
	dx_build_report rep;
	return dx_index_build(files, n, path(out), &o, &rep, err);
}

static int count_calls(void *ctx, uint64_t done, uint64_t total)
{
	uint64_t *last = ctx;
	last[0]++;
	last[1] = done;
	last[2] = total;
	return 0;
}

static int cancel(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	(void)done;
	(void)total;
	return 1;
}

/* The same ids give the same bytes in both corpora. */
static void same_records(const char *a, const char *b, const char *prefix, int n)
{
	dx_err err = { 0 };
	dx_corpus *ca = dx_corpus_open(a, &err), *cb = dx_corpus_open(b, &err);
	CHECK(ca && cb);
	if (!ca || !cb) {
		fprintf(stderr, "%s: %s\n", err.what, err.subject);
		goto out;
	}
	CHECK_EQ(dx_corpus_count(ca), dx_corpus_count(cb));
	for (int i = 0; i < n; i++) {
		char id[32];
		int len = snprintf(id, sizeof id, "%s%d", prefix, i);
		uint64_t pa, pb;
		dx_record ra, rb;
		CHECK(dx_corpus_find(ca, id, (size_t)len, &pa, &err) == 1);
		CHECK(dx_corpus_find(cb, id, (size_t)len, &pb, &err) == 1);
		CHECK(dx_corpus_record(ca, pa, &ra, &err) == 0);
		CHECK(dx_corpus_record(cb, pb, &rb, &err) == 0);
		CHECK(ra.len == rb.len && memcmp(ra.data, rb.data, ra.len) == 0);
		CHECK(ra.data != rb.data); /* served from the copy, not the original */
	}
out:
	dx_corpus_close(ca);
	dx_corpus_close(cb);
}

/* An index with its sources in subdirectories, copied and served. */
static void copy_and_serve(void)
{
	CHECK(mkdir(path("data"), 0755) == 0 && mkdir(path("data/sub"), 0755) == 0);
	write_tsv("data/a.tsv", "a", 50);
	write_tsv("data/sub/b.tsv", "b", 12000);
	CHECK(file_size(path("data/sub/b.tsv")) > (1u << 20));
	const char *names[] = { "data/a.tsv", "data/sub/b.tsv" };
	dx_err err = { 0 };
	CHECK(build(names, 2, "c.ddx", &err) == 0);

	uint64_t calls[3] = { 0 };
	dxb_ramdisk *r = dxb_ramdisk_copy(path("c.ddx"), shm_dir, count_calls, calls, &err);
	CHECK(r != NULL);
	if (!r) {
		fprintf(stderr, "%s: %s\n", err.what, err.subject);
		return;
	}
	uint64_t want = file_size(path("c.ddx")) + file_size(path("data/a.tsv")) +
	                file_size(path("data/sub/b.tsv"));
	CHECK_EQ(dxb_ramdisk_bytes(r), want);
	CHECK(calls[0] >= 1);
	CHECK_EQ(calls[1], want);
	CHECK_EQ(calls[2], want);

	char dir[512], ix[512], b[600];
	snprintf(dir, sizeof dir, "%s", dxb_ramdisk_dir(r));
	snprintf(ix, sizeof ix, "%s", dxb_ramdisk_index(r));
	CHECK(strncmp(dir, "/dev/shm/", 9) == 0);
	CHECK(strncmp(ix, dir, strlen(dir)) == 0 && strcmp(ix + strlen(dir), "/c.ddx") == 0);
	CHECK(is_tmpfs(dir));

	/* Layout and modification times kept. */
	snprintf(b, sizeof b, "%s/data/sub/b.tsv", dir);
	struct stat so, sc;
	CHECK(stat(path("data/sub/b.tsv"), &so) == 0 && stat(b, &sc) == 0);
	CHECK(so.st_size == sc.st_size && so.st_mtim.tv_sec == sc.st_mtim.tv_sec &&
	      so.st_mtim.tv_nsec == sc.st_mtim.tv_nsec);

	same_records(path("c.ddx"), ix, "a", 50);
	same_records(path("c.ddx"), ix, "b", 12000);

	dxb_ramdisk_remove(r);
	struct stat st;
	CHECK(stat(dir, &st) < 0 && errno == ENOENT);
	CHECK_EQ(leftovers(shm_dir), 0);
	dxb_ramdisk_remove(NULL);
}

/* Failures leave nothing behind. */
static void refusals(void)
{
	dx_err err = { 0 };
	const char *names[] = { "r.tsv" };
	write_tsv("r.tsv", "r", 10);
	CHECK(build(names, 1, "r.ddx", &err) == 0);

	/* A progress callback that stops the copy. */
	memset(&err, 0, sizeof err);
	CHECK(dxb_ramdisk_copy(path("r.ddx"), shm_dir, cancel, NULL, &err) == NULL);
	CHECK_EQ(err.code, DX_ECANCELED);
	CHECK_EQ(leftovers(shm_dir), 0);

	/* A directory that does not exist. */
	memset(&err, 0, sizeof err);
	CHECK(dxb_ramdisk_copy(path("r.ddx"), "/dev/shm/dx-unit-no-such-dir/x", NULL, NULL, &err) == NULL);
	CHECK_EQ(err.code, DX_ESYS);

	/* A missing index. */
	memset(&err, 0, sizeof err);
	CHECK(dxb_ramdisk_copy(path("none.ddx"), shm_dir, NULL, NULL, &err) == NULL);
	CHECK_EQ(err.code, DX_ESYS);
	CHECK_EQ(leftovers(shm_dir), 0);

	/* Sources outside the index's directory ("../o.tsv", "../../p/p.tsv"),
	 * as pin-test's index of a corpus in a temporary directory names its
	 * corpus: the copy lays the index out two levels down, and serves. */
	CHECK(mkdir(path("ix"), 0755) == 0 && mkdir(path("ix/in"), 0755) == 0 && mkdir(path("p"), 0755) == 0);
	const char *onames[] = { "ix/o.tsv", "p/p.tsv" };
	write_tsv("ix/o.tsv", "o", 10);
	write_tsv("p/p.tsv", "p", 20);
	CHECK(build(onames, 2, "ix/in/o.ddx", &err) == 0);
	memset(&err, 0, sizeof err);
	dxb_ramdisk *out = dxb_ramdisk_copy(path("ix/in/o.ddx"), shm_dir, NULL, NULL, &err);
	CHECK(out != NULL);
	if (out) {
		char want[600];
		snprintf(want, sizeof want, "%s/u/u/o.ddx", dxb_ramdisk_dir(out));
		CHECK(strcmp(dxb_ramdisk_index(out), want) == 0);
		same_records(path("ix/in/o.ddx"), dxb_ramdisk_index(out), "o", 10);
		same_records(path("ix/in/o.ddx"), dxb_ramdisk_index(out), "p", 20);
		dxb_ramdisk_remove(out);
	}
	CHECK_EQ(leftovers(shm_dir), 0);

	/* A source moved out of reach of both its paths. */
	CHECK(mkdir(path("mv"), 0755) == 0);
	const char *mnames[] = { "mv/m.tsv" };
	write_tsv("mv/m.tsv", "m", 10);
	CHECK(build(mnames, 1, "m.ddx", &err) == 0);
	CHECK(rename(path("mv/m.tsv"), path("mv/moved.tsv")) == 0);
	memset(&err, 0, sizeof err);
	CHECK(dxb_ramdisk_copy(path("m.ddx"), shm_dir, NULL, NULL, &err) == NULL);
	CHECK(err.code == DX_ESYS);
	CHECK_EQ(err.sys, ENOENT);
	CHECK_EQ(leftovers(shm_dir), 0);

	/* A source changed since it was indexed: the corpus's own error. */
	CHECK(rename(path("mv/moved.tsv"), path("mv/m.tsv")) == 0);
	FILE *f = fopen(path("mv/m.tsv"), "ab");
	CHECK(f && fputs("m99\textra\n", f) >= 0);
	if (f)
		fclose(f);
	memset(&err, 0, sizeof err);
	CHECK(dxb_ramdisk_copy(path("m.ddx"), shm_dir, NULL, NULL, &err) == NULL);
	CHECK_EQ(err.code, DX_ESTALE);
	CHECK_EQ(leftovers(shm_dir), 0);
}

/* A directory on a disk is refused with the name of its filesystem. */
static void not_ram(void)
{
	if (is_tmpfs(unit_dir)) {
		fprintf(stderr, "test_ramdisk: %s is on tmpfs, not-a-RAM-filesystem checks skipped\n",
		        unit_dir);
		return;
	}
	dx_err err = { 0 };
	const char *names[] = { "n.tsv" };
	write_tsv("n.tsv", "n", 10);
	CHECK(build(names, 1, "n.ddx", &err) == 0);
	char fs[64];
	dxb_fs_type(unit_dir, fs, sizeof fs);
	CHECK(fs[0] != '\0');
	int before = leftovers(unit_dir);
	memset(&err, 0, sizeof err);
	CHECK(dxb_ramdisk_copy(path("n.ddx"), unit_dir, NULL, NULL, &err) == NULL);
	CHECK_EQ(err.code, DX_EINVAL);
	char want[256];
	snprintf(want, sizeof want, "not a RAM filesystem (tmpfs or ramfs): it is %s", fs);
	CHECK(strcmp(err.what, want) == 0);
	CHECK(strcmp(err.subject, unit_dir) == 0);
	CHECK_EQ(before, 0);
	CHECK_EQ(leftovers(unit_dir), 0);
}

/* This host's name as the directories carry it. */
static void host(char *out, size_t n)
{
	CHECK(gethostname(out, n) == 0);
	out[n - 1] = '\0';
	for (char *p = out; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '.'))
			*p = '_';
}

static int exists(const char *p)
{
	struct stat st;
	return lstat(p, &st) == 0;
}

/* A process id that was, and is no longer: a child reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	CHECK(pid > 0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* Directories that name their maker: made, swept when their process is
 * gone and nothing holds their lock, kept otherwise. */
static void tempdirs(const char *parent)
{
	char h[64], mine[512], live[512], dead[512], held[512], other[512], odd[512], file[512];
	char xdir[512];
	dx_err err = { 0 };
	int lock = -1, held_lock = -1, xlock = -1;
	host(h, sizeof h);

	/* PARENT/PREFIX.HOST.PID.XXXXXX, locked while its lock is open. */
	CHECK(dxb_tempdir_make(parent, "dx-unit", mine, sizeof mine, &lock, &err) == 0);
	char want[512];
	snprintf(want, sizeof want, "%s/dx-unit.%s.%ld.", parent, h, (long)getpid());
	CHECK(strncmp(mine, want, strlen(want)) == 0 && strlen(mine) == strlen(want) + 6);
	CHECK(lock >= 0);

	/* A process that made one and died (SIGKILL'd before it could remove
	 * it): its lock went with it. */
	int pfd[2];
	CHECK(pipe(pfd) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		int l;
		char d[512];
		_exit(dxb_tempdir_make(parent, "dx-unit", d, sizeof d, &l, &err) == 0 &&
		      write(pfd[1], d, sizeof d) == (ssize_t)sizeof d ? 0 : 1);
	}
	CHECK(read(pfd[0], dead, sizeof dead) == (ssize_t)sizeof dead);
	waitpid(pid, NULL, 0);

	/* A live process's, made in a child that waits until gate closes. */
	int gate[2];
	CHECK(pipe(gate) == 0);
	pid_t alive = fork();
	if (alive == 0) {
		int l;
		char d[512], c;
		close(gate[1]);
		if (dxb_tempdir_make(parent, "dx-unit", d, sizeof d, &l, &err) < 0 ||
		    write(pfd[1], d, sizeof d) != (ssize_t)sizeof d)
			_exit(1);
		_exit(read(gate[0], &c, 1) < 0);
	}
	close(gate[0]);
	CHECK(read(pfd[0], live, sizeof live) == (ssize_t)sizeof live);
	close(pfd[0]);
	close(pfd[1]);

	/* One whose process id is gone but whose lock a live process holds
	 * (another pid namespace with the same host name): kept. */
	CHECK(dxb_tempdir_make(parent, "dx-unit", held, sizeof held, &held_lock, &err) == 0);
	char renamed[512];
	snprintf(renamed, sizeof renamed, "%s/dx-unit.%s.%ld.abcDEF", parent, h, (long)dead_pid());
	CHECK(rename(held, renamed) == 0);
	snprintf(held, sizeof held, "%s", renamed);

	/* Another host's, a longer host name that starts with ours, odd
	 * names, and a plain file of the pattern: none of them ours. */
	snprintf(other, sizeof other, "%s/dx-unit.%s.x.%ld.abcdef", parent, h, (long)dead_pid());
	snprintf(odd, sizeof odd, "%s/dx-unit.%s.%ld.abcdefg", parent, h, (long)dead_pid());
	snprintf(file, sizeof file, "%s/dx-unit.%s.%ld.ghijkl", parent, h, (long)dead_pid());
	CHECK(mkdir(other, 0700) == 0 && mkdir(odd, 0700) == 0);
	FILE *f = fopen(file, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	char other_host[512];
	snprintf(other_host, sizeof other_host, "%s/dx-unit.not-%s.%ld.abcdef", parent, h,
	         (long)dead_pid());
	CHECK(mkdir(other_host, 0700) == 0);

	/* Another prefix's (one that starts with ours) are not looked at. */
	CHECK(dxb_tempdir_make(parent, "dx-unitx", xdir, sizeof xdir, &xlock, &err) == 0);
	close(xlock);
	snprintf(renamed, sizeof renamed, "%s/dx-unitx.%s.%ld.abcdef", parent, h, (long)dead_pid());
	CHECK(rename(xdir, renamed) == 0);
	snprintf(xdir, sizeof xdir, "%s", renamed);

	dxb_tempdir_sweep(parent, "dx-unit");
	CHECK(exists(mine));
	CHECK(!exists(dead));
	CHECK(exists(live));
	CHECK(exists(held));
	CHECK(exists(other) && exists(odd) && exists(file) && exists(other_host) && exists(xdir));
	/* Once the live one's process ends, it goes too; the held one once
	 * its lock is let go. */
	close(gate[1]);
	waitpid(alive, NULL, 0);
	dxb_tempdir_remove(NULL, held_lock);
	dxb_tempdir_sweep(parent, "dx-unit");
	CHECK(!exists(live));
	CHECK(!exists(held));
	CHECK(exists(mine));
	CHECK(exists(xdir));
	dxb_tempdir_remove(xdir, -1);

	dxb_tempdir_remove(mine, lock);
	CHECK(!exists(mine));
	dxb_tempdir_remove("", -1);

	/* A name that does not fit. */
	memset(&err, 0, sizeof err);
	char small[16];
	CHECK(dxb_tempdir_make(parent, "dx-unit", small, sizeof small, &lock, &err) == DX_ELIMIT);
	CHECK(small[0] == '\0' && lock == -1);

	/* A copy on the RAM disk is named so, and sweeps a dead run's copy. */
	char stale[512];
	snprintf(stale, sizeof stale, "%s/docdex-ramdisk.%s.%ld.zzzzzz", parent, h, (long)dead_pid());
	CHECK(mkdir(stale, 0700) == 0);
	const char *names[] = { "t.tsv" };
	write_tsv("t.tsv", "t", 10);
	CHECK(build(names, 1, "t.ddx", &err) == 0);
	dxb_ramdisk *r = dxb_ramdisk_copy(path("t.ddx"), parent, NULL, NULL, &err);
	CHECK(r != NULL);
	CHECK(!exists(stale));
	if (r) {
		snprintf(want, sizeof want, "%s/docdex-ramdisk.%s.%ld.", parent, h, (long)getpid());
		CHECK(strncmp(dxb_ramdisk_dir(r), want, strlen(want)) == 0);
		/* Held by this process: another's sweep keeps it. */
		pid_t sweeper = fork();
		if (sweeper == 0) {
			dxb_tempdir_sweep(parent, "docdex-ramdisk");
			_exit(0);
		}
		waitpid(sweeper, NULL, 0);
		CHECK(exists(dxb_ramdisk_dir(r)));
	}
	dxb_ramdisk_remove(r);
	CHECK_EQ(leftovers(parent), 0);
}

static void page_cache(void)
{
	enum { SIZE = 4 << 20 };
	char *buf = malloc(SIZE);
	CHECK(buf != NULL);
	if (!buf)
		return;
	for (size_t i = 0; i < SIZE; i++)
		buf[i] = (char)(i * 7);
	int fd = open(path("cache.bin"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK(write(fd, buf, SIZE) == SIZE);
	CHECK(fsync(fd) == 0);
	CHECK(pread(fd, buf, SIZE, 0) == SIZE);
	close(fd);
	free(buf);

	dx_err err = { 0 };
	double f = -1;
	CHECK(dxb_cache_resident(path("cache.bin"), &f, &err) == 0);
	CHECK(f > 0 && f <= 1);
	/* The kernel may keep some pages or all: only the range is certain. */
	CHECK(dxb_cache_evict(path("cache.bin"), &err) == 0);
	f = -1;
	CHECK(dxb_cache_resident(path("cache.bin"), &f, &err) == 0);
	CHECK(f >= 0 && f <= 1);

	unit_write("empty", "", 0);
	f = -1;
	CHECK(dxb_cache_resident(path("empty"), &f, &err) == 0);
	CHECK(f == 1);
	CHECK(dxb_cache_evict(path("empty"), &err) == 0);

	memset(&err, 0, sizeof err);
	CHECK(dxb_cache_resident(path("missing"), &f, &err) == DX_ESYS);
	CHECK_EQ(err.code, DX_ESYS);
	CHECK_EQ(err.sys, ENOENT);
	memset(&err, 0, sizeof err);
	CHECK(dxb_cache_evict(path("missing"), &err) == DX_ESYS);
	CHECK_EQ(err.sys, ENOENT);
	memset(&err, 0, sizeof err);
	CHECK(dxb_cache_resident(unit_dir, &f, &err) == DX_ESYS);
}

int main(void)
{
	if (!unit_mkdir()) {
		perror("mkdtemp");
		return 1;
	}
	if (is_tmpfs("/dev/shm")) {
		snprintf(shm_dir, sizeof shm_dir, "/dev/shm/dx-unit-XXXXXX");
		if (!mkdtemp(shm_dir))
			shm_dir[0] = '\0';
	}
	if (shm_dir[0]) {
		copy_and_serve();
		refusals();
		tempdirs(shm_dir);
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", shm_dir);
		CHECK(system(cmd) == 0);
	} else {
		fprintf(stderr, "test_ramdisk: no tmpfs at /dev/shm, copy checks skipped\n");
	}
	not_ram();
	page_cache();
	unit_rmdir();
	UNIT_DONE();
}
