/*
 * fuzz_gzip.c: a gzip corpus file and its index, both of arbitrary bytes,
 * to dx_corpus_open and random reads of records through the index's access
 * points (lib/gz_read.c): each must be served or refused, never crash or leak.
 *
 * Input: a little-endian u32 k, then k & 0x7fffffff bytes of index
 * (c.tsv.gz.ddx; fewer if the input ends first), then the gzip file
 * (c.tsv.gz).  Bit 31 of k clear: the harness first makes the index fit
 * the gzip file as docdex index would have (each source's size, mtime and
 * fingerprint) and recomputes its CRC32s, so that a mutation of either
 * reaches the reads instead of being refused as stale or damaged; set: the
 * bytes go in as they are.  The seeds (tests/fuzz/seeds/gzip) are gzip and
 * BGZF files with the indexes docdex index built of them, at FIXED_MTIME.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docdex.h"
#include "fileutil.h"
#include "fuzz.h"
#include "index_format.h"

/* 2023-11-14 22:13:20 UTC, the mtime the seeds' indexes record. */
#define FIXED_MTIME 1700000000

/* Makes every source entry describe the gzip file: size, mtime, fingerprint. */
static void fit_sources(unsigned char *p, size_t size, uint64_t gz_size, uint64_t fp)
{
	struct ddx_header h;
	struct ddx_section e;
	if (size < sizeof h)
		return;
	memcpy(&h, p, sizeof h);
	if (h.nsections > DDX_SEC_MAX || sizeof h + h.nsections * sizeof e > size)
		return;
	for (uint32_t i = 0; i < h.nsections; i++) {
		memcpy(&e, p + sizeof h + i * sizeof e, sizeof e);
		if (e.type != DDX_SEC_SOURCES || e.offset > size || e.size > size - e.offset)
			continue;
		for (uint64_t k = 0; k < h.nsources && (k + 1) * sizeof(struct ddx_source) <= e.size; k++) {
			unsigned char *at = p + e.offset + k * sizeof(struct ddx_source);
			int64_t sec = FIXED_MTIME;
			uint32_t nsec = 0;
			memcpy(at + offsetof(struct ddx_source, size), &gz_size, 8);
			memcpy(at + offsetof(struct ddx_source, mtime_sec), &sec, 8);
			memcpy(at + offsetof(struct ddx_source, mtime_nsec), &nsec, 4);
			memcpy(at + offsetof(struct ddx_source, fingerprint), &fp, 8);
		}
	}
}

/* Recomputes every checksum that covers the bytes, as docdex index would
 * have written them, as far as the header and table can be read (as in
 * fuzz_index.c). */
static void repair(unsigned char *p, size_t size)
{
	struct ddx_header h;
	struct ddx_section t[DDX_SEC_MAX];
	if (size < sizeof h)
		return;
	memcpy(&h, p, sizeof h);
	if (h.nsections > DDX_SEC_MAX || sizeof h + h.nsections * sizeof *t > size)
		return;
	uint32_t ns = h.nsections;
	memcpy(t, p + sizeof h, ns * sizeof *t);
	int cc = -1;
	for (uint32_t i = 0; i < ns; i++) {
		if (t[i].offset > size || t[i].size > size - t[i].offset)
			t[i].size = 0, t[i].offset = size; /* out of the file: nothing to cover */
		if (cc < 0 && t[i].type == DDX_SEC_CHUNKCRC)
			cc = (int)i;
	}
	/* Chunk CRCs first, the whole-section CRCs over them, the header last. */
	uint64_t ncrc = cc < 0 ? 0 : t[cc].size / 4;
	for (uint32_t i = 0; i < ns; i++) {
		if ((int)i == cc)
			continue;
		uint64_t chunk = 1ULL << DDX_CHUNK_SHIFT;
		for (uint64_t c = 0; c * chunk < t[i].size; c++) {
			uint64_t g = (uint64_t)t[i].chunk_first + c, at = c * chunk;
			if (g >= ncrc)
				break;
			uint64_t n = t[i].size - at < chunk ? t[i].size - at : chunk;
			uint32_t crc = dx__crc32(0, p + t[i].offset + at, n);
			memcpy(p + t[cc].offset + g * 4, &crc, 4);
		}
	}
	for (uint32_t i = 0; i < ns; i++)
		if ((int)i != cc)
			t[i].crc = dx__crc32(0, p + t[i].offset, t[i].size);
	if (cc >= 0)
		t[cc].crc = dx__crc32(0, p + t[cc].offset, t[cc].size);
	/* Back into the table (an entry out of the file gets the CRC of nothing). */
	for (uint32_t i = 0; i < ns; i++)
		memcpy(p + sizeof h + i * sizeof *t + offsetof(struct ddx_section, crc), &t[i].crc, 4);
	h.file_size = size;
	uint64_t hs = h.header_size;
	if (hs < sizeof h || hs > size || hs > sizeof h + DDX_SEC_MAX * sizeof *t)
		hs = sizeof h + ns * sizeof *t;
	h.header_crc = ddx_header_crc(&h, p + sizeof h, hs - sizeof h);
	memcpy(p, &h, sizeof h);
}

