"""The DDP study (bench/study/ddp_study.py) on a tiny generated corpus: every
configuration runs, trains, and reports speed and memory; the plot is
well-formed SVG."""
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STUDY = os.path.join(TOP, "bench", "study")
LOADERS = ("dict", "offsets", "docdex", "docdex-gzip-cache")
RANKS = (1, 2)
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def study(docdex_bin, tmp_path_factory):
    pytest.importorskip("torch")
    synth = os.path.join(os.path.dirname(docdex_bin), "tests", "dx-synth")
    if not os.access(synth, os.X_OK):
        pytest.fail(f"dx-synth is not built beside docdex: {synth}")
    tmp = tmp_path_factory.mktemp("study")
    out_json, out_svg = str(tmp / "study.json"), str(tmp / "study.svg")
    p = subprocess.run(
        [sys.executable, os.path.join(STUDY, "ddp_study.py"), "--size", "2M", "--nqueries", "300",
         "--depth", "20", "--workdir", str(tmp / "work"), "--docdex", docdex_bin, "--synth", synth,
         "--ranks", ",".join(map(str, RANKS)), "--loaders", ",".join(LOADERS), "--workers", "1",
         "--warmup", "1", "--steps", "3", "--batch-size", "8", "--interval", "0.2",
         "--inflate-cache", "16M",
         "--json", out_json, "--svg", out_svg],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300, check=False)
    assert p.returncode == 0, p.stdout.decode(errors="replace")[-3000:]
    with open(out_json) as f:
        return json.load(f), out_svg, p.stdout.decode()


def test_every_cell_trains(study):
    report, _, _ = study
    cells = {(c["loader"], c["ranks"]): c for c in report["cells"]}
    assert sorted(cells) == sorted((x, r) for x in LOADERS for r in RANKS)
    for (loader, ranks), c in cells.items():
        assert c["status"] == "ok", (loader, ranks, c)
        assert c["samples_per_s"] > 0 and c["measured_steps"] == 3
        assert c["t_first_batch_s"] > 0
        # CPU time comes in clock ticks: a few short steps may take none.
        assert c["cpu_ms_per_sample"] >= c["cpu_ms_per_sample_workers"] >= 0
        assert len(c["rank_results"]) == ranks
        for r in c["rank_results"]:
            assert r["returncode"] == 0 and "error" not in r
            assert r["samples_measured"] == 3 * 8
            assert r["triples"] > 0 and r["loss_last"] == r["loss_last"]  # not NaN
            assert r["device"] == "cpu"
    assert report["host"]["device"] == "cpu" and report["config"]["device"] == "cpu"


def test_memory_of_ranks_and_workers(study):
    report, _, _ = study
    for c in report["cells"]:
        m = c["memory"]
        for k in ("peak_pss_mib", "peak_uss_mib", "peak_anon_mib", "peak_dirty_mib",
                  "final_pss_mib", "final_uss_mib", "final_anon_mib"):
            assert m[k] > 0, (c["loader"], c["ranks"], k)
        # A docdex worker over a 2 MB corpus may own no page of its own
        # when it is sampled: its USS rounds to 0, so only its presence and
        # PSS (below) are checked.
        assert m["peak_uss_workers_mib"] >= 0
        procs = m["processes"]
        roles = sorted((p["rank"], p["role"]) for p in procs)
        # Each rank and its one DataLoader worker.
        assert roles == sorted([(r, "rank") for r in range(c["ranks"])] +
                               [(r, "worker") for r in range(c["ranks"])]), roles
        for p in procs:
            assert p["peak_pss_mib"] > 0 and p["peak_anon_mib"] > 0
        assert all(len(row) == len(m["series_columns"]) for row in m["series"])


def test_svg_is_well_formed(study):
    report, svg_path, _ = study
    root = ET.parse(svg_path).getroot()
    assert root.tag == SVG_NS + "svg"
    texts = {t.text for t in root.iter(SVG_NS + "text")}
    assert set(LOADERS) <= texts
    # A bar for each cell in the speed panel and each memory panel.
    bars = [r for r in root.iter(SVG_NS + "rect") if r.find(SVG_NS + "title") is not None]
    assert len(bars) >= 3 * len(report["cells"])


def test_table_printed(study):
    _, _, out = study
    for loader in LOADERS:
        assert any(line.split()[:3] == [loader, "2", "ok"] for line in out.splitlines())


def test_cuda_without_a_gpu_fails_the_cell(study, docdex_bin, tmp_path):
    """--device cuda where torch sees no GPU: the rank says so and the cell
    is reported failed, not trained on the CPU instead."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is there")
    work = os.path.join(os.path.dirname(study[1]), "work")
    corpus = os.path.join(work, "synth-2M", "corpus.tsv")
    out = tmp_path / "rank"
    env = dict(os.environ, RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="0",
               PYTHONPATH=os.path.join(TOP, "python"))
    triples = [f for f in os.listdir(work) if f.endswith(".ids")][0]
    p = subprocess.run(
        [sys.executable, os.path.join(STUDY, "ddp_study.py"), "rank", "--loader", "docdex",
         "--corpus", corpus, "--queries", os.path.join(work, "synth-2M", "queries.tsv"),
         "--triples", os.path.join(work, triples), "--out", str(out), "--workers", "0",
         "--device", "cuda"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120, check=False)
    assert p.returncode == 1
    with open(out / "rank0.json") as f:
        res = json.load(f)
    assert "torch sees no GPU" in res["error"]


def test_procmem_sees_children():
    sys.path.insert(0, STUDY)
    import procmem
    child = subprocess.Popen([sys.executable, "-c", "import time; b = b'x' * (32 << 20); time.sleep(30)"])
    try:
        deadline = time.time() + 10
        while True:
            snap = procmem.snapshot(os.getpid())
            m = snap.get(child.pid)
            if (m and m["anon"] >= 32 << 20) or time.time() > deadline:
                break
            time.sleep(0.05)
        assert child.pid in procmem.descendants(os.getpid())
        assert m["role"] == "child" and snap[os.getpid()]["role"] == "main"
        assert m["anon"] >= 32 << 20 and m["dirty"] >= 32 << 20 and m["uss"] >= m["dirty"]
        assert abs(procmem.start_time(child.pid) - time.time()) < 60
    finally:
        child.kill()
        child.wait()
    assert procmem.rollup(child.pid) is None
