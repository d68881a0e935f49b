/* memcg.h: a memory cgroup with a limit, for benchmark workers. */
#ifndef DXB_MEMCG_H
#define DXB_MEMCG_H

#include <stdint.h>

#include "docdex.h"

/*
 * A group made below this process's own memory cgroup, so that whatever
 * limit holds for the command holds for its workers too: cgroup v1's
 * memory controller where it is mounted, else cgroup v2 below the nearest
 * group that delegates the memory controller.  Swap is held to the limit as
 * well (memsw in v1, swap.max 0 in v2), so a worker over it is killed by the
 * kernel's OOM killer rather than swapped out.  Making one needs write
 * access to the cgroup filesystem: root, or a delegated subtree.
 */
typedef struct dxb_memcg dxb_memcg;

/* Makes a group of limit bytes named docdex-bench.PID.N, after removing
 * the empty groups that earlier commands left behind when killed.  NULL
 * with err (why none can be made here) on failure. */
dxb_memcg *dxb_memcg_new(uint64_t limit, dx_err *err);

/* In a child, before it allocates: moves the calling process into the
 * group (its later allocations and page-cache reads are charged to it).
 * 0, or -1 with err. */
int dxb_memcg_enter(const dxb_memcg *g, dx_err *err);

/* How many processes the kernel has killed for the group's limit so far;
 * the group's peak of memory charged (0 where the kernel does not say). */
uint64_t dxb_memcg_oom_kills(const dxb_memcg *g);
uint64_t dxb_memcg_peak(const dxb_memcg *g);

/* Kills what is left in the group, removes it and frees g (NULL is fine). */
void dxb_memcg_free(dxb_memcg *g);

/* Whether a group could be made here: "cgroup v1" or "cgroup v2", or NULL
 * with err saying why not.  Makes nothing. */
const char *dxb_memcg_possible(dx_err *err);

#endif
