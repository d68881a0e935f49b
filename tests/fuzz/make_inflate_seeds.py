#!/usr/bin/env python3
"""Writes the seeds of fuzz_inflate (tests/fuzz/seeds/inflate): raw DEFLATE
streams made by zlib at several levels and strategies, over text, long
repeats and random bytes, a few cut short or with a bit flipped, each after
a control byte (see fuzz_inflate.c); and a few deflated with the harness's
window as dictionary, so that its packed-window pass has matches into it.  Deterministic: run it again and the
files come out the same.

    python3 tests/fuzz/make_inflate_seeds.py tests/fuzz/seeds/inflate
"""
import hashlib
import os
import random
import sys
import zlib


def window():
    """fuzz_inflate.c's WINDOW: "w0 w1 ... w96 w0 ...", 32 KiB of it."""
    out = b""
    i = 0
    while len(out) < 32768:
        out += b"w%d " % (i % 97)
        i += 1
    return out[:32768]


def deflate(data, level=6, strategy=zlib.Z_DEFAULT_STRATEGY, flush_every=0, zdict=None):
    if zdict:
        c = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strategy, zdict)
    else:
        c = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strategy)
    out = b""
    step = flush_every or len(data) or 1
    for i in range(0, len(data), step):
        out += c.compress(data[i:i + step])
        if flush_every:
            out += c.flush(zlib.Z_FULL_FLUSH)  # a stored empty block, byte-aligned
    return out + c.flush()


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    rng = random.Random(1)
    words = [b"passage", b"query", b"ranking", b"neural", b"corpus", b"\t", b"\n", b"the", b"of"]
    text = b" ".join(rng.choice(words) + str(rng.randrange(1000)).encode() for _ in range(2500))
    noise = bytes(rng.randrange(256) for _ in range(5000))
    repeats = b"a" * 3000 + b"ab" * 1000 + b"abcdefg" * 500 + text[:500] * 8
    streams = [
        deflate(b""),
        deflate(text, 6),
        deflate(text, 1),
        deflate(text, 9),
        deflate(text, 0),                                  # stored blocks
        deflate(text, 6, zlib.Z_FIXED),                    # the fixed code
        deflate(text, 6, zlib.Z_HUFFMAN_ONLY),             # literals only
        deflate(repeats, 9),                               # long matches, short distances
        deflate(repeats, 6, zlib.Z_RLE),
        deflate(noise, 6),                                 # stored, for incompressible data
        deflate(text + noise + text, 6, flush_every=1500), # many blocks, empty stored ones
        deflate(b"x", 6),
        deflate(b"\0" * 40000, 9),
    ]
    seeds = []
    for i, s in enumerate(streams):
        seeds.append(bytes([i * 37 & 0x7f]) + s)
        seeds.append(bytes([0x47]) + s)                    # whole pieces, stops at blocks
    for s in streams[1], streams[10]:
        seeds.append(bytes([0x80 | 0x3f]) + s)             # stops at a block after 1,000 bytes out
        seeds.append(bytes([0xc0 | 0x25]) + s)             # after 65,536; input 4,096 and output 300 at a time
    # Damaged: cut short, a bit flipped, bytes after the end.
    for i, s in enumerate(streams[1:6]):
        seeds.append(bytes([i * 11 & 0x7f]) + s[:len(s) // 2])
        b = bytearray(s)
        b[len(b) // 3] ^= 1 << (i % 8)
        seeds.append(bytes([i * 5 & 0x7f]) + bytes(b))
        seeds.append(bytes([0x40 | i]) + s + b"trailer!")
    # With the window as dictionary: text of its words, near and far in it.
    w = window()
    wtext = b" ".join(w[rng.randrange(32000):][:rng.randrange(4, 40)] for _ in range(300))
    for level, ctl in (6, 0x00), (9, 0x47), (1, 0x25):
        d = deflate(wtext + text[:2000] + wtext[:3000], level, zdict=w)
        seeds.append(bytes([ctl]) + d)
    seeds.append(bytes([0x12]) + d[:len(d) // 2])
    for seed in seeds:
        name = hashlib.sha1(seed).hexdigest()
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(seed)


if __name__ == "__main__":
    main()
