/*
 * fuzz_inflate.c: raw DEFLATE data of arbitrary bytes to docdex's own
 * inflater (lib/inflate.c), against zlib's raw inflate of the same bytes:
 * both must accept it (with the same output, ending at the same byte) or
 * both refuse it, and what both wrote before refusing must agree.  The
 * inflater is fed in pieces and given its output room in pieces, as the
 * gzip scan does, and stopped at every block boundary, at the first after
 * some output, or never.  Then once more as a BGZF block is read: all its
 * output in one buffer (dx__inflate_contiguous), each call given the room
 * to the end and told to stop a piece further on (dx__inflate_stop_at),
 * which it must not stop short of nor pass by more than a symbol.  Both
 * with the decode compiled for this CPU and with the portable one
 * (dx__inflate_portable).  And
 * once more after a window (WINDOW below; zlib given it as dictionary), as
 * a packed access point is read: the window's bytes that the data reads
 * marked (DX_LAZY_MARK, whose output is not kept), the data accepted or
 * refused as zlib does; marked again with a window of zeros, as a reader
 * does, the same bytes; those bytes put in their places
 * (dx__inflate_lazy_scatter) in a window otherwise zero, which must then
 * give zlib's output as the history of a plain decode.  Last, the lazy
 * window of index format version 3 (DX_LAZY_FILL), given those bytes: it
 * must take as many and put each at a marked place (the order it takes
 * them in is tested on an index that version wrote, in tests/gzip.bats).
 *
 * Input: a control byte, then the DEFLATE data.  Control bits 0-2 choose
 * the size of the input pieces, 3-5 that of the output room, 6-7 where a
 * call stops at a block boundary.  The seeds (tests/fuzz/seeds/inflate)
 * are zlib's output at several levels and strategies, over text, repeats
 * and random bytes, some cut short or with a flipped bit
 * (tests/fuzz/make_inflate_seeds.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"
#include "inflate.h"

/* Output past this is not compared: a small input can inflate to a lot. */
enum { LIMIT = 1 << 20, WINDOW = 32768 };

static const size_t piece[8] = { 1, 3, 8, 64, 300, 4096, 65536, (size_t)-1 };
/* Where a call may stop at a block boundary: after how many bytes out. */
static const size_t stops[4] = { DX_INF_NO_STOP, 0, 1000, 65536 };

/* zlib's raw inflate of data, all of it given at once: 1 at the stream's
 * end (*end: the bytes it used), 0 when it refused the data or it ended
 * early, 2 when the output reached LIMIT first. */
static int zlib_inflate(const uint8_t *data, size_t size, const unsigned char *dict, unsigned char *out,
                        size_t *n, size_t *end)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, -15) != Z_OK)
		abort();
	if (dict)
		inflateSetDictionary(&z, dict, WINDOW);
	z.next_in = (unsigned char *)(uintptr_t)data;
	z.avail_in = (uInt)size;
	z.next_out = out;
	z.avail_out = LIMIT;
	int r;
	do
		r = inflate(&z, Z_NO_FLUSH);
	while (r == Z_OK && z.avail_out && z.avail_in);
	if (r == Z_OK && z.avail_out && !z.avail_in)
		r = inflate(&z, Z_FINISH); /* no more input: does it end here? */
	*n = LIMIT - z.avail_out;
	*end = size - z.avail_in - ((unsigned)(z.data_type & 63) >> 3);
	inflateEnd(&z);
	return r == Z_STREAM_END ? 1 : z.avail_out == 0 ? 2 : 0;
}

/* The passes of docdex's inflater. */
enum { PIECES, CONTIGUOUS, MARK, MARK_ZERO, SPARSE, FILL };

/* The window of the lazy passes: words, so that data deflated with it as
 * dictionary refers to it (make_inflate_seeds.py writes such seeds); no
 * byte of it is 0. */
