"""bpe_course: byte-level BPE tokenizers from the bytes up.

The top level is the teaching core, one idea a module, in the order the course teaches them;
each imports only from earlier ones:

- :mod:`~bpe_course.utf8`: bytes, UTF-8 and the 256 base tokens
- :mod:`~bpe_course.base`: the shared types, the starting vocabulary, argument checks
- :mod:`~bpe_course.naive`: BPE training and encoding as the obvious loops
- :mod:`~bpe_course.pretokens`: GPT-2's, GPT-4's and o200k's split patterns, special tokens
- :mod:`~bpe_course.train`: fast training (count once, update instead of recounting, a heap)
- :mod:`~bpe_course.tokenizer`: encoding and decoding
- :mod:`~bpe_course.openai`: OpenAI's GPT-2, cl100k_base and o200k_base files, offline
- :mod:`~bpe_course.models`: open models' tokenizers (Llama, Qwen, DeepSeek, Mistral), offline
- :mod:`~bpe_course.encodings`: a drop-in for tiktoken: ``Encoding``, ``get_encoding``, models

Below them, subpackages hold what makes the core fast, safe and useful, each named for what
it holds: :mod:`~bpe_course.speed` (the fast paths), :mod:`~bpe_course.formats` (files in
and out), :mod:`~bpe_course.safety` (signals, files written safely, special tokens in users' text),
:mod:`~bpe_course.course` (corpora and pictures for the notebooks) and
:mod:`~bpe_course.app` (the ``bpe-course`` command line).
"""

from importlib import import_module  # loaded already: Python's start-up uses it

TYPE_CHECKING = False  # type checkers read it as True; no need to load typing for it

#: Where each name of the package's front door lives. A module is loaded when one of its
#: names is first used, so ``import bpe_course`` is instant, and the ``bpe-course`` command
#: can take Ctrl-C over (see :mod:`bpe_course.__main__`) before anything heavy loads.
_HOMES = {
    "Encoding": "tiktoken_encoding",
    "encoding_for_model": "encodings",
    "encoding_name_for_model": "encodings",
    "get_encoding": "encodings",
    "list_encoding_names": "encodings",
    "encode_naive": "naive",
    "encode_to_array": "formats.arrays",
    "get_pair_counts": "naive",
    "merge": "naive",
    "train_from_counts_naive": "naive",
    "GPT2_PATTERN": "pretokens",
    "GPT4_PATTERN": "pretokens",
    "O200K_PATTERN": "pretokens",
    "pretokenize": "pretokens",
    "split_on_special_tokens": "pretokens",
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
    from .formats.arrays import encode_to_array  # noqa: F401
    from .naive import encode_naive, get_pair_counts, merge, train_from_counts_naive  # noqa: F401
    from .pretokens import (  # noqa: F401
        GPT2_PATTERN,
        GPT4_PATTERN,
        O200K_PATTERN,
        pretokenize,
        split_on_special_tokens,
    )
    from .tokenizer import Tokenizer  # noqa: F401
    from .train import train_bpe, train_bpe_naive, train_from_counts  # noqa: F401


def __getattr__(name: str) -> object:
    """Load a front-door name (or a submodule, ``bpe_course.speed``) on first use."""
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
