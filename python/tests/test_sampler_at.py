"""_Sampler.at(ns): triples by their global number, the same tuples as the
shards' next_batch gives them."""
import os
import random
import subprocess

import pytest

import docdex
from docdex import _docdex
from conftest import TOP, run


@pytest.fixture(scope="module")
def synth(docdex_bin, tmp_path_factory):
    """A small synthetic corpus with queries, qrels and a run, indexed."""
    d = str(tmp_path_factory.mktemp("synth_at"))
    files = {k: os.path.join(d, k) for k in ("c.tsv", "q.tsv", "qrels", "run")}
    subprocess.run([os.path.join(TOP, "tests", "dx-synth"), "--count", "500", "-o", files["c.tsv"],
                    "--queries", files["q.tsv"], "--qrels", files["qrels"], "--run", files["run"],
                    "--nqueries", "30", "--depth", "10"], check=True, stdout=subprocess.DEVNULL)
    run(docdex_bin, "index", "-q", files["c.tsv"])
    return files


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
