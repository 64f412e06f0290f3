"""Seeing tokens: token boundaries in colour (HTML and terminal) and a few plots.

Reading a list of ids tells you little; seeing the text cut into coloured pieces tells you
at once that " the" is one token, that a number is split in threes, or that an emoji takes
four. :func:`show_tokens` draws those pieces in a notebook (HTML) or a terminal (ANSI).

A byte-level token can end in the middle of a character: GPT-2 spends two tokens on most
Chinese characters and on every Devanagari letter. Such a token has no text of its own, so
drawing each token's text would print U+FFFD (``�``) boxes. Instead the text is cut into
*groups*: the shortest runs of tokens whose edges are also edges between characters.

- A group of one token is drawn as before: its text on its own colour.
- A group of several tokens shares characters. Its characters are drawn once, and under
  them one box per token, as wide as the token's bytes, labelled with the bytes in hex. A
  character that spans two boxes is split between those two tokens. Hovering shows each
  token's id and bytes, and each character's code points.

"Character" here means what a reader sees as one (a grapheme cluster: "स्ते" or "👩‍👧" or
"é" written as e + U+0301), so Hindi and emoji sequences are drawn shaped, not in pieces.
In a terminal, a group of several tokens prints its characters underlined, then its tokens'
bytes in brackets: ``你[e4 bd|a0]`` (each token on its own colour).

Any tokenizer with the methods of :class:`TokenizerLike` works: this package's
:class:`~bpe_course.tokenizer.Tokenizer` and ``tiktoken.Encoding`` both have them.

The plot helpers use matplotlib only, take an optional ``ax`` to draw into, and return the
Axes, so a notebook can put several of them side by side.
"""

from __future__ import annotations

import html
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import regex

from ..naive import merge_ranks

#: Background colours for HTML tokens, used in turn so neighbours always differ.
HTML_COLOURS = ("#cfe8ff", "#ffe3b3", "#d4f5d0", "#f9d2e6", "#e4dcff", "#fff5b0")

#: The HTML colour of special tokens such as ``<|endoftext|>``.
HTML_SPECIAL_COLOUR = "#ff9e9e"

#: ANSI 256-colour backgrounds for the terminal, used in turn; black text sits on all of them.
ANSI_COLOURS = (153, 223, 194, 218, 189, 229)

#: The ANSI background of special tokens.
ANSI_SPECIAL_COLOUR = 210

ANSI_RESET = "\x1b[0m"
ANSI_UNDERLINE = "\x1b[4m"

#: How invisible characters are drawn. A newline keeps its line break after the mark.
VISIBLE_WHITESPACE = {" ": "·", "\t": "→", "\n": "↵\n", "\r": "␍"}

#: Control characters a terminal would obey instead of drawing: C0 but tab and newline, DEL
#: and C1. Each is drawn as Python writes it in a string (``\x1b``, ``\r``).
CONTROL_MARKS = {
    code: repr(chr(code))[1:-1]
    for code in [*range(0x00, 0x20), *range(0x7F, 0xA0)]
    if chr(code) not in "\t\n"
}

REPLACEMENT_CHAR = "\ufffd"

#: One user-perceived character (an extended grapheme cluster).
_GRAPHEME = regex.compile(r"\X")


@runtime_checkable
class TokenizerLike(Protocol):
    """What the pictures need from a tokenizer (tiktoken's names).

    :class:`bpe_course.tokenizer.Tokenizer` and ``tiktoken.Encoding`` both satisfy it.
    """

    @property
    def special_tokens_set(self) -> AbstractSet[str]: ...

    def encode(self, text: str, *, allowed_special: Any = ...) -> list[int]: ...

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list[bytes]: ...

    def decode_single_token_bytes(self, token: int) -> bytes: ...


class TrainedTokenizer(TokenizerLike, Protocol):
    """A tokenizer that also lists its merges in the order they were learned."""

    merges: Sequence[tuple[bytes, bytes]]


def _check_text(text: object, function: str) -> None:
    """A clear error for ``f(tokenizer, text)``, the argument order before (text, tokenizer)."""
    if not isinstance(text, str):
        raise TypeError(
            f"{function}(text, tokenizer) takes the text first, then the tokenizer; "
            f"got {type(text).__name__} as the text"
        )


# Tokens, characters and groups -------------------------------------------------------------


