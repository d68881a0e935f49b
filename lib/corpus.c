/*
 * corpus.c: a corpus opened through its index.  Source files are mapped
 * read-only and shared, so any number of processes serving the same corpus
 * hold one copy of it in the page cache; a record is a pointer into the
 * mapping, never a copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "corpus.h"
#include "err.h"
#include "fileutil.h"
#include "format.h"
#include "guard.h"
#include "gz.h"
#include "index.h"
#include "index_format.h"

typedef struct csource {
	char *path;           /* where it was found */
	dev_t dev;            /* which file it is */
	ino_t ino;
	const char *map;      /* plain: the file mapped */
	uint64_t size;
	uint64_t usize;       /* its content's size (size for a plain file) */
	int fd;               /* the file: read with pread (plain) or through gz */
	dx_gzsrc *gz;
} csource;

struct dx_corpus {
	dx_index *ix;
	dev_t ix_dev;         /* which file the index is */
	ino_t ix_ino;
	const dx_params *pm;
	const dx_format_ops *ops;
	csource *src;
	uint32_t nsrc;
	int access;           /* how records (compressed: their compressed bytes)
	                         are read: DX_ACCESS_* */
	int warm;             /* DX_ACCESS_AUTO: whether the last records probed
	                         were in memory (read through the mapping) */
	uint64_t unprobed;    /* records read since that probe */
	dx_buf scratch, join;
	/* dx_corpus_values: the values, and for each whether its name or its
	 * bytes lie in scratch, held as an offset until scratch stops moving. */
	dx_value *vals;
	unsigned char *vin;
	size_t nvals, vals_cap;
	dx_buf single;        /* a record read with pread by dx_corpus_record */
	dx_buf arena;         /* decompressed records of a batch */
	/* A batch's decompressed records in file order: where each goes in the
	 * arena, and for which request. */
	struct order { uint64_t file_off, len, arena_off; uint32_t file; size_t i; } *order;
	size_t order_cap;
};

/* How many of the records asked for are looked at (mincore) before the
 * rest are asked of the kernel; and how many records DX_ACCESS_AUTO reads
 * between two such probes (a probe costs what a pread does, and a reader
 * in calls of 16 records must not pay one a record). */
enum { PROBE = 16, PROBE_EVERY = 1024 };

struct dx_fields {
	size_t n;
	dx_field item[];
};

int dx_index_path_for(const char *path, char *out, size_t outsz, dx_err *err)
{
	char magic[8];
	struct stat st;
	/* Non-blocking, then refused: a FIFO would wait for a writer forever. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return dx__fail_sys(err, path, "cannot open");
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return dx__fail(err, DX_ESYS, e, path, "cannot open");
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		/* A directory fails as open() fails for one (EISDIR: Python's
		 * IsADirectoryError). */
		if (S_ISDIR(st.st_mode))
			return dx__fail(err, DX_ESYS, EISDIR, path, "cannot open");
		return dx__fail(err, DX_EINVAL, 0, path, "not a regular file");
	}
	ssize_t n = read(fd, magic, sizeof magic);
	close(fd);
	/* A file named .ddx is taken for an index even without the magic, so
	 * that it is refused as one rather than looked for an index of. */
	size_t len = strlen(path);
	int is_index = (n == (ssize_t)sizeof magic && memcmp(magic, DDX_MAGIC, 8) == 0) ||
	               (len > 4 && strcmp(path + len - 4, ".ddx") == 0);
	if ((size_t)snprintf(out, outsz, is_index ? "%s" : "%s.ddx", path) >= outsz)
		return dx__fail(err, DX_ELIMIT, 0, path, "path too long");
	return 0;
}

/*
 * Opens source i: by its path relative to the index's directory, else by
 * the absolute path it had at build time; then checks that it is the file
 * indexed (size, mtime, sampled bytes).  Returns an open descriptor with
 * *path (malloc'd) where it was found, or a negative code.
 */
