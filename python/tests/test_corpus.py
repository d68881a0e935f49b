"""docdex.Corpus against `docdex get`, byte for byte, on every sample."""
import os
import random

import pytest

import docdex
from conftest import run


def cli_ids(docdex_bin, path):
    """The ids in corpus order, as `docdex get --position --format tsv` gives them."""
    n = 0
    while run(docdex_bin, "get", "--position", path, str(n), check=False).returncode == 0:
        n = n * 2 + 1 if n < 4096 else n + 1
    lo, hi = n // 2, n  # the count lies in (lo, hi]: position lo exists, hi not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if run(docdex_bin, "get", "--position", path, str(mid), check=False).returncode == 0:
            lo = mid
        else:
            hi = mid
    out = run(docdex_bin, "get", "--position", "--format", "tsv", path,
              *map(str, range(hi))).stdout
    return [line.split(b"\t", 1)[0] for line in out.split(b"\n")[:-1]]


def cli_raw(docdex_bin, path, keys, field=None, position=False):
    """What `docdex get` prints for keys: each record (or fields) and a newline."""
    args = ["get"] + (["--field", field] if field else []) + (["--position"] if position else [])
    return run(docdex_bin, *args, path, *keys).stdout


def joined(texts):
    return b"".join(t + b"\n" for t in texts)


def test_len_ids(docdex_bin, sample):
    _, path, _ = sample
    want = cli_ids(docdex_bin, path)
    with docdex.Corpus(path, bytes=True) as c:
        assert len(c) == len(want)
        assert list(c.ids()) == want
        assert list(c) == want
        assert list(reversed(c)) == want[::-1]  # the ids, as iter(c) and reversed(dict)
        it = reversed(c)
        next(it)
        assert it.__length_hint__() == len(want) - 1
        assert [c.id(i) for i in range(len(c))] == want
        assert c.id(-1) == want[-1]
        for bad in (len(want), -len(want) - 1):
            with pytest.raises(IndexError):
                c.id(bad)
    with docdex.Corpus(path) as c:
        assert c.id(0) == want[0].decode()
        assert list(c) == [i.decode() for i in want]
        assert all(i.decode() in c for i in want)
        assert "no such id" not in c and b"no such id" not in c


def test_get_each(docdex_bin, sample):
    _, path, _ = sample
    with docdex.Corpus(path) as c:
        ids = list(c)
        got = [c.get(i, bytes=True) for i in ids]
        assert joined(got) == cli_raw(docdex_bin, path, ids)
        # str: the same bytes, decoded
        assert [c.get(i) for i in ids] == [g.decode("utf-8", "surrogateescape") for g in got]
        # ids as bytes find the same records
        assert [c.get(i.encode(), bytes=True) for i in ids] == got


