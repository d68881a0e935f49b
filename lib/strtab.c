/* strtab.c: numbered strings in an open-addressing hash table. */
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "strtab.h"

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
		size_t n;
		const char *p = dx__strtab_get(t, v - 1, &n);
		if (n == len && memcmp(p, s, len) == 0)
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
		size_t n;
		const char *p = dx__strtab_get(t, k, &n);
		uint32_t i = slot_of(t, p, n);
		while (t->slots[i])
			i = (i + 1) & (nslots - 1);
		t->slots[i] = k + 1;
	}
	return 0;
}

int dx__strtab_add(dx_strtab *t, const char *s, size_t len, uint32_t *idx)
{
	int64_t found = dx__strtab_find(t, s, len);
	if (found >= 0) {
		*idx = (uint32_t)found;
		return 0;
	}
	if (t->n + 1 >= t->cap) {
		if (t->cap >= UINT32_MAX / 2)
			return -1;
		uint32_t cap = t->cap ? t->cap * 2 : 1024;
		uint64_t *off = realloc(t->off, (size_t)cap * sizeof *off);
		if (!off)
			return -1;
		t->off = off;
		t->cap = cap;
		if (t->n == 0)
			t->off[0] = 0;
	}
	if ((uint64_t)(t->n + 1) * 2 > t->nslots && grow(t) < 0)
		return -1;
	if (dx__buf_add(&t->pool, s, len) < 0)
		return -1;
	t->off[t->n + 1] = t->pool.len;
	uint32_t i = slot_of(t, s, len);
	while (t->slots[i])
		i = (i + 1) & (t->nslots - 1);
	t->slots[i] = ++t->n;
	*idx = t->n - 1;
	return 1;
}

void dx__strtab_free(dx_strtab *t)
{
	dx__buf_free(&t->pool);
	free(t->off);
	free(t->slots);
	memset(t, 0, sizeof *t);
}
