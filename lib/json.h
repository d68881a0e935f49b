/*
 * json.h: the one JSON reader and writer of docdex (internal).
 *
 * Reading walks text in place, without a tree: the members of an object
 * and the elements of an array, values skipped whole, strings decoded.
 * The walkers are lenient and fast, for the records of JSONL corpora,
 * which are read as they come; a text that must be JSON as a whole (a
 * report read back) is checked once against the grammar (dx__json_check)
 * and then walked with the same functions.  Bytes that are not valid
 * UTF-8 are passed through untouched.
 *
 * Writing streams values to a sink (dx_json_writer below).
 */
#ifndef DX_JSON_H
#define DX_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct dx_json_member {
	const char *key;      /* the key's bytes, quotes excluded, escapes not decoded */
	size_t key_len;
	int key_escaped;      /* the key holds a backslash */
	const char *val;      /* the value's first byte */
	const char *val_end;  /* one past its last byte */
} dx_json_member;

/* Positions *p after the '{' that opens a record (leading blanks allowed).
 * Returns 0, or -1 when the record does not start with an object. */
int dx__json_open_object(const char **p, const char *end);

/* Reads the next member of the object.  Returns 1 with m filled, 0 at the
 * closing '}', -1 on malformed JSON. */
int dx__json_next_member(const char **p, const char *end, dx_json_member *m);

/* Whether a member's key equals name (decoding escapes in the key if any). */
int dx__json_key_is(const dx_json_member *m, const char *name, size_t len);

/* Skips one value starting at p (after blanks): returns the byte after it,
 * or NULL when it is malformed or unterminated. */
const char *dx__json_skip_value(const char *p, const char *end);

/* Appends the decoded bytes of the string value [val, val_end) (with its
 * quotes) to out.  Returns 0, or -1 with errno EINVAL (bad escape) or ENOMEM. */
int dx__json_decode(const char *val, const char *val_end, dx_buf *out);

/* Whether [val, val_end) is a JSON string holding no escape, so that its
 * bytes between the quotes can be used as they are. */
int dx__json_plain_string(const char *val, const char *val_end);

/* The bytes of a member's value: a string's decoded bytes (pointing into
 * the record when it holds no escape, else appended to scratch), or any
 * other value's bytes as they are.  Returns 0, or -1 on a bad escape or
 * ENOMEM. */
int dx__json_value(const dx_json_member *m, dx_buf *scratch, const char **out, size_t *outlen);

/* ---- whole texts: checked, then walked -------------------------------------- */

/* The byte after the blanks at p. */
const char *dx__json_skip_ws(const char *p, const char *end);

/* Checks the value at p (its first byte) against JSON's grammar, strictly:
 * strings without raw control bytes and with JSON's escapes only, numbers
 * as JSON writes them (no hex, inf, nan or "+1"), true, false, null, and
 * objects and arrays nested at most max_depth deep.  Returns the byte after
 * the value, or NULL when it is not JSON. */
const char *dx__json_check(const char *p, const char *end, int max_depth);

/* Positions *p after the '[' of the array at *p (leading blanks allowed).
 * Returns 0, or -1 when there is no array there. */
int dx__json_open_array(const char **p, const char *end);

/* Reads the next element of the array: returns 1 with [*val, *val_end)
 * its value, 0 at the closing ']', -1 on malformed JSON. */
int dx__json_next_element(const char **p, const char *end, const char **val, const char **val_end);

/* The first byte of the value of member name of the object at obj (the
 * first, when two have the name; keys are compared decoded), or NULL when
 * obj is NULL, not an object, or has no such member. */
const char *dx__json_member(const char *obj, const char *end, const char *name);

/* The string value at val decoded into buf as a C string.  Returns 0, or -1
 * when val is NULL or not a string, holds a bad escape or a NUL, or does
 * not fit in n bytes: such a string matches no name a caller looks for. */
