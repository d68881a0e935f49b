/*
 * index_read.c: opening an index and looking records up in it.
 *
 * The file is mapped read-only and shared by every process that opens it.
 * Opening checks the header, the section table and the small sections
 * whole; each 64 KiB chunk of the large ones (records, id tables) is checked
 * against its CRC32 the first time a lookup touches it, so that a lookup in
 * a multi-gigabyte index does not read all of it, and a damaged chunk is
 * refused before anything in it is used.  Every offset and count taken from
 * the file is checked against the bounds it points into.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "err.h"
#include "fileutil.h"
#include "guard.h"
#include "hash.h"
#include "idtable.h"
#include "index.h"
#include "index_format.h"

static const char *const section_names[DDX_SEC_MAX + 1] = {
	[DDX_SEC_PARAMS] = "params",    [DDX_SEC_SOURCES] = "sources", [DDX_SEC_RECORDS] = "records",
	[DDX_SEC_LONGREC] = "long-records", [DDX_SEC_IDPOOL] = "id-pool", [DDX_SEC_IDCHECK] = "id-checkpoints",
	[DDX_SEC_IDHASH] = "id-hash",   [DDX_SEC_CHUNKCRC] = "chunk-crcs",
	[DDX_SEC_POINTS] = "access-points", [DDX_SEC_WINDOWS] = "windows",
};

typedef struct sec {
	const unsigned char *p;
	uint64_t size;
	uint32_t crc;
	uint32_t chunk_first;
	int present;
} sec;

struct dx_index {
	char *path;
	const unsigned char *map;
	size_t size;
	const struct ddx_header *h;
	const struct ddx_section *table;
	sec s[DDX_SEC_MAX + 1];
	const uint32_t *chunk_crcs;
	uint64_t nchunks;
	uint64_t *checked;          /* a bit per chunk, set once its CRC matched */
	dx_params pm;
	const struct ddx_source *src;
	const char *strings;
	uint64_t strings_len;
	uint64_t n;
	uint32_t slot_tagmask, slot_recmask;
	char numbuf[24];            /* the text of a numeric id */
};

static int damaged(const dx_index *ix, dx_err *err, const char *what)
{
	return dx__fail(err, DX_ECORRUPT, 0, ix->path, "index damaged (%s), rebuild it with docdex index",
	                what);
}

/* Checks the chunks of section t that cover [off, off + len). */
static int check_chunks(dx_index *ix, int t, uint64_t off, uint64_t len, dx_err *err);

/* The same, where the one chunk that holds [off, off + len) is checked
 * already (all but the first touch of each) seen inline: the call and the
 * loop took half of finding a record's entry. */
static inline int touch(dx_index *ix, int t, uint64_t off, uint64_t len, dx_err *err)
{
	const sec *s = &ix->s[t];
	uint64_t c = off >> DDX_CHUNK_SHIFT, g = s->chunk_first + c;
	if (len && (off + len - 1) >> DDX_CHUNK_SHIFT == c &&
	    (__atomic_load_n(&ix->checked[g >> 6], __ATOMIC_RELAXED) >> (g & 63) & 1))
		return 0;
	return check_chunks(ix, t, off, len, err);
}

static int check_chunks(dx_index *ix, int t, uint64_t off, uint64_t len, dx_err *err)
{
	const sec *s = &ix->s[t];
	if (len == 0)
		return 0;
	uint64_t c = off >> DDX_CHUNK_SHIFT, last = (off + len - 1) >> DDX_CHUNK_SHIFT;
	for (; c <= last; c++) {
		uint64_t g = s->chunk_first + c, bit = 1ULL << (g & 63);
		uint64_t *word = &ix->checked[g >> 6];
		if (__atomic_load_n(word, __ATOMIC_RELAXED) & bit)
			continue;
		uint64_t at = c << DDX_CHUNK_SHIFT, n = s->size - at;
		if (n > (1ULL << DDX_CHUNK_SHIFT))
			n = 1ULL << DDX_CHUNK_SHIFT;
		if (dx__crc32(0, s->p + at, n) != ix->chunk_crcs[g]) {
			char what[96];
			snprintf(what, sizeof what, "checksum mismatch in section %s, bytes %llu to %llu",
			         section_names[t], (unsigned long long)at, (unsigned long long)(at + n));
			return damaged(ix, err, what);
		}
		__atomic_fetch_or(word, bit, __ATOMIC_RELAXED);
	}
	return 0;
}

