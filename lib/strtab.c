/* strtab.c: numbered strings in an open-addressing hash table. */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "strtab.h"

/* Strings are copied into chunks of this size (a longer one gets its own),
 * which are never reallocated. */
enum { CHUNK = 1 << 16 };

static uint32_t slot_of(const dx_strtab *t, const char *s, size_t len)
{
	return (uint32_t)dx__hash64(s, len, 0) & (t->nslots - 1);
}

int64_t dx__strtab_find(const dx_strtab *t, const char *s, size_t len)
{
	if (!t->nslots)
		return -1;
	for (uint32_t i = slot_of(t, s, len);; i = (i + 1) & (t->nslots - 1)) {
		uint32_t v = t->slots[i];
		if (!v)
			return -1;
		if (t->len[v - 1] == len && memcmp(t->str[v - 1], s, len) == 0)
			return v - 1;
	}
}

/* Doubles the table (kept at most half full) and puts every string back. */
static int grow(dx_strtab *t)
{
	if (t->nslots >= (1u << 31))
		return -1;
	uint32_t nslots = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = calloc(nslots, sizeof *slots);
	if (!slots)
		return -1;
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	for (uint32_t k = 0; k < t->n; k++) {
		uint32_t i = slot_of(t, t->str[k], t->len[k]);
		while (t->slots[i])
			i = (i + 1) & (nslots - 1);
		t->slots[i] = k + 1;
	}
	return 0;
}

/* A copy of s that stays where it is, or NULL. */
static const char *keep(dx_strtab *t, const char *s, size_t len)
{
	if (len == 0)
		return "";
	if (t->free_len < len) {
		if (t->nchunks == t->capchunks) {
			uint32_t c = t->capchunks ? t->capchunks * 2 : 16;
			char **p = realloc(t->chunks, (size_t)c * sizeof *p);
			if (!p)
				return NULL;
			t->chunks = p;
			t->capchunks = c;
		}
		size_t size = len > CHUNK ? len : CHUNK;
		char *chunk = malloc(size);
		if (!chunk)
			return NULL;
		t->chunks[t->nchunks++] = chunk;
		t->free_at = chunk;
		t->free_len = size;
	}
	char *p = t->free_at;
	memcpy(p, s, len);
	t->free_at += len;
	t->free_len -= len;
	return p;
}

int dx__strtab_add(dx_strtab *t, const char *s, size_t len, uint32_t *idx)
{
	int64_t found = dx__strtab_find(t, s, len);
	if (found >= 0) {
		*idx = (uint32_t)found;
		return 0;
	}
	if (len > UINT32_MAX)
		return -1;
	if (t->n == t->cap) {
		if (t->cap >= UINT32_MAX / 2)
			return -1;
		uint32_t cap = t->cap ? t->cap * 2 : 1024;
		const char **str = realloc(t->str, (size_t)cap * sizeof *str);
		if (!str)
			return -1;
		t->str = str;
		uint32_t *ln = realloc(t->len, (size_t)cap * sizeof *ln);
		if (!ln)
			return -1;
		t->len = ln;
		t->cap = cap;
	}
	if ((uint64_t)(t->n + 1) * 2 > t->nslots && grow(t) < 0)
		return -1;
	const char *p = keep(t, s, len);
	if (!p)
		return -1;
	t->str[t->n] = p;
	t->len[t->n] = (uint32_t)len;
	uint32_t i = slot_of(t, s, len);
	while (t->slots[i])
		i = (i + 1) & (t->nslots - 1);
	t->slots[i] = ++t->n;
	*idx = t->n - 1;
	return 1;
}

void dx__strtab_free(dx_strtab *t)
{
	for (uint32_t i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->str);
	free(t->len);
	free(t->slots);
	memset(t, 0, sizeof *t);
}
