"""One rank of the two-rank DDP test (test_torch.py starts two): trains a
tiny scorer for a few steps on a TripleDataset through a DataLoader with
workers, and writes the triple numbers it trained on.

ddp_rank.py OUT CORPUS QUERIES QRELS RUN, with MASTER_ADDR, MASTER_PORT,
RANK and WORLD_SIZE in the environment, as torchrun sets them."""
import faulthandler
import json
import sys
import zlib

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader

from docdex.torch import DistributedSampler, TripleDataset, collate_triples

BUCKETS = 512


def bags(texts):
    """Each text's words, hashed into BUCKETS: (flat ids, offsets)."""
    ids, offsets = [], []
    for t in texts:
        offsets.append(len(ids))
        ids.extend(zlib.crc32(w.encode()) % BUCKETS for w in (t.split() or [""]))
    return torch.tensor(ids), torch.tensor(offsets)


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.EmbeddingBag(BUCKETS, 16)

    def forward(self, queries, docs, group):
        q = self.emb(*bags(queries))
        d = self.emb(*bags(docs)).view(len(queries), group, -1)
        return (d * q.unsqueeze(1)).sum(-1)


def main():
    out, corpus, queries, qrels, run = sys.argv[1:6]
    # Far past the few seconds a run takes: a hang prints where each thread
    # was, and ends the rank (test_torch.py waits 300 s).
    faulthandler.dump_traceback_later(240, exit=True)
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    ds = TripleDataset(corpus, queries=queries, qrels=qrels, run=run, negatives=2, seed=3,
                       epochs=2)
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=8, sampler=sampler, num_workers=2,
                        collate_fn=collate_triples)
    model = DistributedDataParallel(Scorer())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        numbers = []
        for batch in loader:
            scores = model(batch["query"], batch["docs"], batch["group"])
            loss = torch.nn.functional.cross_entropy(scores, torch.zeros(len(scores), dtype=torch.long))
            opt.zero_grad()
            loss.backward()
            opt.step()
            numbers += batch["n"].tolist()
            assert batch["epoch"].eq(epoch).all()
        seen.append(numbers)
    with open(out, "w") as f:
        json.dump({"rank": dist.get_rank(), "world": dist.get_world_size(), "seen": seen,
                   "epoch_length": ds.epoch_length,
                   "weights": float(sum(p.detach().double().sum() for p in model.parameters()))}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
