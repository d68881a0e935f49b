/*
 * tempdir.c: temporary directories that name their maker,
 * PREFIX.HOST.PID.XXXXXX, and the sweep of those whose maker is gone (the
 * RAM disk copies, a benchmark's generated corpus).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dxbench.h"
#include "err.h"
#include "fileutil.h"

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	/* Best effort: an entry that cannot be removed must not stop the
	 * removal of the others. */
	remove(p);
	return 0;
}

/* Removes dir and everything under it, depth first, following no link. */
static void remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- directories that name their maker ---------------------------------
 *
 * PREFIX.HOST.PID.XXXXXX: a process killed before it could remove what it
 * made (SIGKILL, the OOM killer) leaves the directory, a whole corpus on a
 * RAM disk perhaps, and a later process of the same host removes it once
 * the process that made it is gone, as the core does for temporary index
 * names (atomic_file.c).  The process id alone would not be enough where processes
 * of another pid namespace share the host name and the directory (a
 * container): the maker also holds a lock (flock) on the directory as
 * long as it lives, which every process sees, and a held lock is never
 * swept. */

int dxb_tempdir_make(const char *parent, const char *prefix, char *out, size_t outsz, int *lock,
                     dx_err *err)
{
	char host[DX_HOST_MAX];
	dx__host_name(host, sizeof host);
	*lock = -1;
	int n = snprintf(out, outsz, "%s%s%s.%s.%ld.XXXXXX", parent,
	                 parent[0] && parent[strlen(parent) - 1] == '/' ? "" : "/", prefix, host,
	                 (long)getpid());
	if (n < 0 || (size_t)n >= outsz) {
		if (outsz)
			out[0] = '\0';
		return dx__fail(err, DX_ELIMIT, 0, parent, "directory name too long");
	}
	if (!mkdtemp(out)) {
		int rc = dx__fail_sys(err, parent, "cannot make a temporary directory");
		out[0] = '\0';
		return rc;
	}
	int fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int rc = dx__fail_sys(err, out, "cannot lock the temporary directory");
		if (fd >= 0)
			close(fd);
		rmdir(out);
		out[0] = '\0';
		return rc;
	}
	*lock = fd;
	return 0;
}

void dxb_tempdir_remove(const char *dir, int lock)
{
	if (dir && dir[0])
		remove_tree(dir);
	if (lock >= 0)
		close(lock);
}

/* The process id in name when it is PREFIX.HOST.PID.XXXXXX with this host
 * (exactly: a longer host name that starts with ours is another host), or
 * 0.  mkdtemp's six characters are letters and digits. */
static long owner_of(const char *name, const char *prefix, const char *host)
{
	size_t pl = strlen(prefix), hl = strlen(host);
	if (strncmp(name, prefix, pl) != 0 || name[pl] != '.' ||
	    strncmp(name + pl + 1, host, hl) != 0 || name[pl + 1 + hl] != '.')
		return 0;
	const char *p = name + pl + 1 + hl + 1;
	long pid = 0;
	size_t digits = 0;
	for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++)
		pid = pid * 10 + (*p - '0');
	if (!digits || pid > INT_MAX || *p != '.' || strlen(p + 1) != 6)
		return 0;
	for (const char *q = p + 1; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
			return 0;
	return pid;
}

void dxb_tempdir_sweep(const char *parent, const char *prefix)
{
	DIR *d = opendir(parent);
	char host[DX_HOST_MAX];
	dx__host_name(host, sizeof host);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		long pid = owner_of(e->d_name, prefix, host);
		struct stat st;
		/* Our own, and those of a live process (EPERM: another user's,
		 * alive), stay; a process id taken again by another process
		 * keeps the directory too, which is the safe side. */
		if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* Only a directory of this user's: one that another user made in
		 * a shared directory (/tmp) to look like ours is not ours to walk
		 * into, nor to remove; ours are made 0700, so nothing in them is
		 * another's.  And none that a live process we cannot see holds
		 * (another pid namespace). */
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0) {
			char *path = dx__path_join(parent, e->d_name);
			if (path)
				remove_tree(path);
			free(path);
		}
		close(fd);
	}
	if (d)
		closedir(d);
}
