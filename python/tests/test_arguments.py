"""Arguments out of range or of the wrong type raise at once, with the
exception a Python user expects, instead of being wrapped round or taken
for something else; a failed call changes nothing."""
import os
import pickle
import shutil

import pytest

import docdex
from conftest import run


def inputs(synth):
    return {"queries": synth["q.tsv"], "qrels": synth["qrels"], "run": synth["run"]}


def sampler(synth, **o):
    return docdex.Sampler(None, ids_only=True, **{**inputs(synth), **o})


@pytest.mark.parametrize("name, value", [
    ("seed", 2**64), ("seed", -1), ("negatives", 2**32 + 1), ("negatives", 0),
    ("depth", 2**32 + 1), ("depth", (0, 3)), ("count", 2**70), ("count", -5), ("count", 0),
    ("epochs", 0), ("epochs", -1), ("start", 2**70), ("start", -1), ("rank", -1),
    ("world_size", 0), ("batch_size", 0), ("run_ratio", 2), ("margin", float("inf")),
    ("min_rel", float("nan")),
])
def test_sampler_values_out_of_range(synth, name, value):
    # Each was taken before: seed=2**64 as seed 0, negatives=2**32+1 as one,
    # count=2**70 as one epoch, count=0 as none given, start=-1 as 2**64-1.
    with pytest.raises(ValueError):
        sampler(synth, **{name: value})


@pytest.mark.parametrize("name, value", [
    ("seed", 1.5), ("count", 2.0), ("start", "1"), ("epochs", 1.0), ("negatives", True),
    ("depth", 2.5), ("depth", "3-20"),
])
def test_sampler_values_of_the_wrong_type(synth, name, value):
    with pytest.raises(TypeError):
        sampler(synth, **{name: value})


def test_sampler_takes_integers_of_any_kind(synth):
    np = pytest.importorskip("numpy")
    a = [t.n for t in sampler(synth, count=np.int64(20), depth=np.int32(5), seed=np.uint64(3))]
    b = [t.n for t in sampler(synth, count=20, depth=5, seed=3)]
    assert a == b == list(range(20))
    assert sampler(synth, depth=(np.int64(2), 5)).report()["pairs"] > 0


def test_inputs_that_do_not_go_together(synth, tmp_path):
    with pytest.raises(ValueError, match="no queries given"):
        docdex.Sampler(synth["c.tsv"], qrels=synth["qrels"], run=synth["run"])
    trip = tmp_path / "t.tsv"
    trip.write_text("".join(f"{t.qid}\t{t.pos_id}\t{t.neg_ids[0]}\n"
                            for t in sampler(synth, count=10)))
    for extra in ({"depth": 5}, {"min_rel": 2}, {"exclude_judged": True}, {"run": synth["run"]},
                  {"run_ratio": 0.3}):
        with pytest.raises(ValueError, match="a triples file is read as it is"):
            docdex.Sampler(None, ids_only=True, queries=synth["q.tsv"], triples=str(trip), **extra)


def test_rank_from_a_bad_environment(synth, monkeypatch):
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(ValueError, match=r"\$RANK is not a number: 'x'"):
        sampler(synth)


def test_triple_numbers(synth):
    s = sampler(synth, count=73)
    assert s[-73].n == 0 and s[-1].n == 72
    with pytest.raises(IndexError, match="triple number -74 out of range"):
        s[-74]
    with pytest.raises(IndexError):
        s[73]
    for bad in (1.5, "1"):
        with pytest.raises(TypeError):
            s[bad]


def test_a_failed_load_state_dict_changes_nothing(synth):
    s = sampler(synth, seed=3)
    want = [t.pos_id for t in sampler(synth, seed=3)]
    for state in ({"start": 10**9, "seed": 99}, {"start": -1}, {"start": 0, "seed": 2**64},
                  {"start": 2**64 + 5}):
        with pytest.raises((docdex.Error, ValueError)):
            s.load_state_dict(state)
        assert s.seed == 3 and s.state_dict() == {"start": 0, "seed": 3, "yielded": 0}
    assert [t.pos_id for t in pickle.loads(pickle.dumps(s))] == want
    assert [t.pos_id for t in s] == want


def test_a_closed_sampler_yields_nothing_more(synth):
    s = sampler(synth)
    next(s)
    s.close()
    with pytest.raises(ValueError, match="closed"):
        next(s)


def test_corpus_inflate_cache_out_of_range(synth):
    for bad in (-1, 2**64):
        with pytest.raises(ValueError, match="inflate_cache"):
            docdex.Corpus(synth["c.tsv"], inflate_cache=bad)
    with pytest.raises(TypeError):
        docdex.Corpus(synth["c.tsv"], inflate_cache=1.5)


def test_ids_no_record_can_have(synth):
    c = docdex.Corpus(synth["c.tsv"])
    assert 3 not in c and None not in c and "\ud800" not in c
    for read in (c.get, c.position, lambda i: c.get_many([i])):
        with pytest.raises(KeyError):
            read("\ud800")
    with pytest.raises(TypeError):
        c.get(3)


def test_a_directory_is_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError) as e:
        docdex.Corpus(str(tmp_path))
    assert e.value.errno == 21 and e.value.code == docdex.ERR_SYS


def test_the_error_that_ended_a_corpus_keeps_its_code(docdex_bin, synth, tmp_path):
    path = str(tmp_path / "k.tsv")
    shutil.copy(synth["c.tsv"], path)
    run(docdex_bin, "index", "-q", path)
    c = docdex.Corpus(path)
    os.truncate(path, 1000)
    for _ in range(2):
        with pytest.raises(docdex.Error) as e:
            c[len(c) - 1]
        assert e.value.code == docdex.ERR_STALE and e.value.errno == 0


def test_an_error_made_from_its_message_has_code_and_errno():
    # As a DataLoader re-raises a worker's exception: from its message alone.
    e = docdex.Error("a message")
    assert e.code is None and e.errno is None
    e = docdex.FileNotFoundError("a message")
    assert e.code is None and e.errno is None
    e = docdex.FileNotFoundError(2, "No such file", "x")
    assert e.errno == 2 and isinstance(e, FileNotFoundError)


def test_distributed_sampler_arguments(synth):
    torch_mod = pytest.importorskip("docdex.torch")
    import torch.utils.data
    empty = torch_mod.DistributedSampler([], num_replicas=2, rank=0)
    assert list(empty) == list(torch.utils.data.DistributedSampler([], num_replicas=2, rank=0))
    ds = torch_mod.TripleDataset(synth["c.tsv"], **inputs(synth))
    d = torch_mod.DistributedSampler(ds, num_replicas=2, rank=0)
    for bad in (lambda: d.set_epoch(-1), lambda: d.load_state_dict({"epoch": 0, "start": -5}),
                lambda: d.load_state_dict({"epoch": -1, "start": 0}), lambda: d.state_dict(-5)):
        with pytest.raises(ValueError):
            bad()
    assert (d.epoch, d.start) == (0, 0)
    batch = torch_mod.collate_triples(list(sampler(synth, count=3, negatives=2)))
    assert batch["docs"] is None and batch["group"] == 3