static int open_checked(dx_index *ix, const char *dir, uint32_t i, char **path, struct stat *st,
                        dx_err *err)
{
	dx_source_info si;
	if (dx_index_get_source(ix, i, &si) < 0)
		return dx__fail(err, DX_EINVAL, 0, "", "no such source");
	*path = dx__path_join(dir, si.path);
	if (!*path)
		return dx__fail_nomem(err);
	/* Non-blocking: a FIFO at the path is refused below, never waited on. */
	int fd = open(*path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		int fd2 = open(si.abs_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		char *abs = fd2 >= 0 ? strdup(si.abs_path) : NULL;
		if (abs) {
			free(*path);
			*path = abs;
			fd = fd2;
		} else if (fd2 >= 0) {
			close(fd2);
		}
	}
	if (fd < 0)
		return dx__fail_sys(err, *path, "cannot open corpus file");
	int rc = 0;
	uint64_t fp;
	const char *why = NULL;
	if (fstat(fd, st) < 0)
		rc = dx__fail_sys(err, *path, "cannot open corpus file");
	else if (!S_ISREG(st->st_mode))
		rc = dx__fail(err, DX_EINVAL, 0, *path, "corpus file is not a regular file");
	else if ((uint64_t)st->st_size != si.size)
		why = "its size";
	else if (st->st_mtim.tv_sec != si.mtime_sec || (uint32_t)st->st_mtim.tv_nsec != si.mtime_nsec)
		why = "its modification time";
	else if ((rc = dx__fingerprint(fd, si.size, &fp, *path, err)) == 0 && fp != si.fingerprint)
		why = "its contents";
	if (why)
		rc = dx__fail(err, DX_ESTALE, 0, *path,
		              "corpus changed since it was indexed (%s), run docdex index again", why);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int dx_index_check_source(dx_index *ix, uint32_t i, dx_err *err)
{
	char *dir = dx__dirname(dx__index_path(ix)), *path = NULL;
	struct stat st;
	if (!dir)
		return dx__fail_nomem(err);
	int fd = open_checked(ix, dir, i, &path, &st, err);
	free(dir);
	free(path);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int check_windows(void *ctx, uint64_t off, uint64_t len, dx_err *err)
{
	return dx__index_check_windows(ctx, off, len, err);
}

static int open_source(dx_corpus *c, const char *dir, uint32_t i, dx_err *err)
{
	csource *s = &c->src[i];
	struct stat st;
	int fd = open_checked(c->ix, dir, i, &s->path, &st, err);
	if (fd < 0)
		return fd;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	/* open_checked found the file of the size indexed. */
	dx_source_info si;
	int rc = dx_index_get_source(c->ix, i, &si);
	s->usize = si.usize;
	if (si.kind != DX_SOURCE_PLAIN) {
		const struct ddx_point *pts;
		const unsigned char *windows;
		uint64_t npts, wsize;
		s->fd = fd;
		if (dx__index_points(c->ix, i, &pts, &npts, &windows, &wsize, err) < 0)
			return err->code;
		if (!(s->gz = malloc(sizeof *s->gz)))
			return dx__fail_nomem(err);
		if (dx__gzsrc_open(s->gz, fd, s->path, si.size, si.usize, pts, npts, windows, wsize, err) < 0) {
			free(s->gz);
			s->gz = NULL;
			return err->code;
		}
		s->gz->check = check_windows;
		s->gz->check_ctx = c->ix;
		dx_index_info info;
		dx_index_get_info(c->ix, &info);
		s->gz->first_use_order = info.version == 3;
		return 0;
	}
	/* Mapped whatever the access: mincore tells from the mapping whether
	 * records are in memory, and verify and pin-test read through it.  A
	 * pread reads no more than asked: records are read at random, and a
	 * batch asks for its own pages ahead. */
	s->fd = fd;
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	if ((s->size = si.size)) {
		void *m = dx__map_file(fd, s->size);
		if (m == MAP_FAILED)
			rc = dx__fail_sys(err, s->path, "cannot map corpus file");
		else
			s->map = m;
	}
	return rc;
}

static int corpus_file_index(const dx_corpus *c, const char *path);
static void advise(dx_corpus *c);

dx_corpus *dx_corpus_open(const char *corpus_or_index, dx_err *err)
{
	char path[4096];
	char *dir = NULL;
	dx_corpus *c = calloc(1, sizeof *c);
	if (!c) {
		dx__fail_nomem(err);
		return NULL;
	}
	if (dx_index_path_for(corpus_or_index, path, sizeof path, err) < 0)
		goto fail;
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		dx__fail(err, DX_EINVAL, 0, path, "no index, build it with docdex index");
		goto fail;
	}
	if (!(c->ix = dx_index_open(path, err)))
		goto fail;
	struct stat st;
	if (stat(path, &st) == 0) {
		c->ix_dev = st.st_dev;
		c->ix_ino = st.st_ino;
	}
	c->pm = dx__index_params(c->ix);
	c->ops = dx__format_ops(c->pm->format);
	dx_index_info info;
	dx_index_get_info(c->ix, &info);
	c->nsrc = info.sources;
	c->src = calloc(c->nsrc, sizeof *c->src);
	dir = dx__dirname(path);
	if (!c->src || !dir) {
		dx__fail_nomem(err);
		goto fail;
	}
	for (uint32_t i = 0; i < c->nsrc; i++)
		c->src[i].fd = -1;
	for (uint32_t i = 0; i < c->nsrc; i++)
		if (open_source(c, dir, i, err) < 0)
			goto fail;
	c->unprobed = PROBE_EVERY;
	advise(c);
	/* A corpus named with its index beside it must be what that index
	 * indexes: a CORPUS.ddx copied or left from another file would serve
	 * that file's documents under this one's name. */
	if (strcmp(path, corpus_or_index) != 0 && corpus_file_index(c, corpus_or_index) < 0) {
		dx_source_info si;
		dx_index_get_source(c->ix, 0, &si);
		dx__fail(err, DX_ESTALE, 0, path, "index of another file (%.150s%s), rebuild it with docdex index",
		         si.path, c->nsrc > 1 ? " and others" : "");
		goto fail;
	}
	free(dir);
	return c;
fail:
	free(dir);
	dx_corpus_close(c);
	return NULL;
}

void dx_corpus_close(dx_corpus *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; c->src && i < c->nsrc; i++) {
		csource *s = &c->src[i];
		if (s->map)
			munmap((void *)s->map, s->size);
		if (s->gz) {
			dx__gzsrc_close(s->gz);
			free(s->gz);
		}
		if (s->fd >= 0)
			close(s->fd);
		free(s->path);
	}
	free(c->order);
	dx__buf_free(&c->arena);
	dx__buf_free(&c->single);
	free(c->src);
	dx_index_close(c->ix);
	dx__buf_free(&c->scratch);
	dx__buf_free(&c->join);
	free(c->vals);
	free(c->vin);
	free(c);
}

/* The source that path is (the same file, through any link), or -1. */
static int corpus_file_index(const dx_corpus *c, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	for (uint32_t i = 0; i < c->nsrc; i++)
		if (c->src[i].dev == st.st_dev && c->src[i].ino == st.st_ino)
			return (int)i;
	return -1;
}

int dx_corpus_uses_file(const dx_corpus *c, const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return 0;
	return (st.st_dev == c->ix_dev && st.st_ino == c->ix_ino) || corpus_file_index(c, path) >= 0;
}

dx_index *dx_corpus_index(dx_corpus *c)
{
	return c->ix;
}

uint64_t dx_corpus_count(const dx_corpus *c)
{
	return dx__index_count(c->ix);
}

/*
 * Under DX_ACCESS_AUTO the mappings serve records that were in memory when
 * probed: a fault there that finds its page gone (a probe is a sample)
 * should read that page, not the read-around of up to read_ahead_kb (8 MiB
 * on some disks) that a fault asks for by default.  Pages in memory are
 * still mapped several at a time (fault-around).
 */
static void advise(dx_corpus *c)
{
	int how = c->access == DX_ACCESS_AUTO ? MADV_RANDOM : MADV_NORMAL;
	for (uint32_t i = 0; i < c->nsrc; i++) {
		const csource *s = &c->src[i];
		if (s->map)
			madvise((void *)(uintptr_t)s->map, s->size, how);
		if (s->gz && s->gz->map)
			madvise((void *)(uintptr_t)s->gz->map, s->gz->csize, how);
	}
}

static const char *const access_names[] = {
	[DX_ACCESS_AUTO] = "auto", [DX_ACCESS_MMAP] = "mmap", [DX_ACCESS_PREAD] = "pread",
};

const char *dx_access_name(int access)
{
	return access >= DX_ACCESS_AUTO && access <= DX_ACCESS_PREAD ? access_names[access] : "?";
}

int dx_access_parse(const char *name)
{
	for (int a = DX_ACCESS_AUTO; a <= DX_ACCESS_PREAD; a++)
		if (strcmp(name, access_names[a]) == 0)
			return a;
	return -1;
}

int dx_corpus_set_access(dx_corpus *c, int access, dx_err *err)
{
	if (access < DX_ACCESS_AUTO || access > DX_ACCESS_PREAD)
		return dx__fail(err, DX_EINVAL, 0, "", "no such access");
	c->access = access;
	advise(c);
	return 0;
}

int dx_corpus_access(const dx_corpus *c)
{
	return c->access;
}

int dx_corpus_in_memory(const dx_corpus *c)
{
	return c->access == DX_ACCESS_AUTO && c->warm;
}

int dx_corpus_set_inflate_cache(dx_corpus *c, uint64_t bytes, const char *dir, dx_err *err)
{
	/* One place for the default, for the commands and the Python package. */
	const char *env = getenv("DOCDEX_CACHE_DIR");
	if (!dir)
		dir = env && *env ? env : "/dev/shm";
	/* Each compressed file has a cache of its own (others may read it
	 * alone): the size is shared among them by their inflated sizes. */
	double total = 0;
	for (uint32_t i = 0; i < c->nsrc; i++)
		if (c->src[i].gz)
			total += (double)c->src[i].usize;
	for (uint32_t i = 0; i < c->nsrc; i++) {
		dx_source_info si;
		if (!c->src[i].gz || dx_index_get_source(c->ix, i, &si) < 0)
			continue;
		uint64_t part = bytes && total > 0 ? (uint64_t)((double)bytes * ((double)si.usize / total)) : 0;
		if (bytes && !part)
			part = 1; /* refused below as too small, as bytes would be */
		if (dx__gzsrc_cache(c->src[i].gz, dir, part, si.fingerprint, err) < 0) {
			/* All or none. */
			for (uint32_t j = 0; j < i; j++)
				if (c->src[j].gz)
					(void)dx__gzsrc_cache(c->src[j].gz, NULL, 0, 0, err);
			return err->code;
		}
	}
	return 0;
}

uint64_t dx_corpus_inflated(const dx_corpus *c)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < c->nsrc; i++)
		if (c->src[i].gz)
			n += c->src[i].gz->inflated;
	return n;
}

