/*
 * dxbench.h: the benchmark engine of docdex bench and docdex pin-test.
 *
 * A static library (libdxbench.a) beside libdocdex, linked by the docdex
 * program and the tests, never installed: the ways of loading documents
 * that bench compares, measurement (/proc, page faults, PSS), memory
 * pinning, the page cache, RAM disk copies, CUDA loaded by dlopen,
 * experiment files (YAML), the synthetic corpus generator, the worker
 * processes of a cell, and reports (JSON in and out, tables, the SVG
 * plot).  Its names begin with dxb_ (DXB_ for constants).  It builds on
 * libdocdex's public interface, and, like it, never prints or exits:
 * errors come back in a dx_err.
 */
#ifndef DXBENCH_H
#define DXBENCH_H

#include <stddef.h>
#include <stdint.h>

#include "docdex.h"

/* ---- experiment files ------------------------------------------------------ */

/*
 * An experiment file: one YAML mapping whose values are scalars or lists of
 * scalars, read with libyaml.  Keys are not interpreted here; the command
 * that reads the file checks them and their values, and names the line of
 * the one it refuses.
 */
typedef struct dxb_config_item {
	const char *key;
	const char *value;    /* a scalar as written (quotes removed), a list's
	                         items joined by ',', "" for an empty value */
	int is_list;          /* the value was a sequence */
	unsigned line;        /* 1-based line of the key */
} dxb_config_item;

typedef struct dxb_config dxb_config;

/*
 * Reads the file at path.  Returns NULL with err filled when it cannot be
 * read, is not YAML (err->subject "FILE:LINE"), is not one mapping, holds a
 * nested mapping or a list of lists (subject "FILE:LINE: KEY"), or gives
 * a key twice, or is larger than 1 MiB (DX_EFORMAT, "experiment file larger
 * than 1 MiB": /dev/zero is no experiment).  An empty file is an empty
 * mapping.
 */
DX_MUST_CHECK dxb_config *dxb_config_load(const char *path, dx_err *err);
size_t dxb_config_count(const dxb_config *c);
/* Item i (0 <= i < count), in the file's order. */
const dxb_config_item *dxb_config_item_at(const dxb_config *c, size_t i);
void dxb_config_free(dxb_config *c);

/* ---- loading strategies (docdex bench) ------------------------------------- */

/*
 * The ways of handing documents to a trainer that docdex bench compares.
 * Each loader serves records by position, as dx_corpus_records does, but
 * through its own means:
 *   memory  the whole corpus read into the loader's heap and parsed, with a
 *           private table from id to record; a position is turned into its
 *           id (as a trainer holds ids) and looked up there
 *   stdio   a private table from id to offset, built from the index; then
 *           fseek and a line read (fread for TREC) per record
 *   pread   the index for the place of a record, pread for its bytes
 *   mmap    the index and the corpus mapped and shared (dx_corpus_records)
 *   gzip, bgzf  the same over a gzip or BGZF corpus
 *   gzip-cached, bgzf-cached  the same through the inflate cache that every
 *           worker and thread shares (dx_corpus_set_inflate_cache), of the
 *           workload's inflate_cache bytes
 */
enum {
	DXB_LOAD_MEMORY = 1, DXB_LOAD_STDIO, DXB_LOAD_PREAD, DXB_LOAD_MMAP, DXB_LOAD_GZIP, DXB_LOAD_BGZF,
	DXB_LOAD_GZIP_CACHED, DXB_LOAD_BGZF_CACHED,
	DXB_LOAD_LAST = DXB_LOAD_BGZF_CACHED
};
/* Whether the strategy reads through the inflate cache. */
#define DXB_LOAD_CACHED(s) ((s) == DXB_LOAD_GZIP_CACHED || (s) == DXB_LOAD_BGZF_CACHED)

/* The strategy's name, or "?". */
const char *dxb_loader_name(int strategy);
/* DXB_LOAD_* for a name, or -1. */
int dxb_loader_parse(const char *name);

/* Whether the strategy can serve this corpus: 1, or 0 with why set to the
 * reason ("needs a plain corpus").  memory serves any; stdio, pread and
 * mmap need plain files; gzip needs gzip files and bgzf BGZF files. */
int dxb_loader_applies(int strategy, dx_corpus *c, const char **why);

