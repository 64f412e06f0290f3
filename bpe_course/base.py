"""What every later lesson shares: the types, the starting vocabulary, and argument checks.

A BPE tokenizer is two tables. The *vocabulary* maps ids to bytes: the 256 single bytes,
then any special tokens, then one token per merge. The *merges* list the pairs of tokens
that were joined, in the order they were learned. Training produces both; encoding
replays the merges; every file format in the course stores them.

The checks live here too, so that the slow trainer, the fast one and the command line
refuse a bad vocabulary size or a repeated special token with the same words, and do it
before any corpus is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .utf8 import NUM_BYTES, byte_vocab, replace_lone_surrogates

#: Adjacent token ids, the thing BPE counts and merges.
Pair = tuple[int, int]

#: id -> the token's bytes.
Vocab = dict[int, bytes]

#: The merged pairs of bytes, in the order they were learned.
Merges = list[tuple[bytes, bytes]]

#: A file name as a string or a ``pathlib.Path``.
PathLike = str | os.PathLike[str]

#: The separator GPT-2 and CS336 put between documents.
ENDOFTEXT = "<|endoftext|>"


def check_special_tokens(special_tokens: Iterable[str] | None) -> list[str]:
    """Return the special tokens as a list, refusing empty or repeated ones.

    An empty special token would match everywhere and a repeated one would get two ids,
    so both are mistakes worth stopping on; so is one with a lone surrogate, which has
    no bytes to match.

    >>> check_special_tokens(("<|endoftext|>",))
    ['<|endoftext|>']
    >>> check_special_tokens(["<s>", "<s>"])
    Traceback (most recent call last):
    ...
    ValueError: special token '<s>' is given more than once
    """
    if special_tokens is None:
        return []
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError(
            f"special_tokens must be a list of strings, not the single value {special_tokens!r}"
        )
    tokens = list(special_tokens)
    seen: set[str] = set()
    for token in tokens:
        if not isinstance(token, str):
            raise TypeError(f"special tokens must be strings, got {token!r}")
        if token == "":
            raise ValueError("special_tokens contains an empty string")
        if replace_lone_surrogates(token) != token:
            raise ValueError(
                f"special token {token!r} holds a lone surrogate, which UTF-8 cannot encode "
                "(it may come from a file name or argument that is not valid UTF-8)"
            )
        if token in seen:
            raise ValueError(f"special token {token!r} is given more than once")
        if len(token.encode("utf-8", errors="surrogatepass")) == 1:
            raise ValueError(
                f"special token {token!r} is a single byte, which already has its own id; "
                "a special token needs an id of its own, so it must be longer"
            )
        seen.add(token)
    return tokens


def initial_vocab(special_tokens: Sequence[str] = ()) -> Vocab:
    """Ids 0-255 are the bytes, then one id per special token in the given order.

    A special token is a single id even when its bytes are only one byte long (``"!"``)
    or equal another special token's: the ids are what the model sees.

    >>> vocab = initial_vocab(["<|endoftext|>"])
    >>> len(vocab), vocab[32], vocab[256]
    (257, b' ', b'<|endoftext|>')
    """
    vocab = byte_vocab()
    for token in special_tokens:
        vocab[len(vocab)] = token.encode("utf-8")
    return vocab


def merges_to_learn(vocab_size: int, special_tokens: Sequence[str]) -> int:
    """How many merges fit in ``vocab_size`` after the 256 bytes and the special tokens.

    >>> merges_to_learn(300, ["<|endoftext|>"])
    43
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    smallest = NUM_BYTES + len(special_tokens)
    if vocab_size < smallest:
        raise ValueError(
            f"vocab_size={vocab_size} is smaller than the {NUM_BYTES} byte tokens plus "
            f"{len(special_tokens)} special tokens = {smallest}"
        )
    return vocab_size - smallest


def start_training(
    vocab_size: int, special_tokens: Iterable[str]
) -> tuple[list[str], int, Vocab]:
    """What every trainer starts from: the checked special tokens, how many merges to
    learn, and the vocabulary before any merge (:func:`initial_vocab`)."""
    specials = check_special_tokens(special_tokens)
    return specials, merges_to_learn(vocab_size, specials), initial_vocab(specials)


