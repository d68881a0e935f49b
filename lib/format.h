/*
 * format.h: corpus formats (internal).  Each format knows how to find the
 * next record in a stream of bytes, read a record's id and pick a field out
 * of it.  fmt_tsv.c, fmt_jsonl.c and fmt_trec.c implement them.
 */
#ifndef DX_FORMAT_H
#define DX_FORMAT_H

#include <stddef.h>

#include "buf.h"
#include "params.h"

/*
 * Finds the next record in [p, end).  Returns 1 with the record at
 * [*rec, *rec + *len); 0 when no complete record is there (more bytes are
 * needed, or at_eof nothing but blanks remained); -1 when the bytes cannot
 * be a record (an unterminated <DOC> at the end of the file), *rec marking
 * where.  *next is always set to where the next search starts; *hint says
 * how many bytes after *next were already searched in vain, so that a
 * record longer than the buffer is not searched again from its start.
 */
typedef int (*dx_next_fn)(const char *p, const char *end, int at_eof, size_t *hint,
                          const char **rec, size_t *len, const char **next);

/*
 * Reads a record's id.  Returns 0 with the id at [*id, *id + *idlen),
 * pointing into the record or into scratch; DX_ENOID when the record has
 * none, DX_EFORMAT when it is malformed; *why then says what is wrong.
 */
typedef int (*dx_id_fn)(const dx_params *pm, const char *rec, size_t len, dx_buf *scratch,
                        const char **id, size_t *idlen, const char **why);

/* One selected field, parsed from a name once per command. */
typedef struct dx_field {
	unsigned column;      /* TSV: 0-based column */
	char name[128];       /* JSONL key or TREC element; TREC "text" and "docno" are special;
	                         TSV: the index's name of the column, or its number as given */
	size_t name_len;
} dx_field;

/* Parses one field name for this format; an empty name (len 0) selects the
 * record's text, as the format best knows it.  Returns 0, or DX_EINVAL
 * with *why. */
typedef int (*dx_field_parse_fn)(const dx_params *pm, const char *name, size_t len,
                                 dx_field *f, const char **why);

/* The field's bytes: *out points into rec or into scratch (appended to).
 * Returns the value's DX_VALUE_* kind: DX_VALUE_ABSENT (*outlen 0) when
 * the record lacks the field, DX_VALUE_JSON for a JSON value other than a
 * string (its text as it stands in the record); or a negative code. */
typedef int (*dx_field_fn)(const dx_params *pm, const dx_field *f, const char *rec, size_t len,
                           dx_buf *scratch, const char **out, size_t *outlen);

/* Takes one field of a record from a dx_all_fn: its name, its bytes (a
 * DX_VALUE_* kind), and whether it holds the record's id.  Each pointer
 * may point into the record or into scratch.  Returns 0 or DX_ENOMEM. */
typedef int (*dx_value_sink)(void *ctx, const char *name, size_t name_len, const char *s, size_t n,
                             int kind, int is_id);

/* Every field of a record, in order, each handed to add (see
 * dx_corpus_values); names or values it makes are appended to scratch.
 * Returns 0, DX_EFORMAT (a malformed record) or DX_ENOMEM. */
typedef int (*dx_all_fn)(const dx_params *pm, const char *rec, size_t len, dx_buf *scratch,
                         dx_value_sink add, void *ctx);

/*
 * Whether a record found through an index ends where the format ends one:
 * tail holds the tail_len (0 to 2) bytes that follow it in the file, none
 * at the file's end.  An index whose length lies, or a corpus rewritten in
 * place, gives a record cut short or two glued together, which this and
 * the gap to the next record tell for the cost of a few bytes.
 */
typedef int (*dx_ends_fn)(const char *rec, size_t len, const char *tail, size_t tail_len);

typedef struct dx_format_ops {
	const char *name;
	dx_next_fn next;
	dx_id_fn id;
	dx_field_parse_fn field_parse;
	dx_field_fn field;
	dx_all_fn all;
	dx_ends_fn ends;
	unsigned gap;         /* the fewest bytes between a record and the next
	                         (a line's LF) */
} dx_format_ops;

extern const dx_format_ops dx__fmt_tsv, dx__fmt_jsonl, dx__fmt_trec;

/* The operations of a DX_FMT_* format, or NULL. */
const dx_format_ops *dx__format_ops(int format);

/* The format that the first bytes of a file look like, or DX_FMT_AUTO when
 * none.  n may cut the data anywhere. */
int dx__format_detect(const char *p, size_t n);

/* The line-splitting dx_next_fn shared by TSV and JSONL: a record is a line
 * without its LF or CRLF; blank lines are skipped. */
int dx__next_line(const char *p, const char *end, int at_eof, size_t *hint,
                  const char **rec, size_t *len, const char **next);

/* The dx_ends_fn of line records: no LF inside the end, then LF, CRLF, or
 * the end of the file. */
int dx__line_ends(const char *rec, size_t len, const char *tail, size_t tail_len);

/* TSV column names guessed from a first record's column count: MS MARCO
 * passages (id, text), BEIR-like TSV (id, title, text), MS MARCO documents
 * (id, url, title, body).  "" when there is no usual layout. */
const char *dx__tsv_default_columns(const char *rec, size_t len);

/* JSONL: the first key of a record among the usual id keys, for the build
 * to use on every record; NULL when there is none. */
const char *dx__jsonl_default_id_field(const char *rec, size_t len);

#endif