def test_get_many(docdex_bin, sample):
    _, path, _ = sample
    with docdex.Corpus(path, bytes=True) as c:
        ids = list(c)
        order = ids[::-1] + ids[: len(ids) // 2] + ids[:1] * 3
        random.Random(7).shuffle(order)
        got = c.get_many(order)
        assert isinstance(got, list) and len(got) == len(order)
        assert joined(got) == cli_raw(docdex_bin, path, [i.decode() for i in order])
        assert c.get_many(iter(order[:5])) == got[:5]  # any iterable
        assert c.get_many([]) == []
        assert c.get_many(order[:3], bytes=False) == [g.decode("utf-8", "surrogateescape") for g in got[:3]]


def test_positions(docdex_bin, sample):
    _, path, _ = sample
    with docdex.Corpus(path, bytes=True) as c:
        n = len(c)
        pos = list(range(n)) + [n - 1, 0, n // 2]
        random.Random(3).shuffle(pos)
        want = cli_raw(docdex_bin, path, list(map(str, pos)), position=True)
        assert joined(c.get_many_positions(pos)) == want
        assert joined([c[p] for p in pos]) == want
        assert c[-1] == c[n - 1] and c[-n] == c[0]
        assert c.get_many_positions([-1, -n]) == [c[n - 1], c[0]]
        assert c.get_many_positions([]) == []


def test_positions_of_ids(sample):
    _, path, _ = sample
    with docdex.Corpus(path) as c:
        ids = list(c)
        assert c.positions(ids) == list(range(len(ids)))
        assert [c.position(i) for i in ids] == list(range(len(ids)))
        order = ids[::-3] + ids[:2]
        assert c.positions(order) == [ids.index(i) for i in order]
        assert c.positions(iter(i.encode() for i in order)) == c.positions(order)  # bytes, any iterable
        assert c.positions([]) == []
        assert all(c[c.position(i)] == c.get(i) for i in ids[:20])
        with pytest.raises(KeyError) as e:
            c.positions([ids[0], "no such id", ids[1]])
        assert e.value.args == ("no such id",)
        with pytest.raises(KeyError):
            c.position(b"no such id")
        with pytest.raises(TypeError, match="sequence of ids"):
            c.positions(ids[0])


def test_slices(sample):
    _, path, _ = sample
    with docdex.Corpus(path, bytes=True) as c:
        n = len(c)
        every = [c[p] for p in range(n)]
        for s in (slice(None), slice(1, 3), slice(-5, None), slice(None, None, -1), slice(n, 2, -3),
                  slice(2, 2), slice(-10 * n, 10 * n, 7), slice(None, None, 2)):
            assert c[s] == every[s], s
        assert c[True] == every[1]  # an int of another type, as a list takes it
        for bad in ("0", 1.0, None, (0, 1)):
            with pytest.raises(TypeError, match="integers or slices"):
                c[bad]
        for bad in (n, -n - 1, 2**70):
            with pytest.raises(IndexError):
                c[bad]
    with docdex.Corpus(path) as c:
        assert c[:3] == [t.decode("utf-8", "surrogateescape") for t in every[:3]]
    with pytest.raises(ValueError, match="closed"):
        c[:1]


def test_slice_longer_than_a_run(tmp_path, docdex_bin):
    """A slice is read 1,024 positions at a time: one of several runs, and
    a step that crosses them, against the same reads one at a time."""
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{i}\ttext of {i}\n" for i in range(2500)))
    run(docdex_bin, "index", "-q", str(path))
    with docdex.Corpus(str(path)) as c:
        every = [c[p] for p in range(len(c))]
        assert c[:] == every
        assert c[::-3] == every[::-3]
        assert c[1000:2100:2] == every[1000:2100:2]


def test_fields(docdex_bin, sample):
    _, path, field = sample
    with docdex.Corpus(path, field=field, bytes=True) as c:
        assert c.field == field
        ids = list(c)
        want = cli_raw(docdex_bin, path, [i.decode() for i in ids], field=field)
        assert joined(c.get_many(ids)) == want
        assert joined([c.get(i) for i in ids]) == want
        pos = list(range(len(c)))[::-1]
        assert joined(c.get_many_positions(pos)) == cli_raw(
            docdex_bin, path, list(map(str, pos)), field=field, position=True)


def test_tsv_columns_by_number(docdex_bin, samples):
    path, _ = samples["tsv"]
    with docdex.Corpus(path, field="2,1", bytes=True) as c:
        ids = list(c)[:10]
        assert joined(c.get_many(ids)) == cli_raw(
            docdex_bin, path, [i.decode() for i in ids], field="2,1")


def test_open_by_index(samples):
    path, _ = samples["jsonl-bgzf"]
    with docdex.Corpus(path) as a, docdex.Corpus(path + ".ddx") as b:
        assert len(a) == len(b) and a[5] == b[5] and list(a) == list(b)


def test_pathlike_and_attributes(samples):
    import pathlib
    path, _ = samples["tsv"]
    c = docdex.Corpus(pathlib.Path(path))
    assert c.path == path and c.field is None and c.bytes is False and not c.closed
    assert isinstance(c[0], str) and isinstance(next(iter(c)), str)
    assert path in repr(c)
    c.close()
    c.close()
    assert c.closed
    with pytest.raises(ValueError):
        c[0]
    with pytest.raises(ValueError):
        len(c)
    with pytest.raises(ValueError):
        c.get("0")


def test_surrogateescape(tmp_path, docdex_bin):
    path = str(tmp_path / "latin1.tsv")
    with open(path, "wb") as f:
        f.write(b"1\tcaf\xe9 au lait\n2\tna\xefve\n")
    run(docdex_bin, "index", "-q", path)
    with docdex.Corpus(path, field="text") as c:
        s = c.get("1")
        assert s.encode("utf-8", "surrogateescape") == b"caf\xe9 au lait"
        assert c.get("2", bytes=True) == b"na\xefve"


def test_docstrings():
    assert docdex.__doc__ and docdex.Corpus.__doc__ and docdex.Error.__doc__
    for name in ("get", "get_many", "get_many_positions", "ids", "close", "__reduce__"):
        assert getattr(docdex.Corpus, name).__doc__, name
    assert docdex.__version__ == docdex.library_version
    assert os.path.exists(os.path.join(os.path.dirname(docdex.__file__), "__init__.pyi"))


def test_arguments(samples):
    path, _ = samples["tsv"]
    with docdex.Corpus(path) as c:
        first = next(iter(c))
        doc = c.get(first)
        assert c.get(id=first) == doc
        assert c.get(first, bytes=True) == c.get(id=first, bytes=True) == doc.encode()
        assert c.get(first, bytes=None) == doc
        assert c.get_many(ids=[first]) == [doc]
        assert c.get_many_positions(positions=[0], bytes=True) == [doc.encode()]
        for call in (lambda: c.get(), lambda: c.get(first, first), lambda: c.get(first, text=1),
                     lambda: c.get(first, id=first), lambda: c.get(7), lambda: c.get_many([first, 7]),
                     lambda: c.get_many_positions([0], ids=[0])):
            with pytest.raises(TypeError):
                call()


def test_ids_of_every_kind(tmp_path, docdex_bin):
    """Ids as ASCII str, other str, surrogate-escaped str and bytes, mixed in
    one call, find the same records; KeyError names the id as given."""
    path = str(tmp_path / "ids.tsv")
    recs = [(b"a1", b"plain"), (b"caf\xc3\xa9", b"caf\xc3\xa9 cr\xc3\xa8me"), (b"x\xff", b"latin \xe9"),
            (b"\xe2\x82\xac", b"euro")]
    with open(path, "wb") as f:
        f.writelines(i + b"\t" + t + b"\n" for i, t in recs)
    run(docdex_bin, "index", "-q", path)
    with docdex.Corpus(path, bytes=True) as c:
        as_str = [i.decode("utf-8", "surrogateescape") for i, _ in recs]
        want = [i + b"\t" + t for i, t in recs]
        assert c.get_many(as_str) == want
        assert c.get_many([i for i, _ in recs]) == want
        mixed = [as_str[0], recs[1][0], as_str[2], as_str[3], recs[0][0]]
        assert c.get_many(mixed) == [want[0], want[1], want[2], want[3], want[0]]
        assert [c.get(i) for i in as_str] == want
        with pytest.raises(KeyError) as e:
            c.get_many([as_str[1], "caf\u00e9x", as_str[0]])
        assert e.value.args == ("caf\u00e9x",)


def test_batches_reuse_nothing(tmp_path, docdex_bin):
    """Documents from one call stay as they were after the next ones, large
    (a buffer grown past a few MiB) or small, ASCII or not."""
    path = str(tmp_path / "sizes.tsv")
    big = b"x" * (6 << 20)
    recs = [(b"%d" % i, b"t%d \xc3\xa9" % i if i % 3 else b"t%d" % i) for i in range(200)]
    recs[57] = (b"57", big)
    with open(path, "wb") as f:
        f.writelines(i + b"\t" + t + b"\n" for i, t in recs)
    run(docdex_bin, "index", "-q", path)
    with docdex.Corpus(path, field="text") as c:
        want = [t.decode() for _, t in recs]
        order = list(range(200)) * 2
        random.Random(3).shuffle(order)
        first = c.get_many_positions(order)
        small = c.get_many(["1", "2", "3"])
        again = c.get_many_positions(order[::-1])
        assert first == [want[p] for p in order]
        assert small == want[1:4]
        assert again == [want[p] for p in order[::-1]]
        assert c[57] == big.decode() and c[58] == want[58]
