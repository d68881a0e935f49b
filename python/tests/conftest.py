"""Fixtures of the docdex Python tests: the built package, the docdex
program to compare with, and indexed copies of the sample corpora."""
import gzip
import os
import shutil
import subprocess
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(PYTHON_DIR)
DATA = os.path.join(TOP, "tests", "data")
sys.path.insert(0, PYTHON_DIR)

# Each sample: its file, a field selection, and how it is stored.
SAMPLES = {
    "tsv": ("msmarco-passage-toy.tsv", "text", "plain"),
    "jsonl": ("beir-msmarco-300.jsonl", "title,text", "plain"),
    "trec": ("trec-ap-sample.trec", "HEAD,TEXT", "plain"),
    "trec-vaswani": ("vaswani-300.trec", None, "plain"),
    "tsv-gzip": ("msmarco-passage-toy.tsv", "text", "gzip"),
    "jsonl-gzip": ("beir-msmarco-300.jsonl", "title", "gzip"),
    "jsonl-bgzf": ("beir-msmarco-300.jsonl", "title,text", "bgzf"),
    "trec-bgzf": ("vaswani-300.trec", None, "bgzf"),
}


@pytest.fixture(scope="session")
def docdex_bin():
    """The docdex program: $DOCDEX, else the one built at the top."""
    path = os.environ.get("DOCDEX") or os.path.join(TOP, "docdex")
    if not os.access(path, os.X_OK):
        pytest.fail("docdex is not built: run make at the top")
    return path


def run(docdex_bin, *args, stdin=None, check=True):
    """Runs docdex; its stdout as bytes."""
    p = subprocess.run([docdex_bin, *args], input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=False)
    if check and p.returncode != 0:
        raise AssertionError(f"docdex {' '.join(args)}: {p.stderr.decode()}")
    return p


def make_sample(docdex_bin, tmp, name):
    """An indexed copy of sample name in tmp: its path and field."""
    fname, field, kind = SAMPLES[name]
    src = os.path.join(DATA, fname)
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    if kind == "plain":
        path = os.path.join(d, fname)
        shutil.copyfile(src, path)
        run(docdex_bin, "index", "-q", path)
    elif kind == "gzip":
        path = os.path.join(d, fname + ".gz")
        with open(src, "rb") as f, gzip.open(path, "wb") as g:
            shutil.copyfileobj(f, g)
        run(docdex_bin, "index", "-q", path)
    else:
        path = os.path.join(d, fname + ".bgzf.gz")
        run(docdex_bin, "index", "-q", "--bgzf", path, src)
    return path, field


@pytest.fixture(scope="session")
def samples(docdex_bin, tmp_path_factory):
    """Every sample, indexed once a session: {name: (path, field)}."""
    tmp = str(tmp_path_factory.mktemp("samples"))
    return {name: make_sample(docdex_bin, tmp, name) for name in SAMPLES}


@pytest.fixture(params=sorted(SAMPLES))
def sample(request, samples):
    """Each sample in turn: (name, path, field)."""
    path, field = samples[request.param]
    return request.param, path, field


@pytest.fixture(scope="session")
def synth(docdex_bin, tmp_path_factory):
    """A synthetic corpus with queries, qrels and a run, indexed."""
    d = str(tmp_path_factory.mktemp("synth"))
    files = {k: os.path.join(d, k) for k in ("c.tsv", "q.tsv", "qrels", "run")}
    subprocess.run([os.path.join(TOP, "tests", "dx-synth"), "--count", "2000", "-o", files["c.tsv"],
                    "--queries", files["q.tsv"], "--qrels", files["qrels"], "--run", files["run"],
                    "--nqueries", "100", "--depth", "20"], check=True, stdout=subprocess.DEVNULL)
    run(docdex_bin, "index", "-q", files["c.tsv"])
    return files