const char *dx__corpus_source_path(const dx_corpus *c, uint32_t i)
{
	return i < c->nsrc ? c->src[i].path : NULL;
}

void dx__corpus_mapping(const dx_corpus *c, uint32_t i, const void **p, uint64_t *len)
{
	*p = c->src[i].map;
	*len = c->src[i].map ? c->src[i].size : 0;
}

void dx__corpus_restart(dx_corpus *c, uint32_t i)
{
	if (i < c->nsrc && c->src[i].gz)
		c->src[i].gz->live = 0;
}

int dx__corpus_owns(const dx_corpus *c, const void *addr)
{
	const char *a = addr;
	for (uint32_t i = 0; i < c->nsrc; i++) {
		const csource *s = &c->src[i];
		if (s->map && a >= s->map && a < s->map + s->size)
			return 1;
		if (s->gz && s->gz->map && a >= (const char *)s->gz->map &&
		    a < (const char *)s->gz->map + s->gz->csize)
			return 1;
	}
	return c->ix && dx__index_owns(c->ix, addr);
}

int dx_corpus_find(dx_corpus *c, const char *id, size_t len, uint64_t *pos, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, dx__index_find(c->ix, id, len, pos, err));
	return rc;
}

static int find_many(dx_corpus *c, const char *const *ids, const size_t *lens, size_t n, uint64_t *pos,
                     dx_err *err)
{
	if (n > 1)
		dx__index_prefetch_ids(c->ix, ids, lens, n);
	for (size_t i = 0; i < n; i++) {
		int r = dx__index_find(c->ix, ids[i], lens[i], &pos[i], err);
		if (r < 0)
			return r;
		if (r == 0)
			pos[i] = DX_NOT_FOUND;
	}
	return 0;
}

