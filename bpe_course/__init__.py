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
- :mod:`~bpe_course.wordtable`: the fast trainer's words, and the pairs a merge touches
- :mod:`~bpe_course.sharing`: the first, heaviest merges shared with helper processes
- :mod:`~bpe_course.train`: fast training (counts, incremental updates, a lazy heap)
- :mod:`~bpe_course.files`: GPT-2's vocab.json/merges.txt format and safe saving
- :mod:`~bpe_course.export`: Hugging Face's tokenizer.json and tiktoken's rank files
- :mod:`~bpe_course.batches`: encoding a batch of texts on several cores
- :mod:`~bpe_course.tokenizer`: encoding and decoding
- :mod:`~bpe_course.folder`: a trained tokenizer's folder, saved and loaded as one unit
- :mod:`~bpe_course.openai`: OpenAI's GPT-2, cl100k_base and o200k_base files, offline
- :mod:`~bpe_course.encodings`: a drop-in for tiktoken: ``Encoding``, ``get_encoding``, models
- :mod:`~bpe_course.data`: corpora that need no internet
- :mod:`~bpe_course.viz`: token pictures and plots
- :mod:`~bpe_course.cli`: the ``bpe-course`` command line
"""

import sys
from importlib import import_module  # these three are loaded already: Python's start-up uses them
from types import ModuleType

TYPE_CHECKING = False  # type checkers read it as True; no need to load typing for it

#: Where each name of the package's front door lives. A module is loaded when one of its
#: names is first used, so ``import bpe_course`` is instant, and the ``bpe-course`` command
#: can take Ctrl-C over (see :mod:`bpe_course.__main__`) before anything heavy loads.
_HOMES = {
    "Encoding": "encodings",
    "encoding_for_model": "encodings",
    "encoding_name_for_model": "encodings",
    "get_encoding": "encodings",
    "list_encoding_names": "encodings",
    "encode_naive": "naive",
    "get_pair_counts": "naive",
    "merge": "naive",
    "train_from_counts_naive": "naive",
    "GPT2_PATTERN": "pretokenize",
    "GPT4_PATTERN": "pretokenize",
    "O200K_PATTERN": "pretokenize",
    "pretokenize": "pretokenize",
    "split_on_special_tokens": "pretokenize",
    "Tokenizer": "tokenizer",
    "train_bpe": "train",
    "train_bpe_naive": "train",
    "train_from_counts": "train",
}

__all__ = sorted(_HOMES)

if TYPE_CHECKING:  # what type checkers and editors see; ruff cannot read __all__ above
    from .encodings import (  # noqa: F401
        Encoding,
        encoding_for_model,
        encoding_name_for_model,
        get_encoding,
        list_encoding_names,
    )
    from .naive import encode_naive, get_pair_counts, merge, train_from_counts_naive  # noqa: F401
    from .pretokenize import (  # noqa: F401
        GPT2_PATTERN,
        GPT4_PATTERN,
        O200K_PATTERN,
        pretokenize,
        split_on_special_tokens,
    )
    from .tokenizer import Tokenizer  # noqa: F401
    from .train import train_bpe, train_bpe_naive, train_from_counts  # noqa: F401


def __getattr__(name: str) -> object:
    """Load a front-door name (or a submodule, ``bpe_course.viz``) on first use."""
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(import_module(f".{home}", __name__), name)
        globals()[name] = value  # later uses skip this function
        return value
    try:
        return import_module(f".{name}", __name__)
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{name}":
            raise  # the submodule exists but something it imports does not
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


class _FrontDoor(ModuleType):
    """This package's module type: ``bpe_course.pretokenize`` is the function, as a learner
    expects, even after the module of the same name is loaded (Python would otherwise bind
    the module over it, since the package no longer imports the function up front)."""

    def __setattr__(self, name: str, value: object) -> None:
        if not (name in _HOMES and isinstance(value, ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _FrontDoor