typedef struct dxb_loader dxb_loader;

/*
 * Opens a loader over the corpus c (which must stay open while it is
 * used).  A memory loader reads and parses every source file here.  With
 * share non-NULL (a memory loader of the same corpus, which must outlive
 * this one), the new loader uses its heap copy instead of making another,
 * as the threads of one process would.  Loaders are not thread-safe:
 * give each thread its own.
 */
DX_MUST_CHECK dxb_loader *dxb_loader_open(int strategy, dx_corpus *c, const dxb_loader *share,
                                        dx_err *err);

/* Reads records pos[0..n) into recs; their bytes stay valid until the next
 * call on the loader. */
DX_MUST_CHECK int dxb_loader_get(dxb_loader *l, const uint64_t *pos, size_t n, dx_record *recs,
                                 dx_err *err);

void dxb_loader_close(dxb_loader *l);

/* ---- measurement ---------------------------------------------------------- */

/* A process's memory, from /proc/PID/smaps_rollup (or smaps), in bytes. */
typedef struct dxb_mem_usage {
	uint64_t rss;         /* resident */
	uint64_t pss;         /* resident, shared pages divided among sharers */
	uint64_t uss;         /* resident and private to it (Private_Clean +
	                         Private_Dirty) */
	uint64_t anon;        /* anonymous (heap, stacks) */
	uint64_t swap;
	/* PSS split by what backs the pages: anonymous memory, which only
	 * swap or the OOM killer can take back, and mapped files' pages, the
	 * page cache, which the kernel reclaims at will.  Summed over
	 * processes, each counts every page once. */
	uint64_t pss_anon, pss_file;
	int split;            /* the kernel gave Pss_Anon and Pss_File */
} dxb_mem_usage;

/* Reads the memory of process pid (0: this process).  Returns 0, or
 * DX_ESYS when its /proc files cannot be read. */
DX_MUST_CHECK int dxb_mem_usage_of(int pid, dxb_mem_usage *m, dx_err *err);

/* This process's page faults so far, all threads (getrusage). */
void dxb_page_faults(uint64_t *minor, uint64_t *major);

/* Seconds on a monotonic clock. */
double dxb_now(void);

/* n with a comma every three digits ("50,000") into buf; returns buf. */
const char *dxb_format_count(uint64_t n, char *buf, size_t size);

/* The machine's memory, from /proc/meminfo, in bytes (0 when unknown). */
typedef struct dxb_meminfo {
	uint64_t total, available;
	uint64_t mlocked;     /* locked with mlock, by every process */
	uint64_t shmem;       /* tmpfs files and shared memory */
} dxb_meminfo;
void dxb_meminfo_read(dxb_meminfo *m);

typedef struct dxb_machine {
	unsigned cores;       /* online processors */
	uint64_t mem_total;   /* bytes, /proc/meminfo MemTotal */
	uint64_t mem_available; /* MemAvailable */
	char kernel[256];     /* "Linux 6.1.0-13-amd64 x86_64" */
	char cpu[256];        /* model name, or "" */
	char hostname[256];
	uint64_t memlock_limit; /* RLIMIT_MEMLOCK, UINT64_MAX when unlimited */
	char thp[32];         /* transparent huge pages: "always", "madvise",
	                         "never", or "" */
	unsigned numa_nodes;  /* NUMA nodes online (0 when unknown) */
	uint64_t shm_size, shm_free; /* /dev/shm, bytes (0 when absent) */
} dxb_machine;

/* What the machine is; fields it cannot learn are left 0 or "". */
void dxb_machine_info(dxb_machine *m);

/* The name of the filesystem path is on ("ext4", "tmpfs", "xfs", ...), or
 * "0xMAGIC" for one not known by name, or "" when statfs fails. */
void dxb_fs_type(const char *path, char *out, size_t outsz);

/* ---- pinning, placement and the page cache (docdex pin-test) -------------- */

/* The memory-lock limit in force (RLIMIT_MEMLOCK, soft), in bytes;
 * UINT64_MAX when unlimited. */
uint64_t dxb_memlock_limit(void);

/* Locks [p, p + len) into memory with mlock(2).  Returns 0; DX_ELIMIT when
 * the memory-lock limit refuses it (err->what names the limit in force
 * and how to raise it); DX_ESYS for another failure. */
