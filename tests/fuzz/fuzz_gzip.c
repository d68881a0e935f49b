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
		fuzz_record_at(c, at[i], n, NULL, NULL);

	/* A batch out of order with a repeat (decompressed in file order into
	 * one arena), and one with a position past the end. */
	uint64_t pos[5] = { n - 1, n / 3, 0, n / 3, 2 * (n / 3) };
	dx_record recs[5];
	if (n && dx_corpus_records(c, pos, 5, recs, &err) == 0) {
		for (size_t i = 0; i < 5; i++)
			fuzz_touch(recs[i].data, recs[i].len);
		/* The checks of what is served: ids and ends, the bytes after each
		 * record read with it. */
		if (dx_corpus_check_ids(c, recs, 5, &err) < 0 && err.code != DX_ECORRUPT)
			abort();
	}
	pos[1] = n;
	if (dx_corpus_records(c, pos, 5, recs, &err) == 0)
		abort();

	dx_fields *f = dx_fields_parse(c, NULL, &err);
	dx_record rec;
	const char *out;
	size_t len;
	if (f && n && dx_corpus_record(c, n / 2, &rec, &err) == 0 &&
	    dx_corpus_fields(c, f, &rec, &out, &len, &err) == 0)
		fuzz_touch(out, len);
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
		fuzz_repair_index(ix, ixlen);
	}
	fuzz_file("c.tsv.gz.ddx", ix, ixlen); /* found as the corpus's path + .ddx */
	free(ix);
	reads(gz);
	return 0;
}
