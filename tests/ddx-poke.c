/*
 * ddx-poke: sets one field of an index file and recomputes its checksums,
 * for the tests of indexes that lie (tests/hostile.bats): a count or an
 * offset that points past the end of the index or of the corpus must be
 * caught by the reader's bounds checks, which a plain byte edit would not
 * reach, the CRCs refusing it first.
 *
 *   ddx-poke INDEX FIELD VALUE
 *
 * FIELD is one of
 *   version | nrecords | nsources
 *   section.TYPE.offset | section.TYPE.size      (TYPE: a DDX_SEC_* number)
 *   record.N.offset | record.N.length            (the records section)
 *   source.N.size | source.N.usize | source.N.first_record |
 *   source.N.nrecords | source.N.first_point | source.N.npoints
 *   point.N.uoff | point.N.coff | point.N.window_off | point.N.window_clen |
 *   point.N.window_len | point.N.flags
 *   longrec.N.record | longrec.N.length
 * and VALUE a decimal or 0x number.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzz.h"
#include "index_format.h"

static unsigned char *map;
static size_t map_size;

static void die(const char *what)
{
	fprintf(stderr, "ddx-poke: %s\n", what);
	exit(2);
}

/* Writes a little-endian (native) integer of width w at p. */
static void put(void *p, unsigned w, uint64_t v)
{
	uint8_t b8 = (uint8_t)v;
	uint16_t b16 = (uint16_t)v;
	uint32_t b32 = (uint32_t)v;
	memcpy(p, w == 1 ? (void *)&b8 : w == 2 ? (void *)&b16 : w == 4 ? (void *)&b32 : (void *)&v, w);
}

/* The bytes of the section of that type, checked to lie in the file. */
static unsigned char *section(uint32_t type, uint64_t *size)
{
	const struct ddx_header *h = (const void *)map;
	for (uint32_t i = 0; i < h->nsections; i++) {
		struct ddx_section *t = (void *)(map + sizeof *h + i * sizeof *t);
		if (t->type != type)
			continue;
		if (t->offset > map_size || t->size > map_size - t->offset)
			die("that section lies outside the file already");
		*size = t->size;
		return map + t->offset;
	}
	die("no such section");
	return NULL;
}

/* Element n of an array section, of elem bytes each. */
static unsigned char *element(uint32_t type, uint64_t n, size_t elem)
{
	uint64_t size;
	unsigned char *p = section(type, &size);
	if (n >= size / elem)
		die("no such element");
	return p + n * elem;
}

struct field {
	const char *name;
	size_t off;
	unsigned width;
};

#define F(type, member) { #member, offsetof(type, member), sizeof(((type *)0)->member) }
static const struct field source_fields[] = {
	F(struct ddx_source, size), F(struct ddx_source, usize), F(struct ddx_source, first_record),
	F(struct ddx_source, nrecords), F(struct ddx_source, first_point), F(struct ddx_source, npoints),
	{ NULL, 0, 0 },
};
static const struct field point_fields[] = {
	F(struct ddx_point, uoff), F(struct ddx_point, coff), F(struct ddx_point, window_off),
	F(struct ddx_point, window_clen), F(struct ddx_point, window_len), F(struct ddx_point, flags),
	{ NULL, 0, 0 },
};
static const struct field longrec_fields[] = {
	F(struct ddx_longrec, record), F(struct ddx_longrec, length), { NULL, 0, 0 },
};
static const struct field section_fields[] = {
	F(struct ddx_section, offset), F(struct ddx_section, size), { NULL, 0, 0 },
};
#undef F

static const struct field *find(const struct field *f, const char *name)
{
	for (; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	die("unknown field");
	return NULL;
}

static void poke(const char *field, uint64_t v)
{
	struct ddx_header *h = (void *)map;
	char kind[16], name[32];
	unsigned long long n;
	if (strcmp(field, "version") == 0)
		put(map + offsetof(struct ddx_header, version), 4, v);
	else if (strcmp(field, "nrecords") == 0)
		put(map + offsetof(struct ddx_header, nrecords), 8, v);
	else if (strcmp(field, "nsources") == 0)
		put(map + offsetof(struct ddx_header, nsources), 4, v);
	else if (sscanf(field, "%15[a-z].%llu.%31[a-z_]", kind, &n, name) != 3)
		die("unknown field");
	else if (strcmp(kind, "section") == 0) {
		const struct field *f = find(section_fields, name);
		for (uint32_t i = 0; i < h->nsections; i++) {
			unsigned char *t = map + sizeof *h + i * sizeof(struct ddx_section);
			if (((struct ddx_section *)t)->type == n) {
				put(t + f->off, f->width, v);
				return;
			}
		}
		die("no such section");
	} else if (strcmp(kind, "record") == 0) {
		unsigned char *p = element(DDX_SEC_RECORDS, n, 8);
		uint64_t r;
		memcpy(&r, p, 8);
		if (strcmp(name, "offset") == 0)
			r = v << DDX_LEN_BITS | (r & DDX_LEN_LONG);
		else if (strcmp(name, "length") == 0)
			r = (r & ~(uint64_t)DDX_LEN_LONG) | (v & DDX_LEN_LONG);
		else
			die("unknown field");
		put(p, 8, r);
	} else if (strcmp(kind, "source") == 0) {
		const struct field *f = find(source_fields, name);
		put(element(DDX_SEC_SOURCES, n, sizeof(struct ddx_source)) + f->off, f->width, v);
	} else if (strcmp(kind, "point") == 0) {
		const struct field *f = find(point_fields, name);
		put(element(DDX_SEC_POINTS, n, sizeof(struct ddx_point)) + f->off, f->width, v);
	} else if (strcmp(kind, "longrec") == 0) {
		const struct field *f = find(longrec_fields, name);
		put(element(DDX_SEC_LONGREC, n, sizeof(struct ddx_longrec)) + f->off, f->width, v);
	} else
		die("unknown field");
}

int main(int argc, char **argv)
{
	if (argc != 4)
		die("usage: ddx-poke INDEX FIELD VALUE");
	char *end;
	errno = 0;
	uint64_t v = strtoull(argv[3], &end, 0);
	if (errno || end == argv[3] || *end)
		die("bad value");
	int fd = open(argv[1], O_RDWR);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		die(strerror(errno));
	map_size = (size_t)st.st_size;
	if (map_size < sizeof(struct ddx_header))
		die("too short for an index");
	map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die(strerror(errno));
	const struct ddx_header *h = (const void *)map;
	if (h->nsections > DDX_SEC_MAX || sizeof *h + h->nsections * sizeof(struct ddx_section) > map_size)
		die("not an index");
	poke(argv[2], v);
	fuzz_repair_index(map, map_size);
	if (munmap(map, map_size) < 0 || close(fd) < 0)
		die(strerror(errno));
	return 0;
}
