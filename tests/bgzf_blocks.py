"""The blocks of a BGZF file, for the tests that damage one where docdex's
fingerprint of the file does not look (lib/fileutil.c: 64 blocks of
4 KiB spread evenly), written without docdex's code.

Imported by tests/gzip.bats from its own directory.
"""

import os


def records(tsv):
    """Each record of the TSV file tsv as (offset, id), in file order."""
    out, at = [], 0
    for line in open(tsv, "rb"):
        out.append((at, line.split(b"\t")[0].decode()))
        at += len(line)
    return out


def last_before(starts, end):
    """The id of the last record of starts (as records gives them) that
    starts before uncompressed offset end."""
    return [i for u, i in starts if u < end][-1]


def blocks(path, tsv):
    """Each block of the BGZF file path as (offset, size, isize, id): its
    offset and size in the file, its uncompressed size, and the id of the
    record of tsv (the plain file) that starts at the block's first byte,
    or None where none does."""
    b = open(path, "rb").read()
    starts = dict(records(tsv))
    out, off, uoff = [], 0, 0
    while off < len(b):
        size = (b[off + 16] | b[off + 17] << 8) + 1
        isize = int.from_bytes(b[off + size - 4:off + size], "little")
        out.append((off, size, isize, starts.get(uoff)))
        off, uoff = off + size, uoff + isize
    return out


def unseen(file_size, pos, n):
    """Whether bytes [pos, pos + n) of a file of file_size bytes lie outside
    every range the index's fingerprint reads."""
    step = file_size - 4096
    return all(pos + n <= step * i // 63 or pos >= step * i // 63 + 4096 for i in range(64))


def trailer_to_damage(path, tsv, back):
    """A block of the BGZF file path to damage in its trailer: in the
    file's second half, not the last, the trailer's field `back` bytes
    before the block's end (8: the CRC, 4: ISIZE) outside the fingerprint,
    and the records that start and end it different (both whole in it).
    As (offset, size, isize, first id, last id)."""
    S = os.path.getsize(path)
    starts = records(tsv)
    bl, uoff = blocks(path, tsv), 0
    for k, (off, size, isize, first) in enumerate(bl):
        ends_at_record = k + 1 < len(bl) and bl[k + 1][3] is not None
        if len(bl) // 2 <= k and ends_at_record and first is not None and unseen(S, off + size - back, 4):
            last = last_before(starts, uoff + isize)
            if last != first:
                return off, size, isize, first, last
        uoff += isize
    raise SystemExit("no block to damage")
