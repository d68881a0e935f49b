/*
 * gzcache.h: inflated stretches of a compressed source, shared by every
 * process that reads it (internal).
 *
 * A stretch is what lies between two access points of the source's index
 * (a BGZF block, or about a span of a gzip member).  The cache is one file
 * in a RAM file system, named after what it serves (the source's indexed
 * fingerprint and its points), sized once by its creator and filled by
 * whoever inflates a stretch first.  Its slots are direct-mapped by stretch
 * number.  A slot's sequence number is odd while a writer fills it, and a
 * reader keeps what it copied only when the number was even and unchanged
 * around the copy; every KiB of a slot has its CRC-32, checked on every
 * copy, so a writer killed mid-copy, two writers on one slot, or a damaged
 * file give a miss, never wrong bytes.  A slot left odd by a writer that
 * died is taken over after STALE_NS.
 *
 * Each process that uses the cache holds a shared flock(2) on it; the last
 * to close removes it, and one that finds a cache nobody holds (its last
 * user killed) removes it before it opens its own.  Makers take turns on
 * the directory's flock, so that processes starting together make one.
 */
#ifndef DX_GZCACHE_H
#define DX_GZCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "docdex.h"

typedef struct dx_gzcache dx_gzcache;

/* The cache of the source whose stretches are identified by fp, in dir:
 * opened where one is, else created at bytes bytes for stretches of at
 * most slot bytes; abandoned caches in dir removed first.  A damaged cache,
 * or one made for stretches of another size, is replaced when nobody uses
 * it.  Returns the cache, or NULL with err: DX_EINVAL (bytes too small for
 * one stretch), DX_ECORRUPT (a damaged cache others use), DX_ESYS. */
dx_gzcache *dx__gzcache_open(const char *dir, uint64_t fp, uint64_t bytes, uint64_t slot,
                             dx_err *err);
/* Unmaps it; the last process to close it removes it. */
void dx__gzcache_close(dx_gzcache *k);

/* Copies bytes [from, from + n) of stretch key into dst: 1 when the cache
 * held them intact, else 0 (dst then undefined). */
int dx__gzcache_get(dx_gzcache *k, uint64_t key, uint64_t from, size_t n, void *dst);
/* Offers the first len bytes of stretch key, at p: stored unless another
 * process is storing into its slot now, the slot holds as much of the
 * stretch already, or len is over the slot size.  1 when stored, else 0. */
int dx__gzcache_put(dx_gzcache *k, uint64_t key, const void *p, size_t len);

/* How many stretches it holds at most (its slots). */
uint64_t dx__gzcache_slots(const dx_gzcache *k);

/* Sets the check of the header at the start of a cache file of size
 * bytes, as its maker does: for the fuzz harness, which mutates the
 * fields behind it. */
void dx__gzcache_seal(void *file, size_t size);

#endif
