/*
 * loader.c: the loading strategies that docdex bench compares (see
 * docdex.h).  memory and stdio are the two ways of the study that docdex
 * grows from, written as a trainer would write them: each process keeps a
 * private table from id to document (memory) or to offset (stdio), so what
 * they cost in memory grows with the number of processes.  pread, mmap,
 * gzip and bgzf serve from the shared index: pread and mmap are the
 * library's two accesses to a plain corpus (dx_corpus_set_access); the
 * -cached strategies add the inflate cache (workload.c sets it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dxbench.h"
#include "buf.h"
#include "corpus.h"
#include "err.h"
#include "hash.h"
#include "index.h"
#include "scan.h"

static const char *const names[] = {
	[DXB_LOAD_MEMORY] = "memory", [DXB_LOAD_STDIO] = "stdio", [DXB_LOAD_PREAD] = "pread",
	[DXB_LOAD_MMAP] = "mmap",     [DXB_LOAD_GZIP] = "gzip",   [DXB_LOAD_BGZF] = "bgzf",
	[DXB_LOAD_GZIP_CACHED] = "gzip-cached", [DXB_LOAD_BGZF_CACHED] = "bgzf-cached",
};

const char *dxb_loader_name(int strategy)
{
	return strategy >= DXB_LOAD_MEMORY && strategy <= DXB_LOAD_LAST ? names[strategy] : "?";
}

int dxb_loader_parse(const char *name)
{
	for (int s = DXB_LOAD_MEMORY; s <= DXB_LOAD_LAST; s++)
		if (strcmp(names[s], name) == 0)
			return s;
	return -1;
}

int dxb_loader_applies(int strategy, dx_corpus *c, const char **why)
{
	static const int needs[] = {
		[DXB_LOAD_STDIO] = DX_SOURCE_PLAIN, [DXB_LOAD_PREAD] = DX_SOURCE_PLAIN,
		[DXB_LOAD_MMAP] = DX_SOURCE_PLAIN,  [DXB_LOAD_GZIP] = DX_SOURCE_GZIP,
		[DXB_LOAD_BGZF] = DX_SOURCE_BGZF,   [DXB_LOAD_GZIP_CACHED] = DX_SOURCE_GZIP,
		[DXB_LOAD_BGZF_CACHED] = DX_SOURCE_BGZF,
	};
	static const char *const need_words[] = {
		[DX_SOURCE_PLAIN] = "needs an uncompressed corpus",
		[DX_SOURCE_GZIP] = "needs a gzip corpus (not BGZF)",
		[DX_SOURCE_BGZF] = "needs a BGZF corpus",
	};
	if (strategy == DXB_LOAD_MEMORY)
		return 1;
	dx_index *ix = dx_corpus_index(c);
	dx_index_info info;
	dx_index_get_info(ix, &info);
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(ix, i, &si) < 0 || si.kind != needs[strategy]) {
			*why = need_words[needs[strategy]];
			return 0;
		}
	}
	return 1;
}

/*
 * A private table from id to a stretch of bytes, as a trainer's dict is:
 * entries in one array, ids in one buffer, open addressing on the hash of
 * the id.  memory keeps the documents' bytes in `bytes` and their offsets
 * into it; stdio keeps their offsets into their files.
 */
typedef struct entry {
	uint64_t off;         /* into bytes (memory) or into the file (stdio) */
	uint64_t id_off;      /* into ids */
	uint32_t len, id_len;
	uint32_t file;
} entry;

typedef struct idmap {
	dx_buf bytes;         /* memory: every record, one after the other */
	dx_buf ids;
	entry *e;
	size_t n, cap;
	uint64_t *slot;       /* entry index + 1, 0 for an empty slot */
	size_t mask;
} idmap;

static void idmap_free(idmap *m)
{
	if (!m)
		return;
	dx__buf_free(&m->bytes);
	dx__buf_free(&m->ids);
	free(m->e);
	free(m->slot);
	free(m);
}

static int idmap_size(idmap *m, uint64_t records, dx_err *err)
{
	size_t slots = 16;
	while (slots < records * 2)
		slots <<= 1;
	m->cap = records ? (size_t)records : 1;
	m->e = malloc(m->cap * sizeof *m->e);
	m->slot = calloc(slots, sizeof *m->slot);
	m->mask = slots - 1;
	if (!m->e || !m->slot)
		return dx__fail_nomem(err);
	return 0;
}

static const entry *idmap_find(const idmap *m, const char *id, size_t len)
{
	size_t h = (size_t)dx__hash64(id, len, 0) & m->mask;
	for (uint64_t s; (s = m->slot[h]) != 0; h = (h + 1) & m->mask) {
		const entry *e = &m->e[s - 1];
		if (e->id_len == len && memcmp(m->ids.p + e->id_off, id, len) == 0)
			return e;
	}
	return NULL;
}