static volatile size_t sink;

/* Reads every byte, so that ASan sees a pointer past the buffer. */
static void touch(const char *p, size_t n)
{
	size_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += (unsigned char)p[i];
	sink += s;
}

static void record_at(dx_corpus *c, uint64_t pos, uint64_t n)
{
	dx_err err = { 0 };
	dx_record rec;
	int rc = dx_corpus_record(c, pos, &rec, &err);
	if (pos >= n && rc == 0)
		abort(); /* past the end must be refused */
	if (rc == 0)
		touch(rec.data, rec.len);
	const char *id;
	size_t len;
	rc = dx_corpus_id(c, pos, &id, &len, &err);
	if (pos >= n && rc == 0)
		abort();
	if (rc == 0)
		touch(id, len);
}

static void reads(const char *path)
{
	dx_err err = { 0 };
	dx_corpus *c = dx_corpus_open(path, &err);
	if (!c)
		return;
	uint64_t n = dx_corpus_count(c);
	/* In an order that both goes on from the last read and starts again
	 * from an earlier access point; then past the end. */
	const uint64_t at[] = { 0, n / 2, n / 2 + 1, n - 1, n / 4, 0, n, UINT64_MAX };
	for (size_t i = 0; i < sizeof at / sizeof *at; i++)
		record_at(c, at[i], n);

	/* A batch out of order with a repeat (decompressed in file order into
	 * one arena), and one with a position past the end. */
	uint64_t pos[5] = { n - 1, n / 3, 0, n / 3, 2 * (n / 3) };
	dx_record recs[5];
	if (n && dx_corpus_records(c, pos, 5, recs, &err) == 0)
		for (size_t i = 0; i < 5; i++)
			touch(recs[i].data, recs[i].len);
	pos[1] = n;
	if (dx_corpus_records(c, pos, 5, recs, &err) == 0)
		abort();

	dx_fields *f = dx_fields_parse(c, NULL, &err);
	dx_record rec;
	const char *out;
	size_t len;
	if (f && n && dx_corpus_record(c, n / 2, &rec, &err) == 0 &&
	    dx_corpus_fields(c, f, &rec, &out, &len, &err) == 0)
		touch(out, len);
	dx_fields_free(f);
	dx_corpus_close(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	uint32_t k = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
	             (uint32_t)data[3] << 24;
	int raw = (k >> 31) & 1;
	size_t ixlen = k & 0x7fffffff;
	data += 4;
	size -= 4;
	if (ixlen > size)
		ixlen = size;

	char gz[512];
	snprintf(gz, sizeof gz, "%s", fuzz_file("c.tsv.gz", data + ixlen, size - ixlen));
	/* The index records the file's mtime and refuses it as stale when it differs. */
	struct timespec t[2] = { { FIXED_MTIME, 0 }, { FIXED_MTIME, 0 } };
	if (utimensat(AT_FDCWD, gz, t, 0) < 0)
		abort();

	unsigned char *ix = malloc(ixlen + 1);
	if (!ix)
		abort();
	memcpy(ix, data, ixlen);
	if (!raw) {
		dx_err err = { 0 };
		uint64_t fp;
		int fd = open(gz, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || dx__fingerprint(fd, size - ixlen, &fp, gz, &err) < 0)
			abort();
		close(fd);
		fit_sources(ix, ixlen, size - ixlen, fp);
		repair(ix, ixlen);
	}
	fuzz_file("c.tsv.gz.ddx", ix, ixlen); /* found as the corpus's path + .ddx */
	free(ix);
	reads(gz);
	return 0;
}