@dataclass(frozen=True)
class TokenSpan:
    """One token of an encoded text: its id, its bytes, where they start, and its kind."""

    token_id: int
    data: bytes
    start: int
    special: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.data)

    @property
    def text(self) -> str | None:
        """The token's own text, or None when its bytes are not whole UTF-8 characters."""
        try:
            return self.data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    @property
    def hex(self) -> str:
        return self.data.hex(" ")

    def describe(self) -> str:
        """The hover text: id and exact bytes."""
        kind = "special token " if self.special else ""
        note = "" if self.text is not None else " (part of a UTF-8 character)"
        return f"{kind}id {self.token_id}: {self.data!r}{note}"


@dataclass(frozen=True)
class Character:
    """One user-perceived character (grapheme cluster) and where its bytes lie."""

    text: str
    start: int
    size: int

    @property
    def end(self) -> int:
        return self.start + self.size

    def describe(self) -> str:
        """The hover text: code points, names and UTF-8 bytes."""
        points = ", ".join(
            f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in self.text
        )
        return f"{self.text!r}: {points}; UTF-8 {self.text.encode('utf-8', 'replace').hex(' ')}"


@dataclass(frozen=True)
class TokenGroup:
    """Tokens whose edges fall between characters only at the group's own two ends."""

    tokens: tuple[TokenSpan, ...]
    characters: tuple[Character, ...]

    @property
    def shared(self) -> bool:
        """True when some character is split between two of the group's tokens."""
        return len(self.tokens) > 1

    @property
    def start(self) -> int:
        return self.tokens[0].start


def token_spans(text: str, tokenizer: TokenizerLike) -> list[tuple[int, bytes]]:
    """The ``(id, bytes)`` of each token of ``text``, special tokens included.

    Joining the bytes gives back ``text.encode("utf-8")`` (for text without lone surrogates).
    """
    _check_text(text, "token_spans")
    ids = tokenizer.encode(text, allowed_special="all")
    return list(zip(ids, tokenizer.decode_tokens_bytes(ids)))


def special_token_ids(tokenizer: TokenizerLike) -> set[int]:
    """The ids of the tokenizer's special tokens, found through ``encode`` alone."""
    return {
        token_id
        for name in tokenizer.special_tokens_set
        for token_id in tokenizer.encode(name, allowed_special={name})
    }


def _code_points(data: bytes) -> list[tuple[str, int, int]]:
    """``(character, start, size)`` for each UTF-8 character of ``data``.

    A byte that does not start a valid character becomes U+FFFD of size 1, so broken
    input (which ``encode`` never produces) is drawn byte by byte instead of failing.
    """
    out: list[tuple[str, int, int]] = []
    position = 0
    while position < len(data):
        lead = data[position]
        size = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        try:
            char = data[position : position + size].decode("utf-8")
        except UnicodeDecodeError:
            char, size = REPLACEMENT_CHAR, 1
        out.append((char, position, size))
        position += size
    return out


def characters_of(data: bytes) -> list[Character]:
    """The grapheme clusters of UTF-8 ``data`` with their byte positions."""
    points = _code_points(data)
    text = "".join(char for char, _, _ in points)
    characters = []
    for match in _GRAPHEME.finditer(text):
        first, last = points[match.start()], points[match.end() - 1]
        characters.append(Character(match.group(), first[1], last[1] + last[2] - first[1]))
    return characters


def group_tokens(spans: Sequence[TokenSpan]) -> list[TokenGroup]:
    """Cut a text's tokens into groups at the offsets that end both a token and a character."""
    data = b"".join(span.data for span in spans)
    characters = characters_of(data)
    character_ends = {character.end for character in characters}
    groups: list[TokenGroup] = []
    tokens: list[TokenSpan] = []
    chars = iter(characters)
    for span in spans:
        tokens.append(span)
        if span.end in character_ends:
            group_chars: list[Character] = []
            for character in chars:
                group_chars.append(character)
                if character.end == span.end:
                    break
            groups.append(TokenGroup(tuple(tokens), tuple(group_chars)))
            tokens = []
    if tokens:  # only for data that ends inside a character
        groups.append(TokenGroup(tuple(tokens), tuple(chars)))
    return groups


def token_groups(text: str, tokenizer: TokenizerLike) -> list[TokenGroup]:
    """The groups :func:`show_tokens` draws for ``text``: see the module's docstring."""
    _check_text(text, "token_groups")
    special = special_token_ids(tokenizer)
    spans: list[TokenSpan] = []
    start = 0
    for token_id, data in token_spans(text, tokenizer):
        spans.append(TokenSpan(token_id, data, start, token_id in special))
        start += len(data)
    return group_tokens(spans)


# HTML ----------------------------------------------------------------------------------------