static int check_whole(dx_index *ix, int t, dx_err *err)
{
	if (dx__crc32(0, ix->s[t].p, ix->s[t].size) != ix->s[t].crc) {
		char what[64];
		snprintf(what, sizeof what, "checksum mismatch in section %s", section_names[t]);
		return damaged(ix, err, what);
	}
	return 0;
}

static int check_header(dx_index *ix, dx_err *err)
{
	const struct ddx_header *h = (const void *)ix->map;
	size_t m = ix->size < 8 ? ix->size : 8;
	if (memcmp(h->magic, DDX_MAGIC, m) != 0)
		return dx__fail(err, DX_ECORRUPT, 0, ix->path, "not a docdex index");
	if (ix->size < sizeof *h)
		return damaged(ix, err, "truncated");
	if (h->byte_order != DDX_BYTE_ORDER)
		return dx__fail(err, DX_EVERSION, 0, ix->path,
		                "index written on a machine of another byte order, rebuild it here");
	if (h->version < DDX_VERSION_OLDEST || h->version > DDX_VERSION)
		return dx__fail(err, DX_EVERSION, 0, ix->path,
		                "index format version %u, this docdex reads versions %u to %u: rebuild it",
		                h->version, DDX_VERSION_OLDEST, DDX_VERSION);
	if (h->file_size != ix->size)
		return damaged(ix, err, h->file_size > ix->size ? "truncated" : "longer than written");
	/* The checksum first, over as much as the header claims (within the
	 * file), so that a damaged header says so. */
	if (h->header_size < sizeof *h || h->header_size > ix->size ||
	    h->header_size > sizeof *h + DDX_SEC_MAX * sizeof(struct ddx_section))
		return damaged(ix, err, "bad section table");
	if (ddx_header_crc(h, ix->map + sizeof *h, h->header_size - sizeof *h) != h->header_crc)
		return damaged(ix, err, "checksum mismatch in header");
	if (h->nsections == 0 || h->nsections > DDX_SEC_MAX ||
	    h->header_size != sizeof *h + h->nsections * sizeof(struct ddx_section))
		return damaged(ix, err, "bad section table");
	if (h->chunk_shift != DDX_CHUNK_SHIFT || h->format < DX_FMT_TSV || h->format > DX_FMT_TREC ||
	    (h->id_kind != DX_ID_SEQUENTIAL && h->id_kind != DX_ID_HASH) || h->nrecords >= UINT32_MAX ||
	    h->record_bits != dx__record_bits(h->nrecords) || h->nsources == 0)
		return damaged(ix, err, "bad header fields");
	ix->h = h;
	ix->n = h->nrecords;
	ix->table = (const void *)(ix->map + sizeof *h);
	return 0;
}

static int load_sections(dx_index *ix, dx_err *err)
{
	uint64_t total_chunks = 0;
	for (uint32_t i = 0; i < ix->h->nsections; i++) {
		const struct ddx_section *e = &ix->table[i];
		if (e->type == 0 || e->type > DDX_SEC_MAX || ix->s[e->type].present ||
		    e->offset < ix->h->header_size || e->offset % DDX_ALIGN || e->offset > ix->size ||
		    e->size > ix->size - e->offset)
			return damaged(ix, err, "bad section table");
		sec *s = &ix->s[e->type];
		*s = (sec){ ix->map + e->offset, e->size, e->crc, e->chunk_first, 1 };
		if (e->type != DDX_SEC_CHUNKCRC)
			total_chunks += (e->size + (1ULL << DDX_CHUNK_SHIFT) - 1) >> DDX_CHUNK_SHIFT;
	}
	/* The chunk CRCs must cover every section exactly. */
	sec *cc = &ix->s[DDX_SEC_CHUNKCRC];
	if (!cc->present || cc->size != total_chunks * 4)
		return damaged(ix, err, "bad section table");
	if (check_whole(ix, DDX_SEC_CHUNKCRC, err) < 0)
		return err->code;
	ix->chunk_crcs = (const uint32_t *)cc->p;
	ix->nchunks = total_chunks;
	for (int t = 1; t <= DDX_SEC_MAX; t++) {
		sec *s = &ix->s[t];
		if (t == DDX_SEC_CHUNKCRC || !s->present)
			continue;
		uint64_t n = (s->size + (1ULL << DDX_CHUNK_SHIFT) - 1) >> DDX_CHUNK_SHIFT;
		if (s->chunk_first > total_chunks || n > total_chunks - s->chunk_first)
			return damaged(ix, err, "bad section table");
	}
	ix->checked = calloc(total_chunks / 64 + 1, 8);
	return ix->checked ? 0 : dx__fail_nomem(err);
}

