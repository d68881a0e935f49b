/* fileutil.h: paths, whole reads and writes, file fingerprints (internal). */
#ifndef DX_FILEUTIL_H
#define DX_FILEUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "docdex.h"

/* The directory part of a path ("." when it has none), malloc'd. */
char *dx__dirname(const char *path);

/* dir/rel, or rel itself when it is absolute; malloc'd. */
char *dx__path_join(const char *dir, const char *rel);

/* The path of absolute path `to` relative to absolute directory `from`
 * ("../data/x.tsv"); malloc'd. */
char *dx__relative_path(const char *from, const char *to);

/* pread until n bytes are read: 0, or -1 with errno (EIO at a short file). */
int dx__pread_full(int fd, void *buf, size_t n, uint64_t off);

/* Reads n bytes at off of a corpus file opened at the size its index
 * gives: fewer bytes mean it was cut short or rewritten in place while in
 * use (what a mapped read meets as SIGBUS), and reading on would wait
 * forever for them.  Returns 0, DX_ESYS or DX_ESTALE, naming path. */
int dx__pread_source(int fd, const char *path, void *buf, size_t n, uint64_t off, dx_err *err);

/*
 * Maps size bytes of fd read-only and shared, at an address that is a
 * multiple of 2 MiB when size is at least that: the kernel then maps a
 * page-cache folio of 2 MiB with one entry, where a random read through
 * 4 KiB entries misses the TLB.  A file read or written in large pieces
 * sits in such folios on a file system with large folios (ext4 on Linux
 * 6.18 here).  Linux aligns a large mapping of an ext4 file itself, but
 * not of one seen through overlayfs (a container's files): there c[pos]
 * from Python read a 1 GiB corpus at 0.78-0.91 M/s against 0.67-0.71 M/s
 * unaligned.  Returns the mapping, or MAP_FAILED with errno;
 * munmap(p, size) undoes it.
 */
void *dx__map_file(int fd, size_t size);

/* Whether the page holding byte off of the mapping at map (page-aligned,
 * as mmap returns it) is in memory (mincore); 0 when mincore fails. */
int dx__map_resident(const void *map, uint64_t off);

/* write until everything is written: 0, or -1 with errno. */
int dx__write_full(int fd, const void *buf, size_t n);

/*
 * A hash of the file's size and of a sample of its bytes: all of them up
 * to 1 MiB, else 64 blocks of 4 KiB spread evenly from the first byte to the
 * last.  Cheap to recompute on every open, and it tells a replaced file from
 * the indexed one even when size and mtime were kept.
 */
int dx__fingerprint(int fd, uint64_t size, uint64_t *out, const char *path, dx_err *err);

/* The host name as the names of temporary files and directories hold it,
 * which say who made them (what a file name cannot hold becomes '_'). */
enum { DX_HOST_MAX = 64 };
void dx__host_name(char *out, size_t n);

/*
 * Refuses a file compressed in a way docdex does not read (xz, bzip2, zstd,
 * lz4, zip, 7-Zip, compress), told by its magic number, rather than read
 * its bytes as text: 0, or DX_EFORMAT naming the compression.  Gzip and
 * BGZF pass, and so does a file that cannot be read from its start (a
 * pipe: its reader checks the first bytes it reads, with the second form).
 */
enum { DX_MAGIC_MAX = 10 }; /* the bytes the longest check needs */
int dx__refuse_compressed(int fd, const char *path, dx_err *err);
int dx__refuse_compressed_bytes(const void *head, size_t n, const char *path, dx_err *err);

#endif
