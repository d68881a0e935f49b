/*
 * gzcache.c: the inflate cache shared by the processes that read one
 * compressed source (see gzcache.h for what it guarantees).
 *
 * The file: a header page, then nslots slots of stride bytes.  A slot is
 * its head (sequence number, claim time, stretch, length, a CRC-32 per
 * CHUNK) and room for one stretch.  Slots are written in place under a
 * sequence number as a seqlock is; the CRCs are what make a copy that
 * raced a writer, or a file damaged, show as a miss.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "err.h"
#include "gzcache.h"
#include "hash.h"

/* A hit copies and checks the whole chunks its bytes lie in, so a chunk
 * is small: random records from a cache that held the 1 GiB generated
 * corpora, one bench worker, went from 68k passages and 57k documents a
 * second at 64 KiB chunks to 434k passages at 4 KiB, 750k and 266k at 1
 * KiB, 920k and 233k at 512 bytes (a document spans more of them).  The
 * CRCs take 0.4% of a slot. */
enum { CHUNK = 1 << 10, HEAD = 4096, ALIGN = 64, TRIES = 8 };
/* The largest stretch a cache may hold (gz_read.c caches none over 64 MiB). */
static const uint64_t SLOT_MAX = (uint64_t)1 << 30;
/* A slot odd for this long has lost its writer: a copy of a few MiB takes
 * milliseconds even on a loaded machine. */
static const int64_t STALE_NS = 10 * (int64_t)1000000000;
/* 2: CRCs a KiB (1: a 64 KiB).  A cache of another version is replaced
 * when nobody uses it, as a damaged one is. */
static const char MAGIC[8] = "DDXCACH2";
static const char PREFIX[] = "docdex-cache-";

struct head {
	char magic[8];
	uint64_t fp;              /* what it serves */
	uint64_t slot;            /* the largest stretch it holds */
	uint64_t nslots, stride, size;
	uint64_t check;           /* dx__hash64 of the fields above */
};

struct slot {
	_Atomic uint64_t seq;     /* odd while a writer fills the slot */
	_Atomic int64_t claimed;  /* CLOCK_MONOTONIC ns of the last claim */
	uint64_t key;             /* stretch number + 1; 0: empty */
	uint64_t len;
	uint32_t crc[];           /* one a CHUNK of the stretch */
};

struct dx_gzcache {
	int fd;
	pid_t pid;                /* the process that opened it: a child that
	                             inherited it leaves the file to it */
	char *path;
	unsigned char *map;
	uint64_t size, slot, nslots, stride, data_off;
	unsigned char *scratch;   /* a copy before its CRCs are checked */
	size_t scratch_cap;
};

static uint64_t align(uint64_t n, uint64_t a)
{
	return (n + a - 1) / a * a;
}

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static uint64_t head_check(const struct head *h)
{
	return dx__hash64(h, offsetof(struct head, check), 0x6463616368650001ull);
}

/* Where a slot's stretch starts, from its head: past the CRCs. */
static uint64_t data_offset(uint64_t slot)
{
	return align(sizeof(struct slot) + 4 * ((slot + CHUNK - 1) / CHUNK), ALIGN);
}

static struct slot *slot_of(const dx_gzcache *k, uint64_t key)
{
	return (struct slot *)(k->map + HEAD + (key % k->nslots) * k->stride);
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Removes path when fd, open on it, is still what it names: the caller
 * holds fd's exclusive lock, so nobody uses it. */
static void remove_if_named(int fd, const char *path)
{
	struct stat a, b;
	if (fstat(fd, &a) == 0 && lstat(path, &b) == 0 && same_file(&a, &b))
		unlink(path);
}

/* Removes the caches in dir that no process holds: their last user was
 * killed, or their creator died before it named them. */
static void sweep(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, PREFIX, sizeof PREFIX - 1) != 0)
			continue;
		char path[4096];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			continue;
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			remove_if_named(fd, path);
		close(fd);
	}
	closedir(d);
}

/* A header whose fields hold together: every slot, its CRCs and a stretch
 * of the size it names inside the file (size >= HEAD), with no sum that
 * could wrap (a damaged file may hold anything). */
static int valid(const struct head *h, uint64_t fp, uint64_t slot, uint64_t size)
{
	return memcmp(h->magic, MAGIC, sizeof MAGIC) == 0 && h->check == head_check(h) &&
	       h->fp == fp && h->slot >= slot && h->slot <= SLOT_MAX && h->size == size &&
	       h->nslots > 0 && h->stride <= size - HEAD &&
	       h->stride >= data_offset(h->slot) + h->slot &&
	       h->nslots <= (size - HEAD) / h->stride;
}

static void take(dx_gzcache *k, int fd, unsigned char *map, const struct head *h)
{
	k->fd = fd;
	k->map = map;
	k->size = h->size;
	k->slot = h->slot;
	k->nslots = h->nslots;
	k->stride = h->stride;
	k->data_off = data_offset(h->slot);
}

