"""Documents as memoryviews (view=True): the same bytes as bytes=True, read
out of a plain file's mapping without a copy, and the mapping kept while a
view of it lives."""
import gc
import os
import pickle
import random
import sys
import threading
import time

import pytest

import docdex
from conftest import run


def mapped(path):
    """How many mappings of path this process has."""
    real = os.path.realpath(path)
    with open("/proc/self/maps") as f:
        return sum(line.rstrip("\n").endswith(" " + real) for line in f)


def zero_copy(v):
    """Whether view v lies in a corpus's mapping (a copy's base is bytes)."""
    return not isinstance(v.obj, bytes)


def record(i):
    """Record i of numbered()'s corpus (i an int or its id)."""
    return b"%s\ttext of %s" % ((str(i).encode(),) * 2)


def numbered(tmp_path, docdex_bin):
    """A plain corpus of 1,000 records, ids 0 to 999, indexed: its path."""
    path = str(tmp_path / "c.tsv")
    with open(path, "wb") as f:
        f.writelines(record(i) + b"\n" for i in range(1000))
    run(docdex_bin, "index", "-q", path)
    return path


def test_views_hold_the_bytes(sample):
    name, path, field = sample
    plain = not name.endswith(("gzip", "bgzf"))
    for f in (None, field):
        # access="mmap": "auto" may read a corpus it finds out of memory
        # with pread, into copies.
        with docdex.Corpus(path, field=f, bytes=True, access="mmap") as c:
            ids = list(c)
            want = c.get_many(ids)
            views = c.get_many(ids, view=True)
            assert all(isinstance(v, memoryview) and v.readonly and v.format == "B" for v in views)
            assert [bytes(v) for v in views] == want
            assert [bytes(c.get(i, view=True)) for i in ids] == want
            pos = list(range(len(c)))[::-1]
            assert [bytes(v) for v in c.get_many_positions(pos, view=True)] == want[::-1]
            # Whole records of a plain file are never copied; decompressed
            # ones always are.
            if f is None and plain:
                assert all(zero_copy(v) for v in views)
            elif not plain:
                assert not any(zero_copy(v) for v in views)
        with docdex.Corpus(path, field=f, view=True) as c:
            assert c.view and isinstance(c[0], memoryview) and bytes(c[-1]) == want[-1]
            assert [bytes(v) for v in c[1::2]] == want[1::2]


def test_view_is_the_file(tmp_path, docdex_bin):
    """A view reads the file's pages themselves: a byte written into the
    file in place shows in it, not in a copy, nor in a view read with
    pread (a copy too)."""
    path = str(tmp_path / "c.tsv")
    with open(path, "wb") as f:
        f.write(b"1\tfirst text\n2\tsecond text\n3\tthird\n")
    run(docdex_bin, "index", "-q", path)
    with docdex.Corpus(path, access="mmap") as c, docdex.Corpus(path, access="pread") as p:
        v, copy, pv = c.get("2", view=True), c.get("2", bytes=True), p.get("2", view=True)
        t = c.get_many(["2"], view=True)[0]
        assert zero_copy(v) and zero_copy(t) and not zero_copy(pv)
        assert bytes(v) == copy == bytes(pv) == b"2\tsecond text"
        fd = os.open(path, os.O_WRONLY)
        try:
            os.pwrite(fd, b"S", len(b"1\tfirst text\n2\t"))
        finally:
            os.close(fd)
        assert bytes(v) == bytes(t) == b"2\tSecond text"
        assert copy == bytes(pv) == b"2\tsecond text"


def test_views_outlive_close(tmp_path, docdex_bin):
    """Closing a corpus ends it for reads; its mapping stays while a view
    of it lives and goes with the last one."""
    path = numbered(tmp_path, docdex_bin)
    c = docdex.Corpus(path, access="mmap")
    views = [c.get(str(i), view=True) for i in range(0, 1000, 7)]
    many = c.get_many_positions(range(1000), view=True)
    assert mapped(path) == 1
    c.close()
    assert c.closed and mapped(path) == 1
    with pytest.raises(ValueError):
        c.get("1", view=True)
    assert [bytes(v) for v in views] == [record(i) for i in range(0, 1000, 7)]
    del views
    assert mapped(path) == 1
    sub = many[500][4:8]  # a slice of a view holds the mapping too
    del many
    gc.collect()
    assert mapped(path) == 1 and bytes(sub) == b"text"
    del sub
    assert mapped(path) == 0

    # The corpus dropped rather than closed: the same.
    c = docdex.Corpus(path, access="mmap")
    v = c.get("3", view=True)
    del c
    gc.collect()
    assert bytes(v) == record(3) and mapped(path) == 1
    del v
    assert mapped(path) == 0

    # Many views made and dropped leave nothing behind: closing unmaps.
    c = docdex.Corpus(path, access="mmap")
    for i in range(20000):
        c.get(str(i % 1000), view=True)
        if i % 100 == 0:
            c.get_many(["1", "2"], view=True)
    c.close()
    assert mapped(path) == 0


def test_threads_read_views_while_one_closes(tmp_path, docdex_bin):
    """Eight threads read views while another closes the corpus: each
    view read holds its record, each thread then meets ValueError, and the
    file stays mapped until the views kept are dropped."""
    path = numbered(tmp_path, docdex_bin)
    c = docdex.Corpus(path, access="mmap")
    ids = [str(i) for i in range(1000)]
    kept, errors, closed = [], [], []

    def work(seed):
        r = random.Random(seed)
        try:
            while True:
                batch = r.sample(ids, 16)
                try:
                    views = c.get_many(batch, view=True)
                except ValueError:
                    closed.append(seed)
                    return
                if [bytes(v) for v in views] != [record(i) for i in batch]:
                    errors.append(batch)
                kept.append((batch[0], views[0]))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    while len(kept) < 2000:
        time.sleep(0.001)
    c.close()
    for t in threads:
        t.join()
    assert errors == [] and sorted(closed) == list(range(8))
    assert mapped(path) == 1
    assert all(bytes(v) == record(i) for i, v in kept)
    del kept
    gc.collect()
    assert mapped(path) == 0


