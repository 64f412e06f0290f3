"""The rest of tiktoken's ``Encoding`` surface, for code written against tiktoken.

:class:`~bpe_course.tokenizer.Tokenizer` holds what a tokenizer *does*: build its tables,
encode, decode, save. tiktoken's ``Encoding`` also offers conveniences on top of those:
its names for the vocabulary's facts (``n_vocab``, ``eot_token``, ...), looking up a single
token, telling special ids apart, NumPy arrays, batches of decodes.
They live here, as a class ``Tokenizer`` inherits, so that code written for tiktoken runs
on this package's tokenizers unchanged, while ``tokenizer.py`` stays short enough to read.

Each method uses only the tokenizer's public tables and methods (``vocab``,
``special_tokens``, ``encode``, ``decode``, ``decode_bytes``) and ``_ids_of``, the map from a
token's bytes to its id (the lower id when two share bytes, the one encoding produces).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .base import ENDOFTEXT, token_id_of


class TiktokenMethods:
    """tiktoken's names for a tokenizer's facts, and its single-token, NumPy and
    batch-decoding methods."""

    vocab: dict[int, bytes]
    special_tokens: dict[str, int]
    _ids_of: dict[bytes, int]

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (tiktoken's ``n_vocab``; ids may have gaps)."""
        return self.max_token_value + 1

    @property
    def max_token_value(self) -> int:
        """The largest id, special tokens included."""
        return max(self.vocab)

    @property
    def eot_token(self) -> int | None:
        """The id of ``<|endoftext|>``, or None when this tokenizer has no such token."""
        return self.special_tokens.get(ENDOFTEXT)

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens' texts."""
        return set(self.special_tokens)

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary (not special) token, sorted."""
        special_ids = set(self.special_tokens.values())
        return sorted(token for i, token in self.vocab.items() if i not in special_ids)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a text (or bytes) that is exactly one token, special tokens included.

        Anything else raises ``KeyError`` naming the bytes, as in tiktoken.

        >>> from bpe_course import Tokenizer
        >>> from bpe_course.utf8 import byte_vocab
        >>> tokenizer = Tokenizer(byte_vocab() | {256: b"hi"}, [(b"h", b"i")], ["<|endoftext|>"])
        >>> tokenizer.encode_single_token("hi"), tokenizer.encode_single_token("<|endoftext|>")
        (256, 257)
        """
        if isinstance(text_or_bytes, str):
            data = text_or_bytes.encode("utf-8")
        elif isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            data = bytes(text_or_bytes)
        else:
            raise TypeError(
                f"encode_single_token expects str or bytes, got {type(text_or_bytes).__name__}"
            )
        token_id = self._ids_of.get(data)
        if token_id is None:
            raise KeyError(data)
        return token_id

    def is_special_token(self, token_id: int) -> bool:
        """Whether ``token_id`` is the id of a special token."""
        return token_id_of(token_id, 0) in self.special_tokens.values()

    def encode_to_numpy(self, text: str, **special: Any):
        """``encode(text, ...)`` as a read-only NumPy array of ``uint32``, as tiktoken returns
        it; the keyword arguments are ``encode``'s. NumPy is imported on the first call."""
        import numpy as np

        array = np.array(self.encode(text, **special), dtype=np.uint32)  # type: ignore[attr-defined]
        array.flags.writeable = False
        return array

    def decode_batch(
        self,
        batch: Iterable[Iterable[int]],
        *,
        errors: str = "replace",
        num_threads: int | None = None,
    ) -> list[str]:
        """``[decode(ids, errors) for ids in batch]``.

        ``num_threads`` is accepted for tiktoken's sake and not used: decoding is one
        dictionary lookup per id, and Python threads would only take turns at it.
        """
        return [self.decode(ids, errors) for ids in batch]  # type: ignore[attr-defined]

    def decode_bytes_batch(
        self, batch: Iterable[Iterable[int]], *, num_threads: int | None = None
    ) -> list[bytes]:
        """``[decode_bytes(ids) for ids in batch]`` (``num_threads`` as in :meth:`decode_batch`)."""
        return [self.decode_bytes(ids) for ids in batch]  # type: ignore[attr-defined]
