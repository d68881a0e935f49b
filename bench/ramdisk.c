/*
 * ramdisk.c: a copy of an indexed corpus on tmpfs or ramfs.  Served from
 * there, a corpus is in memory without being in the page cache of the disk
 * it came from, so that a benchmark can tell the cost of the storage from
 * the cost of reading pages already in memory.
 *
 * The copy keeps the layout of the sources relative to the index and their
 * modification times, because the copied index finds its sources by their
 * stored relative paths and checks their size, mtime and sampled bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "dxbench.h"
#include "corpus.h"
#include "err.h"
#include "fileutil.h"

/* statfs(2) f_type of the RAM filesystems (linux/magic.h). */
#define DX_TMPFS_MAGIC 0x01021994ul
#define DX_RAMFS_MAGIC 0x858458F6ul

/* The copies' directories: RAMDISK_PREFIX.HOST.PID.XXXXXX (dxb_tempdir_make). */
#define RAMDISK_PREFIX "docdex-ramdisk"

enum {
	PROGRESS_STEP = 16 << 20, /* bytes between calls of the progress callback */
	CFR_CHUNK = 16 << 20,     /* bytes per copy_file_range call */
	BUF_SIZE = 4 << 20,       /* the read/write buffer when copy_file_range cannot */
	SLACK = 1 << 20           /* room asked for beyond the files themselves */
};

struct dxb_ramdisk {
	char *dir;            /* the directory made under the RAM filesystem */
	int lock;             /* held on dir while the copy lives (dxb_tempdir_make) */
	char *index;          /* the copied index in it */
	uint64_t bytes;       /* bytes copied */
};

/* A copy in progress: the progress callback and the bytes counted for it. */
typedef struct copier {
	dx_progress_fn progress;
	void *ctx;
	uint64_t done, total;
	uint64_t next_report; /* done at which to call progress next */
	char *buf;            /* for read/write; allocated when first needed */
} copier;


/* Whether a stored relative path stays inside the index's directory: not
 * absolute and without a ".." component. */
static int stays_inside(const char *rel)
{
	if (rel[0] == '\0' || rel[0] == '/')
		return 0;
	for (const char *p = rel; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += n;
		p += strspn(p, "/");
	}
	return 1;
}

/* A source's stored path relative to the index's directory, as "../"
 * j times and then a path that stays inside the directory it leads to:
 * j, with *rest that path; or -1 (an absolute path, ".." further in).
 * An index built away from its corpus (pin-test's, in a temporary
 * directory) names it so. */
enum { MAX_UPS = 64 };
static int leading_ups(const char *rel, const char **rest)
{
	int j = 0;
	while (j <= MAX_UPS && strncmp(rel, "../", 3) == 0) {
		rel += 3;
		rel += strspn(rel, "/");
		j++;
	}
	if (j > MAX_UPS || !stays_inside(rel))
		return -1;
	*rest = rel;
	return j;
}

/* Path made + "u/" times k + name, malloc'd: the copy lays out the index
 * k levels down, where the sources its "../" lead to are inside the copy's
 * directory.  NULL when out of memory. */
static char *laid_out(const char *made, int k, const char *name)
{
	size_t n = strlen(made), m = strlen(name);
	char *p = malloc(n + 2 * (size_t)k + m + 2);
	if (!p)
		return NULL;
	memcpy(p, made, n);
	for (int i = 0; i < k; i++) {
		memcpy(p + n, "/u", 2);
		n += 2;
	}
	p[n++] = '/';
	memcpy(p + n, name, m + 1);
	return p;
}

/* Calls the progress callback when due (or always, with force).  Returns 0,
 * or DX_ECANCELED when the callback asks to stop. */
static int report(copier *cp, int force, const char *path, dx_err *err)
{
	if (!cp->progress || (!force && cp->done < cp->next_report))
		return 0;
	while (cp->next_report <= cp->done)
		cp->next_report += PROGRESS_STEP;
	if (cp->progress(cp->ctx, cp->done, cp->total))
		return dx__fail(err, DX_ECANCELED, 0, path, "interrupted");
	return 0;
}

/* Whether copy_file_range failed only because it cannot copy between these
 * two files (another filesystem, an old kernel), so read/write can. */
static int cfr_unsupported(int e)
{
	return e == ENOSYS || e == EXDEV || e == EINVAL || e == EOPNOTSUPP || e == EBADF;
}

/* Copies in (from its current offset) to out until in ends. */
static int copy_bytes(copier *cp, int in, int out, const char *src, const char *dst, dx_err *err)
{
	int use_cfr = 1;
	for (;;) {
		ssize_t n;
		if (use_cfr) {
			/* In the kernel, without a trip through user space; a
			 * failed call moved neither offset, so read/write can go
			 * on from where it stopped. */
			n = copy_file_range(in, NULL, out, NULL, CFR_CHUNK, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && cfr_unsupported(errno)) {
				use_cfr = 0;
				continue;
			}
			if (n < 0)
				return dx__fail_sys(err, dst, "cannot copy to the RAM filesystem");
		} else {
			if (!cp->buf && !(cp->buf = malloc(BUF_SIZE)))
				return dx__fail_nomem(err);
			n = read(in, cp->buf, BUF_SIZE);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return dx__fail_sys(err, src, "cannot read");
			if (n > 0 && dx__write_full(out, cp->buf, (size_t)n) < 0)
				return dx__fail_sys(err, dst, "cannot write");
		}
		if (n == 0)
			return 0;
		cp->done += (uint64_t)n;
		int rc = report(cp, 0, src, err);
		if (rc < 0)
			return rc;
	}
}