def _visible(text: str) -> str:
    """HTML for ``text`` with whitespace drawn as faint marks (the text itself escaped)."""
    out: list[str] = []
    for char in text:
        mark = VISIBLE_WHITESPACE.get(char)
        if mark is None:
            out.append(html.escape(char))
        else:
            # The mark is faint; a newline's line break stays outside the faint span.
            shown, rest = (mark[:-1], "\n") if mark.endswith("\n") else (mark, "")
            out.append(f'<span style="opacity:0.45">{shown}</span>{rest}')
    return "".join(out)


def draw_controls(text: str) -> str:
    """``text`` with its control characters drawn, not obeyed (:data:`CONTROL_MARKS`).

    A text, a token or a file name can hold ESC, BEL, CR or backspace, which a terminal
    obeys: a hostile text could set the window's title, move the cursor or repaint what
    was printed before it. ``less`` and ``cat -v`` draw them instead; so does everything
    this package prints to a terminal. Tab and newline are only layout, and stay.

    >>> draw_controls("a\\x1b]0;pwned\\x07\\r\\n\\tb")
    'a\\\\x1b]0;pwned\\\\x07\\\\r\\n\\tb'
    """
    return text.translate(CONTROL_MARKS)


def _mark(char: str) -> str:
    """The visible mark of a whitespace character (a newline without its line break)."""
    return VISIBLE_WHITESPACE.get(char, char).rstrip("\n") or char


def _colour(span: TokenSpan, index: int) -> str:
    return HTML_SPECIAL_COLOUR if span.special else HTML_COLOURS[index % len(HTML_COLOURS)]


#: Width of one byte of a shared group, in em: a character sits over its bytes' boxes.
BYTE_WIDTH_EM = 1.6

#: Hex label size: 3 monospace advances (0.6 em) per byte are 1.53 em, within BYTE_WIDTH_EM.
HEX_SIZE_EM = 0.85


def _em(value: float) -> str:
    return f"{value:.4g}em"


def _html_group(group: TokenGroup, first_index: int) -> str:
    """One group: a coloured token, or characters over a row of token boxes in hex.

    JupyterLab's sanitizer (an untrusted notebook, RISE) drops grid placement and
    ``unicode-bidi: isolate`` but keeps inline blocks, widths in em, borders and ``dir``:
    a shared group is two rows, characters over byte boxes, each byte as wide in both. A
    whole token is a plain span, not isolated, so an Arabic word cut into two tokens in an
    English line still runs right to left, as it does without the colours.
    """
    if not group.shared:
        span = group.tokens[0]
        title = html.escape(span.describe(), quote=True)
        return (
            f'<span class="bpe-token" style="background:{_colour(span, first_index)};'
            f'border-radius:2px" '
            f'title="{title}">{_visible(span.data.decode("utf-8", "replace"))}</span>'
        )
    characters: list[str] = []
    for character in group.characters:
        owner = next(s for s in group.tokens if s.start <= character.start < s.end)
        fill = (
            f"background:{_colour(owner, first_index + group.tokens.index(owner))}"
            if character.end <= owner.end  # the whole character is in one token
            else "border:1px dashed #888"
        )
        shown = "".join(_mark(char) for char in character.text)
        characters.append(
            f'<span class="bpe-char" style="display:inline-block;box-sizing:border-box;'
            f'width:{_em(character.size * BYTE_WIDTH_EM)};text-align:center;{fill}" '
            f'title="{html.escape(character.describe(), quote=True)}">'
            f"{html.escape(shown)}</span>"
        )
    boxes: list[str] = []
    for offset, span in enumerate(group.tokens):
        width = len(span.data) * BYTE_WIDTH_EM / HEX_SIZE_EM  # in the label's own em
        boxes.append(
            f'<span class="bpe-bytes" dir="ltr" style="display:inline-block;'
            f"box-sizing:border-box;width:{_em(width)};font-size:{_em(HEX_SIZE_EM)};"
            f"text-align:center;border:1px solid #fff;border-radius:3px;"
            f'background:{_colour(span, first_index + offset)}" '
            f'title="{html.escape(span.describe(), quote=True)}">{span.hex}</span>'
        )
    row = "display:block;white-space:nowrap;line-height"
    return (
        '<span class="bpe-shared" style="display:inline-block;vertical-align:top;'
        'margin:0 1px 0.2em">'
        f'<span class="bpe-char-row" style="{row}:1.5">{"".join(characters)}</span>'
        f'<span class="bpe-byte-row" style="{row}:1.2">{"".join(boxes)}</span></span>'
    )