/* Adds an entry unless the id is there already (the first one is kept). */
static int idmap_add(idmap *m, const char *id, size_t len, const entry *val, dx_err *err)
{
	if (m->n == m->cap || len > UINT32_MAX)
		return dx__fail(err, DX_ELIMIT, 0, "", "more records than the index said");
	size_t h = (size_t)dx__hash64(id, len, 0) & m->mask;
	for (uint64_t s; (s = m->slot[h]) != 0; h = (h + 1) & m->mask) {
		const entry *e = &m->e[s - 1];
		if (e->id_len == len && memcmp(m->ids.p + e->id_off, id, len) == 0)
			return 0;
	}
	entry *e = &m->e[m->n];
	*e = *val;
	e->id_off = m->ids.len;
	e->id_len = (uint32_t)len;
	if (dx__buf_add(&m->ids, id, len) < 0)
		return dx__fail_nomem(err);
	m->slot[h] = ++m->n;
	return 0;
}

struct dxb_loader {
	int strategy;
	dx_corpus *c;
	dx_index *ix;
	idmap *map;           /* memory, stdio */
	int owns_map;
	uint32_t nsrc;
	FILE **files;         /* stdio */
	int line_format;      /* stdio: records are lines (TSV, JSONL) */
	char *line;           /* stdio: getline's buffer */
	size_t line_cap;
	dx_buf arena;         /* stdio: the records of a batch */
	size_t *arena_off;
	size_t arena_n;
};

static int memory_record(void *ctx, const dx_scan_item *it, dx_err *err)
{
	idmap *m = ctx;
	if (it->bad)
		return 0;
	if (it->length > UINT32_MAX)
		return dx__fail(err, DX_ELIMIT, 0, "", "a record of 4 GiB or more");
	entry e = { .off = m->bytes.len, .len = (uint32_t)it->length, .file = it->file };
	if (dx__buf_add(&m->bytes, it->rec, it->length) < 0)
		return dx__fail_nomem(err);
	return idmap_add(m, it->id, it->id_len, &e, err);
}

/* Reads every source file into the heap and builds the table, as the
 * study's in-memory loader does on start. */
static int memory_load(dxb_loader *l, dx_err *err)
{
	dx_index_info info;
	dx_index_get_info(l->ix, &info);
	uint64_t usize = 0;
	for (uint32_t i = 0; i < info.sources; i++) {
		dx_source_info si;
		if (dx_index_get_source(l->ix, i, &si) == 0)
			usize += si.usize;
	}
	int rc = idmap_size(l->map, info.records, err);
	if (rc < 0)
		return rc;
	if (usize > SIZE_MAX / 2 || dx__buf_reserve(&l->map->bytes, (size_t)usize) < 0)
		return dx__fail(err, DX_ENOMEM, ENOMEM, "", "out of memory for a copy of the corpus");
	dx_params pm = *dx__index_params(l->ix);
	dx_scan scan = { .pm = &pm, .on_record = memory_record, .ctx = l->map };
	for (uint32_t i = 0; i < info.sources && rc == 0; i++)
		rc = dx__scan_file(&scan, dx__corpus_source_path(l->c, i), i, err);
	dx__buf_free(&scan.points);
	dx__buf_free(&scan.windows);
	return rc;
}

/* The offsets table of TREC-DL's loader, built from the index: every id
 * with its file and offset, in the process's own memory. */
static int stdio_load(dxb_loader *l, dx_err *err)
{
	uint64_t n = dx_corpus_count(l->c);
	int rc = idmap_size(l->map, n, err);
	if (rc < 0)
		return rc;
	for (uint64_t pos = 0; pos < n; pos++) {
		entry e = { 0 };
		uint64_t off, len;
		const char *id;
		size_t idlen;
		if (dx__index_record(l->ix, pos, &e.file, &off, &len, err) < 0 ||
		    dx__index_id(l->ix, pos, &id, &idlen, err) < 0)
			return err->code;
		e.off = off;
		e.len = (uint32_t)len;
		if ((rc = idmap_add(l->map, id, idlen, &e, err)) < 0)
			return rc;
	}
	l->files = calloc(l->nsrc, sizeof *l->files);
	if (!l->files)
		return dx__fail_nomem(err);
	for (uint32_t i = 0; i < l->nsrc; i++) {
		const char *path = dx__corpus_source_path(l->c, i);
		if (!(l->files[i] = fopen(path, "re")))
			return dx__fail_sys(err, path, "cannot open");
	}
	return 0;
}

