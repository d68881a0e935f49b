/* atomic_file.c: see atomic_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "err.h"
#include "fileutil.h"

/* A name beside the target that no other writer picks: ".NAME.tmp.PID.N". */
static char *temp_name(const char *path, unsigned attempt)
{
	char *dir = dx__dirname(path);
	if (!dir)
		return NULL;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(dir) + strlen(base) + 64;
	char *t = malloc(n);
	if (t)
		snprintf(t, n, "%s/.%s.tmp.%ld.%u", dir, base, (long)getpid(), attempt);
	free(dir);
	return t;
}

int dx__atomic_open(dx_atomic *a, const char *path, dx_err *err)
{
	a->fd = -1;
	a->tmp = NULL;
	a->path = strdup(path);
	if (!a->path)
		return dx__fail_nomem(err);
	char *dir = dx__dirname(path);
	if (!dir)
		return dx__fail_nomem(err);
#ifdef O_TMPFILE
	a->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#endif
	int saved = errno;
	free(dir);
	if (a->fd >= 0)
		return 0;
	/* Without O_TMPFILE (or on a filesystem that refuses it), a named file. */
	if (saved == ENOENT || saved == EACCES || saved == EROFS || saved == ENOTDIR) {
		errno = saved;
		return dx__fail_sys(err, path, "cannot create");
	}
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	for (unsigned i = 0; i < 100; i++) {
		free(a->tmp);
		a->tmp = temp_name(path, seed + i);
		if (!a->tmp)
			return dx__fail_nomem(err);
		a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (a->fd >= 0 || errno != EEXIST)
			break;
	}
	if (a->fd < 0) {
		int e = errno;
		free(a->tmp);
		a->tmp = NULL;
		errno = e;
		return dx__fail_sys(err, path, "cannot create");
	}
	return 0;
}

int dx__atomic_write(dx_atomic *a, const void *p, size_t n, dx_err *err)
{
	if (dx__write_full(a->fd, p, n) < 0)
		return dx__fail_sys(err, a->path, "cannot write");
	return 0;
}

int dx__atomic_commit(dx_atomic *a, dx_err *err)
{
	if (fsync(a->fd) < 0)
		return dx__fail_sys(err, a->path, "cannot write");
	if (!a->tmp) {
		/* Give the unnamed file a temporary name, then rename it: linkat
		 * cannot replace an existing file. */
		char proc[64];
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", a->fd);
		unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
		for (unsigned i = 0; i < 100; i++) {
			a->tmp = temp_name(a->path, seed + i);
			if (!a->tmp)
				return dx__fail_nomem(err);
			if (linkat(AT_FDCWD, proc, AT_FDCWD, a->tmp, AT_SYMLINK_FOLLOW) == 0)
				break;
			int e = errno;
			free(a->tmp);
			a->tmp = NULL;
			if (e != EEXIST) {
				errno = e;
				return dx__fail_sys(err, a->path, "cannot create");
			}
		}
		if (!a->tmp)
			return dx__fail(err, DX_ESYS, EEXIST, a->path, "cannot create");
	}
	if (rename(a->tmp, a->path) < 0)
		return dx__fail_sys(err, a->path, "cannot replace");
	free(a->tmp);
	a->tmp = NULL;
	/* Make the rename itself durable. */
	char *dir = dx__dirname(a->path);
	int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	close(a->fd);
	a->fd = -1;
	free(a->path);
	a->path = NULL;
	return 0;
}

void dx__atomic_abort(dx_atomic *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->tmp)
		unlink(a->tmp);
	free(a->tmp);
	free(a->path);
	a->tmp = a->path = NULL;
}

/* The public face of the same, for the files the command line writes. */
struct dx_output {
	dx_atomic a;
};

dx_output *dx_output_open(const char *path, dx_err *err)
{
	dx_output *f = malloc(sizeof *f);
	if (!f) {
		dx__fail_nomem(err);
		return NULL;
	}
	if (dx__atomic_open(&f->a, path, err) < 0) {
		dx_output_abort(f);
		return NULL;
	}
	return f;
}

int dx_output_fd(const dx_output *f)
{
	return f->a.fd;
}

int dx_output_commit(dx_output *f, dx_err *err)
{
	int r = dx__atomic_commit(&f->a, err);
	dx_output_abort(f);
	return r;
}

void dx_output_abort(dx_output *f)
{
	if (!f)
		return;
	dx__atomic_abort(&f->a);
	free(f);
}