def html_tokens(text: str, tokenizer: TokenizerLike) -> str:
    """An HTML fragment that draws ``text`` as coloured tokens (hover: id and bytes)."""
    groups = token_groups(text, tokenizer)
    parts: list[str] = []
    index = 0
    for group in groups:
        parts.append(_html_group(group, index))
        index += len(group.tokens)
    n_bytes = sum(len(span.data) for group in groups for span in group.tokens)
    split = sum(len(group.characters) for group in groups if group.shared)
    caption = f"{index} tokens, {n_bytes} bytes"
    if split:
        caption += (
            f"; {split} characters sit in tokens that cut a character: each is drawn once, "
            "over one box per token holding the token's bytes in hex"
        )
    return (
        '<div class="bpe-tokens" dir="auto" style="font-family:monospace;white-space:pre-wrap;'
        f'line-height:1.7;color:#000">{"".join(parts)}</div>'
        f'<div style="font-size:smaller;color:#666">{caption}</div>'
    )


# Terminal ------------------------------------------------------------------------------------


def _ansi(text: str, colour: int) -> str:
    """``text`` on an ANSI background, reset before each newline so it does not paint on."""
    start = f"\x1b[30;48;5;{colour}m"
    return "\n".join(f"{start}{line}{ANSI_RESET}" if line else "" for line in text.split("\n"))


def ansi_tokens(text: str, tokenizer: TokenizerLike, *, colour: bool = True) -> str:
    """``text`` with each token on an alternating ANSI background, for a terminal.

    Tokens made of whole characters print as themselves, so with the escape codes removed
    the output is the text, but for control characters, which are drawn as ``\\x1b``
    (:func:`draw_controls`): a text must not drive the terminal. Where tokens split a
    character, the characters print once, underlined, followed by the tokens' bytes in hex:
    ``你[e4 bd|a0]`` means that 你 is the two tokens ``e4 bd`` and ``a0``. With
    ``colour=False`` (a pipe, or ``NO_COLOR``) there are no escape codes and ``|`` stands
    between tokens instead.
    """
    if not colour:
        return "|".join(plain_groups(text, tokenizer))
    out: list[str] = []
    index = 0
    for group in token_groups(text, tokenizer):
        colours = [
            ANSI_SPECIAL_COLOUR if span.special else ANSI_COLOURS[(index + i) % len(ANSI_COLOURS)]
            for i, span in enumerate(group.tokens)
        ]
        if group.shared:
            shown = draw_controls("".join(character.text for character in group.characters))
            chips = "|".join(_ansi(span.hex, c) for span, c in zip(group.tokens, colours))
            out.append(f"{ANSI_UNDERLINE}{shown}{ANSI_RESET}[{chips}]")
        else:
            out.append(_ansi(draw_controls(group.tokens[0].data.decode("utf-8", "replace")),
                             colours[0]))
        index += len(group.tokens)
    return "".join(out)


def plain_groups(text: str, tokenizer: TokenizerLike) -> list[str]:
    """Each token group of ``text`` as plain text: ``hello``, or ``你[e4 bd|a0]`` where tokens
    share a character."""
    shown = []
    for group in token_groups(text, tokenizer):
        if group.shared:
            characters = draw_controls("".join(character.text for character in group.characters))
            shown.append(characters + "[" + "|".join(span.hex for span in group.tokens) + "]")
        else:
            shown += [draw_controls(span.data.decode("utf-8", "replace")) for span in group.tokens]
    return shown


class TokenView:
    """What :func:`show_tokens` returns: HTML in a notebook, ANSI colours in ``str()``."""

    def __init__(self, text: str, tokenizer: TokenizerLike) -> None:
        _check_text(text, "show_tokens")
        self.text = text
        self.tokenizer = tokenizer
        self.spans = token_spans(text, tokenizer)

    def __len__(self) -> int:
        return len(self.spans)

    def __repr__(self) -> str:
        return f"<TokenView: {len(self.spans)} tokens for {len(self.text)} characters>"

    def __str__(self) -> str:
        return ansi_tokens(self.text, self.tokenizer)

    def _repr_html_(self) -> str:
        return html_tokens(self.text, self.tokenizer)


def show_tokens(text: str, tokenizer: TokenizerLike) -> TokenView:
    """Show how ``tokenizer`` cuts ``text``: the last line of a notebook cell draws it in
    colour, and ``print(show_tokens(...))`` colours it in a terminal."""
    return TokenView(text, tokenizer)


# Numbers -------------------------------------------------------------------------------------