int dx_corpus_find_many(dx_corpus *c, const char *const *ids, const size_t *lens, size_t n, uint64_t *pos,
                        dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, find_many(c, ids, lens, n, pos, err));
	return rc;
}

void dx_corpus_prefetch_ids(dx_corpus *c, const char *const *ids, const size_t *lens, size_t n)
{
	/* The slots and checkpoints are read to find what to ask for: a
	 * cut-short index faults there, as in dx_corpus_find. */
	int rc;
	DX__GUARDED(rc, c, NULL, NULL, (dx__index_prefetch_ids(c->ix, ids, lens, n), 0));
	(void)rc;
}

int dx_corpus_id(dx_corpus *c, uint64_t pos, const char **id, size_t *len, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, dx__index_id(c->ix, pos, id, len, err));
	return rc;
}

/* Whether records are read through the mappings now (and so stay valid
 * until the corpus is closed), rather than with pread. */
static int via_map(const dx_corpus *c)
{
	return c->access == DX_ACCESS_MMAP || dx_corpus_in_memory(c);
}

/* Where a plain source's bytes at off lie in its mapping ("" for an empty
 * file, which has none). */
static const char *mapped_at(const csource *s, uint64_t off)
{
	return s->map ? s->map + off : "";
}

int dx__corpus_bytes(dx_corpus *c, uint32_t file, uint64_t off, uint64_t len, const char **data,
                     dx_err *err)
{
	csource *s = &c->src[file];
	if (s->gz) {
		/* Its compressed bytes are read as a plain file's records are. */
		s->gz->via_map = via_map(c);
		return dx__gzsrc_read(s->gz, off, len, data, err);
	}
	if (!len || via_map(c)) {
		*data = mapped_at(s, off);
		return 0;
	}
	c->single.len = 0;
	if (dx__buf_reserve(&c->single, (size_t)len) < 0)
		return dx__fail_nomem(err);
	*data = c->single.p;
	return dx__pread_source(s->fd, s->path, c->single.p, (size_t)len, off, err);
}

/* How many bytes after a record its end check looks at: up to 2 (a CRLF),
 * fewer at the end of its file.  A decompressed record is read with them,
 * so that they follow it in memory as they do in a mapped file. */
static uint64_t tail_len(const dx_corpus *c, uint32_t file, uint64_t off, uint64_t len)
{
	uint64_t left = c->src[file].usize - off - len;
	return left < 2 ? left : 2;
}

static void fault_in(const char *p, size_t len);

static int batch_via_map(dx_corpus *c, const uint64_t *pos, size_t n);

static int record(dx_corpus *c, uint64_t pos, dx_record *rec, dx_err *err)
{
	uint32_t file;
	uint64_t off, len, tail;
	if (dx__index_record(c->ix, pos, &file, &off, &len, err) < 0)
		return err->code;
	batch_via_map(c, &pos, 1);
	if (dx__corpus_bytes(c, file, off, len + (tail = tail_len(c, file, off, len)), &rec->data, err) < 0)
		return err->code;
	rec->pos = pos;
	rec->len = (size_t)len;
	rec->source = file;
	rec->offset = off;
	rec->stable = !c->src[file].gz && via_map(c);
	/* A mapped record's pages are touched here, under the guard, so that a
	 * file cut short before the call fails it rather than the caller. */
	if (rec->stable)
		fault_in(rec->data, (size_t)(len + tail));
	return 0;
}

int dx_corpus_record(dx_corpus *c, uint64_t pos, dx_record *rec, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, record(c, pos, rec, err));
	return rc;
}

