"""python/bench/corpus_speed.py on a small generated corpus: every reader
is timed against the dict, the floor against Python's mmap, and the report
says how the corpus and its index were mapped."""
import json
import os
import subprocess
import sys

import docdex

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(TOP, "python", "bench", "corpus_speed.py")
READERS = ("c[pos]", "c.get(id)", "c.get_many(1024 ids)", "c.get_many(1024 ids, view=True)",
           "c.get_many_positions(1024)", "c.position(id)", "c.positions(1024 ids)")


def test_corpus_speed_reports_every_reader(docdex_bin, tmp_path):
    synth = os.path.join(os.path.dirname(docdex_bin), "tests", "dx-synth")
    corpus, out = str(tmp_path / "c.tsv"), str(tmp_path / "speed.json")
    # 3 MiB: more than one 2 MiB page, so that the corpus is mapped on its
    # own 2 MiB boundary.
    subprocess.run([synth, "--kind", "passages", "--size", "3M", "-o", corpus], check=True)
    subprocess.run([docdex_bin, "index", "-q", corpus], check=True)
    p = subprocess.run([sys.executable, SCRIPT, "--corpus", corpus, "--runs", "2", "--n", "3000",
                        "--json", out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       check=False)
    text = p.stdout.decode(errors="replace")
    assert p.returncode == 0, text
    with open(out, encoding="utf-8") as f:
        r = json.load(f)
    assert r["records"] == len(docdex.Corpus(corpus))
    assert r["n"] == 3000 and r["runs"] == 2
    assert set(r["results"]) == set(READERS)
    for name, fig in r["results"].items():
        assert len(fig["docdex_runs"]) == 2 and len(fig["dict_runs"]) == 2, name
        assert fig["docdex_per_s"] > 0 and fig["dict_per_s"] > 0, name
        assert name in text
    floor = r["mmap_floor"]
    assert floor["docdex_bytes_per_s"] > 0 and floor["mmap_slice_per_s"] > 0
    # The generated passages' ids are their positions: the offset table's
    # floor too.
    floor = r["id_floor"]
    assert floor["docdex_bytes_per_s"] > 0 and floor["offset_table_per_s"] > 0
    assert len(floor["docdex_runs"]) == 2 and len(floor["offset_table_runs"]) == 2
    for row in ("c[pos], bytes, against an mmap slice", "c.get(id), bytes, against an offset table"):
        assert row in text
    # The corpus and its index, each with its resident and 2 MiB-mapped
    # bytes; nothing else (they are read before the floor maps the file).
    paths = sorted(m["path"] for m in r["mapped"])
    real = os.path.realpath(corpus)
    assert paths == [real, real + ".ddx"]
    for m in r["mapped"]:
        assert 0 <= m["huge_bytes"] <= m["rss_bytes"]
        assert f"mapped: {m['path']}:" in text
    assert next(m for m in r["mapped"] if m["path"] == real)["rss_bytes"] > 0
