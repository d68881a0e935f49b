"""access= of docdex.Corpus and docdex.Sampler: 'auto', 'mmap' and 'pread'
give the same documents and triples as the default (which test_corpus and
test_sampler check against `docdex get` and `docdex sample`), keep their
access through pickle, refuse another value; a DataLoader's workers over a
Corpus read with pread."""
import os
import pickle
import random
import shutil
import subprocess

import pytest

import docdex
from conftest import TOP, run

ACCESSES = ("auto", "mmap", "pread")


@pytest.fixture(scope="module")
def documents(docdex_bin, tmp_path_factory):
    """Documents of several KiB each (records never read together with
    pread) and passages (many to a page), indexed: their paths."""
    d = tmp_path_factory.mktemp("access")
    paths = {}
    for kind, count in (("documents", 300), ("passages", 3000)):
        path = str(d / f"{kind}.tsv")
        subprocess.run([os.path.join(TOP, "tests", "dx-synth"), "--kind", kind, "--count", str(count),
                        "--seed", "5", "-o", path], check=True, stdout=subprocess.DEVNULL)
        run(docdex_bin, "index", "-q", path)
        paths[kind] = path
    return paths


def read_every_way(c):
    """What each way of reading c gives: ids in random order with repeats,
    positions likewise, one at a time and together, and iteration."""
    ids = list(c)
    order = ids + ids[: len(ids) // 2] + ids[:1] * 3
    random.Random(5).shuffle(order)
    pos = list(range(len(c))) * 2 + [len(c) - 1, -1, 0]
    random.Random(6).shuffle(pos)
    return {
        "ids": ids,
        "get": [c.get(i) for i in order[:300]],
        "get_many": c.get_many(order),
        "get_many_bytes": c.get_many(order[:50], bytes=True),
        "positions": c.get_many_positions(pos),
        "items": [c[p] for p in pos[:300]],
        "id_of": [c.id(p) for p in pos[:50]],
        "found": all(i in c for i in ids[:50]),
    }


def test_same_documents_with_every_access(sample):
    _, path, field = sample
    for f in (None, field):
        with docdex.Corpus(path, field=f) as c:
            assert c.access == "auto"
            want = read_every_way(c)
        for access in ACCESSES:
            with docdex.Corpus(path, field=f, access=access) as c:
                assert c.access == access
                assert read_every_way(c) == want, (access, f)


def test_large_and_small_records(documents):
    for path in documents.values():
        for f in (None, "text" if path.endswith("passages.tsv") else "title,body"):
            with docdex.Corpus(path, field=f, bytes=True) as c:
                want = read_every_way(c)
            for access in ("mmap", "pread"):
                with docdex.Corpus(path, field=f, bytes=True, access=access) as c:
                    assert read_every_way(c) == want, (path, access, f)
    # Against the file itself: every line, in order and backwards.
    path = documents["passages"]
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")[:-1]
    with docdex.Corpus(path, bytes=True, access="pread") as c:
        n = len(c)
        assert c.get_many_positions(range(n)) == lines
        assert c.get_many_positions(range(n - 1, -1, -1)) == lines[::-1]


def evicted(path):
    """Drops path from the page cache; whether it went (fincore says)."""
    if shutil.which("fincore") is None:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    out = subprocess.run(["fincore", "-n", "-b", "-o", "RES", path], stdout=subprocess.PIPE,
                         check=False).stdout
    return out.strip() == b"0"


def test_evicted_corpus(documents):
    """auto and pread read a corpus that is not in the page cache (each cold
    batch with pread) as they read it warm."""
    path = documents["documents"]
    with docdex.Corpus(path, bytes=True, access="mmap") as c:
        want = c.get_many_positions(range(len(c) - 1, -1, -1))
    for access in ("auto", "pread"):
        if not evicted(path):
            pytest.skip("cannot drop the corpus from the page cache here")
        with docdex.Corpus(path, bytes=True, access=access) as c:
            assert c.get_many_positions(range(len(c) - 1, -1, -1)) == want


def test_access_is_keyword_only_and_checked(samples):
    path, _ = samples["tsv"]
    for bad in ("x", "MMAP", "", "auto "):
        with pytest.raises(ValueError) as e:
            docdex.Corpus(path, access=bad)
        assert str(e.value) == f"access is 'auto', 'mmap' or 'pread', not '{bad}'"
    with pytest.raises(TypeError):
        docdex.Corpus(path, None, access=1)
    with pytest.raises(TypeError):
        docdex.Corpus(path, None, False, "pread")
    with pytest.raises(ValueError) as e:
        docdex.Sampler(path, queries="q", qrels="r", access="x")
    assert str(e.value) == "access is 'auto', 'mmap' or 'pread', not 'x'"


def test_pickle_keeps_access(samples):
    path, field = samples["jsonl"]
    for access in ACCESSES:
        c = docdex.Corpus(path, field=field, bytes=True, access=access)
        d = pickle.loads(pickle.dumps(c))
        assert d is not c
        assert (d.path, d.field, d.bytes, d.access) == (path, field, True, access)
        assert d.get_many_positions(range(len(c))) == c.get_many_positions(range(len(c)))
        c.close()
        assert not d.closed and d[0]
        d.close()


def sampler_triples(s):
    return [tuple(t) for t in s]


def test_sampler_access(synth):
    inputs = {"queries": synth["q.tsv"], "qrels": synth["qrels"], "run": synth["run"],
              "negatives": 2, "seed": 3, "epochs": 2}
    want = sampler_triples(docdex.Sampler(synth["c.tsv"], **inputs))
    assert len(want) > 100
    for access in ACCESSES:
        s = docdex.Sampler(synth["c.tsv"], access=access, **inputs)
        assert sampler_triples(s) == want, access
        assert [tuple(t) for t in s.get_many([5, 0, 5, len(want) - 1])] == [
            want[5], want[0], want[5], want[-1]]
    # A Corpus gives its access (and its field) unless access= says another;
    # a pickled sampler (a spawned worker's) keeps it.
    for corpus_access, given, used in (("pread", None, "pread"), ("pread", "mmap", "mmap"),
                                       ("mmap", None, "mmap")):
        c = docdex.Corpus(synth["c.tsv"], access=corpus_access)
        s = docdex.Sampler(c, access=given, **inputs)
        assert s.__getstate__()["opts"]["access"] == used
        t = pickle.loads(pickle.dumps(s))
        assert t.__getstate__()["opts"]["access"] == used
        assert sampler_triples(t) == want


def test_dataloader_workers_over_a_pread_corpus(samples):
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    from docdex.torch import CorpusDataset
    path, field = samples["trec"]
    c = docdex.Corpus(path, field=field, access="pread")
    want = docdex.Corpus(path, field=field).get_many_positions(range(len(c)))
    ds = CorpusDataset(c)
    loader = DataLoader(ds, batch_size=7, num_workers=2, multiprocessing_context="fork",
                        collate_fn=list)
    got = [t for batch in loader for t in batch]
    assert got == want


def test_corpus_dataset_keeps_access(samples):
    pytest.importorskip("torch")
    from docdex.torch import CorpusDataset
    path, field = samples["tsv"]
    ds = CorpusDataset(docdex.Corpus(path, field=field, access="pread"))
    assert ds.corpus.access == "pread"
    assert pickle.loads(pickle.dumps(ds)).corpus.access == "pread"
