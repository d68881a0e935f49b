/*
 * idtable.h: how ids map to records in an index (internal), shared by the
 * writer and the reader so that both agree bit for bit.
 *
 * Sequential ids (record n has id base + n, MS MARCO passages) need no
 * stored strings: the id is its own key.  Any other ids are kept in a pool,
 * found through an open-addressing table of 32-bit slots that hold the
 * record number + 1 in their low record_bits bits and a few bits of the
 * id's hash above them, so most probes of other ids end without reading
 * the pool.
 */
#ifndef DX_IDTABLE_H
#define DX_IDTABLE_H

#include <stddef.h>
#include <stdint.h>

/* The value of a canonical decimal id: digits only, no leading zero other
 * than "0" itself, at most 19 digits.  Returns 1, or 0 for any other id.
 * Inline: every lookup and check of a sequential id parses one. */
static inline int dx__id_number(const char *id, size_t len, uint64_t *v)
{
	if (len == 0 || len > 19 || (id[0] == '0' && len > 1))
		return 0;
	uint64_t r = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)id[i] - '0';
		if (d > 9)
			return 0;
		r = r * 10 + d;
	}
	*v = r;
	return 1;
}

/* Writes v in decimal into out (at least 21 bytes); returns its length. */
size_t dx__id_format(uint64_t v, char *out);

/* Slots for n records: a load of at most 3/4 keeps probes short. */
static inline uint64_t dx__slots_for(uint64_t n)
{
	return n + n / 3 + 1;
}

/* Bits needed to hold record numbers + 1 for n records. */
static inline uint32_t dx__record_bits(uint64_t n)
{
	uint32_t b = 1;
	while (b < 64 && (n >> b))
		b++;
	return b;
}

static inline uint64_t dx__slot_of(uint64_t h, uint64_t nslots)
{
	return (uint64_t)(((unsigned __int128)h * nslots) >> 64);
}

/* The tag bits of a slot for hash h, in place. */
static inline uint32_t dx__slot_tag(uint64_t h, uint32_t record_bits)
{
	if (record_bits >= 32)
		return 0;
	return (uint32_t)(h << record_bits);
}

static inline uint32_t dx__slot_tag_mask(uint32_t record_bits)
{
	return record_bits >= 32 ? 0 : ~0u << record_bits;
}

static inline uint32_t dx__slot_rec_mask(uint32_t record_bits)
{
	return record_bits >= 32 ? ~0u : ~(~0u << record_bits);
}

/* Reads a LEB128 varint from [p, end): the bytes it took, 0 if malformed. */
static inline size_t dx__varint_get(const unsigned char *p, const unsigned char *end, uint64_t *v)
{
	uint64_t r = 0;
	for (size_t i = 0; i < 10 && p + i < end; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

/*
 * The id of record r in a pool: from the checkpoint of its group of 16,
 * skipping the ids before it.  check (may be NULL) is called on every range
 * of the pool before it is read and may refuse it.  Returns 0, -1 when the
 * pool or checkpoints are out of bounds, or check's non-zero result.
 */
typedef int (*dx_range_check)(void *ctx, uint64_t off, uint64_t len);
int dx__pool_id(const unsigned char *pool, uint64_t pool_size, const uint64_t *ckpt,
                uint64_t nckpt, uint64_t r, dx_range_check check, void *ctx,
                const char **id, size_t *len);

#endif
