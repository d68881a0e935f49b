/*
 * fuzz.c: the harnesses' files, in a temporary directory of their own.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char dir[256];
static char path[512];

static void remove_dir(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz: cannot remove %s\n", dir);
}

const char *fuzz_path(const char *name)
{
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/docdex-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return path;
}

const char *fuzz_file(const char *name, const void *data, size_t size)
{
	const char *p = fuzz_path(name);
	/* A new file each time: the library may still map the last one. */
	unlink(p);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *c = data;
	if (fd < 0)
		abort();
	while (size) {
		ssize_t n = write(fd, c, size);
		if (n <= 0)
			abort();
		c += n;
		size -= (size_t)n;
	}
	if (close(fd) < 0)
		abort();
	return p;
}
