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

#include "err.h"

/* Pages asked about per mincore call: bounds the vector for a large file. */
enum { VEC_PAGES = 1 << 16 };

int dx_cache_evict(const char *path, dx_err *err)
{
	/* O_NONBLOCK: a FIFO given by mistake must not block the open; it is
	 * refused by posix_fadvise (ESPIPE) instead. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return dx__fail_sys(err, path, "cannot open");
	int rc = 0;
	/* Dirty pages are not dropped, only queued for writing back: a caller
	 * that wants them gone syncs the file first. */
	int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (e != 0) /* returns the error instead of setting errno */
		rc = dx__fail(err, DX_ESYS, e, path, "cannot drop from the page cache");
	close(fd);
	return rc;
}

int dx_cache_resident(const char *path, double *fraction, dx_err *err)
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
	if (st.st_size == 0) {
		/* Nothing to read, so nothing missing from the cache. */
		*fraction = 1;
		goto out;
	}
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
	uint64_t resident = 0;
	for (size_t first = 0; first < pages; first += chunk) {
		size_t n = pages - first < chunk ? pages - first : chunk;
		if (mincore((char *)map + first * page, n * page, vec) < 0) {
			rc = dx__fail_sys(err, path, "cannot tell what is in the page cache");
			goto out;
		}
		/* Bit 0 is residency; the other bits are reserved. */
		for (size_t i = 0; i < n; i++)
			resident += vec[i] & 1;
	}
	*fraction = (double)resident / (double)pages;
out:
	free(vec);
	if (map != MAP_FAILED)
		munmap(map, len);
	close(fd);
	return rc;
}