static int copy(const dx_record *rec, void *dst)
{
	/* Touched first by plain loads: a fault in memcpy is met as well, but
	 * under a sanitizer memcpy is the runtime's, which takes it for its own. */
	if (rec->stable)
		fault_in(rec->data, rec->len);
	memcpy(dst, rec->data, rec->len);
	return 0;
}

int dx_corpus_copy(dx_corpus *c, const dx_record *rec, void *dst, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, copy(rec, dst));
	return rc;
}

static int copy_many(const dx_record *recs, size_t n, char *dst)
{
	/* An empty record copies nothing: dst may be NULL then. */
	for (size_t i = 0; i < n; dst += recs[i++].len)
		if (recs[i].len)
			copy(&recs[i], dst);
	return 0;
}

int dx_corpus_copy_many(dx_corpus *c, const dx_record *recs, size_t n, void *dst, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, copy_many(recs, n, dst));
	return rc;
}

/* Whether record r ends where its format ends a record and before the
 * next record of its file starts. */
static int ends_right(dx_corpus *c, const dx_record *r, dx_err *err)
{
	uint32_t nfile;
	uint64_t noff;
	if (r->source >= c->nsrc || r->offset > c->src[r->source].usize ||
	    r->len > c->src[r->source].usize - r->offset)
		return dx__fail(err, DX_EINVAL, 0, "", "not a record of this corpus");
	size_t tail = (size_t)tail_len(c, r->source, r->offset, r->len);
	if (!c->ops->ends(r->data, r->len, r->data + r->len, tail))
		return 0;
	if (r->pos + 1 == dx__index_count(c->ix))
		return 1;
	if (dx__index_start(c->ix, r->pos + 1, &nfile, &noff, err) < 0)
		return err->code;
	return nfile != r->source || noff >= r->offset + r->len + c->ops->gap;
}

static int check_ids(dx_corpus *c, const dx_record *recs, size_t n, dx_err *err)
{
	for (size_t i = 0; i < n; i++) {
		const char *got, *why = NULL, *wrong = "does not hold its id";
		size_t got_len;
		c->scratch.len = 0;
		int rc = c->ops->id(c->pm, recs[i].data, recs[i].len, &c->scratch, &got, &got_len, &why);
		if (rc == 0 && (rc = dx__index_is_id(c->ix, recs[i].pos, got, got_len, err)) < 0)
			return rc;
		if (rc == 1) {
			if ((rc = ends_right(c, &recs[i], err)) < 0)
				return rc;
			if (rc == 1)
				continue;
			wrong = "does not end where the index says";
		}
		return dx__fail(err, DX_ECORRUPT, 0, dx__index_path(c->ix),
		                "index damaged or corpus changed in place (record %llu %s), rebuild it with "
		                "docdex index", (unsigned long long)recs[i].pos, wrong);
	}
	return 0;
}

int dx_corpus_check_ids(dx_corpus *c, const dx_record *recs, size_t n, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, check_ids(c, recs, n, err));
	return rc;
}

/* Whether the pages that the first records of pos[0..n) start in are all
 * in memory already (a warm corpus): a read-ahead call per record would
 * then cost system time for nothing (half as much again as the sampling
 * itself, measured on a 1 GiB corpus in the page cache). */
static int looks_warm(dx_corpus *c, const uint64_t *pos, size_t n)
{
	size_t probed = 0;
	for (size_t i = 0; i < n && probed < PROBE; i++) {
		uint32_t file;
		uint64_t off, len;
		dx_err ignored; /* the read that follows reports a bad position */
		if (dx__index_record(c->ix, pos[i], &file, &off, &len, &ignored) < 0)
			continue;
		const csource *s = &c->src[file];
		if (s->gz) {
			/* Compressed: where its inflating would start. */
			if (!dx__gzsrc_resident(s->gz, off))
				return 0;
		} else if (!s->map || !len || !dx__map_resident(s->map, off)) {
			return 0;
		}
		probed++;
	}
	return 1;
}

/* Asks the kernel to read records pos[0..n) ahead, without waiting: those
 * of plain files, and with compressed too the stretches they need. */
static void read_ahead(dx_corpus *c, const uint64_t *pos, size_t n, int compressed)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t file;
		uint64_t off, len;
		dx_err ignored; /* the read that follows reports a bad position */
		if (dx__index_record(c->ix, pos[i], &file, &off, &len, &ignored) < 0)
			continue;
		const csource *s = &c->src[file];
		if (s->gz) {
			if (compressed)
				dx__gzsrc_prefetch(s->gz, off, len);
		} else if (len) {
			posix_fadvise(s->fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
		}
	}
}

static int prefetch(dx_corpus *c, const uint64_t *pos, size_t n)
{
	if (!looks_warm(c, pos, n))
		read_ahead(c, pos, n, 1);
	return 0;
}

