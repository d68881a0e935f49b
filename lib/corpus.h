/* corpus.h: what verify.c needs of an open corpus (internal). */
#ifndef DX_CORPUS_H
#define DX_CORPUS_H

#include "docdex.h"

/* The path source i was opened at. */
const char *dx__corpus_source_path(const dx_corpus *c, uint32_t i);

#endif
