/*
 * docdex.h: the public interface of libdocdex.
 *
 * libdocdex builds lookup tables (".ddx" index files) over corpus files and
 * serves records out of them.  It never prints and never exits: a function
 * that can fail returns 0 (or 1 and 0 for found and not found) on success
 * and a negative DX_E* code on failure, or NULL, and fills the caller's
 * dx_err (never NULL) with what went wrong and what it concerns.  Handles
 * are opaque and every close function accepts NULL.
 *
 * Threads.  The library keeps no global state (the SIGBUS guard's handler
 * aside) and locks nothing.  A handle (dx_corpus, dx_index, dx_sampler,
 * dx_output) is used by one thread at a time: its buffers, its gzip
 * readers and the pointers it hands out are its own.  Give each thread a
 * corpus of its own: corpora opened on the same files share the page
 * cache, not memory of the process.  A dx_fields is read-only once parsed,
 * and the functions without a handle may run in any number of threads at
 * once; dx_index_build, dx_bgzf_write and dx_corpus_verify read ahead in a
 * thread of their own, joined before they return.
 *
 * Fork.  A dx_corpus or dx_index opened before fork() serves the parent and
 * every child, at the same time: its files are mapped shared and read-only,
 * a compressed source is read with pread (no file offset to share), and
 * each process goes on with its own copy of the handle's buffers.  Not so
 * a dx_sampler with a triples file, read through a file offset the
 * processes would share (open it in the child), nor a dx_output (one
 * temporary file, which each process would commit or remove).  Fork while
 * no docdex call runs in another thread.
 *
 * Pointers.  Strings of the library (dx_strerror, dx_version, the *_name
 * functions) are static.  What points into an index (dx_index_info.params,
 * dx_source_info's paths) lives until the index, or the corpus that owns
 * it, is closed; what points into a corpus or a sampler lives as each
 * function says.
 *
 * SIGBUS.  Index files and corpus files, plain or compressed, are mapped
 * (a compressed file's bytes are read in place when its access says so:
 * see DX_ACCESS_AUTO).  One cut short under a process that reads it
 * (overwritten in place, by cp for instance, instead of replaced by a
 * rename) or on a failing disk raises SIGBUS, which kills the process
 * unless dx_sigbus_guard_install was called (see there).
 *
 * Option structs (dx_build_opts, dx_sample_opts) start with their size:
 * set one up with its init function, then set the options wanted.  A newer
 * library gives the options a program was built without their defaults,
 * so options can be added without breaking programs built before.  The
 * structs the library fills (reports, infos) keep their size within a
 * MAJOR version: their fixed arrays have documented caps, part of the ABI.
 */
#ifndef DOCDEX_H
#define DOCDEX_H

#include <stddef.h>
#include <stdint.h>

/* The version of this header: "MAJOR.MINOR.PATCH", and as one number,
 * MAJOR * 10000 + MINOR * 100 + PATCH, for #if.  dx_version() and
 * dx_version_number() say which library a program runs with; a program
 * built against MAJOR runs with any library of the same MAJOR and a
 * MINOR.PATCH at least its own (the soname is libdocdex.so.MAJOR). */
#define DX_VERSION_MAJOR 0
#define DX_VERSION_MINOR 1
#define DX_VERSION_PATCH 0
#define DX_VERSION "0.1.0"
#define DX_VERSION_NUMBER (DX_VERSION_MAJOR * 10000 + DX_VERSION_MINOR * 100 + DX_VERSION_PATCH)

#if defined(__GNUC__)
#define DX_MUST_CHECK __attribute__((warn_unused_result))
/* What the shared library exports: this header's functions, nothing else
 * (the library is built with -fvisibility=hidden). */
#define DX_EXPORT __attribute__((visibility("default")))
#else
#define DX_MUST_CHECK
#define DX_EXPORT
#endif

/* ---- errors ------------------------------------------------------------ */

enum {
	DX_OK = 0,
	DX_ESYS = -1,      /* a system call failed; dx_err.sys holds errno */
	DX_ENOMEM = -2,    /* out of memory */
	DX_EINVAL = -3,    /* a bad argument or option value */
	DX_EFORMAT = -4,   /* malformed corpus or input data */
	DX_ECORRUPT = -5,  /* a damaged index file */
	DX_ESTALE = -6,    /* the corpus changed since it was indexed */
	DX_EDUPID = -7,    /* the same id on two records */
	DX_ENOID = -8,     /* a record without an id */
	DX_ECANCELED = -9, /* the progress callback asked to stop */
	DX_ELIMIT = -10,   /* beyond what the index format can hold */
	DX_EVERSION = -11, /* an index written by another format version */
	DX_EMISMATCH = -12 /* --verify found a record that differs */
};

typedef struct dx_err {
	int code;           /* one of DX_E*, 0 when nothing failed */
	int sys;            /* errno of the failed system call, or 0 */
	char what[256];     /* what went wrong: lower case, no full stop */
	char subject[1024]; /* the file, place or id it concerns, or "" */
} dx_err;

/* A short description of a DX_E* code ("unknown error" for another). */
DX_EXPORT const char *dx_strerror(int code);

/*
 * Bytes as a message may show them: control bytes (a NUL, a newline) as
 * \xNN, cut with "..." to fit outsz.  Writes into out and returns it.
 * dx_err's what and subject are written so already.
 */
DX_EXPORT const char *dx_escape(const char *s, size_t n, char *out, size_t outsz);

/*
 * An error as one line of a message: "what: 'subject': strerror" (the
 * subject only when there is one, strerror only when a system call failed,
 * in lower case), cut to outsz bytes.  Writes into out and returns it.
 */
DX_EXPORT const char *dx_describe(const dx_err *err, char *out, size_t outsz);

/* "512 B", "1.5 GiB": a byte count for people, in powers of 1024.
 * Writes into buf and returns it. */