/*
 * Copies the open file in (at path src) to a new file dst, then gives the
 * copy the original's access and modification times, to the nanosecond:
 * the copied index checks its sources' mtimes.
 */
static int copy_file(copier *cp, int in, const char *src, const char *dst, dx_err *err)
{
	struct stat st;
	int rc = 0;
	int out = -1;
	if (fstat(in, &st) < 0) {
		rc = dx__fail_sys(err, src, "cannot read");
		goto out;
	}
	/* O_EXCL: two sources stored at the same path must not overwrite one
	 * another silently. */
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		rc = dx__fail_sys(err, dst, "cannot create");
		goto out;
	}
	if ((rc = copy_bytes(cp, in, out, src, dst, err)) < 0)
		goto out;
	const struct timespec times[2] = { st.st_atim, st.st_mtim };
	if (futimens(out, times) < 0) {
		rc = dx__fail_sys(err, dst, "cannot set the modification time");
		goto out;
	}
	int fd = out;
	out = -1;
	if (close(fd) < 0)
		rc = dx__fail_sys(err, dst, "cannot write");
out:
	if (out >= 0)
		close(out);
	return rc;
}

/* Makes the directories between base (which exists) and the file at path,
 * a path under base of which base_len bytes are base. */
static int make_parents(const char *path, size_t base_len, dx_err *err)
{
	int rc = 0;
	char *p = strdup(path);
	if (!p)
		return dx__fail_nomem(err);
	for (char *s = strchr(p + base_len + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			rc = dx__fail_sys(err, p, "cannot create directory");
			break;
		}
		*s = '/';
	}
	free(p);
	return rc;
}

/*
 * Opens source si as the corpus would (corpus.c, open_checked): by its
 * stored path from the index's directory, else by its absolute path from
 * build time, so that the file copied is the one the index was checked
 * against.  Returns the descriptor with *found (malloc'd), or a code.
 */
static int open_source(const char *ixdir, const dx_source_info *si, char **found, dx_err *err)
{
	if (!(*found = dx__path_join(ixdir, si->path)))
		return dx__fail_nomem(err);
	int fd = open(*found, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		int fd2 = open(si->abs_path, O_RDONLY | O_CLOEXEC);
		char *abs = fd2 >= 0 ? strdup(si->abs_path) : NULL;
		if (abs) {
			free(*found);
			*found = abs;
			fd = fd2;
		} else if (fd2 >= 0) {
			close(fd2);
			return dx__fail_nomem(err);
		}
	}
	if (fd < 0)
		return dx__fail_sys(err, *found, "cannot open corpus file");
	return fd;
}

/* Whether path lies under directory dir. */
static int is_under(const char *path, const char *dir)
{
	size_t dl = strlen(dir);
	return strncmp(path, dir, dl) == 0 && path[dl] == '/';
}

int dxb_ramdisk_check(const char *dir, dx_err *err)
{
	struct statfs sf;
	if (statfs(dir, &sf) < 0)
		return dx__fail_sys(err, dir, "cannot read the filesystem");
	unsigned long magic = (unsigned long)sf.f_type & 0xFFFFFFFFul;
	if (magic != DX_TMPFS_MAGIC && magic != DX_RAMFS_MAGIC) {
		char name[64];
		dxb_fs_type(dir, name, sizeof name);
		return dx__fail(err, DX_EINVAL, 0, dir, "not a RAM filesystem (tmpfs or ramfs): it is %s",
		                name);
	}
	return 0;
}

