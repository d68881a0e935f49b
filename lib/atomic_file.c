/* atomic_file.c: see atomic_file.h. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "err.h"
#include "fileutil.h"

/* A temporary name beside the target, ".NAME.tmp.HOST.PID.N", that no
 * other writer picks, and that says who made it: a writer killed between
 * naming its file and renaming it leaves the file behind, and a later one
 * removes it once the process that made it is gone (sweep_stale). */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static char *temp_name(const char *path, unsigned attempt)
{
	char *dir = dx__dirname(path);
	if (!dir)
		return NULL;
	char host[DX_HOST_MAX];
	dx__host_name(host, sizeof host);
	size_t n = strlen(dir) + strlen(base_name(path)) + sizeof host + 64;
	char *t = malloc(n);
	if (t)
		snprintf(t, n, "%s/.%s.tmp.%s.%ld.%u", dir, base_name(path), host, (long)getpid(),
		         attempt);
	free(dir);
	return t;
}

/* Removes the temporary files of path that processes of this host, now
 * gone, left.  Another host's are left alone: its process ids mean nothing
 * here.  Best effort: what cannot be removed stays, harmless. */
static void sweep_stale(const char *path)
{
	char *dir = dx__dirname(path);
	DIR *d = dir ? opendir(dir) : NULL;
	char host[DX_HOST_MAX];
	dx__host_name(host, sizeof host);
	const char *base = base_name(path);
	size_t blen = strlen(base), hlen = strlen(host);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		/* "." base ".tmp." host "." pid "." n */
		const char *p = e->d_name;
		if (p[0] != '.' || strncmp(p + 1, base, blen) != 0 || strncmp(p + 1 + blen, ".tmp.", 5) != 0)
			continue;
		p += 1 + blen + 5;
		if (strncmp(p, host, hlen) != 0 || p[hlen] != '.')
			continue;
		/* Exactly PID.N after the host, so that a longer host name that
		 * starts with ours ("host.5") is not taken for ours. */
		char *end, *last;
		errno = 0;
		long pid = strtol(p + hlen + 1, &end, 10);
		if (errno || pid <= 0 || *end != '.' || pid == (long)getpid())
			continue;
		(void)strtoul(end + 1, &last, 10);
		if (last == end + 1 || *last != '\0')
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	if (d)
		closedir(d);
	free(dir);
}

/*
 * What is at the target already decides how it is written.  A regular file
 * is replaced by rename; through a symbolic link, the file it points to is
 * (the link stays).  A character device or a FIFO (/dev/null, a named
 * pipe), and a descriptor named as /dev/stdout, /dev/fd/N or
 * /proc/self/fd/N (or through a link to one), are written through, as a
 * shell's ">" would: renaming over it would replace the device itself.  A
 * directory, a block device and a link to nothing are refused.  Sets
 * a->path, or a->through.
 */
/* The descriptor a name spells (/dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N), or -1. */
static int fd_spelled(const char *name)
{
	if (strcmp(name, "/dev/stdout") == 0)
		return 1;
	if (strcmp(name, "/dev/stderr") == 0)
		return 2;
	const char *num = strncmp(name, "/dev/fd/", 8) == 0 ? name + 8
	                : strncmp(name, "/proc/self/fd/", 14) == 0 ? name + 14 : NULL;
	char *end;
	long fd = num && *num ? strtol(num, &end, 10) : -1;
	return fd >= 0 && fd <= INT_MAX && *end == '\0' ? (int)fd : -1;
}

/* The descriptor a path names, itself or as a link to one of those names,
 * or -1.  The name is read before the link: /dev/fd/N's own link leads to
 * the file behind the descriptor, whose name is no descriptor's. */
static int named_fd(const char *path)
{
	int fd = fd_spelled(path);
	if (fd >= 0)
		return fd;
	char target[64];
	ssize_t n = readlink(path, target, sizeof target - 1);
	if (n <= 0)
		return -1;
	target[n] = '\0';
	return fd_spelled(target);
}

