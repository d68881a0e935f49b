/*
 * pin.c: locking memory, as a pinned-memory loader does on the host side.
 *
 * The memory-lock limit (ulimit -l) is honoured even by a process that
 * could pass it (root, CAP_IPC_LOCK): a user who set the limit asked for
 * it, and a benchmark must behave the same as the trainer it stands for,
 * which usually runs unprivileged.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "corpus.h"
#include "dxbench.h"
#include "err.h"
#include "index.h"

uint64_t dxb_memlock_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return (uint64_t)rl.rlim_cur;
}

/* Bytes this process has locked already (VmLck), or 0 when unknown. */
static uint64_t locked_now(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long kb = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmLck: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

static int over_limit(uint64_t limit, size_t len, dx_err *err)
{
	char lim[32], want[32];
	dx_format_bytes(limit, lim, sizeof lim);
	dx_format_bytes(len, want, sizeof want);
	return dx__fail(err, DX_ELIMIT, 0, "", "cannot lock %s: the memory-lock limit is %s "
	                "(raise it with ulimit -l, or memlock in /etc/security/limits.conf)",
	                want, lim);
}

int dxb_mem_lock(const void *p, size_t len, dx_err *err)
{
	uint64_t limit = dxb_memlock_limit();
	if (limit != UINT64_MAX && (len > limit || locked_now() > limit - len))
		return over_limit(limit, len, err);
	if (mlock(p, len) == 0)
		return 0;
	if (errno == ENOMEM || errno == EPERM)
		return over_limit(limit, len, err);
	return dx__fail_sys(err, "", "cannot lock memory");
}

void dxb_mem_unlock(const void *p, size_t len)
{
	munlock(p, len);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* Reads every page of a mapping in, without locking it. */
static void populate(const void *p, uint64_t len)
{
	if (madvise((void *)p, len, MADV_POPULATE_READ) == 0)
		return;
	/* Older kernels: a read of each page faults it in. */
	long page = sysconf(_SC_PAGESIZE);
	const volatile char *v = p;
	for (uint64_t off = 0; off < len; off += (uint64_t)page)
		(void)v[off];
}

static int resident(const void *p, uint64_t len, int lock, uint64_t *bytes, dx_err *err)
{
	if (!p || !len)
		return 0;
	if (len > SIZE_MAX)
		return dx__fail(err, DX_ELIMIT, 0, "", "a mapping too large to lock");
	if (lock) {
		int rc = dxb_mem_lock(p, (size_t)len, err);
		if (rc < 0)
			return rc;
	} else {
		populate(p, len);
	}
	*bytes += len;
	return 0;
}

int dxb_corpus_make_resident(dx_corpus *c, int lock, uint64_t *bytes, dx_err *err)
{
	dx_index *ix = dx_corpus_index(c);
	dx_index_info info;
	const void *p;
	uint64_t len;
	int rc;
	*bytes = 0;
	dx__index_mapping(ix, &p, &len);
	if ((rc = resident(p, len, lock, bytes, err)) < 0)
		return rc;
	dx_index_get_info(ix, &info);
	for (uint32_t i = 0; i < info.sources; i++) {
		dx__corpus_mapping(c, i, &p, &len);
		if ((rc = resident(p, len, lock, bytes, err)) < 0)
			return rc;
	}
	return 0;
}