/*
 * Opens the cache at k->path with a shared lock: 1, or 0 when there is none
 * to use now (none there, being removed, or damaged and removed: try again),
 * or an error.
 */
static int attach(dx_gzcache *k, uint64_t fp, uint64_t slot, dx_err *err)
{
	int fd = open(k->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : dx__fail_sys(err, k->path, "cannot open the inflate cache");
	struct stat a, b;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 || fstat(fd, &a) < 0 || stat(k->path, &b) < 0 ||
	    !same_file(&a, &b)) {
		/* Its last user is removing it. */
		close(fd);
		struct timespec t = { 0, 1000000 };
		nanosleep(&t, NULL);
		return 0;
	}
	unsigned char *map = MAP_FAILED;
	if (S_ISREG(a.st_mode) && a.st_size >= HEAD)
		map = mmap(NULL, (size_t)a.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map != MAP_FAILED && valid((const struct head *)map, fp, slot, (uint64_t)a.st_size)) {
		take(k, fd, map, (const struct head *)map);
		return 1;
	}
	/* Its magic but for the version: another docdex's, running now or
	 * killed. */
	int other_version = map != MAP_FAILED && memcmp(map, MAGIC, sizeof MAGIC - 1) == 0 &&
	                    map[sizeof MAGIC - 1] != (unsigned char)MAGIC[sizeof MAGIC - 1];
	if (map != MAP_FAILED)
		munmap(map, (size_t)a.st_size);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return dx__fail(err, DX_ECORRUPT, 0, k->path, "%s, and in use",
		                other_version ? "the inflate cache was made by another version of docdex"
		                              : "the inflate cache is damaged or not for this source");
	}
	remove_if_named(fd, k->path);
	close(fd);
	return 0;
}

/* Makes the cache under a temporary name and names it: 1, or 0 when
 * another process named one first (attach to it), or an error. */
