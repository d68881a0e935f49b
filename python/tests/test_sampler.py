"""docdex.Sampler gives the triples that docdex sample writes."""
import json

import pytest

import docdex
from conftest import run


def inputs(synth):
    return {"queries": synth["q.tsv"], "qrels": synth["qrels"], "run": synth["run"]}


def cli_args(**o):
    """docdex sample's options for Sampler's keyword arguments o."""
    args = []
    for k, v in o.items():
        if v is None or v is False:
            continue
        flag = "--" + k.replace("_", "-")
        args += [flag] if v is True else [flag, str(v)]
    return args


def cli_jsonl(docdex_bin, synth, **o):
    p = run(docdex_bin, "sample", "--format", "jsonl", *cli_args(**inputs(synth), **o),
            synth["c.tsv"])
    out = []
    for line in p.stdout.decode().splitlines():
        j = json.loads(line)
        negs = j["neg_id"] if isinstance(j["neg_id"], list) else [j["neg_id"]]
        texts = j["neg"] if isinstance(j["neg"], list) else [j["neg"]]
        out.append((j["qid"], j["query"], j["pos_id"], j["pos"], negs, texts, j["epoch"]))
    return out


def py_triples(synth, corpus=None, **o):
    s = docdex.Sampler(corpus or synth["c.tsv"], **inputs(synth), **o)
    got = [(t.qid, t.query, t.pos_id, t.pos, t.neg_ids, t.negs, t.epoch) for t in s]
    assert len(got) == len(s)
    return got


@pytest.mark.parametrize("negatives", [1, 3])
def test_same_as_cli(docdex_bin, synth, negatives):
    o = dict(seed=7, count=300, negatives=negatives, random=True)
    want = cli_jsonl(docdex_bin, synth, **o)
    assert len(want) == 300
    assert py_triples(synth, **o) == want
    with docdex.Corpus(synth["c.tsv"]) as c:
        assert py_triples(synth, corpus=c, **o) == want


def test_options_as_cli(docdex_bin, synth):
    for margin in ("0.01%", 0.0001):
        o = dict(seed=3, epochs=2, depth="3-15", weights="rank", margin=margin,
                 exclude_judged=True, pairs="query")
        want = cli_jsonl(docdex_bin, synth, **o)
        assert want
        o["depth"] = (3, 15)
        assert py_triples(synth, **o) == want


def test_shards(docdex_bin, synth):
    for rank in (0, 1):
        o = dict(seed=1, count=201, world_size=2, rank=rank)
        want = cli_jsonl(docdex_bin, synth, **o)
        assert len(want) == 101
        assert py_triples(synth, **o) == want


def test_start_is_the_tail(docdex_bin, synth):
    whole = py_triples(synth, seed=5, count=150)
    assert py_triples(synth, seed=5, count=150, start=40) == whole[40:]
    assert cli_jsonl(docdex_bin, synth, seed=5, count=150, start=40) == whole[40:]


def test_resume_across_world_sizes(synth):
    o = dict(seed=9, count=400, drop_last=True, **inputs(synth))
    c = synth["c.tsv"]
    seen = []
    # 4 ranks take 30 steps each, then the job goes on with 2.
    states = []
    for rank in range(4):
        s = docdex.Sampler(c, rank=rank, world_size=4, **o)
        for _ in range(30):
            seen.append(next(s).n)
        states.append(s.state_dict())
    assert all(st == states[0] for st in states)
    assert states[0]["start"] == 120
    for rank in range(2):
        s = docdex.Sampler(c, rank=rank, world_size=2, **o)
        s.load_state_dict(states[0])
        assert len(s) == 140
        seen += [t.n for t in s]
    assert sorted(seen) == list(range(400))


def test_ids_only_without_corpus(docdex_bin, synth):
    p = run(docdex_bin, "sample", "--format", "ids", "--seed", "4", "--count", "120",
            "--negatives", "2", *cli_args(**inputs(synth)))
    want = [line.split("\t") for line in p.stdout.decode().splitlines()]
    s = docdex.Sampler(None, ids_only=True, seed=4, count=120, negatives=2, **inputs(synth))
    got = list(s)
    assert [[t.qid, t.pos_id, *t.neg_ids] for t in got] == want
    assert all(t.pos is None and t.negs is None for t in got)


def test_report_and_errors(synth):
    s = docdex.Sampler(synth["c.tsv"], count=10, **inputs(synth))
    r = s.report()
    assert r["queries"] == 100 and r["shard"] == 10 and r["total"] == 10
    with pytest.raises(docdex.Error) as e:
        docdex.Sampler(synth["c.tsv"], queries=synth["q.tsv"], qrels=synth["qrels"] + ".none",
                       run=synth["run"])
    assert "qrels.none" in str(e.value)
    with pytest.raises(ValueError):
        docdex.Sampler(None, qrels=synth["qrels"], run=synth["run"])


def test_shard_from_environment(synth, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    s = docdex.Sampler(synth["c.tsv"], count=30, **inputs(synth))
    assert (s.rank, s.world_size, len(s)) == (1, 3, 10)
    assert [t.n for t in s] == list(range(1, 30, 3))


def test_triples_file(docdex_bin, synth, tmp_path):
    trip = tmp_path / "triples.tsv"
    trip.write_bytes(run(docdex_bin, "sample", "--format", "ids", "--count", "50",
                         *cli_args(**inputs(synth))).stdout)
    p = run(docdex_bin, "sample", "--format", "jsonl", "--queries", synth["q.tsv"],
            "--triples", str(trip), "--seed", "2", synth["c.tsv"])
    want = [json.loads(line) for line in p.stdout.decode().splitlines()]
    s = docdex.Sampler(synth["c.tsv"], queries=synth["q.tsv"], triples=str(trip), seed=2)
    assert len(s) == 0  # not known in advance
    got = [{"qid": t.qid, "query": t.query, "pos_id": t.pos_id, "pos": t.pos,
            "neg_id": t.neg_ids[0], "neg": t.negs[0], "epoch": t.epoch} for t in s]
    assert got == want and len(got) == 50
    assert s.state_dict()["start"] == 50


def test_triples_file_shards_are_equal(docdex_bin, synth, tmp_path):
    # 50 lines on 3 ranks were 17, 17 and 16 triples, len() saying 17 with
    # count=: DDP's ranks took unequal steps.  Padded with the lines from
    # start, as docdex sample pads them; with drop_last, 16 each.
    trip = tmp_path / "triples.tsv"
    trip.write_bytes(run(docdex_bin, "sample", "--format", "ids", "--count", "50",
                         *cli_args(**inputs(synth))).stdout)
    lines = [line.split("\t")[:2] for line in trip.read_text().splitlines()]
    for count in (None, 50):
        for drop_last in (False, True):
            shards = []
            for rank in range(3):
                s = docdex.Sampler(None, ids_only=True, queries=synth["q.tsv"], triples=str(trip),
                                   count=count, rank=rank, world_size=3, drop_last=drop_last)
                got = [[t.qid, t.pos_id] for t in s]
                if count:
                    assert len(s) == len(got)
                shards.append(got)
            want = 16 if drop_last else 17
            assert [len(g) for g in shards] == [want] * 3
            assert [g[k] for k in range(16) for g in shards] == lines[:48]
            if not drop_last:
                assert [g[16] for g in shards] == [lines[48], lines[49], lines[0]]
