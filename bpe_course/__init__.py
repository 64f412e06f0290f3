"""bpe_course: byte-level BPE tokenizers from the bytes up.

The modules follow the course, one idea each, and each imports only from earlier ones:

- :mod:`~bpe_course.utf8`: bytes, UTF-8 and the 256 base tokens
- :mod:`~bpe_course.base`: the shared types, the starting vocabulary, argument checks
- :mod:`~bpe_course.naive`: BPE training and encoding as the obvious loops
- :mod:`~bpe_course.pretokenize`: GPT-2's, GPT-4's and o200k's split patterns, special tokens
- :mod:`~bpe_course.fastsplit`: the same pretokens, found by the standard library's faster ``re``
- :mod:`~bpe_course.ranks`: tiktoken's rank tables, and the merges recovered from them
- :mod:`~bpe_course.interrupts`: stopping long work cleanly on Ctrl-C and SIGTERM
- :mod:`~bpe_course.chunks`: counting pretokens of a big file in parallel
- :mod:`~bpe_course.train`: fast training (counts, incremental updates, a lazy heap)
- :mod:`~bpe_course.files`: GPT-2's vocab.json/merges.txt format and safe saving
- :mod:`~bpe_course.export`: Hugging Face's tokenizer.json and tiktoken's rank files
- :mod:`~bpe_course.batches`: encoding a batch of texts on several cores
- :mod:`~bpe_course.tokenizer`: encoding and decoding
- :mod:`~bpe_course.folder`: a trained tokenizer's folder, saved and loaded as one unit
- :mod:`~bpe_course.openai`: OpenAI's GPT-2, cl100k_base and o200k_base files, offline
- :mod:`~bpe_course.data`: corpora that need no internet
- :mod:`~bpe_course.viz`: token pictures and plots
- :mod:`~bpe_course.cli`: the ``bpe-course`` command line
"""

from .naive import encode_naive, get_pair_counts, merge, train_from_counts_naive
from .pretokenize import (
    GPT2_PATTERN,
    GPT4_PATTERN,
    O200K_PATTERN,
    pretokenize,
    split_on_special_tokens,
)
from .tokenizer import Tokenizer
from .train import train_bpe, train_bpe_naive, train_from_counts

__all__ = [
    "GPT2_PATTERN",
    "GPT4_PATTERN",
    "O200K_PATTERN",
    "Tokenizer",
    "encode_naive",
    "get_pair_counts",
    "merge",
    "pretokenize",
    "split_on_special_tokens",
    "train_bpe",
    "train_bpe_naive",
    "train_from_counts",
    "train_from_counts_naive",
]
