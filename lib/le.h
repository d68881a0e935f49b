/* le.h: little-endian integers read from unaligned bytes (internal), the
 * same on every machine: gzip's trailer fields, the id hash's input, the
 * DEFLATE decoder's bit buffer. */
#ifndef DX_LE_H
#define DX_LE_H

#include <stdint.h>
#include <string.h>

static inline uint32_t dx__le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t dx__le64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

#endif
