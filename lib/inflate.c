/*
 * inflate.c: docdex's own DEFLATE decoder (see inflate.h).
 *
 * Codes are decoded LSB first from a 64-bit bit buffer.  Where at least 8
 * input bytes and a longest match's room of output remain, the fast loop
 * decodes without counting: a branch-free refill to 56 or more bits
 * (enough for a length, its extra bits, a distance and its extra bits, 48
 * at most) and one lookup in a table indexed by the next 11 bits (8 for
 * distances) per symbol; the rare longer codes go through a second-level
 * table.  Three things keep the chain from one table read to the next
 * short: an entry drops its code and extra bits in one shift by its own
 * low byte; the next symbol's entry is read before a match is copied; and
 * up to three literals are decoded per refill.  A literal/length entry's
 * kind costs two tests at most, a bit each: a literal?  else a length?
 * (what is left, rare, goes aside: a second level, the block's end, a bad
 * code); a distance's one.  Near the end of the input
 * or of the output room, the same tables are read one symbol at a time
 * with every bit counted, so that the decoder can stop between symbols
 * and go on in the next call.
 */
#include <stdlib.h>
#include <string.h>

#include "inflate.h"
#include "le.h"

enum {
	WSIZE = 32768,     /* the farthest a distance reaches back */
	LIT_BITS = 11,
	DIST_BITS = 8,
	CL_BITS = 7,
	/* The largest tables those first levels need for any valid code (zlib's
	 * examples/enough.c: 288 symbols, 11 bits, 15 at most; 32, 8, 15). */
	LIT_ENOUGH = 2342,
	DIST_ENOUGH = 402,
	MAX_MATCH = 258,
	/* Output room for a symbol decoded without counting: a longest match
	 * copied 32 bytes at a time overshoots by up to 31. */
	FAST_ROOM = MAX_MATCH + 32,
	/* Input a block header may take: 3 + 14 header bits, 19 3-bit lengths,
	 * and 316 lengths of at most 7 bits each, under 300 bytes. */
	HEAD_NEED = 320,
	SYMBOL_BITS = 48,  /* a length, a distance, and their extra bits */
	ENDED = 16,        /* huffman(): the block's end-of-block code came */
};

/*
 * A table entry: the bits it drops (0-7): its code's length, and for a
 * length or a distance its extra bits too, so that one shift takes both;
 * the code's length again (8-11), where a length's or distance's extra bits
 * start, or the size in bits of a second-level table; its kind (12-15; a
 * literal, a link to a second level, and a length or distance have a bit
 * each, for the fast loop's tests); its value (16-31): a literal, a base
 * length or distance, or where the second-level table starts.  The bits
 * dropped sit alone in the low byte so that the fast loop shifts by the
 * entry itself, one step less between a table read and the next.
 */
enum { K_BAD, K_EOB, K_SUB, K_LEN = 4, K_DIST = 5, K_LIT = 8 };
#define E_BITS(e) ((uint8_t)(e))
#define E_CODE(e) (((e) >> 8) & 15u)
#define E_KIND(e) (((e) >> 12) & 15u)
#define E_VAL(e) ((e) >> 16)
#define F_LIT ((uint32_t)K_LIT << 12)
#define F_SUB ((uint32_t)K_SUB << 12)
/* Lengths and distances have this bit, the rare kinds (a second level, an
 * end of block, a bad code) not: one test sets those three aside. */
#define F_PLAIN ((uint32_t)K_LEN << 12)
#define ENTRY(kind, code, bits, val) \
	((uint32_t)(bits) | (uint32_t)(code) << 8 | (uint32_t)(kind) << 12 | (uint32_t)(val) << 16)

/* The extra bits of length or distance entry e, whose bits were the low
 * ones of bb. */
static inline unsigned extra_bits(uint64_t bb, uint32_t e)
{
	return (unsigned)((bb & ((UINT64_C(1) << E_BITS(e)) - 1)) >> E_CODE(e));
}

enum { M_HEAD, M_STORED, M_HUFF, M_DONE };

struct bits;
/* The decoding of a Huffman block's symbols (huffman()). */
typedef int huffman_fn(dx_inflate *, struct bits *, const unsigned char *, unsigned char **, unsigned char *, int);

