"""Errors: unknown ids, positions out of range, the library's errors, a
corpus cut short under a reader (SIGBUS)."""
import errno
import os
import pickle
import shutil
import subprocess
import sys

import pytest

import docdex
from conftest import DATA, PYTHON_DIR, run


def test_key_error(samples):
    path, _ = samples["jsonl"]
    with docdex.Corpus(path) as c:
        with pytest.raises(KeyError) as e:
            c.get("no such id")
        assert e.value.args == ("no such id",)
        first = next(iter(c))
        with pytest.raises(KeyError) as e:
            c.get_many([first, b"missing", "other"])
        assert e.value.args == (b"missing",)
        with pytest.raises(TypeError):
            c.get(3)
        with pytest.raises(TypeError):
            c.get_many("abc")
        assert c.get(first)  # still usable


def test_index_error(samples):
    path, _ = samples["tsv-gzip"]
    with docdex.Corpus(path) as c:
        n = len(c)
        for bad in (n, n + 1, -n - 1, 2**62):
            with pytest.raises(IndexError):
                c[bad]
        with pytest.raises(IndexError):
            c.get_many_positions([0, n])
        with pytest.raises(IndexError):
            c.get_many_positions([2**70])
        with pytest.raises(TypeError):
            c["0"]
        assert c[n - 1]


def cli_message(docdex_bin, path):
    p = run(docdex_bin, "get", "--position", path, "0", check=False)
    assert p.returncode != 0
    return p.stderr.decode()


def error_of(path, field=None):
    """The docdex.Error that opening path and reading every record raises."""
    with pytest.raises(docdex.Error) as e:
        with docdex.Corpus(path, field=field) as c:
            c.get_many_positions(range(len(c)))
    return e.value


def test_missing_file(tmp_path, docdex_bin):
    path = str(tmp_path / "nothing.tsv")
    e = error_of(path)
    assert isinstance(e, Exception) and e.code == docdex.ERR_SYS and e.errno == errno.ENOENT
    # A docdex.Error that is also what open() raises for a missing file.
    assert isinstance(e, FileNotFoundError) and type(e) is docdex.FileNotFoundError
    assert cli_message(docdex_bin, path) == f"docdex get: {e}\n"  # str(e): the library's line


def test_system_errors_are_oserrors(tmp_path):
    """Each errno as the subclass of OSError open() gives it; a docdex error
    of another kind is no OSError."""
    (tmp_path / "file.tsv").write_text("1\tx\n")
    for path, builtin in ((tmp_path / "file.tsv" / "below.tsv", NotADirectoryError),
                          (tmp_path / "none" / "c.tsv", FileNotFoundError)):
        with pytest.raises(builtin) as e:
            docdex.Corpus(str(path))
        assert isinstance(e.value, docdex.Error) and e.value.code == docdex.ERR_SYS
        with pytest.raises(builtin) as o:
            open(path)
        assert type(o.value) is builtin and o.value.errno == e.value.errno
    with pytest.raises(docdex.Error) as e:
        docdex.Corpus(str(tmp_path / "file.tsv"))  # not indexed
    assert not isinstance(e.value, OSError)
    # Pickled whole: its class, message, code and errno.
    with pytest.raises(FileNotFoundError) as e:
        docdex.Corpus(str(tmp_path / "none.tsv"))
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is docdex.FileNotFoundError and str(again) == str(e.value)
    assert (again.code, again.errno) == (docdex.ERR_SYS, errno.ENOENT)
    # Each pickles by its name (a DataLoader worker's exception is sent so).
    for cls in (docdex.FileNotFoundError, docdex.PermissionError, docdex.IsADirectoryError,
                docdex.NotADirectoryError, docdex.OSError):
        again = pickle.loads(pickle.dumps(cls("message")))
        assert type(again) is cls and str(again) == "message"
        assert issubclass(cls, docdex.OSError) and issubclass(cls, docdex.Error)


def test_stale(tmp_path, docdex_bin):
    path = str(tmp_path / "toy.tsv")
    shutil.copyfile(os.path.join(DATA, "msmarco-passage-toy.tsv"), path)
    run(docdex_bin, "index", "-q", path)
    with open(path, "ab") as f:
        f.write(b"100000\tadded after the index\n")
    e = error_of(path)
    assert e.code == docdex.ERR_STALE
    assert cli_message(docdex_bin, path) == f"docdex get: {e}\n"


