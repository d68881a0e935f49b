"""docdex.torch: the datasets, the distributed sampler against torch's, a
DataLoader with workers, resume, and a two-rank DDP run over gloo."""
import json
import os
import socket
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")

import docdex  # noqa: E402
from conftest import PYTHON_DIR  # noqa: E402
from docdex.torch import (  # noqa: E402
    CorpusDataset, DistributedSampler, TripleDataset, collate_triples)
from torch.utils.data import DataLoader  # noqa: E402


def triples(synth, **o):
    o.setdefault("negatives", 2)
    o.setdefault("seed", 5)
    return TripleDataset(synth["c.tsv"], queries=synth["q.tsv"], qrels=synth["qrels"],
                         run=synth["run"], **o)


def test_corpus_dataset(samples):
    path, field = samples["jsonl-bgzf"]
    c = docdex.Corpus(path, field=field)
    ds = CorpusDataset(c)
    assert len(ds) == len(c)
    assert [ds[i] for i in range(len(ds))] == c.get_many_positions(range(len(c)))
    assert ds.__getitems__([3, 1]) == [c[3], c[1]]
    with_ids = CorpusDataset(path, field, ids=True, bytes=True)
    ids = list(c)
    assert with_ids[2] == (ids[2].encode(), docdex.Corpus(path, field=field, bytes=True)[2])
    assert with_ids.__getitems__([4, 0]) == [with_ids[4], with_ids[0]]


def test_subset_by_ids(samples):
    """Some documents by id, through positions: a Subset in a DataLoader
    with workers gives what get_many gives for the same ids."""
    path, field = samples["tsv-gzip"]
    c = docdex.Corpus(path, field=field)
    ids = list(c)[::3][::-1]
    subset = torch.utils.data.Subset(CorpusDataset(c), c.positions(ids))
    loader = DataLoader(subset, batch_size=4, num_workers=2, collate_fn=list)
    assert [doc for batch in loader for doc in batch] == c.get_many(ids)


@pytest.mark.parametrize("n", [1, 7, 12, 13])
@pytest.mark.parametrize("world", [1, 2, 3, 4])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("drop_last", [False, True])
def test_same_indices_as_torch(n, world, shuffle, drop_last):
    data = list(range(n))
    for rank in range(world):
        ours = DistributedSampler(data, world, rank, shuffle=shuffle, seed=11, drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(data, world, rank, shuffle=shuffle, seed=11,
                                                     drop_last=drop_last)
        for epoch in range(3):
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs)
            assert len(ours) == len(theirs)


@pytest.mark.parametrize("shuffle", [True, False])
def test_same_indices_as_torch_over_several_slices(shuffle):
    """A share longer than the slices the sampler yields from (65,536):
    the same indices as torch's, and a resume from past the first slice."""
    data = range(200_003)
    for rank in range(3):
        theirs = list(torch.utils.data.DistributedSampler(data, 3, rank, shuffle=shuffle, seed=5))
        ours = DistributedSampler(data, 3, rank, shuffle=shuffle, seed=5)
        assert len(theirs) > 65_536 and list(ours) == theirs
        it = iter(ours)
        head = [next(it) for _ in range(66_000)]
        state = ours.state_dict()
        assert head == theirs[:66_000] and state == {"epoch": 0, "start": 198_000, "seed": 5}


def test_rank_from_environment(monkeypatch):
    monkeypatch.setenv("RANK", "2")
    monkeypatch.setenv("WORLD_SIZE", "3")
    s = DistributedSampler(list(range(9)), shuffle=False)
    assert (s.rank, s.num_replicas) == (2, 3) and list(s) == [2, 5, 8]
    with pytest.raises(ValueError):
        DistributedSampler(list(range(9)), num_replicas=2, rank=2)


def shard_lists(data, world, **o):
    return [list(DistributedSampler(data, world, r, **o)) for r in range(world)]


@pytest.mark.parametrize("before,after", [(4, 3), (2, 5), (3, 3)])
def test_resume_on_another_world_size(before, after):
    n, taken = 101, 9
    data = list(range(n))
    first = []
    state = None
    for r in range(before):
        s = DistributedSampler(data, before, r, seed=4)
        s.set_epoch(1)
        it = iter(s)
        first += [next(it) for _ in range(taken)]
        state = s.state_dict()
        assert state == {"epoch": 1, "start": taken * before, "seed": 4}
    rest = []
    for r in range(after):
        s = DistributedSampler(data, after, r)
        s.load_state_dict(state)
        rest.append(list(s))
    assert len({len(x) for x in rest}) == 1  # equal shards
    seen = first + [i for x in rest for i in x]
    assert set(seen) == set(data)
    # Only the last shards' padding repeats an index.
    assert len(seen) - n == len(rest[0]) * after - (n - taken * before)
    # Where the first ranks stopped is the place in the same epoch order.
    s = DistributedSampler(data, 1, 0, seed=4)
    s.set_epoch(1)
    whole = list(s)
    assert sorted(first) == sorted(whole[:taken * before])
    assert [i for x in zip(*rest) for i in x][:n - taken * before] == whole[taken * before:]


