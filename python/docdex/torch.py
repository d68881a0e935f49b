"""docdex for PyTorch: datasets, a distributed sampler, a collate function.

Imported on its own (``import docdex.torch``) and only where torch is
installed::

    from torch.utils.data import DataLoader
    from docdex.torch import TripleDataset, DistributedSampler, collate_triples

    ds = TripleDataset("collection.tsv", queries="queries.tsv",
                       qrels="qrels.tsv", run="run.trec", negatives=7, epochs=3)
    sampler = DistributedSampler(ds)          # rank, world size from torch.distributed
    loader = DataLoader(ds, batch_size=32, sampler=sampler, num_workers=8,
                        collate_fn=collate_triples)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for batch in loader:
            features = tokenizer(batch["query"], ...)

The datasets hold no Python object per document, so the DataLoader's
workers share the corpus through the page cache instead of copying it: a
worker costs the same few megabytes whether the corpus holds a thousand
documents or a hundred million.  They pickle by path, so workers under
fork, spawn and forkserver each open their own handle.
"""
import torch
import torch.utils.data

from . import Corpus, Sampler, _shard, _whole

__all__ = ["CorpusDataset", "TripleDataset", "DistributedSampler", "collate_triples"]


def _corpus(corpus, field, as_bytes):
    access, cache = "auto", 0
    if isinstance(corpus, Corpus):
        if field is None:
            field = corpus.field
        if as_bytes is None:
            as_bytes = corpus.bytes
        access, cache = corpus.access, corpus.inflate_cache
        corpus = corpus.path
    return Corpus(corpus, field=field, bytes=bool(as_bytes), access=access, inflate_cache=cache)


class CorpusDataset(torch.utils.data.Dataset):
    """The records of a corpus by position: ds[i] is the text of record i
    (str, or bytes with bytes=True), or (id, text) with ids=True.

    CorpusDataset(corpus, field=None, *, bytes=None, ids=False); corpus is
    a path or a :class:`docdex.Corpus` (its field and bytes are the
    defaults; its access and inflate cache are kept; not view=, since a
    worker's memoryview would not pickle).  ``__getitems__``
    reads a whole batch in one call, for torch versions whose DataLoader
    fetches batches that way.  Some of the documents only, by id:
    ``torch.utils.data.Subset(ds, ds.corpus.positions(ids))``.
    """

    def __init__(self, corpus, field=None, *, bytes=None, ids=False):
        self.corpus = _corpus(corpus, field, bytes)
        self.ids = bool(ids)

    def __len__(self):
        return len(self.corpus)

    def __getitem__(self, i):
        if self.ids:
            return self.corpus.id(i), self.corpus[i]
        return self.corpus[i]

    def __getitems__(self, indices):
        texts = self.corpus.get_many_positions(indices)
        if self.ids:
            return [(self.corpus.id(i), t) for i, t in zip(indices, texts)]
        return texts


class TripleDataset(torch.utils.data.Dataset):
    """Training triples by number: ds[n] is triple n of the sequence that
    ``docdex sample`` draws with the same options and seed, a
    :class:`docdex.Triple`.

    TripleDataset(corpus, *, queries=None, qrels=..., run=None, epochs=1,
    count=None, **options): the options are :class:`docdex.Sampler`'s
    (negatives, depth, margin, weights, pairs, random, seed, field, ...)
    but for the shard, which the sampler of the DataLoader picks.  len(ds)
    is count, else epochs times epoch_length (the triples of one pass
    over the pairs); triple n belongs to epoch n // epoch_length, and the
    triples of an epoch are already in a shuffled order, so that
    :class:`DistributedSampler` takes them as they come.  A triples file
    is read in order only: iterate a :class:`docdex.Sampler` for it.
    """

    def __init__(self, corpus, *, epochs=None, count=None, **options):
        for key in ("rank", "world_size", "start", "drop_last", "triples"):
            if key in options:
                raise TypeError(f"TripleDataset takes no {key}=: "
                                + ("a triples file is read in order; iterate a docdex.Sampler"
                                   if key == "triples" else "the DataLoader's sampler shards it"))
        if count is None and epochs is None:
            epochs = 1
        self.sampler = Sampler(corpus, epochs=epochs, count=count, rank=0, world_size=1,
                               **options)
        report = self.sampler.report()
        self.epoch_length = report["per_epoch"]
        self._len = report["total"]

    def __len__(self):
        return self._len

    def __getitem__(self, n):
        return self.sampler[n]

    def __getitems__(self, ns):
        return self.sampler.get_many(ns)


