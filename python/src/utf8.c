/* utf8.c: UTF-8 decoded as Python's surrogateescape decoder does, into a
 * str's units (utf8.h).  Python's own decoder, called with the GIL held,
 * took twice an allocation and copy for ASCII text, and five times for
 * text with one Latin-1 letter, which it widens to and shrinks back as it
 * goes; decoded first, without the GIL, a str is made at its final size
 * and kind. */
#include <string.h>

#include "utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>

static __m128i load16(const unsigned char *s)
{
	return _mm_loadu_si128((const __m128i *)(const void *)s);
}

/* The high bits of 16 bytes at s, bit k for byte k. */
static unsigned high16(const unsigned char *s)
{
	return (unsigned)_mm_movemask_epi8(load16(s));
}

/* Whether any of the 64 bytes at s has its high bit set. */
static int high64(const unsigned char *s)
{
	__m128i a = _mm_or_si128(load16(s), load16(s + 16)), b = _mm_or_si128(load16(s + 32), load16(s + 48));
	return _mm_movemask_epi8(_mm_or_si128(a, b)) != 0;
}
#else
/* The same, a byte or a word at a time where there is no SSE2. */
static unsigned high16(const unsigned char *s)
{
	unsigned m = 0;
	for (int k = 0; k < 16; k++)
		m |= (unsigned)(s[k] >> 7) << k;
	return m;
}

static int high64(const unsigned char *s)
{
	uint64_t any = 0, w;
	for (int k = 0; k < 64; k += 8) {
		memcpy(&w, s + k, 8);
		any |= w;
	}
	return (any & 0x8080808080808080u) != 0;
}
#endif

/*
 * A run of ASCII is found 64 bytes a step, then 16, and the last step read
 * overlapping the one before: with a loop a word at a time, then a byte
 * at a time, a first version mispredicted both ends at each letter beyond
 * ASCII and decoded a passage with one such letter more slowly than
 * Python does; 64 bytes a step take half the instructions of 32.
 */
size_t dx_py_utf8_ascii(const unsigned char *s, size_t n)
{
	size_t i = 0;
	if (n < 16) {
		while (i < n && s[i] < 0x80)
			i++;
		return i;
	}
	while (i + 64 <= n && !high64(s + i))
		i += 64;
	for (; i + 16 <= n; i += 16) {
		unsigned m = high16(s + i);
		if (m)
			return i + (size_t)__builtin_ctz(m);
	}
	if (i == n)
		return n;
	/* The last 16 bytes, less the i - (n - 16) of them seen already. */
	unsigned m = high16(s + n - 16) >> (i - (n - 16));
	return m ? i + (size_t)__builtin_ctz(m) : n;
}

static int cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/*
 * The code point of the sequence that starts n bytes at s (n >= 1, s[0]
 * not ASCII), and in *len how many bytes it takes.  Where no well-formed
 * sequence starts, the first byte alone is escaped.  Python's decoder
 * escapes the bytes of a sequence cut short or broken, up to the byte
 * that breaks it, each on its own; none of them could start a sequence,
 * so the two agree.
 */
static uint32_t decode_one(const unsigned char *s, size_t n, size_t *len)
{
	unsigned c = s[0];
	if (c >= 0xC2 && c <= 0xDF) {
		if (n >= 2 && cont(s[1])) {
			*len = 2;
			return (uint32_t)(c & 0x1F) << 6 | (s[1] & 0x3F);
		}
	} else if (c >= 0xE0 && c <= 0xEF) {
		/* E0 needs A0 or more (no overlong form), ED 9F or less (no
		 * surrogate). */
		unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
		if (n >= 3 && s[1] >= lo && s[1] <= hi && cont(s[2])) {
			*len = 3;
			return (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
		}
	} else if (c >= 0xF0 && c <= 0xF4) {
		/* F0 needs 90 or more, F4 8F or less (U+10FFFF at most). */
		unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
		if (n >= 4 && s[1] >= lo && s[1] <= hi && cont(s[2]) && cont(s[3])) {
			*len = 4;
			return (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 |
			       (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
		}
	}
	*len = 1;
	return 0xDC00 + c;
}

unsigned dx_py_utf8_width(uint32_t maxchar)
{
	return maxchar <= 0xFF ? 1 : maxchar <= 0xFFFF ? 2 : 4;
}

/* Decodes into units of width bytes at out, up to the first code point
 * above limit: the units written, in *stop where that code point starts
 * (n when there is none), and in *max the largest written, if above it. */
static size_t write_units(const unsigned char *s, size_t n, unsigned width, uint32_t limit,
                          unsigned char *out, size_t *stop, uint32_t *max)
{
	unsigned char *o = out;
	size_t i = 0;
	while (i < n) {
		size_t run = dx_py_utf8_ascii(s + i, n - i);
		if (width == 1) {
			memcpy(o, s + i, run);
			o += run;
		} else {
			for (size_t k = 0; k < run; k++, o += width) {
				uint32_t u = s[i + k];
				if (width == 2) {
					uint16_t h = (uint16_t)u;
					memcpy(o, &h, 2);
				} else {
					memcpy(o, &u, 4);
				}
			}
		}
		i += run;
		if (i == n)
			break;
		size_t len;
		uint32_t cp = decode_one(s + i, n - i, &len);
		if (cp > limit)
			break;
		*max = cp > *max ? cp : *max;
		if (width == 1) {
			*o = (unsigned char)cp;
		} else if (width == 2) {
			uint16_t h = (uint16_t)cp;
			memcpy(o, &h, 2);
		} else {
			memcpy(o, &cp, 4);
		}
		o += width;
		i += len;
	}
	*stop = i;
	return (size_t)(o - out) / width;
}

void dx_py_utf8_decode(const unsigned char *s, size_t n, void *out, size_t *nchars, uint32_t *maxchar)
{
	size_t stop;
	uint32_t max = 127;
	/* Latin-1 text, most of what is not ASCII, in one pass. */
	size_t count = write_units(s, n, 1, 0xFF, out, &stop, &max);
	if (stop == n) {
		*nchars = count;
		*maxchar = max > 127 ? 0xFF : 127;
		return;
	}
	/* Wider: whether any code point from stop on is beyond the BMP, then
	 * every unit again at that width. */
	max = 0xFFFF;
	for (size_t i = stop, len; i < n && max == 0xFFFF; i += len) {
		i += dx_py_utf8_ascii(s + i, n - i);
		if (i == n)
			break;
		if (decode_one(s + i, n - i, &len) > 0xFFFF)
			max = 0x10FFFF;
	}
	*nchars = write_units(s, n, dx_py_utf8_width(max), UINT32_MAX, out, &stop, &max);
	*maxchar = max > 0xFFFF ? 0x10FFFF : 0xFFFF;
}
