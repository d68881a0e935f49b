"""Independent check of docdex sample's output, written without its code.

usage: check_triples.py [options] TRIPLES.jsonl
  --corpus FILE --layout tsv|jsonl|trec   the corpus (plain or .gz)
  --queries FILE                          qid TAB text, or TREC <top> topics
  --qrels FILE [--min-rel N]              TREC or BEIR qrels
  --run FILE [--depth K]                  negatives must come from the run's
                                          top K lines, TREC (by score) or
                                          MS MARCO "qid TAB pid TAB rank"
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


def run_top(path, depth):
    """qid -> the set of its top `depth` documents by score (MS MARCO: by
    rank), ties in file order, whether or not they are in the corpus."""
    per = {}
    for seq, line in enumerate(lines(path)):
        f = line.split()
        if len(f) == 3:
            per.setdefault(f[0], []).append((int(f[2]), seq, f[1]))
        else:
            per.setdefault(f[0], []).append((-float(f[4]), seq, f[2]))
    return {q: {d for _, _, d in sorted(v)[:depth or None]} for q, v in per.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("triples")
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--layout", required=True, choices=("tsv", "jsonl", "trec"))
    ap.add_argument("--queries")
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--min-rel", type=float, default=1)
    ap.add_argument("--run")
    ap.add_argument("--depth", type=int, default=0)
    ap.add_argument("--exclude-judged", action="store_true")
    ap.add_argument("--expect", type=int)
    a = ap.parse_args()

    texts = corpus_texts(a.corpus, a.layout)
    queries = query_texts(a.queries) if a.queries else None
    rels = judgements(a.qrels)
    top = run_top(a.run, a.depth) if a.run else None
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
                    bad.append(f"line {n}: negative {d} is not in the top {a.depth} of the run for {q}")
    if a.expect is not None and n != a.expect:
        bad.append(f"{n} triples, expected {a.expect}")
    for b in bad[:20]:
        print(b, file=sys.stderr)
    sys.exit(1 if bad else 0)


main()