/* Sizes and counts of every section agree with the header. */
static int check_shapes(dx_index *ix, dx_err *err)
{
	const struct ddx_header *h = ix->h;
	sec *s = ix->s;
	if (!s[DDX_SEC_PARAMS].present || !s[DDX_SEC_SOURCES].present || !s[DDX_SEC_RECORDS].present ||
	    !s[DDX_SEC_LONGREC].present || s[DDX_SEC_RECORDS].size != ix->n * 8 ||
	    s[DDX_SEC_LONGREC].size % sizeof(struct ddx_longrec))
		return damaged(ix, err, "bad record sections");
	if (h->id_kind == DX_ID_HASH) {
		uint64_t groups = (ix->n + DDX_CKPT_EVERY - 1) / DDX_CKPT_EVERY;
		if (!s[DDX_SEC_IDHASH].present || !s[DDX_SEC_IDCHECK].present || !s[DDX_SEC_IDPOOL].present ||
		    s[DDX_SEC_IDHASH].size != dx__slots_for(ix->n) * 4 || s[DDX_SEC_IDCHECK].size != groups * 8)
			return damaged(ix, err, "bad id sections");
	} else if (ix->n && h->id_base > UINT64_MAX - ix->n) {
		return damaged(ix, err, "bad header fields");
	}
	if (s[DDX_SEC_POINTS].present != s[DDX_SEC_WINDOWS].present ||
	    s[DDX_SEC_POINTS].size % sizeof(struct ddx_point))
		return damaged(ix, err, "bad access point sections");
	ix->slot_tagmask = dx__slot_tag_mask(h->record_bits);
	ix->slot_recmask = dx__slot_rec_mask(h->record_bits);
	return 0;
}

static int load_sources(dx_index *ix, dx_err *err)
{
	const sec *s = &ix->s[DDX_SEC_SOURCES];
	uint64_t ns = ix->h->nsources;
	if (ns > s->size / sizeof(struct ddx_source))
		return damaged(ix, err, "bad sources section");
	ix->src = (const void *)s->p;
	ix->strings = (const char *)s->p + ns * sizeof(struct ddx_source);
	ix->strings_len = s->size - ns * sizeof(struct ddx_source);
	uint64_t next = 0;
	for (uint64_t i = 0; i < ns; i++) {
		const struct ddx_source *e = &ix->src[i];
		/* Paths lie inside the strings and end in NUL; records tile [0, n). */
		if ((uint64_t)e->path_off + e->path_len >= ix->strings_len ||
		    (uint64_t)e->abs_off + e->abs_len >= ix->strings_len ||
		    ix->strings[e->path_off + e->path_len] != '\0' || ix->strings[e->abs_off + e->abs_len] != '\0' ||
		    e->path_len == 0 || e->first_record != next || e->nrecords > ix->n - next ||
		    e->mtime_nsec >= 1000000000u)
			return damaged(ix, err, "bad sources section");
		/* A plain file is its own content; a gzip one has access points, the
		 * first at its start, within the points section. */
		uint64_t npts = ix->s[DDX_SEC_POINTS].size / sizeof(struct ddx_point);
		if (e->kind == DX_SOURCE_PLAIN ? e->usize != e->size || e->npoints
		    : (e->kind != DX_SOURCE_GZIP && e->kind != DX_SOURCE_BGZF) ||
		      e->first_point > npts || e->npoints > npts - e->first_point ||
		      (e->usize && !e->npoints) || e->usize / DDX_MAX_INFLATE > e->size)
			return damaged(ix, err, "bad sources section");
		next += e->nrecords;
	}
	if (next != ix->n)
		return damaged(ix, err, "bad sources section");
	return 0;
}