DX_MUST_CHECK int dxb_mem_lock(const void *p, size_t len, dx_err *err);
void dxb_mem_unlock(const void *p, size_t len);

/*
 * Makes the corpus's mapped files (plain sources) and its index resident:
 * with lock set, locked with mlock (DX_ELIMIT as dxb_mem_lock when the
 * memory-lock limit refuses); else only read in (MADV_POPULATE_READ, or a
 * read of each page where the kernel lacks it).  Sets *bytes to the bytes
 * made resident.  dx_corpus_close unlocks them.
 */
DX_MUST_CHECK int dxb_corpus_make_resident(dx_corpus *c, int lock, uint64_t *bytes, dx_err *err);

/*
 * A copy of an indexed corpus on a RAM-backed filesystem: the index and
 * its source files copied into a new directory under dir, keeping their
 * layout and modification times so that the copied index serves the
 * copied files.
 */
typedef struct dxb_ramdisk dxb_ramdisk;

/* Whether dir is on tmpfs or ramfs (statfs): 0; DX_EINVAL when it is not
 * (err->what names the filesystem found); DX_ESYS when it cannot be read. */
DX_MUST_CHECK int dxb_ramdisk_check(const char *dir, dx_err *err);

/*
 * Checks that dir is on tmpfs or ramfs (statfs) and has room for the index
 * and its sources (statvfs), then copies them into a directory
 * docdex-ramdisk.HOST.PID.XXXXXX made by dxb_tempdir_make, after sweeping
 * the copies that dead processes of this host left there
 * (dxb_tempdir_sweep).  Returns the copy, or NULL
 * with err filled: DX_EINVAL when dir is not tmpfs or ramfs (err->what
 * names the filesystem found), DX_ELIMIT when there is not room (the bytes
 * needed and free), DX_ESYS on a failed copy.  Nothing is left behind on
 * failure.  progress is called as in dx_index_build and may cancel.
 */
DX_MUST_CHECK dxb_ramdisk *dxb_ramdisk_copy(const char *index_path, const char *dir,
                                          dx_progress_fn progress, void *ctx, dx_err *err);
/* The copy's index, its directory, and the bytes copied. */
const char *dxb_ramdisk_index(const dxb_ramdisk *r);
const char *dxb_ramdisk_dir(const dxb_ramdisk *r);
uint64_t dxb_ramdisk_bytes(const dxb_ramdisk *r);
/* Removes the copy and frees r; accepts NULL. */
void dxb_ramdisk_remove(dxb_ramdisk *r);

/*
 * Temporary directories that name their maker, PREFIX.HOST.PID.XXXXXX, so
 * that one left by a process killed before it could remove it (SIGKILL,
 * the OOM killer) is removed by a later process: the RAM disk copies, a
 * benchmark's generated corpus.
 *
 * dxb_tempdir_make makes one under parent (mkdtemp) into out (outsz bytes)
 * and locks it (flock) through the descriptor *lock, held, by forked
 * children too, until dxb_tempdir_remove closes it.  Returns 0, or
 * DX_ESYS, or DX_ELIMIT when the name does not fit; out is "" and *lock
 * -1 on failure.
 *
 * dxb_tempdir_sweep removes the directories of parent named
 * PREFIX.HOST.PID.XXXXXX with this host's name, owned by this user, whose
 * process is gone and whose lock no process holds.  Another host's stay
 * (its process ids mean nothing here), as does every one a live process
 * holds, in another pid namespace too.  Best effort: what cannot be
 * removed stays.
 *
 * dxb_tempdir_remove removes dir and everything under it, following no
 * link, and closes lock when it is not -1; dir may be NULL or "".
 */
DX_MUST_CHECK int dxb_tempdir_make(const char *parent, const char *prefix, char *out, size_t outsz,
                                   int *lock, dx_err *err);
void dxb_tempdir_sweep(const char *parent, const char *prefix);
void dxb_tempdir_remove(const char *dir, int lock);

/*
 * The page cache and a corpus's files (its index and every source, at the
 * paths they were opened at): dropped as dxb_cache_evict drops one file;
 * read through once, so that what follows starts warm; and the fraction of
 * their bytes resident (pages weighted by file), with their total size in
 * *bytes.  Each returns 0 or DX_ESYS; the read through calls progress as
 * dx_index_build does, which may stop it (DX_ECANCELED).
 */
