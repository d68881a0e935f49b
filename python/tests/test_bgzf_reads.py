"""What a read inflates from a BGZF file (Corpus.inflated): a random record
as far as it needs, the blocks of records read in order once each."""
import os
import subprocess
import sys

import pytest

import docdex
from conftest import TOP, run

sys.path.insert(0, os.path.join(TOP, "tests"))
from bgzf_blocks import blocks, last_before, records  # noqa: E402


@pytest.fixture(scope="module")
def bgzf(docdex_bin, tmp_path_factory):
    """3,000 generated documents rewritten with --bgzf, both indexed:
    (path, plain, the blocks as bgzf_blocks gives them)."""
    d = tmp_path_factory.mktemp("bgzf")
    plain = str(d / "d.tsv")
    subprocess.run([os.path.join(TOP, "tests", "dx-synth"), "--kind", "documents", "--count", "3000",
                    "-o", plain], check=True, stdout=subprocess.DEVNULL)
    path = str(d / "d.bgz")
    run(docdex_bin, "index", "-q", "--bgzf", path, plain)
    run(docdex_bin, "index", "-q", plain)
    return path, plain, blocks(path, plain)


def test_a_record_that_ends_a_block_inflates_little_of_the_next(bgzf):
    """The record that ends a block is read with the bytes after it (the
    corpus checks where it ends): the next block is inflated only as far
    as those, not whole."""
    path, plain, bl = bgzf
    starts = records(plain)
    uoff, tried = 0, 0
    # Each block but the last two (the last holds no data, its file's end).
    for k in range(len(bl) - 2):
        isize, nxt = bl[k][2], bl[k + 1]
        uoff += isize
        if nxt[3] is None:
            continue  # a record runs on into the next block
        last = last_before(starts, uoff)
        with docdex.Corpus(path) as c, docdex.Corpus(plain) as p:
            assert c.get(last) == p.get(last)
            assert isize <= c.inflated < isize + nxt[2] // 4, (k, last)
        tried += 1
        if tried == 5:
            break
    assert tried == 5


def test_records_in_order_inflate_each_block_once(bgzf):
    path, plain, bl = bgzf
    with docdex.Corpus(path) as c, docdex.Corpus(plain) as p:
        ids = list(p)
        assert [c.get(i) for i in ids] == [p.get(i) for i in ids]
        assert c.inflated == sum(b[2] for b in bl)


def test_through_a_cache_of_fewer_slots_than_blocks_a_miss_inflates_as_far_as_it_needs(
        bgzf, tmp_path, monkeypatch):
    """A cache that cannot hold every block stores what a miss inflated:
    the block from its start to the record (and the byte after it), as a
    read without the cache inflates it, not the whole block.  Another
    handle reads that record from the cache, and a later record of the
    block inflates the block again, as far as that one."""
    monkeypatch.setenv("DOCDEX_CACHE_DIR", str(tmp_path))
    path, plain, bl = bgzf
    starts = records(plain)
    where = {i: j for j, (_, i) in enumerate(starts)}
    uoff = sum(b[2] for b in bl[:len(bl) // 2])
    for k in range(len(bl) // 2, len(bl) - 2):
        isize, first = bl[k][2], bl[k][3]
        # A block that starts at a record, with the ends of its first two
        # records in its first half.
        if first is not None and starts[where[first] + 2][0] - uoff < isize // 2:
            break
        uoff += isize
    else:
        pytest.fail("no block with two records in its first half")
    j = where[first]
    second = starts[j + 1][1]
    end1, end2 = starts[j + 1][0] - uoff, starts[j + 2][0] - uoff
    cache = 1 << 20  # 16 slots of 64 KiB, for some 300 blocks
    # The decoder stops between symbols: a match may run past the byte
    # asked for, by at most its longest, 258 bytes.
    past = 1 + 258
    with docdex.Corpus(plain) as p, docdex.Corpus(path, inflate_cache=cache) as a, \
            docdex.Corpus(path, inflate_cache=cache) as b:
        assert a.get(first) == p.get(first)
        assert 0 < a.inflated <= end1 + past
        assert b.get(first) == p.get(first)
        assert b.inflated == 0
        assert b.get(second) == p.get(second)
        assert end1 < b.inflated <= end2 + past
