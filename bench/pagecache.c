/*
 * pagecache.c: how much of a file is in the page cache, and asking the
 * kernel to drop it, so that a benchmark can start cold or tell whether it
 * started warm.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dxbench.h"
#include "corpus.h"
#include "err.h"
#include "index.h"

/* Pages asked about per mincore call: bounds the vector for a large file. */
enum { VEC_PAGES = 1 << 16 };

int dxb_cache_evict(const char *path, dx_err *err)
{
	/* O_NONBLOCK: a FIFO given by mistake must not block the open; it is
	 * refused by posix_fadvise (ESPIPE) instead. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return dx__fail_sys(err, path, "cannot open");
	int rc = 0;
	/* Dirty pages are not dropped, only queued for writing back: a file
	 * just written (a corpus just generated) is written back first. */
	if (fdatasync(fd) < 0 && errno != EINVAL && errno != EROFS) {
		rc = dx__fail_sys(err, path, "cannot write back to disk");
		close(fd);
		return rc;
	}
	int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (e != 0) /* returns the error instead of setting errno */
		rc = dx__fail(err, DX_ESYS, e, path, "cannot drop from the page cache");
	close(fd);
	return rc;
}

/* The bytes of the file at path in the page cache (whole pages, the last
 * one counted as the file's tail), and the file's size. */
static int count_resident(const char *path, uint64_t *in_cache, uint64_t *size, dx_err *err)
{
	int rc = 0;
	void *map = MAP_FAILED;
	size_t len = 0;
	unsigned char *vec = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return dx__fail_sys(err, path, "cannot open");
	if (fstat(fd, &st) < 0) {
		rc = dx__fail_sys(err, path, "cannot open");
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = dx__fail(err, DX_ESYS, EINVAL, path, "not a regular file");
		goto out;
	}
	*size = (uint64_t)st.st_size;
	*in_cache = 0;
	if (st.st_size == 0)
		goto out;
	if ((uint64_t)st.st_size > SIZE_MAX) {
		rc = dx__fail(err, DX_ESYS, EFBIG, path, "too large to map");
		goto out;
	}
	len = (size_t)st.st_size;
	/* A shared mapping sees the file's pages in the page cache.  It is
	 * never read: a touched page would be brought in and counted. */
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		rc = dx__fail_sys(err, path, "cannot map");
		goto out;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = len / page + (len % page != 0);
	size_t chunk = pages < VEC_PAGES ? pages : VEC_PAGES;
	if (!(vec = malloc(chunk))) {
		rc = dx__fail_nomem(err);
		goto out;
	}
	for (size_t first = 0; first < pages; first += chunk) {
		size_t n = pages - first < chunk ? pages - first : chunk;
		if (mincore((char *)map + first * page, n * page, vec) < 0) {
			rc = dx__fail_sys(err, path, "cannot tell what is in the page cache");
			goto out;
		}
		/* Bit 0 is residency; the other bits are reserved. */
		for (size_t i = 0; i < n; i++)
			if (vec[i] & 1)
				*in_cache += first + i + 1 < pages ? page : len - (first + i) * page;
	}
out:
	free(vec);
	if (map != MAP_FAILED)
		munmap(map, len);
	close(fd);
	return rc;
}

int dxb_cache_resident(const char *path, double *fraction, dx_err *err)
{
	uint64_t in_cache, size;
	int rc = count_resident(path, &in_cache, &size, err);
	if (rc == 0) /* an empty file has nothing missing from the cache */
		*fraction = size ? (double)in_cache / (double)size : 1;
	return rc;
}

/* The corpus's files, the index first: NULL past the last. */
static const char *corpus_file(dx_corpus *c, uint32_t i)
{
	return i == 0 ? dx__index_path(dx_corpus_index(c)) : dx__corpus_source_path(c, i - 1);
}

int dxb_corpus_cache_evict(dx_corpus *c, dx_err *err)
{
	const char *path;
	for (uint32_t i = 0; (path = corpus_file(c, i)); i++) {
		int rc = dxb_cache_evict(path, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int dxb_corpus_cache_load(dx_corpus *c, dx_progress_fn progress, void *ctx, dx_err *err)
{
	enum { CHUNK = 1 << 20 };
	char *buf = malloc(CHUNK);
	const char *path;
	uint64_t done = 0, total = 0;
	int rc = 0;
	if (!buf)
		return dx__fail_nomem(err);
	struct stat st;
	for (uint32_t i = 0; (path = corpus_file(c, i)); i++)
		if (stat(path, &st) == 0)
			total += (uint64_t)st.st_size;
	for (uint32_t i = 0; rc == 0 && (path = corpus_file(c, i)); i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			rc = dx__fail_sys(err, path, "cannot open");
			break;
		}
		/* Read through: the pages stay in the cache after the read.  A
		 * large corpus takes a while: the caller may stop it. */
		posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		for (;;) {
			ssize_t n = read(fd, buf, CHUNK);
			if (n < 0 && errno != EINTR)
				rc = dx__fail_sys(err, path, "cannot read");
			else if (progress && progress(ctx, done += n > 0 ? (uint64_t)n : 0, total))
				rc = dx__fail(err, DX_ECANCELED, 0, path, "interrupted");
			if (rc < 0 || n == 0)
				break;
		}
		close(fd);
	}
	free(buf);
	return rc;
}

int dxb_corpus_cache_resident(dx_corpus *c, double *fraction, uint64_t *bytes, dx_err *err)
{
	uint64_t in_cache = 0, size = 0;
	const char *path;
	for (uint32_t i = 0; (path = corpus_file(c, i)); i++) {
		uint64_t a, b;
		int rc = count_resident(path, &a, &b, err);
		if (rc < 0)
			return rc;
		in_cache += a;
		size += b;
	}
	*fraction = size ? (double)in_cache / (double)size : 1;
	*bytes = size;
	return 0;
}
