"""_Sampler.at(ns): triples by their global number, the same tuples as the
shards' next_batch gives them."""
import os
import random

import pytest

import docdex
from docdex import _docdex
from conftest import run


def sampler(synth, corpus=True, **o):
    return _docdex._Sampler(corpus=synth["c.tsv"] if corpus else None, queries=synth["q.tsv"],
                            qrels=synth["qrels"], run=synth["run"], **o)


def test_error_names_the_triples_file(synth, tmp_path):
    """The library names the triples file in an error met while drawing:
    its path outlives the call that opened the sampler."""
    trip = tmp_path / "no-triples.tsv"
    trip.write_bytes(b"just one column\n" * 3)
    s = _docdex._Sampler(corpus=synth["c.tsv"], queries=synth["q.tsv"], triples=str(trip))
    # Objects of the path's size, which would take its memory had it been freed.
    junk = [b"X" * len(os.fsencode(str(trip))) + bytes([i % 256]) for i in range(2000)]
    with pytest.raises(docdex.Error, match="no line of the file") as e:
        s.next_batch(5)
    assert str(trip) in str(e.value)
    del junk


def shard_triples(synth, world_size, corpus=True, **o):
    """Every tuple that next_batch gives, over all ranks."""
    out = []
    for rank in range(world_size):
        s = sampler(synth, corpus, rank=rank, world_size=world_size, **o)
        while True:
            batch = s.next_batch(7)
            if not batch:
                break
            out += batch
        s.close()
    return out


@pytest.mark.parametrize("corpus,opts", [
    (True, dict(seed=3, count=40, negatives=3, random=True)),
    (True, dict(seed=5, epochs=2, negatives=2)),
    (False, dict(seed=9, count=31, negatives=2)),
])
def test_at_is_next_batch_of_the_shards(synth, corpus, opts):
    got = shard_triples(synth, 3, corpus, **opts)
    s = sampler(synth, corpus, **opts)
    total = s.report()["total"]
    assert total > 0 and {t[0] for t in got} == set(range(total))
    assert all(t[5] is None and t[7] is None for t in got) != corpus
    # Each tuple as next_batch made it, one at a time and all at once, in
    # the order asked (with repeats).
    for t in got:
        assert s.at([t[0]]) == [t]
    order = [t[0] for t in got]
    random.Random(1).shuffle(order)
    want = {t[0]: t for t in got}
    assert s.at(order + order[:5]) == [want[n] for n in order + order[:5]]
    assert s.at([]) == []
    # at leaves the shard's own sequence where it was.
    first = s.next_batch(3)
    assert first == [want[n] for n in range(3)]


def test_at_out_of_range(synth):
    s = sampler(synth, seed=1, count=10)
    for n in (10, -1, 2**70):
        with pytest.raises(IndexError):
            s.at([0, n])
    with pytest.raises(TypeError):
        s.at([1.5])
    with pytest.raises(TypeError):
        s.at(3)
    s.close()
    with pytest.raises(ValueError):
        s.at([0])


def test_at_triples_file(docdex_bin, synth, tmp_path):
    trip = tmp_path / "triples.tsv"
    trip.write_bytes(run(docdex_bin, "sample", "--format", "ids", "--count", "5",
                         "--queries", synth["q.tsv"], "--qrels", synth["qrels"],
                         "--run", synth["run"]).stdout)
    s = _docdex._Sampler(corpus=synth["c.tsv"], queries=synth["q.tsv"], triples=str(trip))
    with pytest.raises(docdex.Error, match="in order") as e:
        s.at([0])
    assert str(trip) in str(e.value)  # the library's message, naming the file
    assert len(s.next_batch(10)) == 5
