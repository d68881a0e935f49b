/* index.h: lookups in an open index, for corpus.c and verify.c (internal). */
#ifndef DX_INDEX_H
#define DX_INDEX_H

#include <stdint.h>

#include "docdex.h"
#include "index_format.h"
#include "params.h"

const char *dx__index_path(const dx_index *ix);
/* The index file's mapping. */
void dx__index_mapping(const dx_index *ix, const void **p, uint64_t *len);
const dx_params *dx__index_params(const dx_index *ix);
uint64_t dx__index_count(const dx_index *ix);

/* Asks the CPU for the index entries of records pos[0..n) ahead of
 * dx__index_record, and of the record after each, which the check of a
 * record's end reads (a hint: no check, no fault). */
void dx__index_prefetch(const dx_index *ix, const uint64_t *pos, size_t n);
/* The file, offset and length of record pos, checked against the file's size. */
int dx__index_record(dx_index *ix, uint64_t pos, uint32_t *file, uint64_t *off, uint64_t *len,
                     dx_err *err);
/* The file and offset of record pos alone, unchecked against the file's
 * size: where it starts, for a check of the record before it. */
int dx__index_start(dx_index *ix, uint64_t pos, uint32_t *file, uint64_t *off, dx_err *err);

/* The id of record pos, valid until the next call on ix. */
int dx__index_id(dx_index *ix, uint64_t pos, const char **id, size_t *len, dx_err *err);
/* Whether id (len bytes) is record pos's: 1, 0, or an error. */
int dx__index_is_id(dx_index *ix, uint64_t pos, const char *id, size_t len, dx_err *err);

/* The access points of gzip source src (checked), and the windows section. */
int dx__index_points(dx_index *ix, uint32_t src, const struct ddx_point **pts, uint64_t *n,
                     const unsigned char **windows, uint64_t *windows_size, dx_err *err);
/* Checks the chunks of the windows section that [off, off + len) covers. */
int dx__index_check_windows(dx_index *ix, uint64_t off, uint64_t len, dx_err *err);

/* Asks the CPU for what dx__index_find of ids[0..n) will read (a hint). */
void dx__index_prefetch_ids(const dx_index *ix, const char *const *id, const size_t *len, size_t n);
/* 1 with *pos when a record has this id, 0 when none has, or an error. */
int dx__index_find(dx_index *ix, const char *id, size_t len, uint64_t *pos, dx_err *err);

#endif
