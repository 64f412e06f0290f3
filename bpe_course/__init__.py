"""bpe_course: byte-level BPE tokenizers from the bytes up.

The modules follow the course, one idea each:

- :mod:`~bpe_course.utf8`: bytes, UTF-8 and the 256 base tokens
- :mod:`~bpe_course.naive`: BPE training as the obvious loop
- :mod:`~bpe_course.pretokenize`: GPT-2's and GPT-4's split patterns, special tokens
- :mod:`~bpe_course.chunks`: counting pretokens of a big file in parallel
- :mod:`~bpe_course.train`: fast training (counts, incremental updates, a lazy heap)
- :mod:`~bpe_course.tokenizer`: encoding and decoding
- :mod:`~bpe_course.files`: GPT-2's vocab.json/merges.txt format
- :mod:`~bpe_course.openai`: OpenAI's GPT-2 and cl100k_base files, offline
- :mod:`~bpe_course.data`: corpora that need no internet
"""

from .naive import get_pair_counts, merge, train_bpe_naive, train_from_counts_naive
from .pretokenize import GPT2_PATTERN, GPT4_PATTERN, pretokenize, split_on_special_tokens
from .tokenizer import Tokenizer
from .train import train_bpe, train_from_counts

__all__ = [
    "GPT2_PATTERN",
    "GPT4_PATTERN",
    "Tokenizer",
    "get_pair_counts",
    "merge",
    "pretokenize",
    "split_on_special_tokens",
    "train_bpe",
    "train_bpe_naive",
    "train_from_counts",
    "train_from_counts_naive",
]
