/* corpus.h: what verify.c, loader.c and pin.c need of an open corpus (internal). */
#ifndef DX_CORPUS_H
#define DX_CORPUS_H

#include "docdex.h"

/* The path source i was opened at. */
const char *dx__corpus_source_path(const dx_corpus *c, uint32_t i);

/* Source i's mapping (a plain file), or NULL and 0 for a compressed one. */
void dx__corpus_mapping(const dx_corpus *c, uint32_t i, const void **p, uint64_t *len);

/* Makes the next read of source i start from an access point rather than
 * go on from the last one (so that --verify tries every point). */
void dx__corpus_restart(dx_corpus *c, uint32_t i);

/* The uncompressed bytes [off, off + len) of source i, valid until the
 * next read. */
int dx__corpus_bytes(dx_corpus *c, uint32_t i, uint64_t off, uint64_t len, const char **data,
                     dx_err *err);

#endif