/*
 * Whether the batch pos[0..n) is read through the mappings.  DX_ACCESS_AUTO
 * looks whether its first records are in memory: a warm batch is served
 * from the mapping, with no system call; a cold one with pread, all its
 * reads asked of the disk at once (a queue as deep as the batch) and each
 * only its own pages, where a fault would wait for one read at a time and
 * read up to read_ahead_kb around it.  It probes once every PROBE_EVERY
 * records, and in between goes the way the last probe said.
 */
static int batch_via_map(dx_corpus *c, const uint64_t *pos, size_t n)
{
	if (c->access == DX_ACCESS_AUTO && (n >= PROBE_EVERY || c->unprobed >= PROBE_EVERY)) {
		c->warm = looks_warm(c, pos, n);
		c->unprobed = 0;
	}
	c->unprobed += n;
	if (via_map(c))
		return 1;
	/* Compressed records are read from their access points as they come:
	 * nothing to ask ahead for them here. */
	if (n > 1 && (c->access == DX_ACCESS_AUTO || !looks_warm(c, pos, n)))
		read_ahead(c, pos, n, 0);
	return 0;
}

void dx_corpus_prefetch(dx_corpus *c, const uint64_t *pos, size_t n)
{
	/* The index is read to find the records: a cut-short index faults
	 * there, as in any other call. */
	int rc;
	DX__GUARDED(rc, c, NULL, NULL, prefetch(c, pos, n));
	(void)rc;
}

/* Records read with pread are read in one call with those that follow
 * within COALESCE_GAP bytes, up to COALESCE_MAX bytes a call: a page
 * between two records costs less to read than a second call. */
enum { COALESCE_GAP = 4096, COALESCE_MAX = 1 << 20 };

/* The lines of a batch's mapped records asked for at once: what a core's
 * cache holds until they are read. */
enum { RECORD_LINES_MAX = 4096, PREFETCH_MAX = 256 << 10 };

/* Where the bytes read for a record end: after it and its tail. */
static uint64_t end_with_tail(const dx_corpus *c, const struct order *o)
{
	return o->file_off + o->len + tail_len(c, o->file, o->file_off, o->len);
}

static int by_place(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->file_off < y->file_off ? -1 : x->file_off > y->file_off;
}

/* The small batches of a Python reader (16 records) sort faster by
 * insertion than through qsort's calls of by_place (6% of a batch). */
enum { INSERTION_MAX = 32 };
static void sort_by_place(struct order *o, size_t n)
{
	if (n > INSERTION_MAX) {
		qsort(o, n, sizeof *o, by_place);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct order x = o[i];
		size_t j = i;
		for (; j > 0 && by_place(&o[j - 1], &x) > 0; j--)
			o[j] = o[j - 1];
		o[j] = x;
	}
}

/* Reads a byte of each page of a mapped record, so that the page faults of
 * a batch come in file order. */
static void fault_in(const char *p, size_t len)
{
	const volatile char *v = p;
	for (size_t off = 0; off < len; off += 4096)
		(void)v[off];
	if (len)
		(void)v[len - 1];
}

/* Asks the CPU for the lines of a plain record in the mapping, up to
 * RECORD_LINES_MAX bytes of it (a longer copy streams), and returns how
 * many bytes it asked for.  A prefetch does not fault: a page gone from a
 * file cut short is skipped, and met by the guarded fault_in. */
static size_t prefetch_lines(const dx_corpus *c, const struct order *o)
{
	const csource *s = &c->src[o->file];
	if (!s->map || s->gz)
		return 0;
	size_t len = o->len < RECORD_LINES_MAX ? (size_t)o->len : RECORD_LINES_MAX;
	for (size_t off = 0; off < len; off += 64)
		__builtin_prefetch(s->map + o->file_off + off);
	return len;
}