dxb_loader *dxb_loader_open(int strategy, dx_corpus *c, const dxb_loader *share, dx_err *err)
{
	const char *why;
	if (strategy < DXB_LOAD_MEMORY || strategy > DXB_LOAD_LAST) {
		dx__fail(err, DX_EINVAL, 0, "", "unknown loading strategy");
		return NULL;
	}
	if (!dxb_loader_applies(strategy, c, &why)) {
		dx__fail(err, DX_EINVAL, 0, dxb_loader_name(strategy), "%s", why);
		return NULL;
	}
	dxb_loader *l = calloc(1, sizeof *l);
	if (!l) {
		dx__fail_nomem(err);
		return NULL;
	}
	dx_index_info info;
	l->strategy = strategy;
	l->c = c;
	l->ix = dx_corpus_index(c);
	dx_index_get_info(l->ix, &info);
	l->nsrc = info.sources;
	int rc = 0;
	if (strategy == DXB_LOAD_MEMORY && share && share->strategy == DXB_LOAD_MEMORY) {
		l->map = share->map;
	} else if (strategy == DXB_LOAD_MEMORY || strategy == DXB_LOAD_STDIO) {
		l->owns_map = 1;
		if (!(l->map = calloc(1, sizeof *l->map)))
			rc = dx__fail_nomem(err);
		else if (strategy == DXB_LOAD_MEMORY)
			rc = memory_load(l, err);
		else
			rc = stdio_load(l, err);
		l->line_format = info.format != DX_FMT_TREC;
	} else if (strategy == DXB_LOAD_PREAD || strategy == DXB_LOAD_MMAP) {
		/* The library's own ways of reading a plain corpus. */
		rc = dx_corpus_set_access(c, strategy == DXB_LOAD_PREAD ? DX_ACCESS_PREAD : DX_ACCESS_MMAP, err);
	}
	if (rc < 0) {
		dxb_loader_close(l);
		return NULL;
	}
	return l;
}

/* The id a trainer would hold for record pos, looked up in the table. */
static int lookup(dxb_loader *l, uint64_t pos, const entry **e, dx_err *err)
{
	const char *id;
	size_t len;
	if (dx_corpus_id(l->c, pos, &id, &len, err) < 0)
		return err->code;
	if (!(*e = idmap_find(l->map, id, len)))
		return dx__fail_n(err, DX_EFORMAT, id, len, "the loader's table has no record with this id");
	return 0;
}

/* Makes room for the batch's offsets into the arena. */
static int arena_begin(dxb_loader *l, size_t n, dx_err *err)
{
	if (n > l->arena_n) {
		size_t *p = realloc(l->arena_off, n * sizeof *p);
		if (!p)
			return dx__fail_nomem(err);
		l->arena_off = p;
		l->arena_n = n;
	}
	l->arena.len = 0;
	return 0;
}

/* Points each record at its bytes once the arena stopped moving. */
static void arena_end(dxb_loader *l, size_t n, dx_record *recs)
{
	for (size_t i = 0; i < n; i++)
		recs[i].data = l->arena.p + l->arena_off[i];
}

static int stdio_read(dxb_loader *l, const entry *e, dx_err *err)
{
	FILE *f = l->files[e->file];
	const char *path = dx__corpus_source_path(l->c, e->file);
	if (fseeko(f, (off_t)e->off, SEEK_SET) < 0)
		return dx__fail_sys(err, path, "cannot seek");
	if (l->line_format) {
		ssize_t got = getline(&l->line, &l->line_cap, f);
		if (got < 0)
			return ferror(f) ? dx__fail_sys(err, path, "cannot read")
			                 : dx__fail(err, DX_ESTALE, 0, path, "the file ends before a record");
		size_t len = (size_t)got;
		while (len && (l->line[len - 1] == '\n' || l->line[len - 1] == '\r'))
			len--;
		if (dx__buf_add(&l->arena, l->line, len) < 0)
			return dx__fail_nomem(err);
		return 0;
	}
	if (dx__buf_reserve(&l->arena, e->len) < 0)
		return dx__fail_nomem(err);
	if (fread(l->arena.p + l->arena.len, 1, e->len, f) != e->len)
		return ferror(f) ? dx__fail_sys(err, path, "cannot read")
		                 : dx__fail(err, DX_ESTALE, 0, path, "the file ends before a record");
	l->arena.len += e->len;
	return 0;
}

int dxb_loader_get(dxb_loader *l, const uint64_t *pos, size_t n, dx_record *recs, dx_err *err)
{
	int rc;
	if (l->strategy != DXB_LOAD_MEMORY && l->strategy != DXB_LOAD_STDIO)
		return dx_corpus_records(l->c, pos, n, recs, err);
	if (l->strategy == DXB_LOAD_MEMORY) {
		for (size_t i = 0; i < n; i++) {
			const entry *e;
			if ((rc = lookup(l, pos[i], &e, err)) < 0)
				return rc;
			recs[i] = (dx_record){ .pos = pos[i], .data = l->map->bytes.p + e->off,
			                       .len = e->len, .stable = 1 };
		}
		return 0;
	}
	if ((rc = arena_begin(l, n, err)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		l->arena_off[i] = l->arena.len;
		const entry *e;
		if ((rc = lookup(l, pos[i], &e, err)) < 0 || (rc = stdio_read(l, e, err)) < 0)
			return rc;
		recs[i] = (dx_record){ .pos = pos[i], .len = l->arena.len - l->arena_off[i] };
	}
	arena_end(l, n, recs);
	return 0;
}


void dxb_loader_close(dxb_loader *l)
{
	if (!l)
		return;
	if (l->owns_map)
		idmap_free(l->map);
	for (uint32_t i = 0; l->files && i < l->nsrc; i++)
		if (l->files[i])
			fclose(l->files[i]);
	free(l->files);
	free(l->line);
	dx__buf_free(&l->arena);
	free(l->arena_off);
	free(l);
}
