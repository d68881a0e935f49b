/*
 * codec.h: DEFLATE of whole buffers, for BGZF blocks, and CRC32 (internal).
 * libdeflate serves them where the build has it (DX_HAVE_LIBDEFLATE), zlib
 * elsewhere, but for CRC32, ISA-L's where the build has it (DX_HAVE_ISAL);
 * zlib stays the reference.  Streams are zlib's but for the
 * gzip scan's, which docdex's own inflater serves (inflate.h), and the
 * reader's, which ISA-L serves where the build has it: the raw stream from
 * an access point (the point's window, deflated whole, is libdeflate's),
 * and a member's data and trailer once zlib has read its header.  A BGZF
 * block is inflated whole, by ISA-L where it serves (dx__raw_prefix) and
 * else by libdeflate, when a reader comes to it from the block before
 * (reading in sequence), and only as far as the reader needs when it
 * jumps to it (half a block on average for a random record: a quarter
 * less time a record than a whole block), by ISA-L for reads at random
 * and else by docdex's decoder, which can go on from there; zlib streams
 * it, and stops likewise, under DOCDEX_CODEC=zlib.
 * In a build with libdeflate the environment variable DOCDEX_CODEC=zlib,
 * read once per process, makes zlib serve everything: to compare the two,
 * and to test zlib's path.
 * What is read back is the same byte for byte whichever serves; what the
 * BGZF writer writes is valid gzip either way, but its compressed bytes
 * differ between the two.
 */
#ifndef DX_CODEC_H
#define DX_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Whether docdex's own inflater (inflate.h) serves the gzip scan: always
 * but under DOCDEX_CODEC=zlib. */
int dx__own_inflate_on(void);

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

/*
 * A raw DEFLATE stream started at an access point, where ISA-L serves
 * (DX_HAVE_ISAL, and DOCDEX_CODEC not zlib): it inflates several times as
 * fast as zlib here.  dx__raw_new gives NULL where it does not serve, or
 * when out of memory (dx__isal_on tells which); zlib streams then.
 */
int dx__isal_on(void);
typedef struct dx_raw dx_raw;
dx_raw *dx__raw_new(void);
void dx__raw_free(dx_raw *r);
/* Starts the stream anew: the window before the point (dict, dict_len
 * bytes, or none) and the bits of the byte the point starts inside (the
 * high `bits` bits of `byte`, or none). */
int dx__raw_start(dx_raw *r, const unsigned char *dict, size_t dict_len, unsigned bits,
                  unsigned char byte);
/* Starts the DEFLATE data of a gzip member whose header was read: the
 * stream then takes the member's 8-byte trailer too, and checks the CRC
 * and size it gives. */
void dx__raw_start_member(dx_raw *r);
/* Inflates from *in (*avail_in bytes) into out (*avail_out bytes), moving
 * both on: 1 at the end of the stream (and of the trailer), 0 when it
 * wants more input or room, -1 when the data is damaged or does not match
 * the trailer. */
int dx__raw_run(dx_raw *r, const unsigned char **in, size_t *avail_in, unsigned char *out,
                size_t *avail_out);
/* At the end of the stream: the whole bytes it took from the input but did
 * not use (what follows the stream, or the trailer taken, starts that far
 * before *in). */
size_t dx__raw_unused(const dx_raw *r);
/* Inflates the raw DEFLATE data in[0, in_len) from its start into out
 * until exactly want bytes are out (1 or more; or, with end set, a whole
 * BGZF block, which must end there, 0 for bgzip's empty last block), with
 * r's state (a stream it was running is over): 0, or -1 when the data is
 * damaged, ends first, or does not end where asked.  ISA-L's stateless
 * inflate: it fills the room to its last byte before it says it is full,
 * a match cut there, but keeps no place to go on from.  On an Intel Xeon
 * it took random parts of the generated corpora's BGZF blocks in
 * 46.7-47.6 us against docdex's decoder's 57.1-58.8 (ISA-L's stateful
 * inflate 80.5-81.3), and whole blocks at 1.11-1.12 ns a byte against
 * libdeflate's 1.20-1.24. */
int dx__raw_prefix(dx_raw *r, const unsigned char *in, size_t in_len, unsigned char *out, size_t want,
                   int end);

typedef struct dx_deflater dx_deflater;
/* A compressor at level (0 stores, 1 to 9 as gzip's, 10 to 12 libdeflate's
 * stronger ones: 9 where zlib serves). */
dx_deflater *dx__deflater_new(int level);
void dx__deflater_free(dx_deflater *c);
/* Raw DEFLATE of in[0, n) into out: the compressed size, or 0 when it
 * does not fit in cap bytes. */
size_t dx__deflate_whole(dx_deflater *c, const void *in, size_t n, void *out, size_t cap);

#endif
