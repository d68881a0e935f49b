/* crc.h: CRC32 (zlib's) of buffers longer than its uInt length (internal). */
#ifndef DX_CRC_H
#define DX_CRC_H

#include <stdint.h>
#include <zlib.h>

/* Continues crc (0 to start) over n bytes, in steps zlib can take. */
static inline uint32_t dx__crc32(uint32_t crc, const void *p, uint64_t n)
{
	const unsigned char *c = p;
	while (n) {
		uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = (uint32_t)crc32(crc, c, step);
		c += step;
		n -= step;
	}
	return crc;
}

#endif