dxb_ramdisk *dxb_ramdisk_copy(const char *index_path, const char *dir, dx_progress_fn progress,
                            void *ctx, dx_err *err)
{
	dx_err local;
	if (!err) /* the corpus functions read the code back from err */
		err = &local;
	char ipath[4096];
	dxb_ramdisk *r = NULL;
	dx_index *ix = NULL;
	dx_corpus *c = NULL;
	char *ixdir = NULL, *made = NULL, *dst = NULL, *found = NULL;
	int fd = -1, lock = -1, ok = 0;
	copier cp = { .progress = progress, .ctx = ctx, .next_report = PROGRESS_STEP };

	if (dxb_ramdisk_check(dir, err) < 0)
		goto out;

	/* A corpus path serves as well as its index, as for dx_corpus_open. */
	if (dx_index_path_for(index_path, ipath, sizeof ipath, err) < 0)
		goto out;
	if (!(ix = dx_index_open(ipath, err)))
		goto out;
	if (!(ixdir = dx__dirname(ipath))) {
		dx__fail_nomem(err);
		goto out;
	}
	dx_index_info info;
	dx_index_get_info(ix, &info);
	uint64_t need = info.file_size + SLACK;
	int depth = 0; /* the most "../" a source's path begins with */
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		const char *rest;
		if (dx_index_get_source(ix, i, &si) < 0) {
			dx__fail(err, DX_ECORRUPT, 0, ipath, "no such source");
			goto out;
		}
		int ups = leading_ups(si.path, &rest);
		if (ups < 0) {
			dx__fail(err, DX_EINVAL, 0, si.path,
			         "a source whose path from the index cannot be laid out in a copy");
			goto out;
		}
		if (ups > depth)
			depth = ups;
		/* A missing or changed source is found here, before any copying,
		 * with the error the corpus would give. */
		if (dx_index_check_source(ix, i, err) < 0)
			goto out;
		need += si.size;
	}
	cp.total = need - SLACK;

	/* The copies that runs killed before they could remove them left
	 * (SIGKILL, the OOM killer) go first, and give back their room. */
	dxb_tempdir_sweep(dir, RAMDISK_PREFIX);
	struct statvfs sv;
	if (statvfs(dir, &sv) < 0) {
		dx__fail_sys(err, dir, "cannot read the filesystem");
		goto out;
	}
	uint64_t avail = (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
	if (avail < need) {
		char n1[32], n2[32];
		dx_format_bytes(need, n1, sizeof n1);
		dx_format_bytes(avail, n2, sizeof n2);
		dx__fail(err, DX_ELIMIT, 0, dir, "not enough room on the RAM filesystem: %s needed, %s free",
		         n1, n2);
		goto out;
	}

	/* From here on, failure removes it. */
	size_t msz = strlen(dir) + sizeof RAMDISK_PREFIX + DX_HOST_MAX + 32;
	if (!(made = malloc(msz))) {
		dx__fail_nomem(err);
		goto out;
	}
	if (dxb_tempdir_make(dir, RAMDISK_PREFIX, made, msz, &lock, err) < 0)
		goto out;
	size_t made_len = strlen(made);

	const char *slash = strrchr(ipath, '/');
	const char *base = slash ? slash + 1 : ipath;
	if (!(r = calloc(1, sizeof *r)) || !(r->index = laid_out(made, depth, base))) {
		dx__fail_nomem(err);
		goto out;
	}
	if ((fd = open(ipath, O_RDONLY | O_CLOEXEC)) < 0) {
		dx__fail_sys(err, ipath, "cannot open");
		goto out;
	}
	if (make_parents(r->index, made_len, err) < 0 || copy_file(&cp, fd, ipath, r->index, err) < 0)
		goto out;
	close(fd);
	fd = -1;

	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		(void)dx_index_get_source(ix, i, &si); /* checked above */
		if ((fd = open_source(ixdir, &si, &found, err)) < 0)
			goto out;
		const char *rest = si.path;
		int ups = leading_ups(si.path, &rest); /* checked above */
		if (!(dst = laid_out(made, depth - ups, rest))) {
			dx__fail_nomem(err);
			goto out;
		}
		if (make_parents(dst, made_len, err) < 0 || copy_file(&cp, fd, found, dst, err) < 0)
			goto out;
		close(fd);
		fd = -1;
		free(found);
		free(dst);
		found = dst = NULL;
	}
	/* At least one call, at the end, whatever the size. */
	if (report(&cp, 1, ipath, err) < 0)
		goto out;

	/* The copy must serve by itself: its index opens, every source passes
	 * the corpus's checks, and none was found outside the copy (through
	 * the absolute path that points back at the original). */
	if (!(c = dx_corpus_open(r->index, err)))
		goto out;
	for (uint32_t i = 0; i < info.sources; i++) {
		const char *p = dx__corpus_source_path(c, i);
		if (!p || !is_under(p, made)) {
			dx__fail(err, DX_ESYS, ENOENT, p ? p : "", "the copied index does not serve the copied files");
			goto out;
		}
	}
	r->dir = made;
	r->lock = lock;
	r->bytes = cp.done;
	made = NULL;
	lock = -1;
	ok = 1;
out:
	if (fd >= 0)
		close(fd);
	dx_corpus_close(c);
	dx_index_close(ix);
	if (made)
		dxb_tempdir_remove(made, lock);
	free(made);
	free(dst);
	free(found);
	free(ixdir);
	free(cp.buf);
	if (!ok && r) {
		free(r->index);
		free(r);
		r = NULL;
	}
	return r;
}

const char *dxb_ramdisk_index(const dxb_ramdisk *r)
{
	return r->index;
}

const char *dxb_ramdisk_dir(const dxb_ramdisk *r)
{
	return r->dir;
}

uint64_t dxb_ramdisk_bytes(const dxb_ramdisk *r)
{
	return r->bytes;
}

void dxb_ramdisk_remove(dxb_ramdisk *r)
{
	if (!r)
		return;
	dxb_tempdir_remove(r->dir, r->lock);
	free(r->dir);
	free(r->index);
	free(r);
}