/* Long records are sorted, each names a record whose length says "long". */
static int check_longrecs(dx_index *ix, dx_err *err)
{
	const struct ddx_longrec *lr = (const void *)ix->s[DDX_SEC_LONGREC].p;
	uint64_t n = ix->s[DDX_SEC_LONGREC].size / sizeof *lr;
	for (uint64_t i = 0; i < n; i++)
		if (lr[i].record >= ix->n || (i && lr[i].record <= lr[i - 1].record) ||
		    lr[i].length < DDX_LEN_LONG || lr[i].length > DDX_MAX_RECORD)
			return damaged(ix, err, "bad long-records section");
	return 0;
}

dx_index *dx_index_open(const char *path, dx_err *err)
{
	dx_index *ix = calloc(1, sizeof *ix);
	if (!ix || !(ix->path = strdup(path))) {
		free(ix);
		dx__fail_nomem(err);
		return NULL;
	}
	/* Non-blocking: a FIFO is refused below, not waited on. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		dx__fail_sys(err, path, "cannot open index");
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		dx__fail(err, DX_EINVAL, 0, path, "index is not a regular file");
		goto fail;
	}
	ix->size = (size_t)st.st_size;
	if (ix->size == 0) {
		dx__fail(err, DX_ECORRUPT, 0, path, "empty index file");
		goto fail;
	}
	ix->map = dx__map_file(fd, ix->size);
	if (ix->map == MAP_FAILED) {
		ix->map = NULL;
		dx__fail_sys(err, path, "cannot map index");
		goto fail;
	}
	/* An index is read at random all over, and a first read of a chunk
	 * checks all of its 64 KiB: its pages are asked to come into the cache
	 * in folios of 2 MiB, which dx__map_file's mapping maps with one TLB
	 * entry each.  With the 8 GiB corpus's 194 MB index out of the cache,
	 * one docdex get took 15 ms against 41-46 ms; c[pos] from Python on
	 * the 1 GiB corpus, its index read in by faults, 0.89-0.98 M/s against
	 * 0.85-0.90 M/s.  The corpus gets no such advice: one record read cold
	 * would read 2 MiB. */
	madvise((void *)(uintptr_t)ix->map, ix->size, MADV_HUGEPAGE);
	close(fd);
	fd = -1;
	if (check_header(ix, err) < 0 || load_sections(ix, err) < 0 || check_shapes(ix, err) < 0 ||
	    check_whole(ix, DDX_SEC_PARAMS, err) < 0 || check_whole(ix, DDX_SEC_SOURCES, err) < 0 ||
	    check_whole(ix, DDX_SEC_LONGREC, err) < 0 || load_sources(ix, err) < 0 ||
	    check_longrecs(ix, err) < 0 ||
	    dx__params_read((const char *)ix->s[DDX_SEC_PARAMS].p, ix->s[DDX_SEC_PARAMS].size, &ix->pm,
	                    path, err) < 0)
		goto fail;
	if (ix->pm.format != (int)ix->h->format) {
		damaged(ix, err, "format differs between header and parameters");
		goto fail;
	}
	return ix;
fail:
	if (fd >= 0)
		close(fd);
	dx_index_close(ix);
	return NULL;
}

void dx_index_close(dx_index *ix)
{
	if (!ix)
		return;
	if (ix->map)
		munmap((void *)ix->map, ix->size);
	free(ix->checked);
	free(ix->path);
	free(ix);
}

/* The padding between sections holds zeros, so that no byte of the file
 * goes unchecked. */
