/* fileutil.c: see fileutil.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* pread until n bytes are read or the file ends: the count read, or -1
 * with errno. */
static ssize_t pread_upto(int fd, void *buf, size_t n, uint64_t off)
{
	char *p = buf;
	size_t done = 0;
	while (done < n) {
		ssize_t r = pread(fd, p + done, n - done, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

int dx__pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t r = pread_upto(fd, buf, n, off);
	if (r < 0)
		return -1;
	if ((size_t)r < n) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int dx__pread_source(int fd, const char *path, void *buf, size_t n, uint64_t off, dx_err *err)
{
	ssize_t r = pread_upto(fd, buf, n, off);
	if (r < 0)
		return dx__fail_sys(err, path, "cannot read");
	if ((size_t)r < n)
		return dx__fail(err, DX_ESTALE, 0, path,
		                "corpus file shorter than when it was opened, it was changed while in use");
	return 0;
}

void *dx__map_file(int fd, size_t size)
{
	const size_t huge = (size_t)2 << 20;
	if (size < huge || size > SIZE_MAX - huge)
		return mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	/* Address space reserved with room to align in, the file mapped over
	 * its aligned part, and what is left on either side given back. */
	char *r = mmap(NULL, size + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return MAP_FAILED;
	char *a = (char *)(((uintptr_t)r + huge - 1) & ~(uintptr_t)(huge - 1));
	void *m = mmap(a, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		munmap(r, size + huge);
		errno = e;
		return MAP_FAILED;
	}
	/* The reservation ends a page-rounded size past r + huge. */
	size_t page = (size_t)sysconf(_SC_PAGESIZE), whole = (size + page - 1) / page * page;
	if (a > r)
		munmap(r, (size_t)(a - r));
	munmap(a + whole, (size_t)(r + huge - a));
	return m;
}

int dx__map_resident(const void *map, uint64_t off)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t mask = page > 0 ? (uint64_t)page - 1 : 4095;
	unsigned char in = 0;
	return mincore((void *)((uintptr_t)map + (off & ~mask)), 1, &in) == 0 && (in & 1);
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

void dx__host_name(char *out, size_t n)
{
	if (gethostname(out, n) < 0)
		out[0] = '\0';
	out[n - 1] = '\0';
	for (char *p = out; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '.'))
			*p = '_';
}

int dx__refuse_compressed_bytes(const void *head, size_t n, const char *path, dx_err *err)
{
	/* Magic numbers: xz and zstd (their formats' specifications), bzip2
	 * ("BZh", the block size, then a block's or the end's magic), lz4's
	 * frame, zip, 7-Zip and compress(1). */
	static const struct {
		const char *name, *magic;
		size_t len;
		const char *undo;
	} kinds[] = {
		{ "xz", "\xfd" "7zXZ\0", 6, "xz -d" },
		{ "zstd", "\x28\xb5\x2f\xfd", 4, "zstd -d" },
		{ "lz4", "\x04\x22\x4d\x18", 4, "lz4 -d" },
		{ "zip", "PK\x03\x04", 4, "unzip" },
		{ "7-Zip", "7z\xbc\xaf\x27\x1c", 6, "7z x" },
		{ "compress", "\x1f\x9d", 2, "uncompress" },
	};
	const unsigned char *h = head;
	const char *name = NULL, *undo = NULL;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !name; i++)
		if (n >= kinds[i].len && memcmp(h, kinds[i].magic, kinds[i].len) == 0)
			name = kinds[i].name, undo = kinds[i].undo;
	if (!name && n >= DX_MAGIC_MAX && memcmp(h, "BZh", 3) == 0 && h[3] >= '1' &&
	    h[3] <= '9' &&
	    (memcmp(h + 4, "\x31\x41\x59\x26\x53\x59", 6) == 0 ||
	     memcmp(h + 4, "\x17\x72\x45\x38\x50\x90", 6) == 0))
		name = "bzip2", undo = "bzip2 -d";
	if (!name)
		return 0;
	return dx__fail(err, DX_EFORMAT, 0, path,
	                "compressed with %s, which docdex does not read: decompress it (%s) or "
	                "recompress it with gzip or bgzip", name, undo);
}

int dx__refuse_compressed(int fd, const char *path, dx_err *err)
{
	unsigned char h[DX_MAGIC_MAX];
	ssize_t n = pread(fd, h, sizeof h, 0);
	if (n <= 0)
		return 0; /* empty, or not seekable (a pipe): the reader tells */
	return dx__refuse_compressed_bytes(h, (size_t)n, path, err);
}
