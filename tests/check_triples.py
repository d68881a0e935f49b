"""Independent check of docdex sample's output, written without its code.

usage: check_triples.py [options] TRIPLES.jsonl
  --corpus FILE --layout tsv|jsonl|trec   the corpus (plain or .gz)
  --queries FILE                          qid TAB text, or TREC <top> topics
  --qrels FILE [--min-rel N]              TREC or BEIR qrels
  --run FILE [--depth K|A-B]              negatives must come from the run's
                                          top K lines (or places A to B),
                                          TREC (by score, ties by the rank
                                          column) or MS MARCO "qid TAB pid
                                          TAB rank"
  --margin M|P%                           a run negative scores at most the
                                          positive's own run score less M
                                          (or P% of its absolute value)
  --weights uniform|rank                  how often each place of the window
                                          is drawn (checked on the share in
                                          the window's better half, one
                                          negative a triple)
  --exclude-judged                        no judged document as a negative
  --expect N                              the number of triples

Every triple must pair a query with a document judged relevant to it at
--min-rel; every negative must be a corpus document that is not a positive
of the query (nor judged, with --exclude-judged) and, with --run only, one
of the query's top K run documents; every text must be the corpus' text of
its id and the query's text.  Prints what is wrong and exits 1.
"""
import argparse
import gzip
import json
import re
import sys


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def lines(path):
    for line in read(path).decode("utf-8", "surrogateescape").split("\n"):
        line = line.removesuffix("\r")
        if line.strip() and not line.startswith("#"):
            yield line


def corpus_texts(path, layout):
    """id -> the text docdex serves by default."""
    texts = {}
    data = read(path).decode("utf-8", "surrogateescape")
    if layout == "trec":
        for doc in re.findall(r"<DOC>(.*?)</DOC>", data, re.S):
            m = re.search(r"<DOCNO>\s*(.*?)\s*</DOCNO>(.*)", doc, re.S)
            texts[m.group(1)] = m.group(2).strip(" \t\r\n")
        return texts
    for line in data.split("\n"):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        if layout == "tsv":
            cols = line.split("\t")
            texts[cols[0]] = cols[-1]
        else:
            obj = json.loads(line)
            key = next(k for k in ("docid", "_id", "id", "pid", "doc_id") if k in obj)
            text = next(obj[k] for k in ("text", "contents", "body", "passage", "segment") if k in obj)
            texts[str(obj[key])] = text
    return texts


def query_texts(path):
    data = read(path).decode("utf-8", "surrogateescape")
    if data.lstrip().startswith("<"):
        return {m.group(1).lstrip("0") or "0": " ".join(m.group(2).split())
                for m in re.finditer(r"<num>\s*(\S+?)\s*</num>\s*<title>(.*?)</title>", data, re.S)}
    return dict(line.split("\t")[:2] for line in lines(path))


def judgements(path):
    """(qid, docid) -> relevance, the first line of each pair."""
    rels = {}
    for i, line in enumerate(lines(path)):
        f = line.split()
        qid, docid, rel = (f[0], f[1], f[2]) if len(f) == 3 else (f[0], f[2], f[3])
        try:
            rel = float(rel)
        except ValueError:
            if i == 0:
                continue  # BEIR header
            raise
        rels.setdefault((qid, docid), rel)
    return rels


def rank_column(text):
    try:
        return float(text)
    except ValueError:
        return float("inf")


def run_ranked(path):
    """qid -> its lines as (key, docid, score), best first; key is what
    ranks them (minus the score, then the rank column; MS MARCO: the rank),
    lines of one key in no particular order (docdex breaks those ties by
    the id)."""
    per = {}
    for line in lines(path):
        f = line.split()
        if len(f) == 3:
            per.setdefault(f[0], []).append(((int(f[2]), 0.0), f[1], None))
        else:
            per.setdefault(f[0], []).append(((-float(f[4]), rank_column(f[3])), f[2], float(f[4])))
    return {q: sorted(v, key=lambda e: e[0]) for q, v in per.items()}