def test_damaged_index(tmp_path, docdex_bin):
    path = str(tmp_path / "beir.jsonl")
    shutil.copyfile(os.path.join(DATA, "beir-msmarco-300.jsonl"), path)
    run(docdex_bin, "index", "-q", path)
    os.truncate(path + ".ddx", os.path.getsize(path + ".ddx") // 2)
    e = error_of(path)
    assert e.code in (docdex.ERR_CORRUPT, docdex.ERR_STALE)
    assert cli_message(docdex_bin, path) == f"docdex get: {e}\n"


def test_bad_field(samples):
    path, _ = samples["tsv"]
    with pytest.raises(docdex.Error) as e:
        docdex.Corpus(path, field="nosuchcolumn")
    assert e.value.code == docdex.ERR_INVAL
    with pytest.raises(TypeError):
        docdex.Corpus(path, field=3)


SIGBUS_CHILD = r"""
import mmap, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(sys.argv[1], "bench"))
import docdex
from corpus_speed import huge_mappings
path = sys.argv[2]
if sys.argv[3] == "huge":
    # Into the page cache anew through a mapping with MADV_HUGEPAGE, which
    # reads it in 2 MiB folios where the kernel has them.
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as m:
        if hasattr(m, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
            m.madvise(mmap.MADV_HUGEPAGE)
        for off in range(0, len(m), 4096):
            m[off]
    os.close(fd)
c = docdex.Corpus(path, bytes=True, access=sys.argv[4])
last = len(c) - 1
c[last]
# Read last: a compressed corpus keeps its last read's bytes, so c[last]
# is inflated again below, after the cut.
before = c[0]
real = os.path.realpath(path)
pmd = sum(h for p, _, h in huge_mappings(real) if p == real)
print("mapped in 2 MiB pages:", pmd // 1024, "kB")
os.truncate(path, 4096)
try:
    c[last]
except docdex.Error as e:
    assert e.code == docdex.ERR_STALE, (e.code, str(e))
    print("error:", e)
else:
    raise SystemExit("no error")
try:
    c[0]
except docdex.Error as e:
    print("then:", e)
print("alive")
"""


@pytest.mark.parametrize("size", ["small", "5M"])
def test_sigbus(tmp_path, docdex_bin, size):
    """A plain corpus cut short under an open Corpus: docdex.Error, and the
    interpreter goes on (in a child, so that a failure cannot take pytest).
    A file of 2 MiB or more is mapped on a 2 MiB boundary, where the page
    cache's 2 MiB folios are mapped whole (the child reads this one into
    such folios first, where the kernel has them): a fault there is met
    as well."""
    if size == "small":
        path = str(tmp_path / "beir.jsonl")
        shutil.copyfile(os.path.join(DATA, "beir-msmarco-300.jsonl"), path)
    else:
        path = str(tmp_path / "passages.tsv")
        synth = os.path.join(os.path.dirname(docdex_bin), "tests", "dx-synth")
        subprocess.run([synth, "--kind", "passages", "--size", size, "-o", path], check=True)
    run(docdex_bin, "index", "-q", path)
    p = subprocess.run([sys.executable, "-c", SIGBUS_CHILD, PYTHON_DIR, path,
                        "huge" if size != "small" else "small", "auto"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    out = p.stdout.decode()
    assert p.returncode == 0, (p.returncode, out, p.stderr.decode())
    assert "error: " in out and "could not be read where it was mapped" in out
    assert "then: " in out and out.endswith("alive\n")


@pytest.mark.parametrize("kind", ["gzip", "bgzf"])
@pytest.mark.parametrize("access", ["auto", "mmap", "pread"])
def test_compressed_cut_short(tmp_path, docdex_bin, kind, access):
    """A gzip or BGZF corpus cut short under an open Corpus: its compressed
    bytes are read in place where the file is mapped (mmap, and auto with
    the file in memory, as here), where the cut is a SIGBUS, met as on a
    plain corpus; with pread, a read that comes short.  Either is a
    docdex.Error, and the interpreter goes on."""
    # More than pread's 64 KiB of input at a time, so that a read after
    # the cut needs bytes it did not load before.
    plain = str(tmp_path / "passages.tsv")
    synth = os.path.join(os.path.dirname(docdex_bin), "tests", "dx-synth")
    subprocess.run([synth, "--count", "3000", "-o", plain], check=True)
    path = plain + ".gz"
    if kind == "gzip":
        with open(path, "wb") as f:
            subprocess.run(["gzip", "-c", plain], stdout=f, check=True)
    else:
        run(docdex_bin, "index", "-q", "--bgzf", path, plain)
    run(docdex_bin, "index", "-q", path)
    p = subprocess.run([sys.executable, "-c", SIGBUS_CHILD, PYTHON_DIR, path, "small", access],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    out = p.stdout.decode()
    assert p.returncode == 0, (p.returncode, out, p.stderr.decode())
    said = "could not be read where it was mapped" if access != "pread" else "shorter than when it was opened"
    assert "error: " in out and said in out, out
    assert "then: " in out and out.endswith("alive\n")
