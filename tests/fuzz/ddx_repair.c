/*
 * ddx_repair.c: what the index and gzip harnesses share: an index's
 * checksums recomputed over mutated bytes, reading bytes through, and
 * reading a record and its id.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "docdex.h"
#include "fuzz.h"
#include "index_format.h"

/* Recomputes every checksum that covers the bytes, as docdex index would
 * have written them, as far as the header and table can be read. */
void fuzz_repair_index(unsigned char *p, size_t size)
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

/* Reads every byte, so that ASan sees a pointer past what is mapped. */
void fuzz_touch(const char *p, size_t n)
{
	size_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += (unsigned char)p[i];
	sink += s;
}

int fuzz_record_at(dx_corpus *c, uint64_t pos, uint64_t n, const char **id_out, size_t *len_out)
{
	dx_err err = { 0 };
	dx_record rec;
	int rc = dx_corpus_record(c, pos, &rec, &err);
	if (pos >= n && rc == 0)
		abort(); /* past the end must be refused */
	if (rc == 0)
		fuzz_touch(rec.data, rec.len);
	const char *id;
	size_t len;
	rc = dx_corpus_id(c, pos, &id, &len, &err);
	if (pos >= n && rc == 0)
		abort();
	if (rc < 0)
		return -1;
	fuzz_touch(id, len);
	if (id_out) {
		*id_out = id;
		*len_out = len;
	}
	return 0;
}