class DistributedSampler(torch.utils.data.Sampler):
    """torch's DistributedSampler, with resume and for TripleDataset.

    DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True,
    seed=0, drop_last=False): the same arguments, and the same indices as
    torch.utils.data.DistributedSampler gives for any other dataset: each
    epoch a permutation seeded by seed + epoch (or the identity without
    shuffle), shared out rank, rank + W, rank + 2W...; every rank gets the
    same number of indices, the last ones padded from the first (or the
    rest left out with drop_last), so that DDP's ranks take the same number
    of steps.  num_replicas and rank default to torch.distributed's, else
    to $WORLD_SIZE and $RANK.

    Over a :class:`TripleDataset`, epoch e is the triples of the dataset's
    epoch e (numbers e * epoch_length on), which docdex has shuffled
    already: shuffle is not applied again.

    state_dict(samples) says where to resume: the epoch, and the place in
    its order after the samples every rank has taken from this epoch's
    iterator (by default as many as it yielded, which is what a DataLoader
    without workers took; with workers, which fetch ahead, give the number
    trained on).  load_state_dict() goes on from there on any number of
    ranks: no index is lost or seen twice.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        self.rank, self.num_replicas = _shard(rank, num_replicas)
        self.dataset = dataset
        self.shuffle = bool(shuffle)
        self.seed = _whole("seed", seed, -2**63, 2**64 - 1)
        self.drop_last = bool(drop_last)
        self.epoch = 0
        self.start = 0
        self._yielded = 0

    def _epoch_span(self):
        """(first, n): this epoch's indices are first .. first + n - 1."""
        ds = self.dataset
        if isinstance(ds, TripleDataset):
            first = self.epoch * ds.epoch_length
            if first >= len(ds):
                raise ValueError(f"epoch {self.epoch}: the TripleDataset holds "
                                 f"{len(ds) // ds.epoch_length} epochs (give it epochs=)")
            return first, min(ds.epoch_length, len(ds) - first)
        return 0, len(ds)

    def _shard_size(self, tail):
        share, rest = divmod(max(0, tail), self.num_replicas)
        return share if self.drop_last or rest == 0 else share + 1

    def __len__(self):
        return self._shard_size(self._epoch_span()[1] - self.start)

    def __iter__(self):
        first, n = self._epoch_span()
        tail = n - self.start
        if n == 0:
            return  # an empty dataset: no index, as torch's gives none
        if tail <= 0:
            raise ValueError(f"start {self.start} is not below the epoch's {n} samples")
        size, w = self._shard_size(tail), self.num_replicas
        # The k-th index of this rank is place start + (k * W + rank) mod tail
        # of the epoch's order: torch's padding, from the start of the tail.
        places = (torch.arange(size, dtype=torch.int64) * w + self.rank) % tail + self.start
        if self.shuffle and not isinstance(self.dataset, TripleDataset):
            g = torch.Generator()
            g.manual_seed(self.seed + self.epoch)
            idx = torch.randperm(n, generator=g)[places]
        else:
            idx = places + first
        del places
        self._yielded = 0
        # A slice at a time as Python ints: the whole share as a list held
        # 660 MiB more a rank through an epoch of 138M indices on 8 ranks.
        for part in idx.split(1 << 16):
            for i in part.tolist():
                self._yielded += 1
                yield i

    def set_epoch(self, epoch):
        """Sets the epoch of the next iteration: its order, and a start of 0
        unless load_state_dict set one for this epoch."""
        epoch = _whole("epoch", epoch)
        if epoch != self.epoch:
            self.start = 0
        self.epoch = epoch

    def state_dict(self, samples=None):
        """{"epoch", "start", "seed"}: where to go on after every rank took
        samples (default: as many as this one yielded) from this epoch's
        iterator; the next epoch at 0 once the epoch is done."""
        samples = self._yielded if samples is None else _whole("samples", samples)
        start = self.start + samples * self.num_replicas
        if start >= self._epoch_span()[1]:
            return {"epoch": self.epoch + 1, "start": 0, "seed": self.seed}
        return {"epoch": self.epoch, "start": start, "seed": self.seed}

    def load_state_dict(self, state):
        """Goes on where state_dict() said, on this sampler's ranks."""
        epoch, start = _whole("epoch", state["epoch"]), _whole("start", state["start"])
        self.seed = _whole("seed", state.get("seed", self.seed), -2**63, 2**64 - 1)
        self.epoch, self.start = epoch, start


def collate_triples(batch):
    """A batch of :class:`docdex.Triple` as lists, for a tokenizer.

    Returns a dict: qid, query, pos_id, pos (lists, one item a triple),
    neg_ids and negs (lists of lists), n and epoch (int64 tensors), and
    docs: each triple's positive then its negatives, one flat list of
    len(batch) * group strings (group = 1 + negatives), the layout that a
    cross-encoder or a bi-encoder with in-group negatives scores in groups
    (the positive first: label 0); None for triples without texts (a
    Sampler's with ids_only=True)."""
    docs = []
    for t in batch:
        if t.pos is None:
            docs = None
            break
        docs.append(t.pos)
        docs.extend(t.negs)
    return {
        "n": torch.tensor([t.n for t in batch], dtype=torch.int64),
        "epoch": torch.tensor([t.epoch for t in batch], dtype=torch.int64),
        "qid": [t.qid for t in batch],
        "query": [t.query for t in batch],
        "pos_id": [t.pos_id for t in batch],
        "pos": [t.pos for t in batch],
        "neg_ids": [t.neg_ids for t in batch],
        "negs": [t.negs for t in batch],
        "docs": docs,
        "group": 1 + (len(batch[0].neg_ids) if batch else 0),
    }
