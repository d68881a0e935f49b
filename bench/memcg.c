/*
 * memcg.c: a memory cgroup with a limit, for benchmark workers (memcg.h).
 *
 * The files used are the kernel's (Documentation/admin-guide/cgroup-v1/
 * memory.rst and cgroup-v2.rst): v1 memory.limit_in_bytes,
 * memory.memsw.limit_in_bytes, memory.oom_control's oom_kill and
 * memory.max_usage_in_bytes; v2 memory.max, memory.swap.max,
 * memory.events' oom_kill and memory.peak.  Writing 0 to cgroup.procs
 * moves the writer, in both.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "fileutil.h"
#include "memcg.h"

struct dxb_memcg {
	char dir[PATH_MAX + 64];
	int v2;
};

/* Where this process's memory cgroup is: the directory of its group in the
 * mounted hierarchy, and whether it is v2. */
typedef struct place {
	char mount[PATH_MAX];     /* the hierarchy's mount point */
	char own[PATH_MAX];       /* this process's group in it */
	int v2;
} place;

static int has_word(const char *list, const char *word, const char *seps)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, seps);
		if (len == n && strncmp(p, word, n) == 0)
			return 1;
		p += len;
		p += *p != '\0';
	}
	return 0;
}

/* The mount of cgroup v1's memory controller (v2 = 0) or of cgroup2
 * (v2 = 1), from /proc/self/mountinfo: its mount point and the path within
 * the hierarchy that it shows (not "/" inside some containers). */