static unsigned char window[WINDOW];
static void make_window(void)
{
	size_t at = 0;
	for (unsigned i = 0; at < WINDOW; i++) {
		char w[16];
		int k = snprintf(w, sizeof w, "w%u ", i % 97);
		for (int j = 0; j < k && at < WINDOW; j++)
			window[at++] = (unsigned char)w[j];
	}
}

/* The same through docdex's inflater, in pieces; CONTIGUOUS: into one
 * buffer, each call stopped at a piece's end rather than given its room.
 * The others after a window, the output right after it: MARK, a lazy one
 * holding the window, and MARK_ZERO, one of zeros, *nbytes then the count
 * marked and bytes[0, *nbytes) the window's bytes marked (MARK_ZERO:
 * filled the window of zeros with them put in place); SPARSE, filled as
 * the plain history; FILL, a lazy one of zeros given bytes[0, *nbytes),
 * *nbytes then the count taken (or -1) and filled the window they made. */
/* Set: the decoders made use the code compiled for any CPU
 * (dx__inflate_portable), not the one chosen for this one. */
static int portable;

static int own_inflate(const uint8_t *data, size_t size, unsigned ctl, int pass, unsigned char *out, size_t *n,
                       size_t *end, unsigned char *bytes, int64_t *nbytes, unsigned char *filled)
{
	dx_inflate *s = dx__inflate_new();
	if (s && portable)
		dx__inflate_portable(s);
	int after = pass >= MARK, lazy = after && pass != SPARSE;
	unsigned char *lin = after ? malloc(WINDOW + LIMIT) : NULL, *dst = after ? lin + WINDOW : out;
	if (!s || (after && !lin))
		abort();
	if (pass == CONTIGUOUS)
		dx__inflate_contiguous(s, out);
	if (pass == SPARSE) {
		memcpy(lin, filled, WINDOW);
		dx__inflate_contiguous(s, lin);
	}
	if (lazy) {
		if (pass == MARK)
			memcpy(lin, window, WINDOW);
		else
			memset(lin, 0, WINDOW);
		if (dx__inflate_lazy(s, pass == FILL ? DX_LAZY_FILL : DX_LAZY_MARK, lin, WINDOW, bytes,
		                     pass == FILL ? (size_t)*nbytes : 0) < 0)
			abort();
	}
	int contiguous = pass == CONTIGUOUS;
	size_t in_piece = piece[ctl & 7], out_piece = piece[(ctl >> 3) & 7];
	size_t stop = stops[(ctl >> 6) & 3];
	const unsigned char *in = data;
	size_t given = size < in_piece ? size : in_piece, avail = given, produced = 0;
	int res = 0;
	for (;;) {
		unsigned char *o = dst + produced;
		size_t room = LIMIT - produced < out_piece ? LIMIT - produced : out_piece, left = room;
		const unsigned char *soft = NULL;
		if (contiguous) {
			soft = o + room;
			left = room = LIMIT - produced;
			dx__inflate_stop_at(s, soft);
		}
		int r = dx__inflate_run(s, &in, &avail, &o, &left, given == size, stop);
		if (r == DX_INF_BLOCK && room - left < stop)
			abort(); /* stopped before it was asked to */
		/* Past the stop by one symbol at most: a match of 258 bytes that
		 * starts just before it. */
		if (soft && o > soft && (r != DX_INF_MORE || o - soft > 257))
			abort();
		produced += room - left;
		if (r == DX_INF_END) {
			res = 1;
			break;
		}
		if (r < 0)
			break;
		if (produced == LIMIT) {
			res = 2;
			break;
		}
		if (soft && r == DX_INF_MORE && o >= soft)
			continue; /* stopped where it was told to */
		if (r == DX_INF_MORE && left) {
			/* It wants input: the rest of this piece and the next. */
			if (given == size)
				abort(); /* asked for input when told there is none */
			size_t more = size - given < in_piece ? size - given : in_piece;
			given += more;
			avail += more;
		}
	}
	*n = produced;
	*end = (size_t)(in - data);
	if (lazy) {
		*nbytes = dx__inflate_lazy_end(s);
		if (pass == MARK)
			dx__inflate_lazy_gather(s, window, bytes);
		if (pass == MARK_ZERO) {
			memset(filled, 0, WINDOW);
			dx__inflate_lazy_scatter(s, filled, bytes);
		}
		if (pass == FILL)
			memcpy(filled, lin, WINDOW);
	}
	if (after) {
		memcpy(out, dst, produced);
		free(lin);
	}
	dx__inflate_free(s);
	return res;
}