static int records(dx_corpus *c, const uint64_t *pos, size_t n, dx_record *recs, dx_err *err)
{
	if (n > c->order_cap) {
		struct order *o = realloc(c->order, n * sizeof *o);
		if (!o)
			return dx__fail_nomem(err);
		c->order = o;
		c->order_cap = n;
	}
	/* Records are read in file order: a stretch of a gzip file shared by
	 * several is decompressed once, and a cold mapped file is read
	 * forward.  Decompressed records are copied into the arena, then
	 * pointed at once the arena has stopped moving. */
	int map = batch_via_map(c, pos, n);
	/* The entries of a batch of random positions miss the cache each:
	 * asked for together, they wait on memory together. */
	dx__index_prefetch(c->ix, pos, n);
	int all_stable = 1;
	for (size_t i = 0; i < n; i++) {
		struct order *o = &c->order[i];
		if (dx__index_record(c->ix, pos[i], &o->file, &o->file_off, &o->len, err) < 0)
			return err->code;
		recs[i] = (dx_record){ .pos = pos[i], .len = (size_t)o->len, .source = o->file,
		                       .offset = o->file_off, .stable = map && !c->src[o->file].gz };
		all_stable &= recs[i].stable;
		o->i = i;
	}
	/* File order saves nothing for records in memory already (the last
	 * probe found them there): no disk to read forward, nothing to
	 * inflate once.  Sorting them took 13% of docdex get's time. */
	if (!(all_stable && dx_corpus_in_memory(c)))
		sort_by_place(c->order, n);
	/* Their lines asked for together, up to PREFETCH_MAX bytes of lines in
	 * all, before each is touched in turn below and then copied: random
	 * batches of 16 through the Python package read 1.6-2.0 M records/s
	 * where they read 1.1-1.4 M with the first line of each asked for
	 * here and the rest after, and 1.1-1.2 M with the lines of each asked
	 * for 16 records ahead of its read (1 GiB corpus in the page cache). */
	for (size_t k = 0, asked = 0; map && k < n && asked < PREFETCH_MAX; k++)
		asked += prefetch_lines(c, &c->order[k]);
	c->arena.len = 0;
	for (size_t k = 0; k < n;) {
		struct order *o = &c->order[k];
		const char *data;
		/* A record asked for again in the batch (sample repeats documents)
		 * is read once: it shares the first one's bytes. */
		if (k && o->file == o[-1].file && o->file_off == o[-1].file_off) {
			o->arena_off = o[-1].arena_off;
			recs[o->i].data = recs[o[-1].i].data;
			k++;
			continue;
		}
		const csource *s = &c->src[o->file];
		if (recs[o->i].stable) {
			recs[o->i].data = data = mapped_at(s, o->file_off);
			fault_in(data, o->len);
			k++;
			continue;
		}
		uint64_t with_tail = end_with_tail(c, o) - o->file_off;
		if (s->gz) {
			if (dx__corpus_bytes(c, o->file, o->file_off, with_tail, &data, err) < 0)
				return err->code;
			o->arena_off = c->arena.len;
			if (dx__buf_add(&c->arena, data, with_tail) < 0)
				return dx__fail_nomem(err);
			k++;
			continue;
		}
		/* Read with pread: records of a file that lie close together are
		 * read in one call, as sequential positions are. */
		uint64_t from = o->file_off, to = o->file_off + with_tail;
		size_t end = k + 1;
		for (; end < n; end++) {
			const struct order *q = &c->order[end];
			uint64_t q_to = end_with_tail(c, q);
			if (q->file != o->file || q->file_off > to + COALESCE_GAP || q_to - from > COALESCE_MAX)
				break;
			to = q_to > to ? q_to : to;
		}
		if (dx__buf_reserve(&c->arena, (size_t)(to - from)) < 0)
			return dx__fail_nomem(err);
		if (dx__pread_source(s->fd, s->path, c->arena.p + c->arena.len, (size_t)(to - from), from, err) < 0)
			return err->code;
		for (; k < end; k++)
			c->order[k].arena_off = c->arena.len + (c->order[k].file_off - from);
		c->arena.len += (size_t)(to - from);
	}
	/* A batch of empty records leaves the arena unallocated: "" then, as
	 * for an empty mapped file. */
	for (size_t k = 0; k < n; k++)
		if (!recs[c->order[k].i].stable)
			recs[c->order[k].i].data = c->arena.p ? c->arena.p + c->order[k].arena_off : "";
	return 0;
}

int dx_corpus_records(dx_corpus *c, const uint64_t *pos, size_t n, dx_record *recs, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, records(c, pos, n, recs, err));
	return rc;
}

/* A field's name, for dx_corpus_values, when its format set none. */
static void set_field_name(dx_field *f, const char *name, size_t len)
{
	if (len >= sizeof f->name)
		len = sizeof f->name - 1;
	memcpy(f->name, name, len);
	f->name_len = len;
}

dx_fields *dx_fields_parse(dx_corpus *c, const char *spec, dx_err *err)
{
	if (!spec) {
		dx_fields *f = calloc(1, sizeof *f + sizeof f->item[0]);
		const char *why = "";
		if (!f)
			dx__fail_nomem(err);
		else
			f->n = c->ops->field_parse(c->pm, "", 0, &f->item[0], &why) == 0;
		if (f && f->n && !f->item[0].name_len)
			set_field_name(&f->item[0], "text", 4);
		return f;
	}
	size_t n = 1;
	for (const char *p = spec; *p; p++)
		n += *p == ',';
	dx_fields *f = calloc(1, sizeof *f + n * sizeof f->item[0]);
	if (!f) {
		dx__fail_nomem(err);
		return NULL;
	}
	f->n = n;
	const char *p = spec;
	for (size_t i = 0; i < n; i++) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *why = "empty field name";
		int bad = len == 0 || c->ops->field_parse(c->pm, p, len, &f->item[i], &why) < 0;
		/* Named twice (title,title, or 2 and text for the same column): a
		 * JSON object cannot hold one key twice. */
		for (size_t j = 0; j < i && !bad; j++)
			if (f->item[j].column == f->item[i].column && f->item[j].name_len == f->item[i].name_len &&
			    memcmp(f->item[j].name, f->item[i].name, f->item[i].name_len) == 0) {
				why = "named twice";
				bad = 1;
			}
		if (bad) {
			/* The corpus by its file (its index when it has several),
			 * and a TSV corpus's columns, for the name to be checked. */
			const char *file = c->nsrc == 1 ? c->src[0].path : dx__index_path(c->ix);
			int tsv = c->pm->format == DX_FMT_TSV && c->pm->columns[0];
			dx__fail_n(err, DX_EINVAL, p, len, "bad field for the %s corpus %s%s%s%s, %s", c->ops->name,
			           file, tsv ? " (columns " : "", tsv ? c->pm->columns : "", tsv ? ")" : "", why);
			free(f);
			return NULL;
		}
		if (!f->item[i].name_len)
			set_field_name(&f->item[i], p, len);
		p = e ? e + 1 : p + len;
	}
	return f;
}

