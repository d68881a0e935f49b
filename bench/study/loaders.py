"""The three ways the study's trainers got at the texts of their training
triples, as map-style torch Datasets over the same triples, and what the
DataLoader's workers make of a batch (hashed token ids).

- dict: every document's text in a dict {docid: text} (and the queries
  likewise), read in __init__: a Python object per document, whose
  reference count each worker writes when it reads it, so copy-on-write
  gives every worker a copy of the pages it touched.
- offsets: TREC-DL's way, a dict {docid: byte offset} built by scanning the
  file, then a seek and a readline per document from a file handle that
  each worker opens for itself.
- docdex: docdex.Corpus for the documents and for the queries; no Python
  object per document.

Each holds the triples the same way, as the bytes of the ids file and an
array of line starts, so that the three differ only in the texts.
"""
import array
import os
import zlib

import torch
from torch.utils.data import Dataset


class Triples:
    """The lines of a `docdex sample --format ids` file (qid TAB pos TAB neg
    [TAB neg...]), held as one bytes object: no object per triple."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        starts = array.array("q", [0])
        pos = self.data.find(b"\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = self.data.find(b"\n", pos + 1)
        if starts[-1] == len(self.data):
            starts.pop()
        self.starts = starts

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        """(qid, pos id, [neg ids]) of triple i."""
        s = self.starts[i]
        e = self.data.find(b"\n", s)
        f = self.data[s:e if e != -1 else len(self.data)].decode().split("\t")
        return f[0], f[1], f[2:]


def read_tsv_dict(path):
    """{id: text} of a two-column TSV file: the study's in-memory corpus."""
    d = {}
    with open(path, encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        for line in f:
            key, _, text = line.rstrip("\n").partition("\t")
            d[key] = text
    return d


def scan_offsets(path):
    """{id: byte offset of its line}, as TREC-DL's example trainer built it."""
    d = {}
    off = 0
    with open(path, "rb") as f:
        for line in f:
            d[line[:line.find(b"\t")].decode()] = off
            off += len(line)
    return d


class TextTriples(Dataset):
    """Triple i as (query text, positive text, [negative texts])."""

    def __init__(self, triples):
        self.triples = Triples(triples)

    def __len__(self):
        return len(self.triples)


class DictTriples(TextTriples):
    def __init__(self, corpus, queries, triples):
        super().__init__(triples)
        self.docs = read_tsv_dict(corpus)
        self.queries = read_tsv_dict(queries)

    def __getitem__(self, i):
        qid, pos, negs = self.triples[i]
        return self.queries[qid], self.docs[pos], [self.docs[n] for n in negs]


class OffsetTriples(TextTriples):
    def __init__(self, corpus, queries, triples):
        super().__init__(triples)
        self.path = corpus
        self.offsets = scan_offsets(corpus)
        self.queries = read_tsv_dict(queries)
        self._file = None
        self._pid = None

    def _text(self, docid):
        if self._pid != os.getpid():  # a worker opens a handle of its own
            self._file = open(self.path, "rb")
            self._pid = os.getpid()
        self._file.seek(self.offsets[docid])
        line = self._file.readline()
        return line[line.find(b"\t") + 1:].rstrip(b"\n").decode("utf-8", "surrogateescape")

    def __getitem__(self, i):
        qid, pos, negs = self.triples[i]
        return self.queries[qid], self._text(pos), [self._text(n) for n in negs]

    def __getstate__(self):
        s = dict(self.__dict__)
        s["_file"] = s["_pid"] = None
        return s


class DocdexTriples(TextTriples):
    def __init__(self, corpus, queries_index, triples, inflate_cache=0):
        import docdex
        super().__init__(triples)
        self.docs = docdex.Corpus(corpus, field="text", inflate_cache=inflate_cache)
        self.queries = docdex.Corpus(queries_index, field="text")

    def __getitem__(self, i):
        qid, pos, negs = self.triples[i]
        texts = self.docs.get_many([pos] + negs)
        return self.queries.get(qid), texts[0], texts[1:]


def make_dataset(kind, corpus, queries, queries_index, triples, corpus_gzip=None, inflate_cache=0):
    if kind == "dict":
        return DictTriples(corpus, queries, triples)
    if kind == "offsets":
        return OffsetTriples(corpus, queries, triples)
    if kind == "docdex":
        return DocdexTriples(corpus, queries_index, triples)
    if kind in ("docdex-gzip", "docdex-gzip-cache"):
        # The cache is shared through /dev/shm by every rank and worker.
        return DocdexTriples(corpus_gzip, queries_index, triples,
                             inflate_cache if kind == "docdex-gzip-cache" else 0)
    raise ValueError(f"unknown loader {kind!r}")


def hash_tokens(text, buckets, limit):
    """The hashed ids of text's first limit words (crc32: the same in every
    process, unlike hash() of a str)."""
    words = text.lower().split()[:limit]
    return [zlib.crc32(w.encode("utf-8", "surrogateescape")) % buckets for w in words] or [0]


class Collate:
    """A batch of triples as flat token ids and offsets for EmbeddingBag: the
    queries', and the candidates' (positive first, then the negatives)."""

    def __init__(self, buckets, query_len=32, doc_len=128):
        self.buckets, self.query_len, self.doc_len = buckets, query_len, doc_len

    def _bags(self, texts, limit):
        ids, offsets = [], []
        for t in texts:
            offsets.append(len(ids))
            ids.extend(hash_tokens(t, self.buckets, limit))
        return torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)

    def __call__(self, batch):
        queries = [q for q, _, _ in batch]
        cands = [d for _, pos, negs in batch for d in [pos] + negs]
        q_ids, q_off = self._bags(queries, self.query_len)
        d_ids, d_off = self._bags(cands, self.doc_len)
        return q_ids, q_off, d_ids, d_off, len(cands) // len(batch)


class PairScorer(torch.nn.Module):
    """A cross-encoder's shape at a toy's size: a (query, document) pair is
    scored from both bags of words together by an MLP."""

    def __init__(self, buckets, dim=48, hidden=128):
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(buckets, dim, mode="mean")
        self.mlp = torch.nn.Sequential(torch.nn.Linear(4 * dim, hidden), torch.nn.ReLU(),
                                       torch.nn.Linear(hidden, 1))

    def forward(self, q_ids, q_off, d_ids, d_off, ncand):
        q = self.emb(q_ids, q_off)
        d = self.emb(d_ids, d_off).view(q.shape[0], ncand, -1)
        q = q.unsqueeze(1).expand_as(d)
        return self.mlp(torch.cat([q, d, q * d, (q - d).abs()], -1)).squeeze(-1)