DX_EXPORT const char *dx_format_bytes(uint64_t n, char *buf, size_t bufsz);

/* The library's version string, and its number: DX_VERSION and
 * DX_VERSION_NUMBER of the library that runs, not of the header a program
 * was built with. */
DX_EXPORT const char *dx_version(void);
DX_EXPORT int dx_version_number(void);

/* What inflates and deflates BGZF blocks and computes CRC32s: "zlib", or
 * "libdeflate 1.14" where the library was built with it (zlib then serves
 * when the environment has DOCDEX_CODEC=zlib, and says so).  gzip streams
 * are zlib's in every build.  Documents read are the same either way. */
DX_EXPORT const char *dx_codecs(void);

/* ---- corpus formats and build options ---------------------------------- */

enum { DX_FMT_AUTO = 0, DX_FMT_TSV = 1, DX_FMT_JSONL = 2, DX_FMT_TREC = 3 };

/* The format's name ("tsv", "jsonl", "trec"), or "auto". */
DX_EXPORT const char *dx_format_name(int format);
/* DX_FMT_* for a name, or -1. */
DX_EXPORT int dx_format_parse(const char *name);

enum { DX_DUP_ERROR = 0, DX_DUP_FIRST = 1, DX_DUP_LAST = 2 };

/* How records are found by id: integer ids that count up by one from the
 * first record's (MS MARCO passages) need no table; any others are hashed. */
enum { DX_ID_SEQUENTIAL = 1, DX_ID_HASH = 2 };
DX_EXPORT const char *dx_id_kind_name(int kind);

/* Called now and then with the uncompressed bytes scanned so far and the
 * total (a compressed file's projected from its ratio so far, exact once
 * it is read); a non-zero return cancels the work with DX_ECANCELED. */
