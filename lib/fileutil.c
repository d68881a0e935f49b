/* fileutil.c: see fileutil.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fileutil.h"
#include "hash.h"

char *dx__dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

char *dx__path_join(const char *dir, const char *rel)
{
	if (rel[0] == '/' || strcmp(dir, ".") == 0)
		return strdup(rel);
	size_t dl = strlen(dir), rl = strlen(rel);
	char *p = malloc(dl + rl + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	size_t at = dl;
	if (dl && dir[dl - 1] != '/')
		p[at++] = '/';
	memcpy(p + at, rel, rl + 1);
	return p;
}

/* The next path component after *p (skipping slashes): its start and length. */
static const char *component(const char **p, size_t *len)
{
	const char *s = *p;
	while (*s == '/')
		s++;
	const char *e = s;
	while (*e && *e != '/')
		e++;
	*p = e;
	*len = (size_t)(e - s);
	return s;
}

char *dx__relative_path(const char *from, const char *to)
{
	/* Skip the components both paths share. */
	const char *f = from, *t = to;
	for (;;) {
		const char *fs = f, *ts = t;
		size_t fl, tl;
		const char *fc = component(&fs, &fl), *tc = component(&ts, &tl);
		if (fl == 0 || fl != tl || memcmp(fc, tc, fl) != 0)
			break;
		f = fs;
		t = ts;
	}
	size_t ups = 0, len;
	for (const char *p = f; component(&p, &len), len;)
		ups++;
	while (*t == '/')
		t++;
	size_t rl = strlen(t);
	char *out = malloc(ups * 3 + rl + 2);
	if (!out)
		return NULL;
	char *q = out;
	for (size_t k = 0; k < ups; k++, q += 3)
		memcpy(q, "../", 3);
	memcpy(q, t, rl + 1);
	if (rl == 0)
		strcpy(ups ? q - 1 : q, ups ? "" : ".");
	return out;
}

int dx__pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	char *p = buf;
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int dx__write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t r = write(fd, p, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int dx__fingerprint(int fd, uint64_t size, uint64_t *out, const char *path, dx_err *err)
{
	enum { WHOLE = 1 << 20, BLOCK = 4096, BLOCKS = 64 };
	char *buf = malloc(size <= WHOLE ? (size ? size : 1) : BLOCK);
	if (!buf)
		return dx__fail_nomem(err);
	uint64_t h = dx__hash64(&size, sizeof size, 0);
	int rc = 0;
	if (size <= WHOLE) {
		if (dx__pread_full(fd, buf, size, 0) < 0)
			rc = dx__fail_sys(err, path, "cannot read");
		else
			h = dx__hash64(buf, size, h);
	} else {
		for (uint64_t i = 0; i < BLOCKS && rc == 0; i++) {
			/* From offset 0 to size - BLOCK exactly: the last block ends the file. */
			uint64_t off = (uint64_t)((unsigned __int128)(size - BLOCK) * i / (BLOCKS - 1));
			if (dx__pread_full(fd, buf, BLOCK, off) < 0)
				rc = dx__fail_sys(err, path, "cannot read");
			else
				h = dx__hash64(buf, BLOCK, h);
		}
	}
	free(buf);
	*out = h;
	return rc;
}