static int create(dx_gzcache *k, uint64_t fp, uint64_t bytes, uint64_t slot, dx_err *err)
{
	struct head h = { .fp = fp, .slot = slot };
	memcpy(h.magic, MAGIC, sizeof MAGIC);
	h.stride = data_offset(slot) + align(slot, ALIGN);
	h.nslots = bytes > HEAD ? (bytes - HEAD) / h.stride : 0;
	if (h.nslots == 0) {
		char a[32], s[32];
		dx_format_bytes(bytes, a, sizeof a);
		dx_format_bytes(h.stride + HEAD, s, sizeof s);
		return dx__fail(err, DX_EINVAL, 0, "", "an inflate cache of %s cannot hold one stretch "
		                "of this source (it needs %s or more)", a, s);
	}
	h.size = HEAD + h.nslots * h.stride;
	h.check = head_check(&h);
	char *tmp = NULL;
	if (asprintf(&tmp, "%s.%ld.tmp", k->path, (long)getpid()) < 0)
		return dx__fail_nomem(err);
	unlink(tmp); /* this pid's, from a run killed before it named it */
	int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int rc;
	if (fd < 0) {
		rc = dx__fail_sys(err, tmp, "cannot create the inflate cache");
		free(tmp);
		return rc;
	}
	/* Locked before anything else: a sweep takes an unlocked one for
	 * abandoned.  Its room taken now, so that a full RAM disk fails here
	 * and not as SIGBUS on a later write. */
	unsigned char *map = MAP_FAILED;
	if (flock(fd, LOCK_SH) < 0 || (errno = posix_fallocate(fd, 0, (off_t)h.size)) != 0 ||
	    (map = mmap(NULL, (size_t)h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		char sz[32];
		dx_format_bytes(h.size, sz, sizeof sz);
		rc = dx__fail_sys(err, tmp, "cannot make an inflate cache of %s", sz);
	} else {
		memcpy(map, &h, sizeof h);
		if (link(tmp, k->path) == 0)
			rc = 1;
		else if (errno == EEXIST || errno == ENOENT) /* ENOENT: swept meanwhile */
			rc = 0;
		else
			rc = dx__fail_sys(err, k->path, "cannot name the inflate cache");
	}
	unlink(tmp);
	free(tmp);
	if (rc == 1) {
		take(k, fd, map, &h);
		return 1;
	}
	if (map != MAP_FAILED)
		munmap(map, (size_t)h.size);
	close(fd);
	return rc;
}

dx_gzcache *dx__gzcache_open(const char *dir, uint64_t fp, uint64_t bytes, uint64_t slot,
                             dx_err *err)
{
	dx_gzcache *k = calloc(1, sizeof *k);
	if (!k || asprintf(&k->path, "%s/%s%016llx", dir, PREFIX, (unsigned long long)fp) < 0) {
		free(k);
		dx__fail_nomem(err);
		return NULL;
	}
	k->fd = -1;
	k->pid = getpid();
	slot = slot ? slot : 1;
	if (slot > SLOT_MAX) {
		dx__fail(err, DX_EINVAL, 0, k->path, "stretches too large for an inflate cache");
		free(k->path);
		free(k);
		return NULL;
	}
	sweep(dir);
	/* Makers take turns on the directory's lock, and look again once they
	 * hold it: the ranks and workers of a job start together, and each
	 * would otherwise reserve a whole cache (seconds of zeroing, and
	 * their sum in memory) only to find another's named first. */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;
	for (int i = 0; i < TRIES && rc == 0; i++) {
		if ((rc = attach(k, fp, slot, err)) != 0)
			break;
		int locked = dfd >= 0 && flock(dfd, LOCK_EX) == 0;
		if ((rc = attach(k, fp, slot, err)) == 0)
			rc = create(k, fp, bytes, slot, err);
		if (locked)
			flock(dfd, LOCK_UN);
	}
	if (dfd >= 0)
		close(dfd);
	if (rc == 1)
		return k;
	if (rc == 0)
		dx__fail(err, DX_ESYS, EAGAIN, k->path, "cannot open the inflate cache");
	free(k->path);
	free(k);
	return NULL;
}

void dx__gzcache_close(dx_gzcache *k)
{
	if (!k)
		return;
	munmap(k->map, (size_t)k->size);
	/* The last user removes it: nobody else holds a shared lock. */
	if (getpid() == k->pid && flock(k->fd, LOCK_EX | LOCK_NB) == 0)
		remove_if_named(k->fd, k->path);
	close(k->fd);
	free(k->scratch);
	free(k->path);
	free(k);
}

uint64_t dx__gzcache_slots(const dx_gzcache *k)
{
	return k->nslots;
}

void dx__gzcache_seal(void *file, size_t size)
{
	struct head h;
	if (size < sizeof h)
		return;
	memcpy(&h, file, sizeof h);
	h.check = head_check(&h);
	memcpy(file, &h, sizeof h);
}

/* The copies race writers in other processes by design (the sequence
 * number and the CRCs reject what they tore); the thread sanitizer, which
 * sees threads of one process using separate handles, is told so. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RACY __attribute__((no_sanitize("thread")))
#endif
#endif
#if !defined(RACY) && defined(__SANITIZE_THREAD__)
#define RACY __attribute__((no_sanitize_thread))
#endif
#ifndef RACY
#define RACY
#endif

RACY int dx__gzcache_get(dx_gzcache *k, uint64_t key, uint64_t from, size_t n, void *dst)
{
	if (n == 0)
		return 1;
	struct slot *s = slot_of(k, key);
	uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
	uint64_t len = s->len;
	if ((seq & 1) || s->key != key + 1 || len > k->slot || from > len || n > len - from)
		return 0;
	/* Whole chunks, for their CRCs. */
	uint64_t c0 = from / CHUNK, c1 = (from + n - 1) / CHUNK;
	uint64_t a = c0 * CHUNK, b = (c1 + 1) * CHUNK < len ? (c1 + 1) * CHUNK : len;
	if (b - a > k->scratch_cap) {
		unsigned char *p = realloc(k->scratch, (size_t)(b - a));
		if (!p)
			return 0;
		k->scratch = p;
		k->scratch_cap = (size_t)(b - a);
	}
	memcpy(k->scratch, (unsigned char *)s + k->data_off + a, (size_t)(b - a));
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&s->seq, memory_order_relaxed) != seq)
		return 0;
	for (uint64_t c = c0; c <= c1; c++) {
		uint64_t at = c * CHUNK - a, m = b - a - at < CHUNK ? b - a - at : CHUNK;
		if (dx__crc32(0, k->scratch + at, m) != s->crc[c])
			return 0;
	}
	memcpy(dst, k->scratch + (from - a), n);
	return 1;
}

RACY int dx__gzcache_put(dx_gzcache *k, uint64_t key, const void *p, size_t len)
{
	if (len > k->slot)
		return 0;
	struct slot *s = slot_of(k, key);
	uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire), mine = seq + 1;
	/* Not over more of the same stretch (a read raced this one to it). */
	if (!(seq & 1) && s->key == key + 1 && s->len >= len)
		return 0;
	if (seq & 1) {
		/* Being written: left alone, unless its writer is long gone. */
		if (now_ns() - atomic_load_explicit(&s->claimed, memory_order_relaxed) < STALE_NS)
			return 0;
		mine = seq + 2;
	}
	if (!atomic_compare_exchange_strong_explicit(&s->seq, &seq, mine, memory_order_acquire,
	                                             memory_order_relaxed))
		return 0;
	atomic_store_explicit(&s->claimed, now_ns(), memory_order_relaxed);
	s->key = key + 1;
	s->len = len;
	for (uint64_t c = 0; c * CHUNK < len; c++) {
		uint64_t m = len - c * CHUNK < CHUNK ? len - c * CHUNK : CHUNK;
		s->crc[c] = dx__crc32(0, (const unsigned char *)p + c * CHUNK, m);
	}
	memcpy((unsigned char *)s + k->data_off, p, len);
	/* Published unless taken over meanwhile (then the CRCs judge). */
	return atomic_compare_exchange_strong_explicit(&s->seq, &mine, mine + 1, memory_order_release,
	                                               memory_order_relaxed);
}