DX_MUST_CHECK int dxb_corpus_cache_evict(dx_corpus *c, dx_err *err);
DX_MUST_CHECK int dxb_corpus_cache_load(dx_corpus *c, dx_progress_fn progress, void *ctx,
                                        dx_err *err);
DX_MUST_CHECK int dxb_corpus_cache_resident(dx_corpus *c, double *fraction, uint64_t *bytes,
                                            dx_err *err);

/* Asks the kernel to drop a file's pages from the page cache
 * (posix_fadvise POSIX_FADV_DONTNEED), after writing back its dirty pages
 * (fdatasync); not guaranteed to drop them all: pages mapped by a process
 * stay, and tmpfs and ramfs keep theirs.
 * Returns 0 or DX_ESYS. */
DX_MUST_CHECK int dxb_cache_evict(const char *path, dx_err *err);
/* The fraction of a file's pages in the page cache, 0 to 1 (mincore(2)
 * over a mapping of it; 1 for an empty file).  Returns 0 or DX_ESYS. */
DX_MUST_CHECK int dxb_cache_resident(const char *path, double *fraction, dx_err *err);

/*
 * The CUDA runtime, loaded at run time with dlopen: docdex never links
 * against CUDA, and works the same without it.  The library is
 * $DOCDEX_CUDART when set, else the first of libcudart.so,
 * libcudart.so.13, libcudart.so.12, libcudart.so.11.0 that loads.
 */
typedef struct dxb_cuda dxb_cuda;

typedef struct dxb_cuda_info {
	char library[256];    /* the file dlopen loaded */
	int runtime_version;  /* cudaRuntimeGetVersion: 12040 for 12.4 */
	int driver_version;   /* cudaDriverGetVersion */
	int devices;          /* cudaGetDeviceCount */
	char device_name[256]; /* the device in use */
	uint64_t device_memory; /* its global memory, bytes */
} dxb_cuda_info;

/* Loads the runtime and selects device (0 for the first).  Returns NULL
 * with err->what saying why when there is no runtime, no device, or a
 * call fails (with the CUDA error's name). */
DX_MUST_CHECK dxb_cuda *dxb_cuda_open(int device, dx_err *err);
void dxb_cuda_close(dxb_cuda *cu);
void dxb_cuda_get_info(const dxb_cuda *cu, dxb_cuda_info *info);

/* Page-locked host memory from cudaHostAlloc, and cudaFreeHost. */
DX_MUST_CHECK void *dxb_cuda_host_alloc(dxb_cuda *cu, size_t n, dx_err *err);
void dxb_cuda_host_free(dxb_cuda *cu, void *p);
/* Page-locks existing memory (cudaHostRegister), and undoes it. */
DX_MUST_CHECK int dxb_cuda_host_register(dxb_cuda *cu, void *p, size_t n, dx_err *err);
void dxb_cuda_host_unregister(dxb_cuda *cu, void *p);
/* Device memory (cudaMalloc, cudaFree). */
DX_MUST_CHECK void *dxb_cuda_device_alloc(dxb_cuda *cu, size_t n, dx_err *err);
void dxb_cuda_device_free(dxb_cuda *cu, void *p);
/* Copies host to device on the handle's stream (cudaMemcpyAsync), and
 * waits for the stream (cudaStreamSynchronize). */
DX_MUST_CHECK int dxb_cuda_copy_to_device(dxb_cuda *cu, void *dev, const void *host, size_t n,
                                          dx_err *err);
DX_MUST_CHECK int dxb_cuda_sync(dxb_cuda *cu, dx_err *err);

/* ---- synthetic corpora ---------------------------------------------------- */

enum { DXB_SYN_PASSAGES = 1, DXB_SYN_DOCUMENTS = 2 };
enum { DXB_SYN_TSV = 1, DXB_SYN_JSONL_V2 = 2, DXB_SYN_JSONL_BEIR = 3, DXB_SYN_TREC = 4 };

/* Where generated bytes go: write returns 0, or -1 with errno set to stop:
 * ECANCELED (its caller asks to stop, as a progress callback does) makes
 * the generator return DX_ECANCELED; another errno, DX_ESYS. */
