"""Pickling, worker processes (fork and spawn), threads sharing a corpus,
torch's DataLoader, and a loop that must not leak."""
import multiprocessing
import pickle
import random
import threading

import pytest

import docdex


def test_pickle_round_trip(samples):
    path, field = samples["jsonl-bgzf"]
    for kw in ({}, {"field": field}, {"field": field, "bytes": True}):
        c = docdex.Corpus(path, **kw)
        d = pickle.loads(pickle.dumps(c))
        assert d is not c and type(d) is docdex.Corpus
        assert (d.path, d.field, d.bytes) == (c.path, c.field, c.bytes)
        assert list(d) == list(c) and d.get_many_positions(range(len(c))) == c.get_many_positions(range(len(c)))
        c.close()
        assert not d.closed and d[0]  # a handle of its own


def _read(args):
    corpus, positions = args
    return corpus.get_many_positions(positions)


_inherited = None


def _read_inherited(positions):
    return _inherited.get_many_positions(positions)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_worker_processes(samples, method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} here")
    path, field = samples["tsv-gzip"]
    c = docdex.Corpus(path, field=field)
    n = len(c)
    chunks = [list(range(i, min(n, i + 7))) for i in range(0, n, 7)]
    want = [c.get_many_positions(ch) for ch in chunks]
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(2) as pool:
        assert pool.map(_read, [(c, ch) for ch in chunks]) == want
    if method == "fork":
        global _inherited
        _inherited = c  # used by the children through fork, not pickled
        with ctx.Pool(2) as pool:
            assert pool.map(_read_inherited, chunks) == want
        _inherited = None


def test_threads_share_a_corpus(samples):
    path, _ = samples["jsonl-gzip"]
    c = docdex.Corpus(path, bytes=True)
    ids = list(c)
    want = dict(zip(ids, c.get_many(ids)))
    errors = []

    def work(seed):
        r = random.Random(seed)
        try:
            for _ in range(40):
                batch = r.sample(ids, 16)
                if c.get_many(batch) != [want[i] for i in batch]:
                    errors.append("get_many")
                i = r.choice(ids)
                if c.get(i) != want[i] or c[ids.index(i)] != want[i]:
                    errors.append("get")
                if sum(1 for _ in c.ids()) != len(ids):
                    errors.append("ids")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


class _Docs:
    """A map-style dataset over a Corpus, as a training script would have."""

    def __init__(self, corpus):
        self.corpus = corpus

    def __len__(self):
        return len(self.corpus)

    def __getitem__(self, i):
        return self.corpus[i]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_torch_dataloader(samples, method):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    path, field = samples["jsonl-bgzf"]
    c = docdex.Corpus(path, field=field)
    loader = DataLoader(_Docs(c), batch_size=8, num_workers=2, shuffle=False,
                        multiprocessing_context=method, collate_fn=list)
    got = [doc for batch in loader for doc in batch]
    assert got == c.get_many_positions(range(len(c)))
    del torch


class _Missing:
    """A dataset whose workers open a corpus that is not there."""

    def __init__(self, path):
        self.path = path

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return docdex.Corpus(self.path)[i]


def test_torch_worker_error_keeps_its_class(tmp_path):
    """A worker's docdex.FileNotFoundError reaches the main process as one:
    DataLoader sends its class by name and makes it again there."""
    pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    loader = DataLoader(_Missing(str(tmp_path / "gone.tsv")), num_workers=1,
                        multiprocessing_context="fork")
    with pytest.raises(FileNotFoundError) as e:
        list(loader)
    assert type(e.value) is docdex.FileNotFoundError and "gone.tsv" in str(e.value)


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_no_leak(samples):
    path, field = samples["tsv"]
    c = docdex.Corpus(path, field=field)
    ids = list(c)
    n = len(ids)

    def loop(k):
        for i in range(k):
            c.get(ids[i % n])
            if i % 50 == 0:
                c.get_many(ids[:8])
                c[i % n]
                c[i % n::-3]
                c.positions(ids[:8])
                c.position(ids[i % n])
                try:
                    c.get("missing")
                except KeyError:
                    pass

    loop(20000)  # warm up: allocator arenas, caches
    before = _rss_bytes()
    loop(1000000)
    after = _rss_bytes()
    assert after - before < 4 << 20, (before, after)
