/*
 * index_format.h: the layout of a .ddx index file (internal), documented
 * for users in man/docdex-index.5.  Integers are stored in the byte order
 * of the machine that wrote the file, which the header records; sections
 * start at multiples of 64 bytes so that they can be used in place through
 * mmap.
 */
#ifndef DX_INDEX_FORMAT_H
#define DX_INDEX_FORMAT_H

#include <stdint.h>

#include "codec.h"
#include "docdex.h"

#define DDX_MAGIC "\x89" "DDX\r\n\x1a\n"  /* 8 bytes; CR/LF catch text-mode copies */
/* Version 3 added packed windows (DDX_POINT_PACKED), their bytes in the
 * order the data after the point first reads them; version 4 keeps them
 * in their order in the window, which deflates smaller.  An index that has
 * none is written as version 2, which older docdex reads; version 3 is
 * read, no longer written. */
#define DDX_VERSION 4
#define DDX_VERSION_OLDEST 2
#define DDX_BYTE_ORDER 0x01020304u
#define DDX_ALIGN 64
#define DDX_CHUNK_SHIFT 16                 /* 64 KiB chunks, each with a CRC32 */
#define DDX_HASH_SEED 0x646f636465780001ULL

/* A record: offset << 24 | length, length DDX_LEN_LONG when it is in the
 * long-records section instead. */
#define DDX_LEN_BITS 24
#define DDX_LEN_LONG ((1u << DDX_LEN_BITS) - 1)
#define DDX_MAX_OFFSET ((1ULL << (64 - DDX_LEN_BITS)) - 1)

/* The longest record: a record is gathered whole in memory, so a file
 * with no record ends (a gzip bomb of zeros inflates to terabytes of one
 * "line") must stop somewhere.  Real records stay far below it, and an
 * index that claims a longer one is damaged. */
#define DDX_MAX_RECORD ((uint64_t)1 << 30)

/* Deflate's greatest expansion is 1032 to 1 (zlib's FAQ, question 37):
 * a gzip source that claims more content than that is damaged. */
#define DDX_MAX_INFLATE 1032

/* Every DDX_CKPT_EVERY-th id's offset in the id pool is kept. */
#define DDX_CKPT_EVERY 16

enum ddx_section_type {
	DDX_SEC_PARAMS = 1,   /* build parameters, "key=value\n" text */
	DDX_SEC_SOURCES = 2,  /* struct ddx_source[nsources], then their path strings */
	DDX_SEC_RECORDS = 3,  /* uint64_t[nrecords], see DDX_LEN_BITS */
	DDX_SEC_LONGREC = 4,  /* struct ddx_longrec[], sorted by record */
	DDX_SEC_IDPOOL = 5,   /* hash ids: each id as a LEB128 length and its bytes, in record order */
	DDX_SEC_IDCHECK = 6,  /* hash ids: uint64_t pool offset of records 0, 16, 32, ... */
	DDX_SEC_IDHASH = 7,   /* hash ids: uint32_t slots, see struct ddx_header.record_bits */
	DDX_SEC_CHUNKCRC = 8, /* uint32_t CRC32 of every 64 KiB chunk of every other section */
	DDX_SEC_POINTS = 9,   /* struct ddx_point[], where to start decompressing gzip sources */
	DDX_SEC_WINDOWS = 10, /* the compressed windows of the access points */
	DDX_SEC_MAX = 10
};

struct ddx_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;    /* DDX_BYTE_ORDER as written */
	uint32_t header_size;   /* this header and the section table */
	uint32_t nsections;
	uint64_t file_size;
	uint64_t nrecords;
	uint32_t nsources;
	uint32_t format;        /* DX_FMT_* */
	uint32_t id_kind;       /* DX_ID_* */
	uint32_t record_bits;   /* hash slots hold (tag << record_bits) | (record + 1) */
	uint64_t id_base;       /* sequential: id of record 0 */
	uint64_t hash_seed;
	uint32_t chunk_shift;
	uint32_t header_crc;    /* CRC32 of header and section table, this field as 0 */
};

struct ddx_section {
	uint32_t type;
	uint32_t chunk_first;   /* index of its first chunk CRC in DDX_SEC_CHUNKCRC */
	uint64_t offset;
	uint64_t size;
	uint32_t crc;           /* CRC32 of the whole section */
	uint32_t reserved;
};

struct ddx_source {
	uint64_t size;          /* of the file as it is on disk */
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	uint32_t kind;          /* DX_SOURCE_*: plain, gzip, BGZF */
	uint64_t fingerprint;
	uint64_t first_record;
	uint64_t nrecords;
	uint32_t path_off, path_len;  /* relative to the index's directory */
	uint32_t abs_off, abs_len;    /* absolute at build time */
	uint64_t usize;         /* of its uncompressed content (size for a plain file) */
	uint64_t first_point;   /* its access points in DDX_SEC_POINTS */
	uint64_t npoints;
	uint64_t window_bytes;  /* the compressed bytes of its points' windows */
};

/*
 * An access point of a gzip source: decompression can start at uncompressed
 * offset uoff from compressed byte coff.  A point at the start of a gzip
 * member (DDX_POINT_MEMBER) reads the member from its header.  Any other
 * sits at a deflate block boundary: the bits unused of byte coff - 1 are
 * fed in first, and its window (the output before it that later matches
 * refer to, other bytes zero) preset as dictionary.  A packed window
 * (DDX_POINT_PACKED) holds only the bytes that matches refer to, in their
 * order in the window (version 3: in the order the output after the point
 * first refers to them): a reader finds their places by inflating that
 * output (inflate.h, dx__inflate_lazy), from at most DDX_PACK_INPUT
 * compressed bytes from the point's first.
 * A packed window flagged DDX_POINT_DICT is deflated with a preset
 * dictionary, the first 32 KiB of the content, stored as the window of the
 * source's first point (a member point at 0, flagged DDX_POINT_DICT too).
 */
struct ddx_point {
	uint64_t uoff;
	uint64_t coff;
	uint64_t window_off;    /* in DDX_SEC_WINDOWS: raw deflate of the window */
	uint32_t window_clen;   /* its compressed length */
	uint16_t window_len;    /* its uncompressed length, at most DDX_WINDOW */
	uint8_t bits;           /* unused bits of byte coff - 1, 0 to 7 */
	uint8_t flags;          /* DDX_POINT_* */
};

#define DDX_POINT_MEMBER 1
#define DDX_POINT_PACKED 2
#define DDX_POINT_DICT 4
#define DDX_PACK_INPUT 61440
#define DDX_WINDOW 32768

struct ddx_longrec {
	uint64_t record;
	uint64_t length;
};


/* The header's CRC: of the header with header_crc as 0, then the table. */
static inline uint32_t ddx_header_crc(const struct ddx_header *h, const void *table, uint64_t len)
{
	struct ddx_header copy = *h;
	copy.header_crc = 0;
	return dx__crc32(dx__crc32(0, &copy, sizeof copy), table, len);
}

_Static_assert(sizeof(struct ddx_header) == 80, "header layout");
_Static_assert(sizeof(struct ddx_section) == 32, "section layout");
_Static_assert(sizeof(struct ddx_source) == 96, "source layout");
_Static_assert(sizeof(struct ddx_point) == 32, "point layout");

#endif