def bytes_per_token(text: str, tokenizer: TokenizerLike) -> float:
    """UTF-8 bytes of ``text`` per token: the compression a tokenizer achieves on it.

    Higher is better: the same text costs fewer tokens (and so less model compute).
    """
    _check_text(text, "bytes_per_token")
    n_tokens = len(tokenizer.encode(text, allowed_special="all"))
    if n_tokens == 0:
        raise ValueError("bytes_per_token needs a non-empty text")
    return len(text.encode("utf-8")) / n_tokens


def merged_token_ranks(tokenizer: TrainedTokenizer) -> dict[bytes, int]:
    """``{token bytes: merge rank}`` for every token made by a merge (rank 0 = learned first).

    Keyed by the bytes a merge makes (two merges can make the same bytes: the first counts),
    so a token id is looked up through ``decode_single_token_bytes``.
    """
    ranks: dict[bytes, int] = {}
    for (left, right), rank in sorted(merge_ranks(tokenizer.merges).items(), key=lambda kv: kv[1]):
        ranks.setdefault(left + right, rank)
    return ranks


# Plots ---------------------------------------------------------------------------------------

def _axes(ax):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=(7, 4))
    return ax


def plot_bytes_per_token(
    vocab_sizes: Sequence[int],
    bytes_per_token: Sequence[float],
    label: str | None = None,
    *,
    ax=None,
):
    """Bytes per token against vocabulary size, as a line; call again on ``ax`` to compare."""
    if len(vocab_sizes) != len(bytes_per_token):
        raise ValueError(
            f"{len(vocab_sizes)} vocab sizes but {len(bytes_per_token)} bytes-per-token values"
        )
    ax = _axes(ax)
    ax.plot(list(vocab_sizes), list(bytes_per_token), marker="o", label=label)
    ax.set_xlabel("vocabulary size")
    ax.set_ylabel("bytes per token (higher = better compression)")
    ax.grid(True, alpha=0.3)
    if label is not None:
        ax.legend()
    return ax


def _rows(table: Any) -> dict[str, dict[str, float]]:
    """``{row: {column: value}}`` from a nested mapping or a pandas DataFrame."""
    if hasattr(table, "to_dict") and not isinstance(table, Mapping):
        table = table.to_dict("index")
    return {
        str(row): {str(col): float(value) for col, value in cols.items()}
        for row, cols in table.items()
    }


def plot_tokens_per_language(table: Any, *, ylabel: str = "tokens", ax=None):
    """A grouped bar chart: one group per language (row), one bar per tokenizer (column).

    ``table`` is ``{language: {tokenizer: value}}`` (or a DataFrame with languages as the
    index), e.g. the number of tokens each tokenizer needs for the same sentence.
    """
    rows = _rows(table)
    if not rows:
        raise ValueError("plot_tokens_per_language needs at least one row")
    columns: list[str] = []
    for cols in rows.values():
        columns += [col for col in cols if col not in columns]
    ax = _axes(ax)
    width = 0.8 / len(columns)
    positions = range(len(rows))
    for index, column in enumerate(columns):
        offsets = [x - 0.4 + width * (index + 0.5) for x in positions]
        values = [cols.get(column, 0.0) for cols in rows.values()]
        ax.bar(offsets, values, width=width, label=column)
    ax.set_xticks(list(positions))
    ax.set_xticklabels(list(rows))
    ax.set_ylabel(ylabel)
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    return ax


def plot_merge_rank_histogram(text: str, tokenizer: TrainedTokenizer, *, bins: int = 50,
                              ax=None):
    """How often ``text`` uses tokens of each merge rank (early merges on the left).

    Tokens learned early are the frequent ones, so a tokenizer suited to ``text`` puts most
    of the mass on the left. Single bytes and special tokens are not merges; the title
    says how many of those were used.
    """
    _check_text(text, "plot_merge_rank_histogram")
    ranks = merged_token_ranks(tokenizer)
    special = special_token_ids(tokenizer)
    used = Counter(tokenizer.encode(text, allowed_special="all"))
    merged: Counter[int] = Counter()
    other = 0
    for token_id, count in used.items():
        rank = None if token_id in special else ranks.get(
            tokenizer.decode_single_token_bytes(token_id))
        if rank is None:
            other += count
        else:
            merged[rank] += count
    ax = _axes(ax)
    top = max(len(tokenizer.merges), 1)
    ax.hist(list(merged), bins=bins, range=(0, top), weights=list(merged.values()))
    ax.set_xlabel("merge rank of the token (0 = learned first)")
    ax.set_ylabel("uses in the text")
    total = sum(used.values())
    ax.set_title(f"{total} tokens; {other} are single bytes or special tokens")
    return ax
