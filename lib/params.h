/*
 * params.h: the build parameters of an index (internal).  They are stored
 * in the index as "key=value" lines so that reading a corpus later (get,
 * --verify) interprets records exactly as the build did.
 */
#ifndef DX_PARAMS_H
#define DX_PARAMS_H

#include "buf.h"
#include "docdex.h"

typedef struct dx_params {
	int format;             /* DX_FMT_TSV, _JSONL or _TREC */
	unsigned id_column;     /* TSV: 1-based */
	char id_field[DX_ID_FIELD_MAX + 1];  /* JSONL: the id's key */
	char columns[DX_COLUMNS_MAX + 1];    /* TSV: comma-separated column names, or "" */
	int duplicates;         /* DX_DUP_* */
	int skip_bad;
} dx_params;

/* Appends the parameters as text. Returns 0 or -1 (ENOMEM). */
int dx__params_write(const dx_params *p, dx_buf *out);

/* Parses the text back; DX_ECORRUPT names the bad line. */
int dx__params_read(const char *text, size_t len, dx_params *p, const char *path, dx_err *err);

#endif
