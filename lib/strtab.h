/*
 * strtab.h: a set of strings numbered in the order they were added, found
 * by hashing (internal).  Holds the query ids of sample and, without a
 * corpus, its document ids.  A string never moves once added: what
 * dx__strtab_get returns stays valid until the table is freed, as sample's
 * triples need while more ids are added.
 */
#ifndef DX_STRTAB_H
#define DX_STRTAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct dx_strtab {
	char **chunks;        /* the strings, back to back in chunks that stay put */
	uint32_t nchunks, capchunks;
	char *free_at;        /* the unused end of the last chunk */
	size_t free_len;
	const char **str;     /* string i is [str[i], str[i] + len[i]) */
	uint32_t *len;
	uint32_t n, cap;
	uint32_t *slots;      /* string number + 1, or 0 for an empty slot */
	uint32_t nslots;      /* a power of two */
} dx_strtab;

/* Adds a string unless it is there.  Returns 1 when added, 0 when it was
 * there, -1 when out of memory (or a string of 4 GiB or more); *idx is its
 * number either way. */
int dx__strtab_add(dx_strtab *t, const char *s, size_t len, uint32_t *idx);

/* The number of a string, or -1 when it is not there. */
int64_t dx__strtab_find(const dx_strtab *t, const char *s, size_t len);

static inline const char *dx__strtab_get(const dx_strtab *t, uint32_t i, size_t *len)
{
	*len = t->len[i];
	return t->str[i];
}

void dx__strtab_free(dx_strtab *t);

#endif