static int check_padding(dx_index *ix, dx_err *err)
{
	/* Section extents in file order (a handful: insertion sort). */
	uint64_t off[DDX_SEC_MAX], end[DDX_SEC_MAX];
	int n = 0;
	for (int t = 1; t <= DDX_SEC_MAX; t++) {
		if (!ix->s[t].present)
			continue;
		uint64_t o = (uint64_t)(ix->s[t].p - ix->map), e = o + ix->s[t].size;
		int i = n++;
		for (; i > 0 && off[i - 1] > o; i--) {
			off[i] = off[i - 1];
			end[i] = end[i - 1];
		}
		off[i] = o;
		end[i] = e;
	}
	uint64_t at = ix->h->header_size;
	for (int i = 0; i <= n; i++) {
		uint64_t next = i < n ? off[i] : ix->size;
		for (; at < next; at++)
			if (ix->map[at])
				return damaged(ix, err, "non-zero bytes between sections");
		if (i < n && end[i] > at)
			at = end[i];
	}
	return 0;
}

static int check_all(dx_index *ix, dx_err *err)
{
	if (check_padding(ix, err) < 0)
		return err->code;
	for (int t = 1; t <= DDX_SEC_MAX; t++)
		if (ix->s[t].present && check_whole(ix, t, err) < 0)
			return err->code;
	/* The chunk CRCs too, so that --verify and lookups agree on what is damaged. */
	for (int t = 1; t <= DDX_SEC_MAX; t++)
		if (ix->s[t].present && t != DDX_SEC_CHUNKCRC && touch(ix, t, 0, ix->s[t].size, err) < 0)
			return err->code;
	return 0;
}

void dx_index_get_info(const dx_index *ix, dx_index_info *info)
{
	*info = (dx_index_info){
		.version = ix->h->version,
		.file_size = ix->size,
		.records = ix->n,
		.sources = ix->h->nsources,
		.format = (int)ix->h->format,
		.id_kind = (int)ix->h->id_kind,
		.id_base = ix->h->id_base,
		.params = (const char *)ix->s[DDX_SEC_PARAMS].p,
		.params_len = ix->s[DDX_SEC_PARAMS].size,
	};
}

int dx_index_get_source(const dx_index *ix, uint32_t i, dx_source_info *info)
{
	if (i >= ix->h->nsources)
		return DX_EINVAL;
	const struct ddx_source *e = &ix->src[i];
	*info = (dx_source_info){
		.path = ix->strings + e->path_off,
		.abs_path = ix->strings + e->abs_off,
		.kind = (int)e->kind,
		.usize = e->usize,
		.points = e->npoints,
		.window_bytes = e->window_bytes,
		.size = e->size,
		.mtime_sec = e->mtime_sec,
		.mtime_nsec = e->mtime_nsec,
		.fingerprint = e->fingerprint,
		.first_record = e->first_record,
		.records = e->nrecords,
	};
	return 0;
}

uint32_t dx_index_sections(const dx_index *ix)
{
	return ix->h->nsections;
}

int dx_index_get_section(const dx_index *ix, uint32_t i, dx_section_info *info)
{
	if (i >= ix->h->nsections)
		return DX_EINVAL;
	info->name = section_names[ix->table[i].type];
	info->offset = ix->table[i].offset;
	info->size = ix->table[i].size;
	return 0;
}

const char *dx_source_kind_name(int kind)
{
	return kind == DX_SOURCE_PLAIN ? "plain" : kind == DX_SOURCE_GZIP ? "gzip"
	     : kind == DX_SOURCE_BGZF ? "bgzf" : "unknown";
}

int dx__index_points(dx_index *ix, uint32_t src, const struct ddx_point **pts, uint64_t *n,
                     const unsigned char **windows, uint64_t *windows_size, dx_err *err)
{
	const struct ddx_source *e = &ix->src[src];
	*pts = (const struct ddx_point *)ix->s[DDX_SEC_POINTS].p + e->first_point;
	*n = e->npoints;
	*windows = ix->s[DDX_SEC_WINDOWS].p;
	*windows_size = ix->s[DDX_SEC_WINDOWS].size;
	/* The points are checked now (a few per MiB): the chunks they lie in,
	 * and their order from offset 0 on; windows as they are used. */
	if (touch(ix, DDX_SEC_POINTS, e->first_point * sizeof **pts, e->npoints * sizeof **pts, err) < 0)
		return err->code;
	const struct ddx_point *p = *pts;
	for (uint64_t k = 0; k < e->npoints; k++)
		if ((k == 0 ? p[k].uoff != 0 : p[k].uoff <= p[k - 1].uoff || p[k].coff < p[k - 1].coff) ||
		    p[k].uoff > e->usize || p[k].coff > e->size)
			return damaged(ix, err, "access points out of order");
	return 0;
}

