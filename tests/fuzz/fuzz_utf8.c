/*
 * fuzz_utf8.c: the Python package's decoder of documents
 * (python/src/utf8.c, plain C) on arbitrary bytes, against a reference
 * that decodes one code point at a time from Unicode's table 3-7 of
 * well-formed sequences, escaping each byte outside them as U+DC00 plus
 * the byte, as Python's bytes.decode("utf-8", "surrogateescape") does
 * (the package's tests compare with Python itself).  Every input is
 * decoded whole and from each of its first 40 offsets, so that runs of
 * ASCII end at every place in the 16- and 32-byte steps.  The ASCII
 * prefix, the count, the kind and every unit must agree, or abort().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../../python/src/utf8.h"

/* The second byte's range after lead c (table 3-7), or 0 for a lead that
 * starts no sequence; *more: how many bytes follow the lead. */
static int second_range(unsigned c, unsigned *lo, unsigned *hi, unsigned *more)
{
	*lo = 0x80;
	*hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF)
		*more = 1;
	else if (c == 0xE0)
		*more = 2, *lo = 0xA0;
	else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
		*more = 2;
	else if (c == 0xED)
		*more = 2, *hi = 0x9F;
	else if (c == 0xF0)
		*more = 3, *lo = 0x90;
	else if (c >= 0xF1 && c <= 0xF3)
		*more = 3;
	else if (c == 0xF4)
		*more = 3, *hi = 0x8F;
	else
		return 0;
	return 1;
}

/* The code points of s[0..n) into cp: their count. */
static size_t reference(const uint8_t *s, size_t n, uint32_t *cp)
{
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], lo, hi, more;
		if (c < 0x80) {
			cp[k++] = c;
			i++;
			continue;
		}
		int ok = second_range(c, &lo, &hi, &more) && n - i > more;
		if (ok)
			ok = s[i + 1] >= lo && s[i + 1] <= hi;
		for (unsigned j = 2; ok && j <= more; j++)
			ok = s[i + j] >= 0x80 && s[i + j] <= 0xBF;
		if (!ok) {
			cp[k++] = 0xDC00 + c;
			i++;
			continue;
		}
		uint32_t v = c & (more == 1 ? 0x1F : more == 2 ? 0x0F : 0x07);
		for (unsigned j = 1; j <= more; j++)
			v = v << 6 | (s[i + j] & 0x3F);
		cp[k++] = v;
		i += 1 + more;
	}
	return k;
}

static void check(const uint8_t *s, size_t n, uint32_t *want, unsigned char *out)
{
	size_t nw = reference(s, n, want), ascii = 0;
	uint32_t max = 0;
	for (size_t i = 0; i < nw; i++)
		max = want[i] > max ? want[i] : max;
	while (ascii < n && s[ascii] < 0x80)
		ascii++;
	if (dx_py_utf8_ascii(s, n) != ascii)
		abort();
	uint32_t kind = max <= 0x7F ? 0x7F : max <= 0xFF ? 0xFF : max <= 0xFFFF ? 0xFFFF : 0x10FFFF;
	size_t nchars = 0;
	uint32_t maxchar = 0;
	dx_py_utf8_decode(s, n, out, &nchars, &maxchar);
	if (nchars != nw || maxchar != kind)
		abort();
	unsigned width = dx_py_utf8_width(maxchar);
	if (width != (kind == 0x7F || kind == 0xFF ? 1u : kind == 0xFFFF ? 2u : 4u))
		abort();
	for (size_t i = 0; i < nw; i++) {
		uint32_t u = 0;
		if (width == 1) {
			u = out[i];
		} else if (width == 2) {
			uint16_t h;
			memcpy(&h, out + 2 * i, 2);
			u = h;
		} else {
			memcpy(&u, out + 4 * i, 4);
		}
		if (u != want[i])
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Copies of exactly the bytes decoded: a read past them is ASan's. */
	uint32_t *want = malloc((size + 1) * sizeof *want);
	unsigned char *out = malloc(4 * size + 1);
	if (!want || !out)
		abort();
	for (size_t from = 0; from <= size && from <= 40; from++) {
		size_t n = size - from;
		uint8_t *s = malloc(n + 1);
		if (!s)
			abort();
		memcpy(s, data + from, n);
		check(s, n, want, out);
		free(s);
	}
	free(want);
	free(out);
	return 0;
}
