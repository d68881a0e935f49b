/*
 * json.h: just enough JSON for JSONL corpora (internal): walking the members
 * of a record's top-level object, skipping values, decoding strings.
 * Bytes that are not valid UTF-8 are passed through untouched.
 */
#ifndef DX_JSON_H
#define DX_JSON_H

#include <stddef.h>

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

#endif