int dx__atomic_replaces(const char *path)
{
	struct stat st;
	int nfd = named_fd(path);
	if (nfd >= 0 && fcntl(nfd, F_GETFD) >= 0)
		return 0;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int resolve_target(dx_atomic *a, const char *path, dx_err *err)
{
	struct stat l, st;
	/* A descriptor of ours by name: written through it, as the shell's
	 * "> /dev/stdout" would, its offset and append mode shared; renaming
	 * a file over what it names would lose a ">>" log, say. */
	int nfd = named_fd(path);
	if (nfd >= 0 && fcntl(nfd, F_GETFD) >= 0) {
		if ((a->fd = fcntl(nfd, F_DUPFD_CLOEXEC, 3)) < 0)
			return dx__fail_sys(err, path, "cannot write");
		a->through = 1;
		a->path = strdup(path);
		return a->path ? 0 : dx__fail_nomem(err);
	}
	if (lstat(path, &l) < 0) {
		if (errno != ENOENT)
			return dx__fail_sys(err, path, "cannot create");
		a->path = strdup(path);
		return a->path ? 0 : dx__fail_nomem(err);
	}
	if (stat(path, &st) < 0)
		return dx__fail_sys(err, path, errno == ENOENT ? "a symbolic link to nothing, not written"
		                                               : "cannot create");
	if (S_ISDIR(st.st_mode))
		return dx__fail(err, DX_ESYS, EISDIR, path, "cannot create");
	if (S_ISBLK(st.st_mode))
		return dx__fail(err, DX_EINVAL, 0, path, "a block device, not written over");
	if (!S_ISREG(st.st_mode)) {
		a->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (a->fd < 0)
			return dx__fail_sys(err, path, "cannot write");
		a->through = 1;
		a->path = strdup(path);
		return a->path ? 0 : dx__fail_nomem(err);
	}
	a->path = S_ISLNK(l.st_mode) ? realpath(path, NULL) : strdup(path);
	return a->path ? 0 : errno == ENOMEM ? dx__fail_nomem(err) : dx__fail_sys(err, path, "cannot resolve");
}

int dx__atomic_open(dx_atomic *a, const char *path, dx_err *err)
{
	a->fd = -1;
	a->tmp = NULL;
	a->path = NULL;
	a->through = 0;
	int rc = resolve_target(a, path, err);
	if (rc < 0 || a->through)
		return rc;
	path = a->path;
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

/* Gives the unnamed file the name to, which must not exist (linkat cannot
 * replace a file).  Returns 0, or -1 with errno. */
static int link_tmpfile(int fd, const char *to)
{
	char proc[64];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, AT_FDCWD, to, AT_SYMLINK_FOLLOW);
}

int dx__atomic_commit(dx_atomic *a, dx_err *err)
{
	if (a->through) {
		int fd = a->fd;
		a->fd = -1;
		if (close(fd) < 0)
			return dx__fail_sys(err, a->path, "cannot write");
		return 0;
	}
	if (fsync(a->fd) < 0)
		return dx__fail_sys(err, a->path, "cannot write");
	int linked = 0;
	if (!a->tmp) {
		/* No file there yet: the unnamed file takes the target's name in
		 * one step, and a process killed at any moment leaves no name. */
		if (link_tmpfile(a->fd, a->path) == 0)
			linked = 1;
		else if (errno != EEXIST)
			return dx__fail_sys(err, a->path, "cannot create");
		/* Else a temporary name, renamed over the target. */
		unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
		for (unsigned i = 0; !linked && i < 100; i++) {
			a->tmp = temp_name(a->path, seed + i);
			if (!a->tmp)
				return dx__fail_nomem(err);
			if (link_tmpfile(a->fd, a->tmp) == 0)
				break;
			int e = errno;
			free(a->tmp);
			a->tmp = NULL;
			if (e != EEXIST) {
				errno = e;
				return dx__fail_sys(err, a->path, "cannot create");
			}
		}
		if (!linked && !a->tmp)
			return dx__fail(err, DX_ESYS, EEXIST, a->path, "cannot create");
	}
	if (!linked && rename(a->tmp, a->path) < 0)
		return dx__fail_sys(err, a->path, "cannot replace");
	free(a->tmp);
	a->tmp = NULL;
	/* Make the new name durable. */
	char *dir = dx__dirname(a->path);
	int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	sweep_stale(a->path);
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