def window(ranked, first, last):
    """The documents at places first..last (1-based), with their places and
    scores; the documents tied with one at either edge may stand in for
    it, so they are let in too (at the place of the edge)."""
    lo, hi = first - 1, (last or len(ranked))
    keys = [k for k, _, _ in ranked]
    out = {}
    for i, (k, d, sc) in enumerate(ranked):
        inside = lo <= i < hi
        tied = hi > lo and lo < len(keys) and (k == keys[lo] or k == keys[min(hi, len(keys)) - 1])
        if inside or tied:
            out.setdefault(d, (i + 1, sc))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("triples")
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--layout", required=True, choices=("tsv", "jsonl", "trec"))
    ap.add_argument("--queries")
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--min-rel", type=float, default=1)
    ap.add_argument("--run")
    ap.add_argument("--depth", default="0")
    ap.add_argument("--margin")
    ap.add_argument("--weights", choices=("uniform", "rank"))
    ap.add_argument("--exclude-judged", action="store_true")
    ap.add_argument("--expect", type=int)
    a = ap.parse_args()

    texts = corpus_texts(a.corpus, a.layout)
    queries = query_texts(a.queries) if a.queries else None
    rels = judgements(a.qrels)
    first, _, last = a.depth.rpartition("-")
    first, last = int(first or 1), int(last)
    ranked = run_ranked(a.run) if a.run else None
    top = {q: window(v, first, last) for q, v in ranked.items()} if a.run else None
    margin = None
    if a.margin:
        pct = a.margin.endswith("%")
        m = float(a.margin.rstrip("%"))
        margin = (lambda p: p - abs(p) * m / 100) if pct else (lambda p: p - m)
    pos_score = {}
    if margin:
        for q, v in ranked.items():
            for _, d, sc in v:
                if rels.get((q, d), -1e9) >= a.min_rel:
                    pos_score[(q, d)] = max(sc, pos_score.get((q, d), sc))
    # Draws in the better half of their query's window, against their share.
    halves = [0, 0.0]
    drawn = 0
    bad = []
    n = 0
    with open(a.triples, encoding="utf-8", errors="surrogateescape") as f:
        for n, line in enumerate(f, 1):
            t = json.loads(line)
            q = t["qid"]
            negs = t["neg_id"] if isinstance(t["neg_id"], list) else [t["neg_id"]]
            neg_texts = t["neg"] if isinstance(t["neg"], list) else [t["neg"]]
            if rels.get((q, t["pos_id"]), -1e9) < a.min_rel:
                bad.append(f"line {n}: {t['pos_id']} is not a positive of {q}")
            if texts.get(t["pos_id"]) != t["pos"]:
                bad.append(f"line {n}: the text of {t['pos_id']} differs")
            if queries is not None and queries.get(q) != t["query"]:
                bad.append(f"line {n}: the text of query {q} differs")
            for d, text in zip(negs, neg_texts):
                rel = rels.get((q, d))
                if rel is not None and (rel >= a.min_rel or a.exclude_judged):
                    bad.append(f"line {n}: negative {d} is judged for {q} ({rel})")
                if texts.get(d) != text:
                    bad.append(f"line {n}: the text of {d} differs")
                if top is not None and d not in top.get(q, ()):
                    bad.append(f"line {n}: negative {d} is not in places {a.depth} of the run for {q}")
                    continue
                if top is None:
                    continue
                place, sc = top[q][d]
                bound = margin(pos_score[(q, t["pos_id"])]) if (q, t["pos_id"]) in pos_score else None
                if bound is not None and sc > bound:
                    bad.append(f"line {n}: negative {d} scores {sc}, above the margin's {bound}")
                if a.weights:
                    drawn += 1
                    w = {dd: (1 / p if a.weights == "rank" else 1.0) for dd, (p, s2) in top[q].items()
                         if dd in texts and rels.get((q, dd), -1e9) < a.min_rel
                         and not (a.exclude_judged and (q, dd) in rels)
                         and (bound is None or s2 <= bound)}
                    order = sorted(w, key=lambda dd: top[q][dd][0])
                    better = set(order[:len(order) // 2])
                    halves[0] += d in better
                    halves[1] += sum(w[dd] for dd in better) / sum(w.values())
    if a.weights and drawn >= 1000 and abs(halves[0] - halves[1]) / drawn > 0.03:
        bad.append(f"{halves[0]} of {drawn} negatives in their windows' better half, "
                   f"{halves[1]:.0f} expected with {a.weights} weights")
    if a.expect is not None and n != a.expect:
        bad.append(f"{n} triples, expected {a.expect}")
    for b in bad[:20]:
        print(b, file=sys.stderr)
    sys.exit(1 if bad else 0)


main()
