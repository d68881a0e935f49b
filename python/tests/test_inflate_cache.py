"""Corpus(inflate_cache=...): what one process inflated, another reads from
the cache without inflating it again, in worker processes as a DataLoader
makes them, with the documents unchanged."""
import multiprocessing
import os
import pickle
import subprocess
import warnings

import pytest

import docdex
from conftest import TOP, run

CACHE = 64 << 20


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "shm"
    d.mkdir()
    monkeypatch.setenv("DOCDEX_CACHE_DIR", str(d))
    return d


@pytest.fixture(scope="module", params=["gzip", "bgzf"])
def compressed(request, docdex_bin, tmp_path_factory):
    """5,000 passages, gzip with points every 64 KiB or BGZF: (path, ids)."""
    d = tmp_path_factory.mktemp("cache")
    plain = str(d / "c.tsv")
    subprocess.run([os.path.join(TOP, "tests", "dx-synth"), "--count", "5000", "-o", plain],
                   check=True, stdout=subprocess.DEVNULL)
    if request.param == "gzip":
        subprocess.run(["gzip", "-k", plain], check=True)
        path = plain + ".gz"
        run(docdex_bin, "index", "-q", "--span", "64K", path)
    else:
        path = str(d / "c.bgz")
        run(docdex_bin, "index", "-q", "--bgzf", path, plain)
    with open(plain, encoding="utf-8") as f:
        ids = [line.split("\t", 1)[0] for line in f]
    return path, ids


def test_a_second_handle_inflates_nothing(compressed, cache_dir):
    path, ids = compressed
    want = docdex.Corpus(path).get_many(ids)
    first = docdex.Corpus(path, inflate_cache=CACHE)
    assert first.get_many(ids) == want
    assert first.inflated > 0
    second = docdex.Corpus(path, inflate_cache=CACHE)
    assert second.get_many(ids[::-1]) == want[::-1]
    assert second.inflated == 0
    assert len(os.listdir(cache_dir)) == 1
    first.close()
    second.close()
    # Its last user gone, the cache is too.
    assert os.listdir(cache_dir) == []


def _read_all(args):
    corpus, ids = args
    docs = corpus.get_many(ids)
    return docs, corpus.inflated


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_worker_processes_share_it(compressed, cache_dir, method):
    """Workers one after the other (so that none races another to a
    stretch): the first inflates, the rest read what it left."""
    path, ids = compressed
    want = docdex.Corpus(path).get_many(ids)
    c = docdex.Corpus(path, inflate_cache=CACHE)
    ctx = multiprocessing.get_context(method)
    inflated = []
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        for _ in range(3):
            docs, n = pool.apply(_read_all, ((c, ids),))
            assert docs == want
            inflated.append(n)
    assert inflated[0] > 0 and inflated[1:] == [0, 0]
    c.close()


def test_pickle_keeps_the_cache(compressed, cache_dir):
    path, ids = compressed
    c = docdex.Corpus(path, inflate_cache=CACHE)
    c.get_many(ids[:100])
    d = pickle.loads(pickle.dumps(c))
    assert d.get_many(ids[:100]) == c.get_many(ids[:100])
    assert d.inflated == 0


def test_too_small_raises_and_damaged_in_use_warns(compressed, cache_dir):
    path, ids = compressed
    with pytest.raises(docdex.Error, match="cannot hold one stretch"):
        docdex.Corpus(path, inflate_cache=4096)
    holder = docdex.Corpus(path, inflate_cache=CACHE)
    (name,) = os.listdir(cache_dir)
    with open(cache_dir / name, "r+b") as f:
        f.write(b"XXXXXXXX")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = docdex.Corpus(path, inflate_cache=CACHE)
    assert any("reading without it" in str(x.message) for x in w)
    assert c.get_many(ids[:50]) == docdex.Corpus(path).get_many(ids[:50])
    holder.close()


def test_a_damaged_byte_misses_only_the_records_of_its_kib(compressed, cache_dir):
    """A hit checks the CRCs of the KiB pieces its bytes lie in, not of its
    whole stretch: a byte damaged in the cache makes a miss of the records
    beside it alone, which are inflated again, and right."""
    path, ids = compressed
    want = dict(zip(ids, docdex.Corpus(path).get_many(ids)))
    holder = docdex.Corpus(path, inflate_cache=CACHE)
    holder.get_many(ids)
    (name,) = os.listdir(cache_dir)
    data = (cache_dir / name).read_bytes()
    # Where each record's text lies in the file (not found: one that
    # spans two BGZF blocks, whose parts lie in two slots).
    place = {i: data.find(want[i].encode()) for i in ids}
    k = next(k for k in range(len(ids) // 2, len(ids)) if place[ids[k]] > 0)
    hit = place[ids[k]] + len(want[ids[k]]) // 2
    with open(cache_dir / name, "r+b") as f:
        f.seek(hit)
        f.write(bytes([data[hit] ^ 0xFF]))
    # A read takes the newline after its record too.
    far = [i for i in ids[k - 60:k + 60] if place[i] > 0 and abs(place[i] - hit) < 16384 and
           (place[i] + len(want[i]) + 1 <= hit - 1024 or place[i] >= hit + 1024)]
    assert len(far) >= 10
    second = docdex.Corpus(path, inflate_cache=CACHE)
    assert second.get_many(far) == [want[i] for i in far]
    assert second.inflated == 0
    assert second.get(ids[k]) == want[ids[k]]
    assert second.inflated > 0
    second.close()
    holder.close()


def _as_list(batch):
    return batch


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_dataloader_workers_through_the_cache(compressed, cache_dir, method):
    """A CorpusDataset keeps the Corpus's cache; DataLoader workers read
    through it, and the cache is gone once the corpus and workers are."""
    torch = pytest.importorskip("torch")
    from docdex.torch import CorpusDataset
    path, ids = compressed
    want = docdex.Corpus(path).get_many_positions(range(len(ids)))
    ds = CorpusDataset(docdex.Corpus(path, inflate_cache=CACHE))
    assert ds.corpus.inflate_cache == CACHE
    loader = torch.utils.data.DataLoader(ds, batch_size=64, num_workers=2,
                                         multiprocessing_context=method,
                                         collate_fn=_as_list)
    got = [t for batch in loader for t in batch]
    assert got == want
    del loader
    ds.corpus.close()
    assert os.listdir(cache_dir) == []