int dx__index_check_windows(dx_index *ix, uint64_t off, uint64_t len, dx_err *err)
{
	return touch(ix, DDX_SEC_WINDOWS, off, len, err);
}

int dx_index_check(dx_index *ix, dx_err *err)
{
	int rc;
	DX__GUARDED(rc, NULL, ix, err, check_all(ix, err));
	return rc;
}

int dx__index_owns(const dx_index *ix, const void *addr)
{
	const unsigned char *a = addr;
	return ix->map && a >= ix->map && a < ix->map + ix->size;
}

void dx__index_mapping(const dx_index *ix, const void **p, uint64_t *len)
{
	*p = ix->map;
	*len = ix->size;
}

const char *dx__index_path(const dx_index *ix)
{
	return ix->path;
}

const dx_params *dx__index_params(const dx_index *ix)
{
	return &ix->pm;
}

uint64_t dx__index_count(const dx_index *ix)
{
	return ix->n;
}

void dx__index_prefetch(const dx_index *ix, const uint64_t *pos, size_t n)
{
	const unsigned char *t = ix->s[DDX_SEC_RECORDS].p;
	for (size_t i = 0; i < n; i++) {
		if (pos[i] < ix->n)
			__builtin_prefetch(t + pos[i] * 8);
		if (pos[i] + 1 < ix->n)
			__builtin_prefetch(t + pos[i] * 8 + 8);
	}
}

/* The source of record pos: the last whose first record is at or before
 * it. */