typedef struct dxb_writer {
	int (*write)(void *ctx, const void *buf, size_t len);
	void *ctx;
} dxb_writer;

typedef struct dxb_synth_opts {
	int kind;            /* DXB_SYN_PASSAGES or DXB_SYN_DOCUMENTS */
	int layout;          /* DXB_SYN_* */
	uint64_t seed;
	uint64_t count;      /* records to write; 0 means: as many as fill size */
	uint64_t size;       /* approximate bytes when count is 0 */
	unsigned bundle;     /* MS MARCO v2 layouts: the bundle number in the ids */
} dxb_synth_opts;

/*
 * Writes a deterministic MS MARCO-shaped corpus: the same options give the
 * same bytes on any machine.  Returns the number of records written, or a
 * negative code.
 */
DX_MUST_CHECK int64_t dxb_synth_corpus(const dxb_synth_opts *o, const dxb_writer *w, dx_err *err);

/* The id of record n of a synthetic corpus of this kind and layout (the
 * layout matters for MS MARCO v2 ids, which hold a byte offset: those need
 * the corpus itself and give DX_EINVAL here). */
DX_MUST_CHECK int dxb_synth_id(const dxb_synth_opts *o, uint64_t n, char *out, size_t outsz, dx_err *err);

typedef struct dxb_synth_topics_opts {
	uint64_t seed;
	uint64_t queries;    /* number of queries */
	uint64_t records;    /* records in the corpus they go with */
	unsigned positives;  /* judged relevant documents per query, at most */
	unsigned depth;      /* run depth per query */
} dxb_synth_topics_opts;

/* Queries (qid TAB text), TREC qrels (qid 0 docid 1) and a TREC run
 * (qid Q0 docid rank score tag) over the ids of the corpus that the same
 * corpus options generate; any writer may be NULL to skip that file.
 * MS MARCO v2 layouts give DX_EINVAL (their ids hold byte offsets). */
DX_MUST_CHECK int dxb_synth_topics(const dxb_synth_opts *corpus, const dxb_synth_topics_opts *t,
                                   const dxb_writer *queries, const dxb_writer *qrels,
                                   const dxb_writer *run, dx_err *err);

/* ---- JSON texts for reports ------------------------------------------------ */

/*
 * The JSON objects a command renders for its report (dxb_rs_matrix's
 * machine, build, params, environment and summary), written in memory by
 * the core's JSON writer, the one every report goes through: strings with
 * the quote and the backslash escaped and control bytes as \u00XX, other
 * bytes as they are.  A container is DXB_JSON_INLINE, on one line
 * ({"a": 1, "b": [1, 2]}), or DXB_JSON_BLOCK, a member a line, indented two
 * spaces a level as if the text began indent levels deep (where the report
 * will hold it).  A key is followed by its value.  Every call takes the
 * NULL of a writer that could not be made, and does nothing with it.
 */
enum { DXB_JSON_INLINE = 0, DXB_JSON_BLOCK = 1 };

typedef struct dxb_json dxb_json;

/* A writer, or NULL when out of memory. */
dxb_json *dxb_json_new(int indent);
void dxb_json_begin_object(dxb_json *j, int layout);
void dxb_json_end_object(dxb_json *j);
void dxb_json_begin_array(dxb_json *j, int layout);
void dxb_json_end_array(dxb_json *j);
void dxb_json_key(dxb_json *j, const char *name);
/* A string, or null for NULL. */
void dxb_json_string(dxb_json *j, const char *s);
void dxb_json_null(dxb_json *j);
void dxb_json_uint(dxb_json *j, uint64_t v);
/* x as printf's %.*g writes it, or null when it is not finite. */
void dxb_json_double(dxb_json *j, double x, int precision);
/* The text written, malloc'd and NUL-terminated, or NULL when some of it
 * was lost to a lack of memory; frees j. */
char *dxb_json_finish(dxb_json *j);

/* ---- the parts of a benchmark run ---------------------------------------- */

#include "workload.h"
#include "workers.h"
#include "results.h"
#include "figures.h"
#include "batchbuf.h"
#include "tempcorpus.h"
#include "memcg.h"

#endif
