"""Special tokens while encoding: which ones become their id, which ones are refused.

A special token such as ``<|endoftext|>`` is cut out of the text before pretokenizing and
becomes its one id. Whether a given occurrence *should* be read that way depends on where
the text came from. In a training corpus it marks a document boundary and must be the id;
in text a user typed it must not, or the user could end a document or fake a chat turn in
what the model sees. So ``encode`` takes two arguments, with tiktoken's names and rules:

- ``allowed_special``: the special tokens to read as their id (``"all"`` or a collection);
- ``disallowed_special``: the special tokens whose presence raises
  :class:`DisallowedSpecialError` (``"all"``: every special token that is not allowed;
  ``()``: none, so the ones not allowed are read as plain text).

:class:`SpecialTokens` checks those arguments and cuts a text around the allowed tokens.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Literal

from ..base import checked_text
from ..pretokens import special_token_regex
from ..utf8 import replace_lone_surrogates
from .quoting import quote

#: Which special tokens ``encode`` turns into their ids: ``"all"`` or a collection of them.
AllowedSpecial = Literal["all"] | Collection[str]

#: Which special tokens make ``encode`` raise if found: ``"all"`` (every one not allowed) or
#: a collection of them (``()`` for none: the ones not allowed are then plain text).
DisallowedSpecial = Literal["all"] | Collection[str]

#: The usual three answers to "what do I do with special tokens in this text?", as
#: keyword arguments for ``encode``; the command line's ``--special`` takes these names.
SPECIAL_POLICIES: dict[str, dict[str, Any]] = {
    "all": {"allowed_special": "all", "disallowed_special": ()},
    "none": {"allowed_special": frozenset(), "disallowed_special": ()},
    "raise": {"allowed_special": frozenset(), "disallowed_special": "all"},
}


class DisallowedSpecialError(ValueError):
    """The text holds a special token that ``encode`` was told to refuse."""

    def __init__(self, token: str) -> None:
        self.token = token
        super().__init__(
            f"the text contains the special token {quote(token)}, which is disallowed: pass "
            f"allowed_special={{{quote(token)}}} (or 'all') to encode it as its id, or "
            "disallowed_special=() to encode it as plain text"
        )

    def __reduce__(self):  # so it survives the trip back from a worker process
        return (type(self), (self.token,))


class SpecialTokens:
    """A tokenizer's special tokens (text -> id), and the finders for any subset of them.

    >>> specials = SpecialTokens({"<|endoftext|>": 3})
    >>> specials.split("a<|endoftext|>b", "all", "all", "encode")
    ['a', '<|endoftext|>', 'b']
    >>> specials.split("a<|endoftext|>b", set(), (), "encode")
    ['a<|endoftext|>b']
    """

    def __init__(self, ids: Mapping[str, int]) -> None:
        self.ids = dict(ids)
        self.all = frozenset(self.ids)
        self.longest = max(map(len, self.ids), default=0)
        self._finder_of_all: re.Pattern[str] | None | bool = False  # False: not built yet
        self._finders: dict[frozenset[str], re.Pattern[str] | None] = {}

    @property
    def finder_of_all(self) -> re.Pattern[str] | None:
        """The finder of every special token, compiled when first needed: Llama 4's 2,048
        take 0.13 s, which a program that only calls ``encode_ordinary`` never pays."""
        if self._finder_of_all is False:
            self._finder_of_all = special_token_regex(list(self.ids))
        return self._finder_of_all  # type: ignore[return-value]

    def only(self, allowed: frozenset[str]) -> SpecialTokens:
        """The same tokens restricted to ``allowed`` (the others become plain text)."""
        return SpecialTokens({token: i for token, i in self.ids.items() if token in allowed})

    def finder(self, tokens: frozenset[str]) -> re.Pattern[str] | None:
        """A regex finding ``tokens`` (longest first), or None for no tokens; remembered."""
        if tokens is self.all or tokens == self.all:  # ``is``: no set comparison at all
            return self.finder_of_all
        found = self._finders.get(tokens)
        if found is None and tokens:
            if len(self._finders) >= 64:
                self._finders.clear()
            found = self._finders[tokens] = special_token_regex(sorted(tokens))
        return found

    def resolve(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[frozenset[str], frozenset[str]]:
        """``allowed_special`` and ``disallowed_special`` checked and spelled out as sets."""
        allowed = self.all if is_all(allowed_special) else self.named(allowed_special, "allowed")
        if is_all(disallowed_special):
            return allowed, self.all - allowed
        return allowed, self.named(disallowed_special, "disallowed")

    def named(self, tokens: object, which: str) -> frozenset[str]:
        """The special tokens a collection names (read once: an iterator is fine)."""
        argument = f"{which}_special"
        if tokens is None:
            raise TypeError(
                f"{argument}=None: pass 'all', or a set of special tokens (set() for none)"
            )
        if isinstance(tokens, str):
            if tokens == "none":
                raise ValueError(
                    f"{argument}='none' is not an option (nor in tiktoken): to encode "
                    "special tokens as plain text use encode_ordinary(text), or "
                    "allowed_special=set(), disallowed_special=()"
                )
            raise ValueError(
                f"{argument} must be 'all' or a collection of special tokens, got the string "
                f"{tokens!r} (for one token, write {{{tokens!r}}})"
            )
        if not isinstance(tokens, Iterable):
            raise TypeError(
                f"{argument} must be 'all' or a collection of special tokens, "
                f"got {type(tokens).__name__}"
            )
        try:
            named = frozenset(tokens)
        except TypeError:  # an unhashable member, such as a list
            raise TypeError(f"{argument} must hold strings, got {tokens!r:.80}") from None
        for token in named:
            if not isinstance(token, str):
                raise TypeError(f"{argument} must hold strings, got {quote(token)}")
        unknown = named - self.all
        if unknown:
            known = sorted(self.ids) or "none"
            raise ValueError(
                f"{argument} names {sorted(unknown)}, which are not special tokens of this "
                f"tokenizer (its special tokens: {known})"
            )
        return named

    def refuse(self, texts: Iterable[str], disallowed: frozenset[str]) -> None:
        """Raise :class:`DisallowedSpecialError` if one of ``texts`` holds a ``disallowed``
        token."""
        finder = self.finder(disallowed)
        if finder is not None:
            for text in texts:
                refuse_disallowed(finder, text, 0, final=True)

    def split(
        self,
        text: str,
        allowed_special: AllowedSpecial,
        disallowed_special: DisallowedSpecial,
        method: str,
    ) -> list[str]:
        """``text`` cut around its allowed special tokens: plain text at even positions,
        special tokens at odd ones. A disallowed special token in it raises
        :class:`DisallowedSpecialError` first; then surrogates are replaced, as tiktoken does."""
        text = checked_text(text, method)
        allowed, disallowed = self.resolve(allowed_special, disallowed_special)
        self.refuse([text], disallowed)
        text = replace_lone_surrogates(text)
        finder = self.finder(allowed)
        return [text] if finder is None else finder.split(text)


def is_all(value: object) -> bool:
    """Is ``value`` the string ``"all"`` (not an array or set, which ``==`` would compare)?"""
    return isinstance(value, str) and value == "all"


def refuse_disallowed(
    finder: re.Pattern[str], window: str, longest: int, *, final: bool
) -> str:
    """Raise :class:`DisallowedSpecialError` for the first disallowed special token in
    ``window`` that more text could not turn into a longer one; return the tail to keep.

    A match that starts within the last ``longest - 1`` characters waits for the next chunk
    (``final=False``), so a stream names the same token as a search of the whole text.
    """
    match = finder.search(window)
    if match and (final or match.start() + longest <= len(window)):
        raise DisallowedSpecialError(match.group())
    return window[max(0, len(window) - longest + 1) :]