void dx_fields_free(dx_fields *f)
{
	free(f);
}

/* A record whose fields the format cannot take apart: error rc, naming
 * the record's id. */
static int malformed(dx_corpus *c, const dx_record *rec, int rc, dx_err *err)
{
	const char *id;
	size_t idl;
	if (dx_corpus_id(c, rec->pos, &id, &idl, err) < 0)
		return err->code;
	return dx__fail_n(err, rc, id, idl, "malformed record");
}

static int fields(dx_corpus *c, const dx_fields *f, const dx_record *rec, const char **out,
                  size_t *outlen, dx_err *err)
{
	c->join.len = 0;
	for (size_t i = 0; i < f->n; i++) {
		const char *s;
		size_t n;
		c->scratch.len = 0;
		int rc = c->ops->field(c->pm, &f->item[i], rec->data, rec->len, &c->scratch, &s, &n);
		if (rc < 0)
			return malformed(c, rec, rc, err);
		if (f->n == 1) {
			*out = s;
			*outlen = n;
			return 0;
		}
		if ((i && dx__buf_addc(&c->join, ' ') < 0) || dx__buf_add(&c->join, s, n) < 0)
			return dx__fail_nomem(err);
	}
	*out = c->join.p;
	*outlen = c->join.len;
	return 0;
}

/* The dx_value_sink of dx_corpus_values. */
static int add_value(void *ctx, const char *name, size_t name_len, const char *s, size_t n, int kind,
                     int is_id)
{
	dx_corpus *c = ctx;
	if (c->nvals == c->vals_cap) {
		size_t cap = c->vals_cap;
		if (dx__grow(&c->vals, &cap, c->nvals + 1, 16, sizeof *c->vals) < 0 ||
		    dx__resize(&c->vin, cap, 1) < 0)
			return DX_ENOMEM;
		c->vals_cap = cap;
	}
	/* Scratch may move when it grows: what lies in it is kept as an
	 * offset, made a pointer again once every value is in.  Empty bytes
	 * point nowhere that could move (nor at the end of scratch). */
	if (!name_len)
		name = "";
	if (!n)
		s = "";
	uintptr_t lo = (uintptr_t)c->scratch.p, hi = lo + c->scratch.len;
	int name_in = c->scratch.p && (uintptr_t)name >= lo && (uintptr_t)name < hi;
	int data_in = c->scratch.p && (uintptr_t)s >= lo && (uintptr_t)s < hi;
	c->vals[c->nvals] = (dx_value){
		.name = name_in ? (const char *)((uintptr_t)name - lo) : name,
		.name_len = name_len,
		.data = data_in ? (const char *)((uintptr_t)s - lo) : s,
		.len = n,
		.kind = kind,
		.is_id = is_id,
	};
	c->vin[c->nvals++] = (unsigned char)(name_in | data_in << 1);
	return 0;
}

static int values(dx_corpus *c, const dx_fields *f, const dx_record *rec, const dx_value **vals,
                  size_t *nvals, dx_err *err)
{
	int rc = 0;
	c->scratch.len = 0;
	c->nvals = 0;
	if (!f)
		rc = c->ops->all(c->pm, rec->data, rec->len, &c->scratch, add_value, c);
	for (size_t i = 0; f && i < f->n && rc >= 0; i++) {
		const char *s;
		size_t n;
		const dx_field *fi = &f->item[i];
		rc = c->ops->field(c->pm, fi, rec->data, rec->len, &c->scratch, &s, &n);
		if (rc >= 0)
			rc = add_value(c, fi->name, fi->name_len, s, n, rc, 0);
	}
	if (rc == DX_ENOMEM)
		return dx__fail_nomem(err);
	if (rc < 0)
		return malformed(c, rec, rc, err);
	for (size_t i = 0; i < c->nvals; i++) {
		if (c->vin[i] & 1)
			c->vals[i].name = c->scratch.p + (uintptr_t)c->vals[i].name;
		if (c->vin[i] & 2)
			c->vals[i].data = c->scratch.p + (uintptr_t)c->vals[i].data;
	}
	*vals = c->vals;
	*nvals = c->nvals;
	return 0;
}

int dx_corpus_values(dx_corpus *c, const dx_fields *f, const dx_record *rec, const dx_value **vals,
                     size_t *n, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, values(c, f, rec, vals, n, err));
	return rc;
}

int dx_corpus_fields(dx_corpus *c, const dx_fields *f, const dx_record *rec, const char **out,
                     size_t *outlen, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, c, NULL, err, fields(c, f, rec, out, outlen, err));
	return rc;
}