/* Both decoders accept the data or refuse it alike, and end alike. */
static void compare_ends(int ra, size_t na, size_t ea, int rb, size_t nb, size_t eb)
{
	if (ra != 2 && rb != 2 && ra != rb) {
		fprintf(stderr, "fuzz_inflate: zlib %s, docdex %s\n", ra ? "ends" : "refuses",
		        rb ? "ends" : "refuses");
		abort();
	}
	if (ra == 1 && rb == 1 && (na != nb || ea != eb)) {
		fprintf(stderr, "fuzz_inflate: zlib ends after %zu bytes in, %zu out; docdex %zu, %zu\n", ea, na,
		        eb, nb);
		abort();
	}
}

/* Both decoders' results agree (see the top). */
static void compare(int ra, const unsigned char *a, size_t na, size_t ea, int rb, const unsigned char *b,
                    size_t nb, size_t eb)
{
	size_t common = na < nb ? na : nb;
	if (memcmp(a, b, common) != 0) {
		fprintf(stderr, "fuzz_inflate: the outputs differ\n");
		abort();
	}
	compare_ends(ra, na, ea, rb, nb, eb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned ctl = data[0];
	data++;
	size--;
	unsigned char *a = malloc(LIMIT), *b = malloc(LIMIT);
	if (!a || !b)
		abort();
	size_t na, nb, ea, eb;
	int ra = zlib_inflate(data, size, NULL, a, &na, &ea);
	for (portable = 1; portable >= 0; portable--)
		for (int pass = PIECES; pass <= CONTIGUOUS; pass++) {
			int rb = own_inflate(data, size, ctl, pass, b, &nb, &eb, NULL, NULL, NULL);
			compare(ra, a, na, ea, rb, b, nb, eb);
		}

	/* After a window: its bytes marked, then put in place from what
	 * they were (see the top). */
	static unsigned char bytes[WINDOW], filled[WINDOW], filled_v3[WINDOW];
	int64_t nmark, nzero, ntook;
	if (!window[0])
		make_window();
	ra = zlib_inflate(data, size, window, a, &na, &ea);
	int rb = own_inflate(data, size, ctl, MARK, b, &nb, &eb, bytes, &nmark, NULL);
	compare_ends(ra, na, ea, rb, nb, eb);
	size_t nz, ez;
	int rz = own_inflate(data, size, ctl, MARK_ZERO, b, &nz, &ez, bytes, &nzero, filled);
	if (rz != rb || nz != nb || ez != eb || nzero != nmark) {
		fprintf(stderr, "fuzz_inflate: %lld window bytes marked with the window, %lld with zeros\n",
		        (long long)nmark, (long long)nzero);
		abort();
	}
	int64_t placed = 0;
	for (size_t i = 0; i < WINDOW; i++) {
		if (filled[i] && filled[i] != window[i])
			abort();
		placed += filled[i] != 0;
	}
	if (placed != nmark)
		abort();
	rb = own_inflate(data, size, ctl, SPARSE, b, &nb, &eb, NULL, NULL, filled);
	compare(ra, a, na, ea, rb, b, nb, eb);
	ntook = nmark;
	own_inflate(data, size, ctl, FILL, b, &nb, &eb, bytes, &ntook, filled_v3);
	if (ntook != nmark) {
		fprintf(stderr, "fuzz_inflate: %lld window bytes marked, %lld taken\n", (long long)nmark,
		        (long long)ntook);
		abort();
	}
	for (size_t i = 0; i < WINDOW; i++)
		if (!filled_v3[i] != !filled[i])
			abort();
	free(a);
	free(b);
	return 0;
}
