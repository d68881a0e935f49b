/*
 * inflate.h: docdex's own DEFLATE decoder (RFC 1951), for the gzip scan,
 * and for BGZF blocks read in part (gz_read.c) (internal).
 *
 * The scan must stop at deflate block boundaries to lay access points;
 * zlib can (Z_BLOCK) but inflates at about a third of the speed of the
 * decoders that cannot (libdeflate inflates whole buffers only, ISA-L does
 * not stop between blocks).  This one streams like zlib, stops at block
 * boundaries on request, and decodes with a 64-bit bit buffer refilled a
 * word at a time and one table lookup for most symbols, as libdeflate does
 * (its design is described in its README and source comments; the code
 * here is docdex's own).
 *
 * It accepts and rejects the same streams as zlib's raw inflate: the same
 * rules on incomplete and over-subscribed codes, on distances too far back,
 * on stored block lengths.  zlib stays the reference: DOCDEX_CODEC=zlib
 * makes the scan use it (codec.h), and tests/fuzz/fuzz_inflate.c compares
 * the two on every input.
 */
#ifndef DX_INFLATE_H
#define DX_INFLATE_H

#include <stddef.h>
#include <stdint.h>

enum {
	DX_INF_MORE = 0,   /* wants more input, or more room for output */
	DX_INF_BLOCK = 1,  /* stopped at a block boundary, not the last */
	DX_INF_END = 2,    /* the stream's last block ended */
	DX_INF_BAD = -1,   /* the data is not valid DEFLATE */
	DX_INF_TRUNC = -2, /* the input ended inside the stream */
};

typedef struct dx_inflate dx_inflate;

/* A decoder at the start of a raw DEFLATE stream; NULL when out of memory. */
dx_inflate *dx__inflate_new(void);
void dx__inflate_free(dx_inflate *s);
/* Back to the start of a new stream, with no history. */
void dx__inflate_reset(dx_inflate *s);
/* Decodes with the code compiled for any CPU of the build's architecture
 * rather than the one chosen for this CPU (BMI2 on x86-64), which
 * dx__inflate_new picks: for tests/fuzz/fuzz_inflate.c, which checks
 * both. */
void dx__inflate_portable(dx_inflate *s);

/*
 * Decodes from *in (*avail_in bytes) into *out (*avail_out bytes), moving
 * all four on.  final: no input follows these bytes (else the decoder may
 * leave up to a few hundred bytes unread and ask for more: give them again,
 * followed by more).  block_after: return DX_INF_BLOCK at the first
 * boundary between blocks once this call has written that many bytes (0:
 * at every boundary; DX_INF_NO_STOP: never).  A call that returns keeps the
 * last 32 KiB written as its history: fewer, longer calls cost less.  At
 * DX_INF_END, *in is just past the stream's last byte.
 */
#define DX_INF_NO_STOP SIZE_MAX
int dx__inflate_run(dx_inflate *s, const unsigned char **in, size_t *avail_in, unsigned char **out,
                    size_t *avail_out, int final, size_t block_after);

/* Output in one buffer from base on (a BGZF block's), each call writing
 * on where the one before stopped, until the next reset: the history lies
 * there before *out, so no call keeps a copy of it (32 KiB for a call that
 * wrote as much). */
void dx__inflate_contiguous(dx_inflate *s, unsigned char *base);

/* The calls that follow return DX_INF_MORE at the first symbol that ends
 * at or past stop in the output (with the room beyond it for the rest of
 * the symbol, a match of up to 258 bytes), rather than decode on to the end
 * of the room, the last few hundred bytes of which take the counted path.
 * NULL: no such stop, as after a reset. */
void dx__inflate_stop_at(dx_inflate *s, const unsigned char *stop);

/* Starts the stream bits bits (0 to 7) before *in, their values the low
 * bits of value (as zlib's inflatePrime): an access point's last byte.
 * Right after a reset. */
void dx__inflate_prime(dx_inflate *s, unsigned bits, unsigned value);

/*
 * A window known only as it is used, for access points that store only
 * the window bytes the data after them uses (see docdex-index(5), packed
 * windows).  Right after a reset (and dx__inflate_prime), instead of a
 * history: the window is the wlen bytes (at most 32 KiB) at window, and the
 * output goes on right after them, at window + wlen, each call writing on
 * where the one before stopped (as after dx__inflate_contiguous(window)).
 * Each byte of it that a match reads is marked, and:
 *   DX_LAZY_MARK: no more (bytes, len unused).  Which bytes are read
 *                 depends on the compressed data alone, not on the
 *                 window's bytes: a reader that has only the marked ones
 *                 finds their places with a window of zeros (the output
 *                 then wrong where it copied them), puts them there with
 *                 dx__inflate_lazy_scatter, and inflates again;
 *   DX_LAZY_FILL:  (index format version 3) the first time it is read,
 *                  the byte is the next of bytes[0, len), in the order the
 *                  output first reads them, and is written into window
 *                  (which the caller zeroed) at its place.
 * -1 when out of memory.
 */
enum { DX_LAZY_MARK = 1, DX_LAZY_FILL = 2 };
int dx__inflate_lazy(dx_inflate *s, int mode, unsigned char *window, size_t wlen, unsigned char *bytes,
                     size_t len);
/* Ends it: MARK, the count of bytes marked; FILL, the count taken, or -1
 * when it ran out of them (the bytes it lacked read as 0). */
int64_t dx__inflate_lazy_end(dx_inflate *s);
/* After a MARK run ended, until the next dx__inflate_lazy: the marked
 * bytes of its window (of the same wlen), in their order in it, copied into
 * bytes (gather) or from them into their places (scatter). */
void dx__inflate_lazy_gather(const dx_inflate *s, const unsigned char *window, unsigned char *bytes);
void dx__inflate_lazy_scatter(const dx_inflate *s, unsigned char *window, const unsigned char *bytes);

/* The bits of the stream that lie in the byte just before *in, unread:
 * 0 to 7, as zlib's data_type & 7 (an access point's `bits`). */
unsigned dx__inflate_bits(const dx_inflate *s);

#endif
