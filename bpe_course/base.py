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

import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .safety.quoting import quote
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

    An empty special token would match everywhere and a repeated one would get two ids, so both are
    mistakes worth stopping on; so is one with a lone surrogate, which has no bytes to match.

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
            raise TypeError(f"special tokens must be strings, got {quote(token)}")
        if token == "":
            raise ValueError("special_tokens contains an empty string")
        if replace_lone_surrogates(token) != token:
            raise ValueError(
                f"special token {quote(token)} holds a lone surrogate, which UTF-8 cannot encode "
                "(it may come from a file name or argument that is not valid UTF-8)"
            )
        if token in seen:
            raise ValueError(f"special token {quote(token)} is given more than once")
        if len(token.encode("utf-8", errors="surrogatepass")) == 1:
            raise ValueError(
                f"special token {quote(token)} is a single byte, which already has its own id; "
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


# The checks of encode's and decode's arguments -------------------------------------------


def checked_text(text: object, method: str) -> str:
    """``text`` if it is a ``str``; else a ``TypeError`` naming ``method``."""
    if not isinstance(text, str):
        raise TypeError(f"{method} expects str, got {type(text).__name__}")
    return text


def checked_texts(texts: object, method: str) -> list[str]:
    """A batch as a list of strings (a single string is refused: it is not a batch)."""
    if isinstance(texts, str) or not isinstance(texts, Iterable):
        raise TypeError(f"{method} expects a list of strings, got {type(texts).__name__}")
    texts = list(texts)
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"{method}: text {index} is a {type(text).__name__}, not a str")
    return texts


def token_id_of(value: object, position: int) -> int:
    """``value`` as an int id if it is an integer (NumPy's too); bools and floats are not.

    >>> token_id_of(7, 0)
    7
    >>> token_id_of(7.0, 3)
    Traceback (most recent call last):
    ...
    TypeError: token ids are integers, but id 3 is 7.0 (float)
    """
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(
        f"token ids are integers, but id {position} is {value!r} ({type(value).__name__})"
    )


def checked_ids(ids: Iterable[int]) -> list[int]:
    """``ids`` as a list of Python ints, or ``TypeError`` naming the first that is not one."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise TypeError(f"expected a sequence of token ids, got {type(ids).__name__} {ids!r:.40}")
    ids = ids if isinstance(ids, list) else list(ids)
    if set(map(type, ids)) <= {int}:  # the usual case, checked at C speed
        return ids
    return [token_id_of(value, position) for position, value in enumerate(ids)]
