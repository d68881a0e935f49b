/*
 * strtab.h: a set of strings numbered in the order they were added, found
 * by hashing (internal).  Holds the query ids of sample.
 */
#ifndef DX_STRTAB_H
#define DX_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct dx_strtab {
	dx_buf pool;          /* the strings, back to back */
	uint64_t *off;        /* string i is [off[i], off[i + 1]) in pool */
	uint32_t n, cap;
	uint32_t *slots;      /* string number + 1, or 0 for an empty slot */
	uint32_t nslots;      /* a power of two */
} dx_strtab;

/* Adds a string unless it is there.  Returns 1 when added, 0 when it was
 * there, -1 when out of memory; *idx is its number either way. */
int dx__strtab_add(dx_strtab *t, const char *s, size_t len, uint32_t *idx);

/* The number of a string, or -1 when it is not there. */
int64_t dx__strtab_find(const dx_strtab *t, const char *s, size_t len);

static inline const char *dx__strtab_get(const dx_strtab *t, uint32_t i, size_t *len)
{
	*len = (size_t)(t->off[i + 1] - t->off[i]);
	/* A table of empty strings has no pool at all. */
	return t->pool.p ? t->pool.p + t->off[i] : "";
}

void dx__strtab_free(dx_strtab *t);

#endif