struct dx_inflate {
	uint64_t bb;        /* bits not yet used, the next in the low bits */
	unsigned bc;        /* how many: under 8 between calls */
	int mode;
	int last;           /* the current block is the stream's last */
	uint32_t stored_left;
	unsigned copy_len, copy_dist; /* a match not all written yet */
	size_t whave;       /* bytes of history in win, a ring */
	size_t wnext;       /* where the ring's next byte goes */
	unsigned char *base; /* dx__inflate_contiguous's, or NULL */
	const unsigned char *stop; /* dx__inflate_stop_at's, or NULL */
	/* dx__inflate_lazy's window: lazy is its mode (0: none); the window
	 * is the whave bytes at base, the output right after them; known[]
	 * says which of them a match has read, a bit each (byte p: bit p % 64
	 * of word p / 64), so that a match over bytes read already costs a
	 * test a word.  It is kept after dx__inflate_lazy_end, for
	 * dx__inflate_lazy_gather and _scatter, over known_len bytes. */
	int lazy;
	unsigned char *lazy_bytes;
	size_t lazy_len, lazy_pos, known_len;
	int lazy_short;
	uint64_t *known;
	/* huffman(), as compiled for this CPU (huffman_for_cpu) */
	huffman_fn *huffman;
	uint32_t lit[LIT_ENOUGH];
	uint32_t dist[DIST_ENOUGH];
	unsigned char win[WSIZE];
};

static const uint16_t len_base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                       31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint8_t len_extra[29] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const uint16_t dist_base[30] = { 1,   2,   3,   4,   5,   7,    9,    13,   17,   25,
                                        33,  49,  65,  97,  129, 193,  257,  385,  513,  769,
                                        1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };
static const uint8_t dist_extra[30] = { 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

enum { T_CL, T_LIT, T_DIST };
#define BAD ENTRY(K_BAD, 0, 0, 0) /* 0 */

/* The entry of symbol sym of a table of type t, whose code is len bits
 * (within this level of the table). */
static uint32_t symbol_entry(int t, unsigned sym, unsigned len)
{
	if (t == T_CL)
		return ENTRY(K_LIT, len, len, sym);
	if (t == T_DIST)
		return sym < 30 ? ENTRY(K_DIST, len, len + dist_extra[sym], dist_base[sym]) : BAD;
	if (sym < 256)
		return ENTRY(K_LIT, len, len, sym);
	if (sym == 256)
		return ENTRY(K_EOB, len, len, 0);
	/* 286 and 287 have codes in the fixed code only, and mean nothing. */
	return sym < 286 ? ENTRY(K_LEN, len, len + len_extra[sym - 257], len_base[sym - 257]) : BAD;
}

/* Each byte with its bits in reverse order. */
static const uint8_t reversed[256] = {
#define R2(n) n, n + 128, n + 64, n + 192
#define R4(n) R2(n), R2(n + 32), R2(n + 16), R2(n + 48)
#define R6(n) R4(n), R4(n + 8), R4(n + 4), R4(n + 12)
	R6(0), R6(2), R6(1), R6(3)
#undef R2
#undef R4
#undef R6
};

/* Copies t[0, half) to t[half, 2 * half): 32 bytes a step once half is 8
 * or more.  gcc made memcpy of these sizes, 4 bytes to 4 KiB, a string
 * move, a fifth of a build; a block's header took 1.11 times as long. */
static void double_table(uint32_t *t, unsigned half)
{
	if (half < 8) {
		for (unsigned i = 0; i < half; i++)
			t[half + i] = t[i];
		return;
	}
	for (unsigned i = 0; i < half; i += 8)
		memcpy(t + half + i, t + i, 32);
}

/*
 * The decoding table of the canonical code of lens[0, n) (RFC 1951 3.2.2):
 * 0, or -1 for a code zlib refuses too.  An over-subscribed code is
 * refused; an incomplete one too, but for a single code of one bit, or
 * none at all, in the literal/length and distance codes (their missing
 * codes decode as errors).  The code-length code must be complete.
 */
static int build(uint32_t *t, unsigned tbits, unsigned enough, const uint8_t *lens, unsigned n, int type)
{
	/* Counted four ways, summed after: runs of equal lengths made one
	 * chain of increments of the same counter, a fifth of a build. */
	unsigned count[16], next[16], c4[4][16] = { { 0 } };
	unsigned pos = 0;
	for (; pos + 4 <= n; pos += 4) {
		c4[0][lens[pos]]++;
		c4[1][lens[pos + 1]]++;
		c4[2][lens[pos + 2]]++;
		c4[3][lens[pos + 3]]++;
	}
	for (; pos < n; pos++)
		c4[0][lens[pos]]++;
	for (unsigned len = 0; len < 16; len++)
		count[len] = c4[0][len] + c4[1][len] + c4[2][len] + c4[3][len];
	count[0] = 0;
	int left = 1;
	unsigned max = 0;
	for (unsigned len = 1; len <= 15; len++) {
		left = left * 2 - (int)count[len];
		if (left < 0)
			return -1;
		if (count[len])
			max = len;
	}
	unsigned size = 1u << tbits;
	if (max == 0) {
		memset(t, 0, size * sizeof *t); /* every code BAD */
		return type == T_CL ? -1 : 0;
	}
	if (left > 0 && (type == T_CL || max != 1))
		return -1;
	/* Each code's first value (next[len]), and where each length's
	 * symbols end in sorted[], which holds them by length, each length's
	 * in symbol order (so in the order of their codes). */
	unsigned code = 0, end[16];
	uint16_t sorted[288];
	next[0] = 0;
	end[0] = 0;
	for (unsigned len = 1; len <= 15; len++) {
		code = (code + count[len - 1]) << 1;
		next[len] = code;
		end[len] = end[len - 1] + count[len];
	}
	unsigned at[16];
	memcpy(at, end, sizeof at);
	for (unsigned sym = n; sym-- > 0;)
		if (lens[sym])
			sorted[--at[lens[sym]]] = (uint16_t)sym;
	/* Codes reversed (they are sent from their high bit), and the longest
	 * code under each first-level prefix, which sizes its second level. */
	uint16_t rev[288], prefixes[288];
	uint8_t longest[1u << LIT_BITS];
	unsigned nprefix = 0;
	if (max > tbits)
		memset(longest, 0, size);
	for (unsigned k = 0; k < end[15]; k++) {
		unsigned sym = sorted[k], len = lens[sym];
		unsigned c = next[len]++;
		unsigned r = (unsigned)(reversed[c & 0xff] << 8 | reversed[c >> 8]) >> (16 - len);
		rev[sym] = (uint16_t)r;
		if (len > tbits) {
			unsigned pre = r & (size - 1);
			if (!longest[pre])
				prefixes[nprefix++] = (uint16_t)pre;
			if (len > longest[pre])
				longest[pre] = (uint8_t)len;
		}
	}
	/*
	 * The first level grows by doubling: once it holds every code of len
	 * bits or fewer in its first 2^len entries (a code's entry at its
	 * reversed value), a copy of them doubles it, and the codes of len + 1
	 * bits go into the new half, where no shorter code reaches.  One
	 * store a symbol and copies of whole runs of entries: storing each
	 * entry a code covers (2^(tbits - len) of them) was half of a build,
	 * and the builds 12% of reading a random BGZF record (6% since).  The
	 * entry the doubling starts from is BAD: it stays wherever an
	 * incomplete code has no code.
	 */
	t[0] = BAD;
	unsigned k = 0;
	for (unsigned len = 1; len <= tbits; len++) {
		double_table(t, 1u << (len - 1));
		for (; k < end[len]; k++)
			t[rev[sorted[k]]] = symbol_entry(type, sorted[k], len);
	}
	/* The second levels, each linked from its prefix's entry (which no
	 * shorter code took).  (Codes longer than tbits are complete: an
	 * incomplete code has one code of one bit.) */
	unsigned used = size;
	for (unsigned j = 0; j < nprefix; j++) {
		unsigned pre = prefixes[j], sub = longest[pre] - tbits;
		if (used + (1u << sub) > enough)
			return -1; /* cannot happen for a code that passed the checks above */
		t[pre] = ENTRY(K_SUB, sub, tbits, used);
		used += 1u << sub;
	}
	for (; k < end[15]; k++) {
		unsigned sym = sorted[k], len = lens[sym], r = rev[sym];
		const uint32_t *p = &t[r & (size - 1)];
		unsigned sub = E_CODE(*p), len2 = len - tbits;
		uint32_t e = symbol_entry(type, sym, len2);
		for (unsigned i = r >> tbits; i < (1u << sub); i += 1u << len2)
			t[E_VAL(*p) + i] = e;
	}
	return 0;
}

static int build_fixed(dx_inflate *s)
{
	uint8_t lens[288];
	memset(lens, 8, 144);
	memset(lens + 144, 9, 112);
	memset(lens + 256, 7, 24);
	memset(lens + 280, 8, 8);
	if (build(s->lit, LIT_BITS, LIT_ENOUGH, lens, 288, T_LIT) < 0)
		return -1;
	memset(lens, 5, 32);
	return build(s->dist, DIST_BITS, DIST_ENOUGH, lens, 32, T_DIST);
}

/* The input as a bit stream, counted bit by bit (headers, and symbols
 * near the end of the input). */
struct bits {
	const unsigned char *in, *end;
	uint64_t bb;
	unsigned bc;
};

/* A refill without a branch: whole bytes up to 56 bits or more, from 8
 * bytes of input that must be there (the fast loop's, and dynamic()'s). */
#define REFILL_BITS(bb, bc, in)                 \
	do {                                    \
		(bb) |= dx__le64(in) << (bc);   \
		(in) += (63 - (bc)) >> 3;       \
		(bc) |= 56;                     \
	} while (0)

/* Loads whole bytes until n bits are there or the input ends (n <= 56):
 * whether they are. */
static int need(struct bits *b, unsigned n)
{
	while (b->bc < n) {
		if (b->in == b->end)
			return 0;
		b->bb |= (uint64_t)*b->in++ << b->bc;
		b->bc += 8;
	}
	return 1;
}

static unsigned take(struct bits *b, unsigned n)
{
	unsigned v = (unsigned)(b->bb & ((1u << n) - 1));
	b->bb >>= n;
	b->bc -= n;
	return v;
}

/* Whole bytes loaded but not used go back to the input. */
static void give_back(struct bits *b)
{
	b->in -= b->bc >> 3;
	b->bc &= 7;
	b->bb &= (1u << b->bc) - 1;
}

/* A symbol of table t (first level tbits), every bit counted: its entry,
 * its bits taken (a length's or distance's extra bits too) and *v the
 * value they give; or a K_BAD entry; *trunc set when the input ends
 * inside it. */
static uint32_t counted_symbol(struct bits *b, const uint32_t *t, unsigned tbits, unsigned *v, int *trunc)
{
	uint32_t e = t[b->bb & ((1u << tbits) - 1)];
	if (E_KIND(e) == K_SUB) {
		if (b->bc < tbits) {
			*trunc = 1;
			return 0;
		}
		take(b, tbits);
		e = t[E_VAL(e) + (b->bb & ((1u << E_CODE(e)) - 1))];
	}
	if (E_KIND(e) == K_BAD)
		return e;
	if (E_BITS(e) > b->bc) {
		*trunc = 1;
		return 0;
	}
	*v = E_VAL(e) + extra_bits(b->bb, e);
	take(b, E_BITS(e));
	return e;
}

static const uint8_t cl_order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

/* The code lengths of a dynamic block, and its tables. */
static int dynamic(dx_inflate *s, struct bits *b)
{
	if (!need(b, 14))
		return DX_INF_TRUNC;
	unsigned nlit = take(b, 5) + 257, ndist = take(b, 5) + 1, ncl = take(b, 4) + 4;
	if (nlit > 286 || ndist > 30)
		return DX_INF_BAD;
	uint8_t lens[286 + 30];
	memset(lens, 0, 19);
	for (unsigned i = 0; i < ncl; i++) {
		if (!need(b, 3))
			return DX_INF_TRUNC;
		lens[cl_order[i]] = (uint8_t)take(b, 3);
	}
	uint32_t cl[1u << CL_BITS];
	if (build(cl, CL_BITS, 1u << CL_BITS, lens, 19, T_CL) < 0)
		return DX_INF_BAD;
	for (unsigned n = 0; n < nlit + ndist;) {
		unsigned sym = 0, rep, val = 0;
		if (b->end - b->in >= 8) {
			/* Bits enough for a symbol and its extra bits, loaded
			 * without counting: the code is complete and of 7 bits
			 * at most, so every entry of its table is a symbol.
			 * A block's header (with its first symbol) took 0.91
			 * of the time it took counted, 2.37 us against 2.60
			 * (the generated documents' BGZF blocks). */
			REFILL_BITS(b->bb, b->bc, b->in);
			uint32_t e = cl[b->bb & ((1u << CL_BITS) - 1)];
			sym = E_VAL(e);
			take(b, E_BITS(e));
		} else {
			int trunc = 0;
			need(b, CL_BITS);
			counted_symbol(b, cl, CL_BITS, &sym, &trunc);
			if (trunc)
				return DX_INF_TRUNC;
		}
		if (sym < 16) {
			lens[n++] = (uint8_t)sym;
			continue;
		}
		unsigned xb = sym == 16 ? 2 : sym == 17 ? 3 : 7;
		if (!need(b, xb))
			return DX_INF_TRUNC;
		rep = take(b, xb) + (sym == 18 ? 11 : 3);
		if (sym == 16) {
			if (n == 0)
				return DX_INF_BAD;
			val = lens[n - 1];
		}
		if (n + rep > nlit + ndist)
			return DX_INF_BAD;
		memset(lens + n, (int)val, rep);
		n += rep;
	}
	if (lens[256] == 0)
		return DX_INF_BAD;
	if (build(s->lit, LIT_BITS, LIT_ENOUGH, lens, nlit, T_LIT) < 0 ||
	    build(s->dist, DIST_BITS, DIST_ENOUGH, lens + nlit, ndist, T_DIST) < 0)
		return DX_INF_BAD;
	return 0;
}

/* A block's header, at least HEAD_NEED bytes of input there unless they
 * are the last. */
static int header(dx_inflate *s, struct bits *b)
{
	if (!need(b, 3))
		return DX_INF_TRUNC;
	s->last = (int)take(b, 1);
	unsigned type = take(b, 2);
	if (type == 0) {
		take(b, b->bc & 7);
		if (!need(b, 32))
			return DX_INF_TRUNC;
		unsigned len = take(b, 16), nlen = take(b, 16);
		if (len != (~nlen & 0xffff))
			return DX_INF_BAD;
		give_back(b);
		s->stored_left = len;
		s->mode = M_STORED;
		return 0;
	}
	int rc = type == 1 ? (build_fixed(s) < 0 ? DX_INF_BAD : 0) : type == 2 ? dynamic(s, b) : DX_INF_BAD;
	if (rc == 0)
		s->mode = M_HUFF;
	return rc;
}

/* Bytes [at, at + n) of a lazy window are about to be read: marked so,
 * and under DX_LAZY_FILL, those not read before get their bytes, in order
 * (see dx__inflate_lazy). */
static void lazy_use(dx_inflate *s, size_t at, size_t n)
{
	for (size_t end = at + n; at < end;) {
		size_t w = at / 64, bit = at % 64, take = 64 - bit < end - at ? 64 - bit : end - at;
		uint64_t range = (take == 64 ? ~(uint64_t)0 : ((uint64_t)1 << take) - 1) << bit;
		uint64_t fresh = range & ~s->known[w];
		s->known[w] |= fresh;
		for (; s->lazy == DX_LAZY_FILL && fresh; fresh &= fresh - 1) {
			size_t p = w * 64 + (size_t)__builtin_ctzll(fresh);
			if (s->lazy_pos < s->lazy_len)
				s->base[p] = s->lazy_bytes[s->lazy_pos++];
			else
				s->lazy_short = 1; /* the byte stays 0 */
		}
		at += take;
	}
}

/* A match of len bytes at distance d, with have bytes of output before
 * out, that starts in the lazy window: the bytes it reads there, marked. */
static inline void lazy_match(dx_inflate *s, const unsigned char *out, unsigned len, unsigned d, size_t have)
{
	lazy_use(s, (size_t)(out - d - s->base), len < d - have ? len : d - have);
}

/* Writes len bytes of the match at distance d, which starts before the
 * history in the output (out0: this call's output, or the base's): what
 * lies in the window's ring, or in a lazy window just before the output
 * (its bytes got first), then the rest from the output, a byte at a time
 * as it may overlap itself. */
static unsigned char *copy_far(dx_inflate *s, const unsigned char *out0, unsigned char *out, unsigned len,
                               unsigned d)
{
	size_t have = (size_t)(out - out0);
	if (d > have && s->lazy) {
		/* From the lazy window, which lies just before the output. */
		lazy_match(s, out, len, d, have);
		if (d >= len) {
			memcpy(out, out - d, len);
			return out + len;
		}
	} else if (d > have) {
		size_t back = d - have, n = len < back ? len : back;
		size_t at = (s->wnext + WSIZE - back) & (WSIZE - 1);
		size_t first = n < WSIZE - at ? n : WSIZE - at;
		memcpy(out, s->win + at, first);
		memcpy(out + first, s->win, n - first);
		out += n;
		len -= (unsigned)n;
	}
	for (; len; len--, out++)
		*out = out[-(ptrdiff_t)d];
	return out;
}

/* Entry e of the first level of table t (tbits), or where it links to a
 * second level, the entry there, the first level's bits taken: the entry's
 * own bits are left to take.  For the fast loop, which has bits enough for
 * any code. */
static inline uint32_t second(const uint32_t *t, unsigned tbits, uint32_t e, uint64_t *bb, unsigned *bc)
{
	if (e & F_SUB) {
		*bb >>= tbits;
		*bc -= tbits;
		e = t[E_VAL(e) + (*bb & ((1u << E_CODE(e)) - 1))];
	}
	return e;
}

#define REFILL() REFILL_BITS(bb, bc, in)
#define LIT_MASK ((1u << LIT_BITS) - 1)
/* The fast loop's literal, entry e: its bits dropped, its byte written,
 * and the next symbol's first-level entry read. */
#define LITERAL()                                   \
	do {                                        \
		bb >>= E_BITS(e);                   \
		bc -= E_BITS(e);                    \
		*out++ = (unsigned char)E_VAL(e);   \
		e = s->lit[bb & LIT_MASK];          \
	} while (0)

/* Where a call writing up to out_end stops: at s->stop where that comes
 * first. */
static inline const unsigned char *stop_of(const dx_inflate *s, const unsigned char *out_end)
{
	return s->stop && s->stop < out_end ? s->stop : out_end;
}

/* The symbols of a Huffman block, to its end (ENDED), or until the input or
 * the output room runs out or the output reaches s->stop (DX_INF_MORE), or
 * an error. */
static inline __attribute__((always_inline)) int huffman(dx_inflate *s, struct bits *b, const unsigned char *out0,
                                                         unsigned char **outp, unsigned char *out_end, int final,
                                                         const int dry)
{
	unsigned char *out = *outp;
	const unsigned char *in = b->in, *in_end = b->end;
	uint64_t bb = b->bb;
	unsigned bc = b->bc;
	/* The tables are read as s->lit and s->dist, both at fixed offsets
	 * from s, which a match's checks read anyway: pointers of their own
	 * left too few registers for the fast loop, and the distance table's
	 * went to the stack (the loop took 1.04 times as long a byte, BGZF
	 * blocks of the generated corpora).  dry is a constant of each
	 * compiled copy: under DX_LAZY_MARK the output is not kept, and a
	 * match only marks what it reads of the window. */
	int rc = DX_INF_MORE;
	/* Where to stop, and the room the fast loop counts with: it starts a
	 * symbol before the stop only, and the counted path none after. */
	const unsigned char *stop = stop_of(s, out_end);
	const unsigned char *fast_end = (size_t)(out_end - stop) >= FAST_ROOM ? stop + FAST_ROOM - 1 : out_end;
	if (s->copy_len) {
		unsigned n = (size_t)(out_end - out) < s->copy_len ? (unsigned)(out_end - out) : s->copy_len;
		out = copy_far(s, out0, out, n, s->copy_dist);
		s->copy_len -= n;
		if (s->copy_len)
			goto out;
	}
	for (;;) {
		/*
		 * Symbols decoded without counting: enough input for a refill,
		 * enough room for a longest match.  Each turn starts with 56 or
		 * more bits and the first-level entry of the next code already
		 * read, as the turn before read it while it copied: a table
		 * read waits only on the shift before it.
		 */
		uint32_t e = 0;
		if (in_end - in >= 8) {
			REFILL();
			e = s->lit[bb & LIT_MASK];
		}
		while (in_end - in >= 8 && fast_end - out >= FAST_ROOM) {
			if (e & F_LIT) {
				/* Up to two more literals, and the next entry,
				 * from the first level: 4 times 11 bits of 56. */
				LITERAL();
				if (e & F_LIT) {
					LITERAL();
					if (e & F_LIT)
						LITERAL();
				}
				REFILL();
				continue;
			}
			if (!(e & F_PLAIN)) {
				/* A code longer than the first level's, the
				 * block's end, or a bad code. */
				e = second(s->lit, LIT_BITS, e, &bb, &bc);
				if (e & F_LIT) {
					LITERAL();
					REFILL();
					continue;
				}
				if (!(e & F_PLAIN)) {
					bb >>= E_BITS(e);
					bc -= E_BITS(e);
					rc = E_KIND(e) == K_EOB ? ENDED : DX_INF_BAD;
					goto out;
				}
			}
			unsigned len = E_VAL(e) + extra_bits(bb, e);
			bb >>= E_BITS(e);
			bc -= E_BITS(e);
			e = s->dist[bb & ((1u << DIST_BITS) - 1)];
			if (!(e & F_PLAIN)) {
				e = second(s->dist, DIST_BITS, e, &bb, &bc);
				if (!(e & F_PLAIN)) {
					rc = DX_INF_BAD;
					goto out;
				}
			}
			unsigned d = E_VAL(e) + extra_bits(bb, e);
			bb >>= E_BITS(e);
			bc -= E_BITS(e);
			/* The next entry from the bits left where they are
			 * enough (most often), so that its read and the
			 * refill's wait on memory together. */
			if (bc >= LIT_BITS) {
				e = s->lit[bb & LIT_MASK];
				REFILL();
			} else {
				REFILL();
				e = s->lit[bb & LIT_MASK];
			}
			size_t have = (size_t)(out - out0);
			if (d > have && d > have + s->whave) {
				rc = DX_INF_BAD;
				goto out;
			}
			if (dry) {
				if (d > have)
					lazy_match(s, out, len, d, have);
				out += len;
			} else if (d > have) {
				out = copy_far(s, out0, out, len, d);
			} else if (d >= 16) {
				/* 16 bytes at a time, 32 before the first test
				 * (most matches are shorter): each read lies
				 * before the end of what the writes before it
				 * wrote. */
				const unsigned char *src = out - d;
				unsigned char *dst = out;
				out += len;
				memcpy(dst, src, 16);
				memcpy(dst + 16, src + 16, 16);
				while ((dst += 32) < out) {
					src += 32;
					memcpy(dst, src, 16);
					memcpy(dst + 16, src + 16, 16);
				}
			} else if (d >= 8) {
				const unsigned char *src = out - d;
				unsigned char *dst = out;
				out += len;
				do {
					memcpy(dst, src, 8);
					dst += 8;
					src += 8;
				} while (dst < out);
			} else if (d == 1) {
				memset(out, out[-1], len);
				out += len;
			} else {
				for (const unsigned char *src = out - d; len; len--)
					*out++ = *src++;
			}
		}
		/* One symbol, every bit counted. */
		struct bits cb = { in, in_end, bb, bc };
		need(&cb, SYMBOL_BITS);
		if (cb.bc < SYMBOL_BITS && !final) {
			in = cb.in, bb = cb.bb, bc = cb.bc;
			goto out;
		}
		if (out >= stop) {
			in = cb.in, bb = cb.bb, bc = cb.bc;
			goto out;
		}
		int trunc = 0;
		unsigned len = 0, d = 0; /* len: a literal's byte, or a match's length */
		e = counted_symbol(&cb, s->lit, LIT_BITS, &len, &trunc);
		if (!trunc && E_KIND(e) == K_LEN) {
			uint32_t de = counted_symbol(&cb, s->dist, DIST_BITS, &d, &trunc);
			if (!trunc && E_KIND(de) != K_DIST)
				e = de; /* K_BAD */
		}
		in = cb.in, bb = cb.bb, bc = cb.bc;
		if (trunc) {
			rc = DX_INF_TRUNC;
			goto out;
		}
		if (E_KIND(e) == K_LIT) {
			*out++ = (unsigned char)len;
		} else if (E_KIND(e) == K_EOB) {
			rc = ENDED;
			goto out;
		} else if (E_KIND(e) != K_LEN) {
			rc = DX_INF_BAD;
			goto out;
		} else {
			if (d > (size_t)(out - out0) + s->whave) {
				rc = DX_INF_BAD;
				goto out;
			}
			unsigned n = (size_t)(out_end - out) < len ? (unsigned)(out_end - out) : len;
			out = copy_far(s, out0, out, n, d);
			s->copy_len = len - n;
			s->copy_dist = d;
			if (s->copy_len)
				goto out;
		}
	}
out:
	b->in = in;
	b->bb = bb;
	b->bc = bc;
	*outp = out;
	return rc;
}

/* huffman(), dry or not as the lazy window's mode says. */
static inline __attribute__((always_inline)) int huffman_mode(dx_inflate *s, struct bits *b, const unsigned char *out0,
                                                              unsigned char **outp, unsigned char *out_end, int final)
{
	if (s->lazy == DX_LAZY_MARK)
		return huffman(s, b, out0, outp, out_end, final, 1);
	return huffman(s, b, out0, outp, out_end, final, 0);
}

static int huffman_plain(dx_inflate *s, struct bits *b, const unsigned char *out0, unsigned char **outp,
                         unsigned char *out_end, int final)
{
	return huffman_mode(s, b, out0, outp, out_end, final);
}

/*
 * The same, compiled for BMI2 where the CPU has it (x86-64 since 2013),
 * chosen once per decoder, as libdeflate chooses its own: the fast loop
 * shifts by amounts it reads from its tables, and BMI2's shifts take them
 * in any register and leave the flags alone.  It took 0.95-0.96 of the
 * time a byte of the portable code on the generated passages' .gz, on an
 * AMD EPYC (user time, medians of 11, twice).
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("bmi2"))) static int huffman_bmi2(dx_inflate *s, struct bits *b, const unsigned char *out0,
                                                        unsigned char **outp, unsigned char *out_end, int final)
{
	return huffman_mode(s, b, out0, outp, out_end, final);
}

static huffman_fn *huffman_for_cpu(void)
{
	return __builtin_cpu_supports("bmi2") ? huffman_bmi2 : huffman_plain;
}
#else
static huffman_fn *huffman_for_cpu(void)
{
	return huffman_plain;
}
#endif

/* The history after a call that wrote out0[0, n): the ring takes at most
 * its size, so that a call that wrote little costs little. */
static void keep_history(dx_inflate *s, const unsigned char *out0, size_t n)
{
	if (n >= WSIZE) {
		memcpy(s->win, out0 + n - WSIZE, WSIZE);
		s->wnext = 0;
		s->whave = WSIZE;
		return;
	}
	size_t first = WSIZE - s->wnext < n ? WSIZE - s->wnext : n;
	memcpy(s->win + s->wnext, out0, first);
	memcpy(s->win, out0 + first, n - first);
	s->wnext = (s->wnext + n) & (WSIZE - 1);
	s->whave = s->whave + n > WSIZE ? WSIZE : s->whave + n;
}

int dx__inflate_run(dx_inflate *s, const unsigned char **inp, size_t *avail_in, unsigned char **outp,
                    size_t *avail_out, int final, size_t block_after)
{
	struct bits b = { *inp, *inp + *avail_in, s->bb, s->bc };
	unsigned char *out0 = *outp, *out = out0, *out_end = out0 + *avail_out;
	/* Where the history reachable in the output starts: this call's
	 * output, or all since base (after a lazy window: whave bytes, which
	 * a match reaches through copy_far). */
	const unsigned char *hist0 = s->base ? s->base + (s->lazy ? s->whave : 0) : out0;
	int rc;
	for (;;) {
		if (s->mode == M_DONE) {
			rc = DX_INF_END;
			break;
		}
		if (s->mode == M_HEAD) {
			if (!final && (size_t)(b.end - b.in) < HEAD_NEED) {
				rc = DX_INF_MORE;
				break;
			}
			if ((rc = header(s, &b)) < 0)
				break;
			continue;
		}
		if (s->mode == M_STORED) {
			size_t n = s->stored_left;
			/* To the stop, or the end of the room. */
			const unsigned char *stop = stop_of(s, out_end);
			size_t room = out < stop ? (size_t)(stop - out) : 0;
			if (n > (size_t)(b.end - b.in))
				n = (size_t)(b.end - b.in);
			if (n > room)
				n = room;
			memcpy(out, b.in, n);
			out += n;
			b.in += n;
			s->stored_left -= (uint32_t)n;
			if (s->stored_left) {
				rc = b.in == b.end && final ? DX_INF_TRUNC : DX_INF_MORE;
				break;
			}
		} else if ((rc = s->huffman(s, &b, hist0, &out, out_end, final)) != ENDED) {
			break;
		}
		/* The block ended. */
		if (s->last) {
			/* What is left of the last byte is padding. */
			give_back(&b);
			b.bb = 0;
			b.bc = 0;
			s->mode = M_DONE;
			rc = DX_INF_END;
			break;
		}
		s->mode = M_HEAD;
		if ((size_t)(out - out0) >= block_after) {
			rc = DX_INF_BLOCK;
			break;
		}
	}
	give_back(&b);
	s->bb = b.bb;
	s->bc = b.bc;
	if (!s->base)
		keep_history(s, out0, (size_t)(out - out0));
	*avail_in -= (size_t)(b.in - *inp);
	*inp = b.in;
	*avail_out -= (size_t)(out - out0);
	*outp = out;
	return rc;
}

unsigned dx__inflate_bits(const dx_inflate *s)
{
	return s->bc;
}

void dx__inflate_reset(dx_inflate *s)
{
	s->bb = 0;
	s->bc = 0;
	s->mode = M_HEAD;
	s->last = 0;
	s->stored_left = 0;
	s->copy_len = s->copy_dist = 0;
	s->whave = 0;
	s->wnext = 0;
	s->base = NULL;
	s->stop = NULL;
	s->lazy = 0;
}

void dx__inflate_portable(dx_inflate *s)
{
	s->huffman = huffman_plain;
}

void dx__inflate_contiguous(dx_inflate *s, unsigned char *base)
{
	s->base = base;
}

void dx__inflate_stop_at(dx_inflate *s, const unsigned char *stop)
{
	s->stop = stop;
}

void dx__inflate_prime(dx_inflate *s, unsigned bits, unsigned value)
{
	s->bb = value & ((1u << bits) - 1);
	s->bc = bits;
}

int dx__inflate_lazy(dx_inflate *s, int mode, unsigned char *window, size_t wlen, unsigned char *bytes,
                     size_t len)
{
	if (!s->known && !(s->known = malloc(WSIZE / 8)))
		return -1;
	memset(s->known, 0, WSIZE / 8);
	s->lazy = mode;
	s->base = window;
	s->lazy_bytes = bytes;
	s->lazy_len = len;
	s->lazy_pos = 0;
	s->lazy_short = 0;
	s->known_len = wlen;
	s->whave = wlen;
	return 0;
}

int64_t dx__inflate_lazy_end(dx_inflate *s)
{
	int64_t n = s->lazy_short ? -1 : (int64_t)s->lazy_pos;
	if (s->lazy == DX_LAZY_MARK) {
		n = 0;
		for (size_t w = 0; w * 64 < s->known_len; w++)
			n += __builtin_popcountll(s->known[w]);
	}
	/* The window is history since base now, as the output after it. */
	s->lazy = 0;
	s->whave = 0;
	return n;
}

/* The bytes of window that the last lazy run marked, in their order:
 * copied into bytes, or from them (scatter).  A run of marked bytes at a
 * time: they come in runs as matches read them. */
static void lazy_move(const dx_inflate *s, unsigned char *window, unsigned char *bytes, int scatter)
{
	for (size_t w = 0; w * 64 < s->known_len; w++) {
		uint64_t m = s->known[w];
		while (m) {
			unsigned at = (unsigned)__builtin_ctzll(m);
			uint64_t rest = ~(m >> at);
			unsigned n = rest ? (unsigned)__builtin_ctzll(rest) : 64 - at;
			unsigned char *wp = window + w * 64 + at;
			if (scatter)
				memcpy(wp, bytes, n);
			else
				memcpy(bytes, wp, n);
			bytes += n;
			m = at + n >= 64 ? 0 : m & ~(uint64_t)0 << (at + n);
		}
	}
}

void dx__inflate_lazy_gather(const dx_inflate *s, const unsigned char *window, unsigned char *bytes)
{
	lazy_move(s, (unsigned char *)(uintptr_t)window, bytes, 0);
}

void dx__inflate_lazy_scatter(const dx_inflate *s, unsigned char *window, const unsigned char *bytes)
{
	lazy_move(s, window, (unsigned char *)(uintptr_t)bytes, 1);
}

dx_inflate *dx__inflate_new(void)
{
	dx_inflate *s = malloc(sizeof *s);
	if (s) {
		s->known = NULL;
		s->huffman = huffman_for_cpu();
		dx__inflate_reset(s);
	}
	return s;
}

void dx__inflate_free(dx_inflate *s)
{
	if (s)
		free(s->known);
	free(s);
}
