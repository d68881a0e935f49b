/* utf8.h: a document's bytes decoded as Python decodes them,
 * bytes.decode("utf-8", "surrogateescape"), into the form in which a str
 * keeps its text (PEP 393): one code point a unit of 1, 2 or 4 bytes,
 * the width set by the largest.  Done while the GIL is let go, so that
 * with it held a str is only allocated and copied into.  Plain C, without
 * Python's headers: the fuzz harness tests/fuzz/fuzz_utf8.c builds it
 * alone. */
#ifndef DX_PY_UTF8_H
#define DX_PY_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* How many of the n bytes at s are ASCII before the first that is not (n
 * when all are: the bytes are then the str's units). */
size_t dx_py_utf8_ascii(const unsigned char *s, size_t n);

/*
 * Decodes the n bytes at s into out, which has room for 4 * n bytes (out
 * and s must not overlap): *nchars code points, each stored as a unit of
 * dx_py_utf8_width(*maxchar) bytes in the machine's byte order, at any
 * alignment.  *maxchar says which kind of str holds them, as
 * PyUnicode_New takes it: 127 if every one is ASCII, 255 if every one is
 * Latin-1, 0xFFFF if every one is in the BMP, else 0x10FFFF.  A byte
 * that does not belong to a well-formed sequence (Unicode's table 3-7: no
 * overlong form, no surrogate, nothing above U+10FFFF) is one code point,
 * U+DC00 plus the byte, as surrogateescape makes it.
 */
void dx_py_utf8_decode(const unsigned char *s, size_t n, void *out, size_t *nchars, uint32_t *maxchar);

/* The units a str of largest code point maxchar keeps: 1, 2 or 4 bytes. */
unsigned dx_py_utf8_width(uint32_t maxchar);

#endif