def test_collections_while_views_are_made(tmp_path, docdex_bin):
    """A view is an object the garbage collector tracks, so making views
    may run a collection, and a finalizer may read the corpus: the views
    are made after the corpus's lock is let go, so that read is served
    (made under the lock, it waited for the lock forever)."""
    path = numbered(tmp_path, docdex_bin)
    c = docdex.Corpus(path, access="mmap")
    read_in_del, views = [], []

    class Cycle:
        def __init__(self):
            self.me = self  # garbage only the collector finds

        def __del__(self):
            read_in_del.append(c.get("7", bytes=True))

    def read():
        views.extend(c.get_many([str(i) for i in range(1000)], view=True))

    threshold = gc.get_threshold()
    gc.collect()
    gc.set_threshold(200)
    try:
        for _ in range(20):
            Cycle()
        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(30)
    finally:
        gc.set_threshold(*threshold)
    assert not t.is_alive(), "get_many(view=True) waited on its own lock"
    assert read_in_del == [record(7)] * 20
    assert [bytes(v) for v in views] == [record(i) for i in range(1000)]


def test_view_fields(tmp_path, docdex_bin):
    """A field that stands in the record as it is (a TSV column, a JSON
    string without escapes) is viewed in place; a decoded or joined one
    comes as a copy, with the same bytes as bytes=True."""
    path = str(tmp_path / "c.jsonl")
    with open(path, "wb") as f:
        f.write(b'{"_id": "a", "title": "T", "text": "no escapes"}\n'
                b'{"_id": "b", "title": "U", "text": "a \\"quote\\" and \\u00e9"}\n')
    run(docdex_bin, "index", "-q", path)
    with docdex.Corpus(path, field="text") as c:
        a, b = c.get_many(["a", "b"], view=True)
        assert zero_copy(a) and bytes(a) == b"no escapes"
        assert not zero_copy(b) and bytes(b) == c.get("b", bytes=True) == 'a "quote" and \u00e9'.encode()
    with docdex.Corpus(path, field="title,text") as c:
        v = c.get("a", view=True)
        assert not zero_copy(v) and bytes(v) == b"T no escapes"


def test_view_arguments(samples):
    """view=True asks for a memoryview; else bytes= as given; else the
    corpus's default, which view=False turns into its bytes or str."""
    path, _ = samples["tsv"]
    first = None
    with docdex.Corpus(path) as c:
        first = next(iter(c))
        assert not c.view and "view" not in repr(c)
        assert isinstance(c.get(first, view=True), memoryview)
        assert isinstance(c.get(first, view=True, bytes=False), memoryview)
        assert isinstance(c.get(first, view=False), str)
        assert isinstance(c.get(first, view=None), str)
        with pytest.raises(TypeError):
            c.get(first, views=True)
    with docdex.Corpus(path, view=True) as c:
        assert c.view and "view" in repr(c) and isinstance(next(iter(c)), str)  # ids stay str
        assert isinstance(c.get(first), memoryview) and isinstance(c.get_many([first])[0], memoryview)
        assert isinstance(c.get(first, view=False), str)
        assert isinstance(c.get(first, bytes=True), bytes)
        assert isinstance(c.get(first, bytes=False), str)
        again = pickle.loads(pickle.dumps(c))
        assert again.view and isinstance(again[0], memoryview)
        again.close()
    with docdex.Corpus(path, bytes=True, view=True) as c:
        assert isinstance(c.get(first, view=False), bytes) and isinstance(next(iter(c)), bytes)


def test_datasets_hand_over_no_views(samples):
    """A view does not pickle, so a DataLoader worker could not send it:
    CorpusDataset reads str (or bytes) whatever the corpus it is given."""
    pytest.importorskip("torch")
    from docdex.torch import CorpusDataset

    path, _ = samples["tsv"]
    with docdex.Corpus(path, view=True) as c:
        assert isinstance(CorpusDataset(c)[0], str)
    with docdex.Corpus(path, view=True, bytes=True) as c:
        assert isinstance(CorpusDataset(c)[0], bytes)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="the collector is held off from 3.10")
def test_a_batch_of_views_sets_off_no_collection(tmp_path, docdex_bin):
    """A memoryview and its managed buffer are tracked by the collector:
    made with it running, 2,000 views set off collections of the young
    generations, and with them, in time, of the whole heap.  The batch is
    made with the collector held off, and leaves it as it found it."""
    path = numbered(tmp_path, docdex_bin)

    def collections_during(read, arg):
        started, out = [], []

        def count(phase, info):
            if phase == "start":
                started.append(info["generation"])

        gc.collect()
        gc.callbacks.append(count)
        try:
            out.append(read(arg, view=True))
        finally:
            gc.callbacks.remove(count)
        return started, out[0]

    want = [record(i) for i in range(1000)] * 2
    with docdex.Corpus(path, access="mmap") as c:
        positions, ids = list(range(1000)) * 2, [str(i) for i in range(1000)] * 2
        for read, arg in ((c.get_many_positions, positions), (c.get_many, ids)):
            started, views = collections_during(read, arg)
            assert started == [] and gc.isenabled()
            assert [bytes(v) for v in views] == want
        gc.disable()
        try:
            c.get_many_positions(positions, view=True)
            assert not gc.isenabled()
        finally:
            gc.enable()