static int find_mount(int v2, char *mount, char *root)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		char r[PATH_MAX], m[PATH_MAX], type[64], super[1024];
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", type, super) != 2)
			continue;
		if (v2 ? strcmp(type, "cgroup2") == 0
		       : strcmp(type, "cgroup") == 0 && has_word(super, "memory", ",")) {
			snprintf(mount, PATH_MAX, "%s", m);
			snprintf(root, PATH_MAX, "%s", r);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

/* This process's group in that hierarchy, from /proc/self/cgroup: the line
 * naming the memory controller (v1) or the line "0::PATH" (v2). */
static int find_own(int v2, const char *mount, const char *root, char *own)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctrls = c1 + 1, *path = c2 + 1;
		if (v2 ? strcmp(line, "0") == 0 && *ctrls == '\0' : has_word(ctrls, "memory", ",")) {
			size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
			if (rl && strncmp(path, root, rl) == 0)
				path += rl;
			snprintf(own, PATH_MAX, "%s%s", mount, path);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

static int read_text(const char *path, char *buf, size_t bufsz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	ssize_t n = 0;
	while (len < bufsz - 1 && ((n = read(fd, buf + len, bufsz - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	int e = errno;
	close(fd);
	buf[len] = '\0';
	errno = e;
	return n < 0 ? -1 : 0;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = dx__write_full(fd, text, strlen(text));
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

/* The directory a new group goes in: this process's own under v1; under
 * v2 the nearest group, this one or above, that hands the memory
 * controller to its children (a v2 group with processes cannot). */
static int find_parent(place *pl, dx_err *err)
{
	char root[PATH_MAX];
	if (find_mount(0, pl->mount, root) && find_own(0, pl->mount, root, pl->own))
		pl->v2 = 0;
	else if (find_mount(1, pl->mount, root) && find_own(1, pl->mount, root, pl->own))
		pl->v2 = 1;
	else
		return dx__fail(err, DX_ESYS, ENOENT, "", "no cgroup memory controller is mounted");
	if (pl->v2) {
		char sub[PATH_MAX + 32], text[1024];
		for (;;) {
			snprintf(sub, sizeof sub, "%s/cgroup.subtree_control", pl->own);
			if (read_text(sub, text, sizeof text) == 0 && has_word(text, "memory", " \n"))
				break;
			if (strlen(pl->own) <= strlen(pl->mount))
				return dx__fail(err, DX_ESYS, ENOTSUP, pl->own,
				                "cgroup v2 hands the memory controller to no group above this process");
			*strrchr(pl->own, '/') = '\0';
		}
	}
	if (access(pl->own, W_OK) < 0)
		return dx__fail_sys(err, pl->own, "cannot make a memory cgroup in");
	return 0;
}

const char *dxb_memcg_possible(dx_err *err)
{
	place pl;
	if (find_parent(&pl, err) < 0)
		return NULL;
	return pl.v2 ? "cgroup v2" : "cgroup v1";
}

/* Removes the groups of commands that were killed before they could
 * (docdex-bench.PID.N with no process PID left); rmdir fails, harmlessly,
 * on a group that still holds a process. */
static void sweep(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		int pid;
		unsigned n;
		char end;
		if (sscanf(e->d_name, "docdex-bench.%d.%u%c", &pid, &n, &end) != 2 || pid <= 0 ||
		    pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char path[PATH_MAX + 256];
		snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
		rmdir(path);
	}
	closedir(d);
}

static int set(const dxb_memcg *g, const char *file, const char *value, dx_err *err)
{
	char path[PATH_MAX + 128];
	snprintf(path, sizeof path, "%s/%s", g->dir, file);
	if (write_text(path, value) < 0)
		return dx__fail_sys(err, path, "cannot set the memory cgroup's limit");
	return 0;
}

static int exists(const dxb_memcg *g, const char *file)
{
	char path[PATH_MAX + 128];
	snprintf(path, sizeof path, "%s/%s", g->dir, file);
	return access(path, F_OK) == 0;
}

dxb_memcg *dxb_memcg_new(uint64_t limit, dx_err *err)
{
	static unsigned seq;
	place pl;
	char value[32];
	if (find_parent(&pl, err) < 0)
		return NULL;
	sweep(pl.own);
	dxb_memcg *g = calloc(1, sizeof *g);
	if (!g) {
		dx__fail_nomem(err);
		return NULL;
	}
	g->v2 = pl.v2;
	snprintf(g->dir, sizeof g->dir, "%s/docdex-bench.%d.%u", pl.own, (int)getpid(), seq++);
	if (mkdir(g->dir, 0755) < 0) {
		dx__fail_sys(err, g->dir, "cannot make a memory cgroup");
		free(g);
		return NULL;
	}
	snprintf(value, sizeof value, "%llu", (unsigned long long)limit);
	int rc;
	if (g->v2) {
		rc = set(g, "memory.max", value, err);
		if (rc == 0 && exists(g, "memory.swap.max"))
			rc = set(g, "memory.swap.max", "0", err);
	} else {
		rc = set(g, "memory.limit_in_bytes", value, err);
		/* Memory and swap together, set after the memory alone (the
		 * kernel wants memsw >= memory). */
		if (rc == 0 && exists(g, "memory.memsw.limit_in_bytes"))
			rc = set(g, "memory.memsw.limit_in_bytes", value, err);
		if (rc == 0)
			set(g, "memory.swappiness", "0", NULL); /* not everywhere settable */
	}
	if (rc < 0) {
		dxb_memcg_free(g);
		return NULL;
	}
	return g;
}

int dxb_memcg_enter(const dxb_memcg *g, dx_err *err)
{
	char path[PATH_MAX + 128];
	snprintf(path, sizeof path, "%s/cgroup.procs", g->dir);
	if (write_text(path, "0") < 0)
		return dx__fail_sys(err, path, "cannot join the memory cgroup");
	return 0;
}

/* The number after "key " in a file of "key value" lines; 0 if absent. */
static uint64_t read_key(const dxb_memcg *g, const char *file, const char *key)
{
	char path[PATH_MAX + 128], text[4096];
	snprintf(path, sizeof path, "%s/%s", g->dir, file);
	if (read_text(path, text, sizeof text) < 0)
		return 0;
	size_t n = strlen(key);
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, key, n) == 0 && line[n] == ' ')
			return strtoull(line + n + 1, NULL, 10);
	return 0;
}

uint64_t dxb_memcg_oom_kills(const dxb_memcg *g)
{
	return read_key(g, g->v2 ? "memory.events" : "memory.oom_control", "oom_kill");
}

uint64_t dxb_memcg_peak(const dxb_memcg *g)
{
	char path[PATH_MAX + 128], text[64];
	snprintf(path, sizeof path, "%s/%s", g->dir, g->v2 ? "memory.peak" : "memory.max_usage_in_bytes");
	return read_text(path, text, sizeof text) == 0 ? strtoull(text, NULL, 10) : 0;
}

void dxb_memcg_free(dxb_memcg *g)
{
	if (!g)
		return;
	char path[PATH_MAX + 128], text[4096];
	snprintf(path, sizeof path, "%s/cgroup.procs", g->dir);
	/* The workers are reaped before this; what is left is killed, and the
	 * kernel may take a moment to let the group go. */
	for (int tries = 0; tries < 200; tries++) {
		if (read_text(path, text, sizeof text) == 0)
			for (char *p = text; *p;) {
				char *end;
				long pid = strtol(p, &end, 10);
				if (end == p)
					break;
				if (pid > 0)
					kill((pid_t)pid, SIGKILL);
				p = end;
			}
		if (rmdir(g->dir) == 0 || errno == ENOENT)
			break;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	free(g);
}