static uint32_t source_of(const dx_index *ix, uint64_t pos)
{
	uint32_t lo = 0, hi = ix->h->nsources;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (ix->src[mid].first_record <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The length of record pos, one of the (few) of 16 MiB or more, by binary
 * search of their section: apart, so that the common path of
 * dx__index_record stays short. */
static __attribute__((noinline)) int long_length(dx_index *ix, uint64_t pos, uint64_t *len, dx_err *err)
{
	const struct ddx_longrec *lr = (const void *)ix->s[DDX_SEC_LONGREC].p;
	uint64_t lo = 0, hi = ix->s[DDX_SEC_LONGREC].size / sizeof *lr;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (lr[mid].record < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == ix->s[DDX_SEC_LONGREC].size / sizeof *lr || lr[lo].record != pos)
		return damaged(ix, err, "long record missing");
	*len = lr[lo].length;
	return 0;
}

/* Record pos's entry (offset << DDX_LEN_BITS | length), its chunk checked,
 * and its source. */
static inline int entry(dx_index *ix, uint64_t pos, uint64_t *packed, uint32_t *file, dx_err *err)
{
	if (pos >= ix->n)
		return dx__fail(err, DX_EINVAL, 0, ix->path, "record position out of range");
	if (touch(ix, DDX_SEC_RECORDS, pos * 8, 8, err) < 0)
		return err->code;
	memcpy(packed, ix->s[DDX_SEC_RECORDS].p + pos * 8, 8);
	*file = source_of(ix, pos);
	return 0;
}

int dx__index_record(dx_index *ix, uint64_t pos, uint32_t *file, uint64_t *off, uint64_t *len,
                     dx_err *err)
{
	uint64_t packed = 0;
	if (entry(ix, pos, &packed, file, err) < 0)
		return err->code;
	*off = packed >> DDX_LEN_BITS;
	*len = packed & DDX_LEN_LONG;
	if (*len == DDX_LEN_LONG && long_length(ix, pos, len, err) < 0)
		return err->code;
	const struct ddx_source *e = &ix->src[*file];
	if (*off > e->usize || *len > e->usize - *off)
		return damaged(ix, err, "record beyond the end of its file");
	return 0;
}

int dx__index_start(dx_index *ix, uint64_t pos, uint32_t *file, uint64_t *off, dx_err *err)
{
	uint64_t packed = 0;
	if (entry(ix, pos, &packed, file, err) < 0)
		return err->code;
	*off = packed >> DDX_LEN_BITS;
	return 0;
}

static int pool_check(void *ctx, uint64_t off, uint64_t len)
{
	void **a = ctx;
	return touch(a[0], DDX_SEC_IDPOOL, off, len, a[1]) < 0 ? -2 : 0;
}

/*
 * The id of record pos through its group of DDX_CKPT_EVERY ids: the pool's
 * bytes from the group's checkpoint to the next are checked at once, and
 * the walk to the id, which cannot leave them, then checks nothing more,
 * where checking each length and id on the way took a third of docdex
 * get's time on string ids.  A group whose bytes do not hold the id (a
 * damaged checkpoint or length) is walked again with every step checked.
 */
static int pool_id_grouped(dx_index *ix, uint64_t pos, const char **id, size_t *len, dx_err *err)
{
	const unsigned char *pool = ix->s[DDX_SEC_IDPOOL].p;
	const uint64_t *ckpt = (const uint64_t *)ix->s[DDX_SEC_IDCHECK].p;
	uint64_t pool_size = ix->s[DDX_SEC_IDPOOL].size, nckpt = ix->s[DDX_SEC_IDCHECK].size / 8;
	uint64_t g = pos / DDX_CKPT_EVERY;
	if (g >= nckpt)
		return 0;
	uint64_t more = g + 1 < nckpt ? 8 : 0;
	if (touch(ix, DDX_SEC_IDCHECK, g * 8, 8 + more, err) < 0)
		return err->code;
	uint64_t from = ckpt[g], to = more ? ckpt[g + 1] : pool_size;
	if (from > to || to > pool_size)
		return 0;
	if (touch(ix, DDX_SEC_IDPOOL, from, to - from, err) < 0)
		return err->code;
	return dx__pool_id(pool, to, ckpt, nckpt, pos, NULL, NULL, id, len) == 0;
}

static int pool_id(dx_index *ix, uint64_t pos, const char **id, size_t *len, dx_err *err)
{
	int r0 = pool_id_grouped(ix, pos, id, len, err);
	if (r0 != 0)
		return r0 < 0 ? r0 : 0;
	uint64_t g = pos / DDX_CKPT_EVERY;
	if (touch(ix, DDX_SEC_IDCHECK, g * 8, 8, err) < 0)
		return err->code;
	void *ctx[2] = { ix, err };
	int r = dx__pool_id(ix->s[DDX_SEC_IDPOOL].p, ix->s[DDX_SEC_IDPOOL].size,
	                    (const uint64_t *)ix->s[DDX_SEC_IDCHECK].p, ix->s[DDX_SEC_IDCHECK].size / 8,
	                    pos, pool_check, ctx, id, len);
	if (r == -2)
		return err->code;
	if (r < 0)
		return damaged(ix, err, "id pool out of bounds");
	return 0;
}

int dx__index_is_id(dx_index *ix, uint64_t pos, const char *id, size_t len, dx_err *err)
{
	if (pos >= ix->n)
		return dx__fail(err, DX_EINVAL, 0, ix->path, "record position out of range");
	const char *want;
	size_t want_len;
	if (ix->h->id_kind == DX_ID_HASH) {
		if (pool_id(ix, pos, &want, &want_len, err) < 0)
			return err->code;
		return want_len == len && memcmp(want, id, len) == 0;
	}
	/* A sequential id is the number in its one decimal spelling: the
	 * record's read as a number, where writing pos's out took a quarter
	 * of checking a record. */
	uint64_t v;
	return dx__id_number(id, len, &v) && v == ix->h->id_base + pos;
}

int dx__index_id(dx_index *ix, uint64_t pos, const char **id, size_t *len, dx_err *err)
{
	if (pos >= ix->n)
		return dx__fail(err, DX_EINVAL, 0, ix->path, "record position out of range");
	if (ix->h->id_kind == DX_ID_HASH)
		return pool_id(ix, pos, id, len, err);
	*len = dx__id_format(ix->h->id_base + pos, ix->numbuf);
	*id = ix->numbuf;
	return 0;
}

/*
 * Finding an id by its hash waits on memory three times, one after the
 * other: the id table's slot, the id pool's checkpoint for the record the
 * slot names, and the pool's bytes from there.  For a batch, each stage is
 * asked of PREFETCH_RUN ids (about as many lines as the CPU waits on at
 * once) before the next stage reads what it brought in.  Hints only: the
 * first slot probed, whatever its tag, read unchecked and only within the
 * sections.
 */
enum { PREFETCH_RUN = 64, POOL_LINES = 3 };
void dx__index_prefetch_ids(const dx_index *ix, const char *const *id, const size_t *len, size_t n)
{
	if (ix->h->id_kind != DX_ID_HASH)
		return;
	const uint32_t *t = (const uint32_t *)ix->s[DDX_SEC_IDHASH].p;
	const uint64_t *ckpt = (const uint64_t *)ix->s[DDX_SEC_IDCHECK].p;
	const unsigned char *pool = ix->s[DDX_SEC_IDPOOL].p;
	uint64_t nslots = ix->s[DDX_SEC_IDHASH].size / 4, nckpt = ix->s[DDX_SEC_IDCHECK].size / 8;
	uint64_t pool_size = ix->s[DDX_SEC_IDPOOL].size;
	uint64_t step[PREFETCH_RUN]; /* each id's slot, then its checkpoint */
	if (!nslots)
		return;
	for (size_t from = 0; from < n; from += PREFETCH_RUN) {
		size_t k = n - from < PREFETCH_RUN ? n - from : PREFETCH_RUN;
		for (size_t i = 0; i < k; i++) {
			uint64_t h = dx__hash64(id[from + i], len[from + i], ix->h->hash_seed);
			step[i] = dx__slot_of(h, nslots);
			__builtin_prefetch(t + step[i]);
		}
		for (size_t i = 0; i < k; i++) {
			uint32_t slot = t[step[i]];
			uint64_t g = slot ? ((slot & ix->slot_recmask) - 1) / DDX_CKPT_EVERY : UINT64_MAX;
			step[i] = g < nckpt ? g : UINT64_MAX;
			if (step[i] != UINT64_MAX)
				__builtin_prefetch(ckpt + step[i]);
		}
		for (size_t i = 0; i < k; i++) {
			uint64_t off = step[i] != UINT64_MAX ? ckpt[step[i]] : pool_size;
			for (int l = 0; l < POOL_LINES && off < pool_size; l++, off += 64)
				__builtin_prefetch(pool + off);
		}
	}
}

int dx__index_find(dx_index *ix, const char *id, size_t len, uint64_t *pos, dx_err *err)
{
	uint64_t v;
	if (ix->h->id_kind == DX_ID_SEQUENTIAL) {
		if (!dx__id_number(id, len, &v) || v < ix->h->id_base || v - ix->h->id_base >= ix->n)
			return 0;
		*pos = v - ix->h->id_base;
		return 1;
	}
	const uint32_t *t = (const uint32_t *)ix->s[DDX_SEC_IDHASH].p;
	uint64_t nslots = ix->s[DDX_SEC_IDHASH].size / 4;
	uint64_t h = dx__hash64(id, len, ix->h->hash_seed);
	uint32_t tag = dx__slot_tag(h, ix->h->record_bits);
	uint64_t i = dx__slot_of(h, nslots);
	/* At most every slot once, even in a damaged table with no empty one. */
	for (uint64_t probes = 0; probes < nslots; probes++, i = i + 1 == nslots ? 0 : i + 1) {
		if (touch(ix, DDX_SEC_IDHASH, i * 4, 4, err) < 0)
			return err->code;
		uint32_t s = t[i];
		if (!s)
			return 0;
		if ((s & ix->slot_tagmask) != tag)
			continue;
		uint64_t r = (s & ix->slot_recmask) - 1;
		if (r >= ix->n)
			return damaged(ix, err, "id table points past the records");
		const char *other;
		size_t olen;
		if (pool_id(ix, r, &other, &olen, err) < 0)
			return err->code;
		if (olen == len && memcmp(other, id, len) == 0) {
			*pos = r;
			return 1;
		}
	}
	return 0;
}
