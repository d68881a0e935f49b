"""Type stubs of docdex.torch: datasets, a distributed sampler, a collate
function for PyTorch."""
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence, Sized, Tuple, Union

import torch.utils.data

from . import Corpus, Sampler, Triple

_Path = Union[str, bytes, "os.PathLike[str]"]
_Text = Union[str, bytes]

class CorpusDataset(torch.utils.data.Dataset):
    """The records of a corpus by position: ds[i] is record i's text, or
    (id, text) with ids=True."""

    corpus: Corpus
    ids: bool
    def __init__(self, corpus: Union[Corpus, _Path], field: Optional[str] = ..., *,
                 bytes: Optional[bool] = ..., ids: bool = ...) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Union[_Text, Tuple[_Text, _Text]]: ...
    def __getitems__(self, indices: Sequence[int]) -> List[Any]: ...

class TripleDataset(torch.utils.data.Dataset):
    """ds[n] is triple n of the sequence docdex sample draws with the same
    options and seed; the options are Sampler's but for the shard."""

    sampler: Sampler
    epoch_length: int
    def __init__(self, corpus: Union[Corpus, _Path, None], *, epochs: Optional[int] = ...,
                 count: Optional[int] = ..., **options: Any) -> None: ...
    def __len__(self) -> int: ...
    def __getitem__(self, n: int) -> Triple: ...
    def __getitems__(self, ns: Sequence[int]) -> List[Triple]: ...

class DistributedSampler(torch.utils.data.Sampler[int]):
    """torch's DistributedSampler (the same indices for any other dataset),
    with resume on any number of ranks, and epochs of a TripleDataset."""

    rank: int
    num_replicas: int
    shuffle: bool
    seed: int
    drop_last: bool
    epoch: int
    start: int
    def __init__(self, dataset: Sized, num_replicas: Optional[int] = ...,
                 rank: Optional[int] = ..., shuffle: bool = ..., seed: int = ...,
                 drop_last: bool = ...) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def __len__(self) -> int: ...
    def set_epoch(self, epoch: int) -> None: ...
    def state_dict(self, samples: Optional[int] = ...) -> Dict[str, int]:
        """{"epoch", "start", "seed"} after every rank took samples (default:
        as many as this one yielded) from this epoch's iterator."""
    def load_state_dict(self, state: Dict[str, int]) -> None: ...

def collate_triples(batch: List[Triple]) -> Dict[str, Any]:
    """qid, query, pos_id, pos, neg_ids, negs (lists), n and epoch (int64
    tensors), docs (each triple's positive then negatives, flat; None
    without texts) and group (1 + negatives)."""
