/*
 * codec.h: DEFLATE of whole buffers, for BGZF blocks, and CRC32 (internal).
 * libdeflate serves them where the build has it (DX_HAVE_LIBDEFLATE), zlib
 * elsewhere; zlib stays the reference, and streams (gzip's scan and its
 * access points) are zlib's alone.  A BGZF block is inflated whole only by
 * libdeflate: zlib streams it, and stops where the reader needs no more
 * (half a block on average; inflating whole blocks with zlib took twice as
 * long for random records).  In a build with libdeflate the
 * environment variable DOCDEX_CODEC=zlib, read once per process, makes
 * zlib serve everything: to compare the two, and to test zlib's path.
 * What is read back is the same byte for byte whichever serves; what the
 * BGZF writer writes is valid gzip either way, but its compressed bytes
 * differ between the two.
 */
#ifndef DX_CODEC_H
#define DX_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Whether libdeflate serves: built in, and not turned off. */
int dx__libdeflate_on(void);

/* CRC32 (gzip's) of n bytes, going on from crc (0 to start). */
uint32_t dx__crc32(uint32_t crc, const void *p, uint64_t n);

typedef struct dx_inflater dx_inflater;
/* A whole-buffer inflater where libdeflate serves; NULL otherwise, or when
 * out of memory (dx__libdeflate_on tells which). */
dx_inflater *dx__inflater_new(void);
void dx__inflater_free(dx_inflater *d);
/* Inflates the raw DEFLATE data in[0, in_len) into out, which it must
 * fill exactly (out_len bytes): 0, or -1 when the data is damaged or
 * comes to another size. */
int dx__inflate_whole(dx_inflater *d, const void *in, size_t in_len, void *out, size_t out_len);

typedef struct dx_deflater dx_deflater;
/* A compressor at level (0 stores, 1 to 9 as gzip's). */
dx_deflater *dx__deflater_new(int level);
void dx__deflater_free(dx_deflater *c);
/* Raw DEFLATE of in[0, n) into out: the compressed size, or 0 when it
 * does not fit in cap bytes. */
size_t dx__deflate_whole(dx_deflater *c, const void *in, size_t n, void *out, size_t cap);

#endif