def check_int(value: Any, name: str, minimum: int = 0) -> int:
    """``value`` if it is a whole number (not a bool) of at least ``minimum``; else an error
    naming ``name``, instead of a slice or a loop going quietly wrong with it later.

    >>> check_int(5, "max_bytes")
    5
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_num_processes(num_processes: Any) -> int | None:
    """``None`` (every core) or a whole number of worker processes, at least 1."""
    if num_processes is None:
        return None
    if isinstance(num_processes, bool) or not isinstance(num_processes, int):
        raise TypeError(f"num_processes must be an int or None, got {num_processes!r}")
    if num_processes < 1:
        raise ValueError(f"num_processes must be at least 1, got {num_processes}")
    return num_processes


def process_count(num_processes: Any) -> int:
    """How many processes ``num_processes`` asks for, checked: every core for ``None``.

    >>> process_count(3)
    3
    """
    return check_num_processes(num_processes) or os.cpu_count() or 1


def corpus_paths(input_path: PathLike | Iterable[PathLike]) -> list[str]:
    """Accept one corpus path or several; check each is an existing file, before any reading.

    A ``bytes`` path is refused with a reason: text corpora are named by text paths.
    """
    if isinstance(input_path, (bytes, bytearray)):
        raise TypeError(f"input_path must be a str or os.PathLike, not bytes: {input_path!r}")
    if isinstance(input_path, (str, os.PathLike)):
        candidates: list[Any] = [input_path]
    else:
        try:
            candidates = list(input_path)
        except TypeError:
            raise TypeError(
                f"input_path must be a path or a list of paths, got {type(input_path).__name__}"
            ) from None
    if not candidates:
        raise ValueError("input_path is an empty list: give at least one corpus file")
    paths = []
    for candidate in candidates:
        if not isinstance(candidate, (str, os.PathLike)):
            raise TypeError(f"corpus paths must be str or os.PathLike, got {candidate!r}")
        path = os.fspath(candidate)
        if not isinstance(path, str):
            raise TypeError(f"corpus paths must be text, not bytes: {path!r}")
        if not os.path.exists(path):
            raise FileNotFoundError(f"corpus file not found: {path}")
        if os.path.isdir(path):
            raise IsADirectoryError(f"corpus path is a directory, not a file: {path}")
        if not os.path.isfile(path):
            raise ValueError(
                f"corpus path is not a regular file: {path} (training reads files in "
                "chunks, so pipes and devices cannot be used; save the text to a file)"
            )
        paths.append(path)
    return paths


#: A token id written as text: ASCII digits only (``int()`` would also take ``١٢`` or ``1_0``).
TOKEN_ID = re.compile(r"[0-9]+")


def parse_token_ids(texts: Iterable[str], where: str) -> list[int]:
    """Token ids written as ASCII digits and separated by any whitespace (also inside one
    text, as a shell's ``"$(cat ids.txt)"`` gives); anything else names the word and where.

    >>> parse_token_ids(["15496 11", "995\\t0\\r\\n"], "arguments")
    [15496, 11, 995, 0]
    """
    ids = []
    for word in " ".join(texts).split():
        if not TOKEN_ID.fullmatch(word):
            raise ValueError(f"{where}: {word!r} is not a token id (digits 0-9 only)")
        if len(word.lstrip("0")) > 20:  # beyond any tokenizer, and too long for int() maybe
            raise ValueError(f"unknown token id {word[:20]}... ({len(word)} digits)")
        ids.append(int(word))
    return ids


#: Progress-bar labels are padded to this width so stacked bars line up.
PROGRESS_LABEL_WIDTH = 12


def progress_bar(enabled: bool, total: int, desc: str, **details: Any) -> Any:
    """A tqdm bar when ``enabled`` (a widget in Jupyter), else a silent stand-in.

    ``tqdm.auto`` is imported only for a visible bar: in Jupyter without ipywidgets the
    import itself prints a warning, which would land in the output of unrelated cells.

    The bar does not draw itself while it is being made (a ``delay`` above 0), only once the
    caller's ``with`` block has begun and calls ``refresh``. tqdm draws first and sets its
    clock last, so a Ctrl-C landing in between left a bar on screen that ``close`` would not
    finish, and the error message was written on the end of its line.
    """
    if enabled:
        from tqdm.auto import tqdm
    else:
        from tqdm import tqdm
    label = desc.ljust(PROGRESS_LABEL_WIDTH)
    return tqdm(total=total, disable=not enabled, desc=label, delay=1e-9, **details)


def first_difference(left: Sequence[Any], right: Sequence[Any]) -> int | None:
    """The first index where two sequences differ (the shorter length if one is a prefix
    of the other), or ``None`` when they are equal. Used to report *where* results part.

    >>> first_difference([1, 2, 3], [1, 5, 3]), first_difference("ab", "abc")
    (1, 2)
    >>> first_difference("", "") is None
    True
    """
    for index, (a, b) in enumerate(zip(left, right)):
        if a != b:
            return index
    return None if len(left) == len(right) else min(len(left), len(right))


def word_bytes(
    word_counts: Mapping[str | bytes, int], special_tokens: Sequence[str] = ()
) -> list[tuple[bytes, int]]:
    """``(bytes, count)`` for every pretoken that occurs, checked for what training assumes.

    Counts must be whole numbers. A pretoken may not contain a special token: text is split
    on special tokens before it is counted, so a merge can never rebuild one, and if it did
    the same bytes would get two ids (which no vocabulary file can store).

    >>> word_bytes({"low": 5, "": 0, b"er": 2})
    [(b'low', 5), (b'er', 2)]
    """
    specials = [token.encode("utf-8") for token in special_tokens]
    words = []
    for word, count in word_counts.items():
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError(f"the count of {word!r} must be an int, got {count!r}")
        if count <= 0:
            continue
        data = replace_lone_surrogates(word).encode() if isinstance(word, str) else bytes(word)
        for special in specials:
            if special in data:
                raise ValueError(
                    f"pretoken {word!r} contains the special token {special.decode()!r}; cut "
                    "special tokens out before counting (count_pretokens does), since a "
                    "special token must never be merged"
                )
        words.append((data, count))
    return words


@runtime_checkable
class BPETables(Protocol):
    """What any byte-level BPE tokenizer is made of, whoever built it.

    File formats and exports need only these four attributes, so they can be written (and
    read) before the :class:`~bpe_course.tokenizer.Tokenizer` class is.
    """

    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    special_tokens: dict[str, int]
    pattern: str