int dx__json_string_copy(const char *val, const char *end, char *buf, size_t n);

/* The number at val into *out.  Returns 0, or -1 when val is NULL, is not a
 * number, or is beyond a double's range (1e999: JSON has no infinity).
 * The text after the number must not continue it, as in any JSON text that
 * ends in a NUL; numbers are read with strtod, and docdex never sets
 * LC_NUMERIC, so the decimal point is '.'. */
int dx__json_number(const char *val, double *out);

/* ---- writing ---------------------------------------------------------------- */

/*
 * A streaming writer: values, keys, objects and arrays in the order they
 * come, laid out as docdex's reports are.  A container is either inline,
 * its members on one line ({"a": 1, "b": [1, 2]}), or block, each member
 * on a line of its own, indented two spaces a level, and the closing
 * bracket on a line of its own unless the container is empty ("[]").
 *
 * Strings are written with one rule: the quote and the backslash escaped
 * with a backslash, control bytes as \u00XX, every other byte (UTF-8
 * included, valid or not) as it is.  Bytes gather in the writer and go to
 * the sink in blocks; once the sink fails, nothing more is written and
 * dx__jw_finish says so.
 */
enum { DX_JW_INLINE = 0, DX_JW_BLOCK = 1, DX_JW_MAX_DEPTH = 32, DX_JW_BUF = 4096 };

/* Takes len bytes; returns 0, or -1 when they could not be written. */
typedef int (*dx_json_sink)(void *ctx, const void *p, size_t len);

typedef struct dx_json_writer {
	dx_json_sink sink;
	void *ctx;
	int failed;                       /* the sink failed: write nothing more */
	int base;                         /* the indent level the text starts at */
	int depth;                        /* containers open */
	int after_key;                    /* a key was written: its value follows */
	unsigned char block[DX_JW_MAX_DEPTH]; /* each open container: laid out in lines */
	unsigned char used[DX_JW_MAX_DEPTH];  /* ... and holds a member already */
	size_t len;
	char buf[DX_JW_BUF];
} dx_json_writer;

/* Starts a text whose block containers are indented as if base levels
 * deep already (a value that another writer's text will hold). */
void dx__jw_init(dx_json_writer *w, dx_json_sink sink, void *ctx, int base);
/* Hands what is gathered to the sink.  Returns 0, or -1 when the sink failed. */
int dx__jw_finish(dx_json_writer *w);

void dx__jw_begin_object(dx_json_writer *w, int layout);
void dx__jw_end_object(dx_json_writer *w);
void dx__jw_begin_array(dx_json_writer *w, int layout);
void dx__jw_end_array(dx_json_writer *w);
/* A member's key, a NUL-terminated name; its value is written next. */
void dx__jw_key(dx_json_writer *w, const char *name);

/* The n bytes at s as a string. */
void dx__jw_string(dx_json_writer *w, const char *s, size_t n);
/* A C string as a string, or null for NULL. */
void dx__jw_cstring(dx_json_writer *w, const char *s);
void dx__jw_null(dx_json_writer *w);
void dx__jw_bool(dx_json_writer *w, int v);
void dx__jw_uint(dx_json_writer *w, uint64_t v);
void dx__jw_int(dx_json_writer *w, int64_t v);
/* A measured figure, as reports write them (dx__json_format_figure); null
 * when it is NaN or infinite, which JSON cannot hold. */
void dx__jw_figure(dx_json_writer *w, double x);
/* x with printf's %.*g of the given precision; null when not finite. */
void dx__jw_double(dx_json_writer *w, double x, int precision);
/* n bytes of JSON text written elsewhere, as one value. */
void dx__jw_raw(dx_json_writer *w, const char *text, size_t n);

/* A figure that reads back as the value it was: an integer (bytes, faults)
 * exactly, anything else to 10 significant digits.  x must be finite. */
void dx__json_format_figure(char *buf, size_t n, double x);

#endif