typedef int (*dx_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct dx_build_opts {
	size_t size;           /* the caller's sizeof(dx_build_opts): set by
	                          dx_build_opts_init, never by hand */
	int format;            /* DX_FMT_*, DX_FMT_AUTO detects it from the content */
	unsigned id_column;    /* TSV: 1-based column of the id, 0 means 1 */
	const char *id_field;  /* JSONL: key of the id, NULL picks the first of
	                          docid, _id, id, pid, doc_id in the first record;
	                          at most DX_ID_FIELD_MAX bytes */
	const char *columns;   /* TSV: comma-separated column names, NULL guesses
	                          them from the number of columns; at most
	                          DX_COLUMNS_MAX bytes */
	int duplicates;        /* DX_DUP_* */
	int skip_bad;          /* skip and count records without an id */
	uint64_t span;         /* gzip: uncompressed bytes between access points,
	                          0 for DX_DEFAULT_SPAN */
	dx_progress_fn progress;
	void *progress_ctx;
	unsigned threads;      /* dx_bgzf_write: threads compressing blocks, 0
	                          or 1 for one, at most DX_BGZF_MAX_THREADS; the
	                          file is the same for any number */
	int sparse_windows;    /* gzip: store each access point's window sparse
	                          (its bytes that the data after it uses at their
	                          places, the rest zero), as version 2 of the
	                          format did, rather than packed (those bytes
	                          alone, deflated with a dictionary; a read finds
	                          their places by inflating 32 KiB more):
	                          windows 1.8 times as large, an index that older
	                          docdex reads (docdex-index(5)) */
} dx_build_opts;

#define DX_BGZF_MAX_THREADS 256
#define DX_ID_FIELD_MAX 255
#define DX_COLUMNS_MAX 1023

/* Every option at its default: 0 or NULL, and size.  Call it first, then
 * set the options wanted (see "Option structs" above). */
DX_EXPORT void dx_build_opts_init_size(dx_build_opts *o, size_t size);
#define dx_build_opts_init(o) dx_build_opts_init_size((o), sizeof(dx_build_opts))

/* The default distance between access points into a gzip file. */
#define DX_DEFAULT_SPAN (960u << 10)
#define DX_MIN_SPAN (1u << 16)

typedef struct dx_build_report {
	uint64_t records;      /* records in the index */
	uint64_t bytes;        /* corpus bytes scanned */
	uint64_t skipped;      /* records without an id, skipped (skip_bad) */
	uint64_t duplicates;   /* records whose id was already taken */
	int id_kind;           /* DX_ID_* chosen */
	uint64_t index_size;   /* bytes of the index file written */
	char first_skipped[512]; /* "FILE:LINE" of the first skipped record */
	char warning[256];     /* something wrong that did not stop the build
	                          (garbage after a gzip file's last member), or "" */
	char warning_file[1024]; /* the file it concerns (the first such) */
} dx_build_report;

/*
 * Scans the corpus files and writes an index of them to out_path, through
 * a temporary file that replaces out_path only once complete.  Source paths
 * are stored relative to out_path's directory and as absolute paths.
 * report may be NULL.  Returns 0, or with err filled (nothing is written
 * then): DX_EINVAL (no file, a bad option, opts not set up by
 * dx_build_opts_init), DX_ESYS, DX_ENOMEM, DX_EFORMAT (malformed data, a
 * format not recognised), DX_ENOID, DX_EDUPID, DX_ELIMIT, DX_ECANCELED.
 */
DX_EXPORT DX_MUST_CHECK int dx_index_build(const char *const *files, size_t nfiles,
                                 const char *out_path, const dx_build_opts *opts,
                                 dx_build_report *report, dx_err *err);

typedef struct dx_bgzf_report {
	uint64_t records;      /* records found (blocks end at their boundaries) */
	uint64_t blocks;       /* BGZF blocks written, the empty last one excepted */
	uint64_t bytes_in;     /* uncompressed bytes */
	uint64_t bytes_out;    /* bytes of the BGZF file */
	char warning[256];     /* as in dx_build_report */
	char warning_file[1024];
} dx_bgzf_report;

/*
 * Rewrites a corpus file (plain or gzip) as BGZF at out_path, through a
 * temporary file: gzip members of at most 64 KiB with the BC extra field,
 * each ending at the last record start that fits unless that leaves more
 * than 4 KiB of it unused (then full, the record going on in the next
 * one).  Records are found with the format and id options of opts
 * (progress too); level is 0 to DX_BGZF_LEVEL_MAX, or -1 for gzip's
 * default (6): 0 to 9 on gzip's scale, 10 to 12 libdeflate's stronger
 * levels, which a build without libdeflate (or with DOCDEX_CODEC=zlib)
 * compresses at 9.  rep may be NULL.  Returns 0, or DX_EINVAL, DX_ESYS,
 * DX_ENOMEM, DX_EFORMAT, DX_ECANCELED (nothing written).
 */
#define DX_BGZF_LEVEL_MAX 12
DX_EXPORT DX_MUST_CHECK int dx_bgzf_write(const char *in_path, const char *out_path, const dx_build_opts *opts,
                                int level, dx_bgzf_report *rep, dx_err *err);

/* ---- opening an index and its corpus ------------------------------------ */

typedef struct dx_index dx_index;
typedef struct dx_corpus dx_corpus;

/*
 * The index that serves a path: the path itself when it is an index file,
 * else PATH.ddx.  Writes it into out (of size outsz).  Returns 0, or
 * DX_ELIMIT when it does not fit, or DX_ESYS when the path cannot be read.
 */
DX_EXPORT DX_MUST_CHECK int dx_index_path_for(const char *path, char *out, size_t outsz, dx_err *err);

/*
 * Maps an index file read-only and checks its header, section table and
 * small sections; large sections are checked chunk by chunk on first use.
 * Returns NULL with err filled: DX_ESYS (missing, unreadable), DX_ECORRUPT
 * (damaged), DX_EVERSION (another format version), DX_ENOMEM.
 */
DX_EXPORT DX_MUST_CHECK dx_index *dx_index_open(const char *index_path, dx_err *err);
DX_EXPORT void dx_index_close(dx_index *ix);

typedef struct dx_index_info {
	uint32_t version;     /* format version */
	uint64_t file_size;   /* bytes of the index file */
	uint64_t records;
	uint32_t sources;
	int format;           /* DX_FMT_* */
	int id_kind;          /* DX_ID_* */
	uint64_t id_base;     /* sequential: id of record 0 */
	const char *params;   /* build parameters, "key=value\n" lines */
	size_t params_len;
} dx_index_info;

/* Fills info; its params point into the index. */
DX_EXPORT void dx_index_get_info(const dx_index *ix, dx_index_info *info);

typedef struct dx_source_info {
	const char *path;     /* as stored: relative to the index's directory */
	const char *abs_path; /* absolute path at build time */
	int kind;             /* DX_SOURCE_* */
	uint64_t usize;       /* uncompressed size */
	uint64_t points;      /* gzip: its access points */
	uint64_t window_bytes; /* gzip: the compressed bytes of their windows */
	uint64_t size;
	int64_t mtime_sec;
	uint32_t mtime_nsec;
	uint64_t fingerprint; /* hash of a sample of the file's bytes */
	uint64_t first_record;
	uint64_t records;
} dx_source_info;

/* What a corpus file is. */
enum { DX_SOURCE_PLAIN = 1, DX_SOURCE_GZIP = 2, DX_SOURCE_BGZF = 3 };
DX_EXPORT const char *dx_source_kind_name(int kind);

/* Fills info for source i (0 <= i < sources), its paths pointing into the
 * index.  Returns 0 or DX_EINVAL (no such source). */
DX_EXPORT int dx_index_get_source(const dx_index *ix, uint32_t i, dx_source_info *info);

typedef struct dx_section_info {
	const char *name;     /* "records", "id-hash", ... */
	uint64_t offset, size;
} dx_section_info;

/* Whether source i is still the file indexed: 0; DX_ESTALE when it changed
 * (size, mtime or sampled bytes); DX_ESYS when it cannot be opened.  Its
 * path is looked up relative to the index, then as the absolute path. */
DX_EXPORT DX_MUST_CHECK int dx_index_check_source(dx_index *ix, uint32_t i, dx_err *err);

/* Number of sections, and the i-th of them: 0, or DX_EINVAL. */
DX_EXPORT uint32_t dx_index_sections(const dx_index *ix);
DX_EXPORT int dx_index_get_section(const dx_index *ix, uint32_t i, dx_section_info *info);

/* Recomputes the CRC32 of every section: 0, or DX_ECORRUPT naming the first
 * bad one, or DX_ESTALE (the file cut short, under the SIGBUS guard). */
DX_EXPORT DX_MUST_CHECK int dx_index_check(dx_index *ix, dx_err *err);

/*
 * Opens a corpus through its index: CORPUS (with CORPUS.ddx beside it) or
 * the index itself.  Every source file is checked against its size, mtime
 * and sampled-bytes fingerprint; a changed one gives DX_ESTALE, and so does
 * a CORPUS that is not among the files its CORPUS.ddx indexes.  A path that
 * is not a regular file (a FIFO, a directory) gives DX_EINVAL, at once.
 * Returns NULL with err filled: those, DX_ESYS, DX_ENOMEM, and the errors
 * of dx_index_open.
 */
DX_EXPORT DX_MUST_CHECK dx_corpus *dx_corpus_open(const char *corpus_or_index, dx_err *err);
DX_EXPORT void dx_corpus_close(dx_corpus *c);

/* Whether path is one of the files the corpus reads, its index or a source
 * (the same file through any link): 1 or 0.  Writers use it to refuse to
 * replace what they read. */
DX_EXPORT int dx_corpus_uses_file(const dx_corpus *c, const char *path);

/* The index that the corpus was opened with (owned by the corpus, closed
 * with it), and its number of records. */
DX_EXPORT dx_index *dx_corpus_index(dx_corpus *c);
DX_EXPORT uint64_t dx_corpus_count(const dx_corpus *c);

/*
 * How records of plain files are read.  DX_ACCESS_MMAP points into the
 * file's shared mapping: no copy and no system call a record once its pages
 * are mapped, which a long-lived process reading the same corpus over and
 * over gains from; but a process maps each page it reads first (a page
 * fault, and page tables that grow with the corpus), and a cold page is
 * read from disk with read_ahead_kb of read-around (128 KiB by default, 8
 * MiB on some disks).  DX_ACCESS_PREAD copies
 * each record (records close together in one call) into the corpus's
 * buffer: one system call a record, no mapping to build, and a cold batch
 * is asked of the disk at once (POSIX_FADV_WILLNEED) and read at its queue
 * depth.  DX_ACCESS_AUTO, the default, picks one for the corpus: see
 * docdex(1), ACCESS.  The compressed bytes of gzip and BGZF sources are
 * read the same way, and decompressed whatever the access.
 */
enum { DX_ACCESS_AUTO = 0, DX_ACCESS_MMAP = 1, DX_ACCESS_PREAD = 2 };

/* The name of an access ("auto", "mmap", "pread"), or "?"; and the access
 * a name gives, or -1. */
DX_EXPORT const char *dx_access_name(int access);
DX_EXPORT int dx_access_parse(const char *name);

/* Sets how c reads records from now on.  Returns 0 or DX_EINVAL.  Records
 * read before keep their data.  Not thread-safe with other calls on c. */
DX_EXPORT DX_MUST_CHECK int dx_corpus_set_access(dx_corpus *c, int access, dx_err *err);

/* The access c was set to (DX_ACCESS_AUTO until dx_corpus_set_access). */
DX_EXPORT int dx_corpus_access(const dx_corpus *c);

/* Whether c reads through its mappings pages that it found in memory:
 * under DX_ACCESS_AUTO, the last look at the pages of the records read (a
 * few records every 1,024) found them there.  A read then waits on no disk,
 * barring pages dropped since: a caller may hold a lock across a short one
 * (the Python package keeps the GIL for one document). */
DX_EXPORT int dx_corpus_in_memory(const dx_corpus *c);

/*
 * Shares what c inflates from its gzip and BGZF sources with every other
 * process that reads them with a cache: each stretch between two access
 * points (a BGZF block, or about a span of gzip) is inflated once per
 * machine, not once per process.  A read the cache cannot serve inflates
 * the whole stretch where the cache has a slot for every stretch, else as
 * far as it needs, and stores what it inflated.  The cache of a source is a file in dir (NULL:
 * $DOCDEX_CACHE_DIR where set, else /dev/shm) named after the source as
 * indexed; the first process
 * makes it at bytes bytes (a corpus of several compressed files shares
 * bytes among their caches by their inflated sizes), reserved at once, and
 * the others use it at that size.  Readers and writers may come and go at any moment: a copy that
 * raced a writer, a writer killed mid-copy or a damaged file give a miss
 * (checked by a CRC-32 a KiB), never wrong bytes.  The last process to
 * close it removes it; one whose users were all killed is removed by the
 * next call in the same dir.  bytes 0 stops using it.  A corpus opened
 * before fork shares it with its children.  Returns 0, or DX_EINVAL (a
 * stretch too large for the cache, or it too small for one), DX_ECORRUPT (a
 * damaged cache other processes use) or DX_ESYS (dir cannot hold it); c
 * reads without a cache then.  Plain sources are not cached: their pages
 * are the kernel's, shared already.  Not thread-safe with other calls on c.
 */
DX_EXPORT DX_MUST_CHECK int dx_corpus_set_inflate_cache(dx_corpus *c, uint64_t bytes,
                                                        const char *dir, dx_err *err);

/* Bytes c has inflated since it was opened (decompression work, whatever
 * came from an inflate cache not counted). */
DX_EXPORT uint64_t dx_corpus_inflated(const dx_corpus *c);

/*
 * Finds the record with this id.  Returns 1 and sets *pos, 0 when no record
 * has the id, or DX_ECORRUPT (a damaged index) or DX_ESTALE (the index cut
 * short, under the SIGBUS guard).
 */
DX_EXPORT DX_MUST_CHECK int dx_corpus_find(dx_corpus *c, const char *id, size_t len,
                                 uint64_t *pos, dx_err *err);

/* The position dx_corpus_find_many gives an id that no record has. */
#define DX_NOT_FOUND UINT64_MAX

/*
 * Finds the records of ids[0..n) (lens[i] bytes each), as dx_corpus_find
 * does each, in one call: pos[i] the position of ids[i], or DX_NOT_FOUND.
 * The lookups of the batch wait on memory together (as after
 * dx_corpus_prefetch_ids), and the batch is one call under the SIGBUS
 * guard, not one per id.  Returns 0, or DX_ECORRUPT or DX_ESTALE (pos then
 * undefined).
 */
DX_EXPORT DX_MUST_CHECK int dx_corpus_find_many(dx_corpus *c, const char *const *ids,
                                                const size_t *lens, size_t n, uint64_t *pos,
                                                dx_err *err);

typedef struct dx_record {
	uint64_t pos;         /* 0-based position in corpus order */
	const char *data;     /* the raw record */
	size_t len;
	uint32_t source;      /* where it is: the source file (0-based) */
	uint64_t offset;      /* and its offset in the file's content */
	int stable;           /* data stays valid until the corpus is closed (a
	                         plain file's mapping); else until the next call
	                         that reads records (decompressed bytes, or read
	                         with DX_ACCESS_PREAD) */
} dx_record;

/*
 * Reads record pos (0 <= pos < count).  Returns 0, or DX_EINVAL (pos out of
 * range), DX_ECORRUPT (a damaged index, a gzip source that does not
 * inflate where its index says), DX_ESTALE (a gzip source cut short; under
 * the SIGBUS guard, a mapped file cut short: the pages of a mapped record
 * are touched before it returns), DX_EFORMAT, DX_ESYS, DX_ENOMEM.
 */
DX_EXPORT DX_MUST_CHECK int dx_corpus_record(dx_corpus *c, uint64_t pos, dx_record *rec, dx_err *err);

/* Copies rec->len bytes of rec (as c filled it, still valid) to dst: with
 * the SIGBUS guard, the way to copy a mapped record that cannot kill the
 * process if its file is cut short after dx_corpus_record.  Returns 0 or
 * DX_ESTALE. */
DX_EXPORT DX_MUST_CHECK int dx_corpus_copy(dx_corpus *c, const dx_record *rec, void *dst, dx_err *err);
/* Copies the bytes of recs[0..n) one after another to dst (room for the
 * sum of their lengths), as dx_corpus_copy copies each, in one call under
 * the guard.  Returns 0 or DX_ESTALE. */
DX_EXPORT DX_MUST_CHECK int dx_corpus_copy_many(dx_corpus *c, const dx_record *recs, size_t n, void *dst,
                                                dx_err *err);

/*
 * Reads n records at once, recs[i] for pos[i].  Records of gzip sources are
 * decompressed in file order, so that a stretch shared by several of them
 * is decompressed once; their bytes stay valid until the next call that
 * reads records.  Returns 0 or an error of dx_corpus_record.
 */
DX_EXPORT DX_MUST_CHECK int dx_corpus_records(dx_corpus *c, const uint64_t *pos, size_t n, dx_record *recs,
                                    dx_err *err);

/*
 * Asks the kernel to read records pos[0..n) ahead, without waiting: the
 * pages of a plain file (madvise MADV_WILLNEED), the compressed stretch of
 * a gzip or BGZF file that each needs (posix_fadvise POSIX_FADV_WILLNEED).
 * A sampler that knows its next batch calls it before reading this one,
 * so that a cold corpus is read while the current batch is served.  Bad
 * positions are skipped (the read of them reports them).
 */
DX_EXPORT void dx_corpus_prefetch(dx_corpus *c, const uint64_t *pos, size_t n);

/*
 * Asks the CPU for what finding ids[0..n) (lens[i] bytes each) will read
 * in the index, so that the dx_corpus_find calls that follow, for these
 * ids in any order, wait on memory together instead of one after another
 * (each id of a hashed table waits three times).  A hint: it checks and
 * returns nothing, and does nothing for sequential ids, which are found
 * without reading the index.
 */
DX_EXPORT void dx_corpus_prefetch_ids(dx_corpus *c, const char *const *ids, const size_t *lens, size_t n);

/*
 * Checks that each record holds the id the index gives its position, as
 * the corpus format reads it, and ends where the format ends a record (a
 * TSV or JSONL line before LF, CRLF or the file's end, a TREC document at
 * </DOC>) before the next record of its file starts: what get and sample
 * serve is then the document its id names, whole, even from an index that
 * lies within its bounds (checksums mended) or a corpus rewritten in place
 * since it was opened.  recs are as dx_corpus_record or dx_corpus_records
 * filled them, still valid.  Returns 0, or DX_ECORRUPT naming the first
 * record that fails.  Costs a parse of each record's id, two bytes after
 * it, and one more lookup in the index.
 */
DX_EXPORT DX_MUST_CHECK int dx_corpus_check_ids(dx_corpus *c, const dx_record *recs, size_t n, dx_err *err);

/* The id of record pos, valid until the next call on c.  A record whose id
 * another record took (--duplicates first|last) still has its own id.
 * Returns 0, or DX_EINVAL, DX_ECORRUPT, DX_ESTALE (as dx_corpus_find). */
DX_EXPORT DX_MUST_CHECK int dx_corpus_id(dx_corpus *c, uint64_t pos, const char **id, size_t *len, dx_err *err);

/*
 * A field selection: one or more TSV column numbers or names, JSON keys or
 * TREC elements, separated by commas.  Parsed once, used for every record.
 * A NULL spec selects the record's text: a TSV column named text or body,
 * else the last column; the first JSON key of text, contents, body,
 * passage, segment; a TREC document's <TEXT>, else all after its <DOCNO>.
 * Parsing returns NULL with DX_EINVAL (a bad field: a TSV column name the
 * index lacks, or a column number past those it names) or DX_ENOMEM.  A
 * dx_fields serves c and any corpus opened on the same index.
 */
typedef struct dx_fields dx_fields;
DX_EXPORT DX_MUST_CHECK dx_fields *dx_fields_parse(dx_corpus *c, const char *spec, dx_err *err);
DX_EXPORT void dx_fields_free(dx_fields *f);

/*
 * The selected fields of a record, joined by single spaces, JSON strings
 * decoded.  *out points into rec's bytes or into the corpus's scratch
 * buffer, valid until the next call on c.  A field the record lacks is
 * empty.  Returns 0, DX_EFORMAT (a malformed record), DX_ENOMEM.
 */
DX_EXPORT DX_MUST_CHECK int dx_corpus_fields(dx_corpus *c, const dx_fields *f, const dx_record *rec,
                                   const char **out, size_t *outlen, dx_err *err);

/*
 * The fields of a record one by one, for output that keeps them apart
 * (docdex get --format jsonl).  With f, the fields selected, in order, each
 * named as it was selected (a TSV column number by the index's name for
 * that column, when it has one; the text by "text").  With a NULL f, every
 * field the record has, in its order: each TSV column (named by the
 * index's names, then by its number from 1), each member of a JSONL
 * object (by its key, decoded), a TREC document's DOCNO (by "docno") and
 * text (by "text"); is_id marks the field that holds the id.
 *
 * A value is DX_VALUE_TEXT, bytes (a JSON string decoded); DX_VALUE_JSON,
 * the text of a JSON value other than a string, as it stands in the
 * record and checked to be JSON (one that is not, as Python's NaN, comes
 * as DX_VALUE_TEXT); or DX_VALUE_ABSENT, a selected field the record
 * lacks (empty).  *vals and the bytes they point to are valid until the
 * next call on c.  Returns 0, DX_EFORMAT (a malformed record), DX_ENOMEM.
 */
enum { DX_VALUE_ABSENT = 0, DX_VALUE_TEXT = 1, DX_VALUE_JSON = 2 };
typedef struct dx_value {
	const char *name;
	size_t name_len;
	const char *data;
	size_t len;
	int kind;    /* DX_VALUE_* */
	int is_id;   /* with a NULL f: the field that holds the record's id */
} dx_value;
DX_EXPORT DX_MUST_CHECK int dx_corpus_values(dx_corpus *c, const dx_fields *f, const dx_record *rec,
                                   const dx_value **vals, size_t *n, dx_err *err);

/* ---- training triples ---------------------------------------------------- */

/*
 * Triples (a query, a document judged relevant to it and one or more that
 * are not) drawn from a corpus.  Queries come from a file of query texts;
 * (query, positive) pairs from qrels, negatives from a run, from the whole
 * corpus, or both; or whole ID triples come from a file, in its order.
 * Input files may be gzipped.
 */
typedef struct dx_sample_report dx_sample_report;

typedef struct dx_sample_opts {
	size_t size;           /* set by dx_sample_opts_init, never by hand */
	const char *queries;   /* qid TAB text, single-line "qid text", JSONL
	                          (_id/id/qid and text/query/title/contents),
	                          or TREC topics (<top> or <topic>); or NULL:
	                          the queries are then the ids that the qrels
	                          or triples name, with empty texts */
	const char *qrels;     /* TREC "qid iter docid rel" or BEIR "qid docid
	                          score" (with or without its header) */
	const char *run;       /* TREC run "qid Q0 docid rank score tag", or
	                          MS MARCO run "qid TAB pid TAB rank" (told
	                          from the first line), or NULL */
	const char *triples;   /* ID triples "qid TAB pos TAB neg...": replaces
	                          qrels and run */
	double min_rel;        /* a judgement >= min_rel is a positive */
	unsigned depth;        /* run: each query's top depth lines, by score
	                          (by rank for MS MARCO), ties by the rank
	                          column, then by a hash of the document id
	                          (never by the file's order), counting lines
	                          whose document is not in the corpus; 0 all */
	int exclude_judged;    /* no judged document as a negative, whatever its
	                          relevance (positives are never negatives) */
	int random;            /* draw negatives uniformly from the corpus */
	double run_ratio;      /* with both run and random: the share of
	                          negatives taken from the run, 0 to 1 */
	unsigned negatives;    /* negatives per triple, at least 1 */
	uint64_t seed;
	uint64_t count;        /* triples in all, over every shard; 0: by epochs */
	uint64_t epochs;       /* passes over the pairs (or triples file) when
	                          count is 0; 0 means 1 */
	uint64_t rank, world_size; /* this shard: of the triples from start on,
	                          the k-th of this shard is number
	                          start + rank + k * world_size (0 for start
	                          where it is not given) */
	int strict;            /* a bad input line, or an input with the shape
	                          of another kind of file, is an error, not a
	                          count or a warning */
	dx_progress_fn progress; /* when not NULL: called every 65536 input
	                          lines read (done: lines so far, total: 0); a
	                          non-zero return stops with DX_ECANCELED */
	void *progress_ctx;
	dx_sample_report *report; /* when not NULL: receives the report as
	                          dx_sampler_open returns, also when it fails
	                          (what was counted up to the failure) */
	/* Options added since the first version come here, at the end, so
	 * that a caller built with a shorter struct still works. */
	unsigned depth_from;   /* run: and of those, the places from this one
	                          on (1-based; 0 or 1: from the top), so that
	                          the very top, where false negatives are, is
	                          left out */
	int margin_kind;       /* DX_MARGIN_*: a negative from the run scores
	                          at most the positive's own run score less
	                          margin (DX_MARGIN_SCORE), or less margin
	                          percent of its absolute value
	                          (DX_MARGIN_PERCENT); a positive the run does
	                          not score gives no bound.  TREC runs only */
	double margin;
	int weights;           /* DX_WEIGHTS_*: how a negative is drawn among
	                          a query's run candidates */
	int pairs;             /* DX_PAIRS_*: what an epoch visits */
	uint64_t start;        /* the first triple: number start of the
	                          unsharded sequence, reached without drawing
	                          those before it (a triples file: its lines
	                          are read and skipped) */
	int drop_last;         /* every shard gets (total - start) / world_size
	                          triples, the rest left out; else the ceiling
	                          of it, the shards past the end wrapping round
	                          to the first triples from start (as torch's
	                          DistributedSampler pads).  A triples file is
	                          never padded: with count and drop_last its
	                          shards are cut to the share, else they hold
	                          the lines as they fall */
} dx_sample_opts;

/* The defaults: min_rel 1, negatives 1, run_ratio 0.5, world_size 1, every
 * other option 0 or NULL; and size. */
DX_EXPORT void dx_sample_opts_init_size(dx_sample_opts *o, size_t size);
#define dx_sample_opts_init(o) dx_sample_opts_init_size((o), sizeof(dx_sample_opts))

/* What an epoch visits: each (query, positive) pair once, in an order
 * drawn for the epoch; or each query once, with one of its positives,
 * which go round from epoch to epoch (Tevatron's choice), so that a query
 * with many positives is not seen more often than one with a single one. */
enum { DX_PAIRS_ALL = 0, DX_PAIRS_QUERY = 1 };

/* How a negative is drawn among a query's run candidates (after depth,
 * depth_from, margin and the exclusions): each alike, or the candidate at
 * place p of the run (1-based) with weight 1 / p. */
enum { DX_WEIGHTS_UNIFORM = 0, DX_WEIGHTS_RANK = 1 };

enum { DX_MARGIN_NONE = 0, DX_MARGIN_SCORE = 1, DX_MARGIN_PERCENT = 2 };

/* What was wrong with the inputs, counted; with strict, the first is an error. */
enum {
	DX_SP_NO_TEXT,         /* a judgement or triple whose query has no text */
	DX_SP_UNKNOWN_ID,      /* a judged or triple id not in the corpus */
	DX_SP_BAD_LINE,        /* a line with too few columns or a bad number */
	DX_SP_DUP_QUERY,       /* a query id given twice in the queries (the
	                          first text is kept) */
	DX_SP_RUN_MISSING,     /* a run line within its query's top depth whose
	                          document is not in the corpus: it keeps its
	                          place in the ranking (no deeper line takes
	                          it) and gives no negative */
	DX_SP_KINDS            /* the kinds this version counts; more may come */
};

/* Room for the kinds of dx_sample_report, fixed so that the report keeps
 * its size as kinds are added: part of the ABI, like DX_SAMPLE_WARNINGS. */
enum { DX_SP_MAX = 16 };

/* At most this many warnings, a shape warning an input file and one for
 * the pairs without a negative: a cap, part of the ABI. */
enum { DX_SAMPLE_WARNINGS = 4 };

struct dx_sample_report {
	uint64_t queries;      /* query texts read */
	uint64_t positives;    /* judgements at min_rel or above, kept */
	uint64_t pairs;        /* (query, positive) pairs that are sampled */
	uint64_t no_negative;  /* pairs left out: no negative can be drawn */
	uint64_t run_entries;  /* run candidates kept, after depth and exclusions */
	uint64_t total;        /* triples in all shards from number 0 (0 for a
	                          triples file without count, whose length is
	                          not known in advance) */
	uint64_t problems[DX_SP_MAX];  /* by DX_SP_*; 0 beyond DX_SP_KINDS */
	char first[DX_SP_MAX][512];    /* "FILE:LINE" of the first of each kind */
	/* Input files that have the shape of another kind of file (a TREC run
	 * given as qrels, a run given as queries), read as given: what and
	 * "FILE:LINE" of the line that shows it, as an error would say them;
	 * and the pairs left out for want of a negative (no_negative): how
	 * many and why, with the run's (or the qrels') path. */
	unsigned nwarnings;
	dx_err warning[DX_SAMPLE_WARNINGS];
	uint64_t shard;        /* the triples this shard gives, from start (0
	                          where total is 0) */
	uint64_t per_epoch;    /* triples an epoch holds: pairs, or queries
	                          with DX_PAIRS_QUERY (0 for a triples file) */
};

typedef struct dx_triple {
	uint64_t n;            /* its number in the unsharded sequence */
	const char *qid;       /* valid until the sampler is closed */
	size_t qid_len;
	const char *query;     /* "" without a queries file */
	size_t query_len;
	uint64_t pos;          /* the positive: its position in the corpus, or
	                          without a corpus a number for
	                          dx_sampler_doc_id */
	uint64_t *neg;         /* set by the caller: room for opts.negatives */
	unsigned nneg;         /* negatives written */
	uint64_t epoch;        /* the epoch it belongs to (n / per_epoch) */
} dx_triple;

typedef struct dx_sampler dx_sampler;

/*
 * Reads the inputs and prepares the sampling; the corpus must stay open
 * while the sampler is used.  c may be NULL when no random negatives are
 * asked for: nothing is then checked against a corpus, and the documents
 * are known by the ids the inputs name (dx_sampler_doc_id); the same seed
 * gives the same triples as with a corpus that holds every id.  Returns
 * NULL with err filled: DX_EINVAL (options that do not go together, opts
 * not set up by dx_sample_opts_init), DX_ESYS, DX_EFORMAT (an input line,
 * under strict), DX_ENOMEM, DX_ECANCELED.  Qrels, runs and queries are
 * read whole here; a triples file is read as triples are drawn.
 */
DX_EXPORT DX_MUST_CHECK dx_sampler *dx_sampler_open(dx_corpus *c, const dx_sample_opts *o, dx_err *err);

/* The next triple of this shard, its qid and query valid until s is
 * closed: 1, 0 after the last one, or a negative
 * code: a triples file that cannot be read, a bad line under strict, a
 * triples file of which no line (of any shard) holds a triple to write
 * (DX_EFORMAT), DX_ECANCELED when the progress callback asked to stop. */
DX_EXPORT DX_MUST_CHECK int dx_sampler_next(dx_sampler *s, dx_triple *t, dx_err *err);

/*
 * Triple n of the unsharded sequence, whatever the shard, start and
 * triples drawn so far: the triple that dx_sampler_next gives the shard
 * that owns n.  Returns 0, or DX_EINVAL for n not below the report's total
 * or a sampler over a triples file (read in order only).  Its qid and
 * query stay valid until s is closed.
 */
DX_EXPORT DX_MUST_CHECK int dx_sampler_at(dx_sampler *s, uint64_t n, dx_triple *t, dx_err *err);

/*
 * The id of document doc of a triple (its pos or one of its neg): the
 * corpus's id of the record, or without a corpus the id as the inputs
 * named it.  Returns 0, or a negative code (a damaged index).  *id stays
 * valid until the next call on s or on its corpus.
 */
DX_EXPORT DX_MUST_CHECK int dx_sampler_doc_id(dx_sampler *s, uint64_t doc, const char **id, size_t *len,
                                    dx_err *err);

/* What was read and counted so far: owned by s, updated as it draws. */
DX_EXPORT const dx_sample_report *dx_sampler_report(const dx_sampler *s);

DX_EXPORT void dx_sampler_close(dx_sampler *s);

/* ---- verification -------------------------------------------------------- */

typedef struct dx_verify_report {
	uint64_t records;    /* records checked */
	uint64_t bytes;      /* corpus bytes re-read */
	/* MS MARCO v2 ids whose byte offset is not where their record sits,
	 * in files not named after a bundle (a subset of v2, where the offsets
	 * of the full bundle cannot hold): counted, not refused. */
	uint64_t v2_elsewhere;
	char v2_first[1100];  /* "FILE:LINE" of the first of them */
} dx_verify_report;

/*
 * Checks every section's CRC32, re-reads every source file with the build
 * parameters and compares each record (offset, length, id) with the index,
 * and looks each id up.  An MS MARCO v2 id in a file named after its
 * bundle (msmarco_doc_31.gz) must name its record's bundle and byte offset.
 * progress and report may be NULL.  Returns 0, DX_EMISMATCH naming the
 * first record that differs, DX_ECORRUPT, DX_ESTALE, DX_ESYS, DX_ENOMEM,
 * DX_ECANCELED.
 */
DX_EXPORT DX_MUST_CHECK int dx_corpus_verify(dx_corpus *c, dx_progress_fn progress, void *ctx,
                                   dx_verify_report *report, dx_err *err);

/* ---- output files ------------------------------------------------------- */

/*
 * A file that appears whole or not at all: written through a temporary
 * file in the target's directory, flushed to disk and renamed over the
 * target by dx_output_commit.  A process that fails, is interrupted or is
 * killed leaves the earlier file (if any) as it was.  Through a symbolic
 * link, the file it points to is replaced and the link kept; a character
 * device or a FIFO at the path (/dev/null, a named pipe) is written
 * through, never replaced, and so is a descriptor of this process named as
 * /dev/stdout, /dev/fd/N or /proc/self/fd/N (its offset and append mode
 * shared); a directory, a block device or a link to nothing is refused
 * (DX_ESYS, DX_EINVAL).  dx_output_open returns NULL with err filled.  A
 * dx_output belongs to the process that opened it.
 */
typedef struct dx_output dx_output;
DX_EXPORT DX_MUST_CHECK dx_output *dx_output_open(const char *path, dx_err *err);
/* Whether a names a regular file and b the same file (through any link):
 * 1 or 0.  A writer refuses an output that is one of its inputs. */
DX_EXPORT int dx_same_file(const char *a, const char *b);
/* Whether dx_output_open(path) would replace a regular file already there
 * (1), rather than create one or write through a device, a FIFO or a
 * descriptor named by the path (0): what a command asks before it
 * replaces a file of its user's without being told to. */
DX_EXPORT int dx_output_replaces(const char *path);
/* The descriptor to write the bytes to. */
DX_EXPORT int dx_output_fd(const dx_output *f);
/* Replaces the target with what was written; frees f either way.  Returns
 * 0 or DX_ESYS (a full disk, a failed fsync or rename: the target as it
 * was). */
DX_EXPORT DX_MUST_CHECK int dx_output_commit(dx_output *f, dx_err *err);
/* Drops what was written and frees f; accepts NULL. */
DX_EXPORT void dx_output_abort(dx_output *f);

/* ---- surviving a file cut short ------------------------------------------ */

/*
 * Installs, once per process (later calls return 0 at once), a SIGBUS
 * handler that fails the docdex call that faulted instead of the process.
 * A SIGBUS in the thread running dx_corpus_find, dx_corpus_find_many,
 * dx_corpus_id, dx_corpus_record, dx_corpus_records, dx_corpus_copy,
 * dx_corpus_copy_many, dx_corpus_check_ids, dx_corpus_fields,
 * dx_corpus_verify or dx_index_check (and through them dx_sampler_next
 * and dx_sampler_doc_id), at an address in that corpus's or index's
 * mappings, makes the call return DX_ESTALE ("a corpus or index file could
 * not be read where it was mapped: ..."); the corpus is then good only for
 * dx_corpus_close.  Any other SIGBUS goes to the handler found at
 * installation (a SA_SIGINFO one gets its siginfo and context), or, where
 * that was the default or ignore, kills the process as SIGBUS would have.
 * The guard costs a sigsetjmp per call (the signal mask is not saved) and
 * nothing else.  A mapped record read by the caller after the call is
 * unguarded: copy it with dx_corpus_copy.  Call it before starting
 * threads, after any SIGBUS handler of the host's own.  Returns 0, or
 * DX_ESYS (sigaction failed).
 */
DX_EXPORT DX_MUST_CHECK int dx_sigbus_guard_install(dx_err *err);

/* ---- random numbers and permutations ------------------------------------ */

/* A small, fast generator (xoshiro256**) seeded through splitmix64: the same
 * seed gives the same sequence on every machine.  Plain values: one per
 * thread, copied freely. */
typedef struct dx_rng { uint64_t s[4]; } dx_rng;
DX_EXPORT void dx_rng_seed(dx_rng *r, uint64_t seed);
DX_EXPORT uint64_t dx_rng_next(dx_rng *r);
/* Uniform in [0, n), n > 0, without modulo bias. */
DX_EXPORT uint64_t dx_rng_below(dx_rng *r, uint64_t n);

/*
 * A pseudo-random permutation of [0, n) that needs no memory: dx_perm_at
 * maps each i < n to a distinct value < n.  Used to draw distinct records.
 */
typedef struct dx_perm { uint64_t n, mask; uint64_t keys[4]; } dx_perm;
DX_EXPORT void dx_perm_init(dx_perm *p, uint64_t n, uint64_t seed);
DX_EXPORT uint64_t dx_perm_at(const dx_perm *p, uint64_t i);

#endif