def test_state_after_the_epoch():
    s = DistributedSampler(list(range(10)), 3, 1)
    list(s)
    assert s.state_dict() == {"epoch": 1, "start": 0, "seed": 0}
    s.load_state_dict(s.state_dict())
    assert len(s) == 4


def test_triple_dataset_is_the_sampler_sequence(synth):
    ds = triples(synth, epochs=2)
    assert len(ds) == 2 * ds.epoch_length
    whole = list(docdex.Sampler(synth["c.tsv"], queries=synth["q.tsv"], qrels=synth["qrels"],
                                run=synth["run"], negatives=2, seed=5, epochs=2))
    assert [ds[i] for i in range(len(ds))] == whole
    assert ds.__getitems__([5, 0, 5]) == [whole[5], whole[0], whole[5]]
    with pytest.raises(IndexError):
        ds[len(ds)]
    with pytest.raises(TypeError):
        triples(synth, rank=1)


def test_sampler_over_triples_takes_epochs_in_order(synth):
    ds = triples(synth, epochs=2)
    per = ds.epoch_length
    shards = []
    for r in range(3):
        s = DistributedSampler(ds, 3, r)
        s.set_epoch(1)
        shards.append(list(s))
    flat = [i for x in zip(*shards) for i in x]
    assert flat[:per] == list(range(per, 2 * per))
    s = DistributedSampler(ds, 1, 0)
    s.set_epoch(2)
    with pytest.raises(ValueError, match="epochs"):
        list(s)


def test_collate_triples(synth):
    ds = triples(synth, negatives=3)
    batch = collate_triples([ds[0], ds[1]])
    assert batch["group"] == 4
    assert batch["docs"] == [ds[0].pos, *ds[0].negs, ds[1].pos, *ds[1].negs]
    assert batch["query"] == [ds[0].query, ds[1].query]
    assert batch["n"].tolist() == [0, 1]


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_dataloader_with_workers(synth, method):
    ds = triples(synth, epochs=1)
    want = [ds[i] for i in range(len(ds))]
    got = []
    for r in range(2):
        s = DistributedSampler(ds, 2, r)
        loader = DataLoader(ds, batch_size=16, sampler=s, num_workers=2,
                            multiprocessing_context=method, collate_fn=collate_triples)
        for batch in loader:
            got += [want[n] for n in batch["n"].tolist()]
            assert batch["pos"] == [want[n].pos for n in batch["n"].tolist()]
            assert batch["negs"] == [want[n].negs for n in batch["n"].tolist()]
    assert {t.n for t in got} == set(range(len(ds)))
    assert len(got) == 2 * ((len(ds) + 1) // 2)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_rank_ddp(synth, tmp_path):
    """Two gloo ranks, each a DataLoader with two workers, train two epochs:
    every rank takes the same number of steps, and the ranks' triples are
    disjoint and cover each epoch."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="2",
               PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ddp_rank.py")
    outs = [str(tmp_path / f"rank{r}.json") for r in range(2)]
    # Each rank's stderr goes to a file: a rank blocked writing into a pipe
    # that nobody reads would hold the other in a collective.  A rank still
    # running after 240 s writes its threads' tracebacks there and exits
    # (ddp_rank.py), so that a hang says where it was.
    logs = [tmp_path / f"rank{r}.err" for r in range(2)]
    procs = []
    for r in range(2):
        with open(logs[r], "wb") as err:
            procs.append(subprocess.Popen([sys.executable, script, outs[r], synth["c.tsv"], synth["q.tsv"],
                                           synth["qrels"], synth["run"]],
                                          env=dict(env, RANK=str(r), LOCAL_RANK=str(r)), stderr=err))
    deadline = time.monotonic() + 300
    try:
        for p in procs:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        pass
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    said = "\n".join(f"rank {r}: {logs[r].read_text(errors='replace')}" for r in range(2))
    assert [p.returncode for p in procs] == [0, 0], said
    res = [json.load(open(o)) for o in outs]
    assert [r["rank"] for r in res] == [0, 1] and res[0]["world"] == 2
    per = res[0]["epoch_length"]
    for epoch in range(2):
        a, b = res[0]["seen"][epoch], res[1]["seen"][epoch]
        assert len(a) == len(b) == (per + 1) // 2
        want = set(range(epoch * per, (epoch + 1) * per))
        assert set(a) | set(b) == want
        if per % 2 == 0:
            assert not set(a) & set(b)
    # DDP kept the two replicas equal.
    assert res[0]["weights"] == pytest.approx(res[1]["weights"], rel=1e-9)
