"""Seeing tokens: coloured token boundaries (HTML and terminal) and a few plots.

Reading a list of ids tells you little; seeing the text cut into coloured pieces tells you
at once that " the" is one token, that a number is split in threes, or that an emoji takes
four. :func:`show_tokens` draws those pieces in a notebook (HTML) or a terminal (ANSI).

One honest detail: a byte-level token can end in the middle of a UTF-8 character. Such a
token has no text of its own, so it is drawn with the replacement character U+FFFD and its
real bytes are in the hover text.

The plot helpers use matplotlib only, take an optional ``ax`` to draw into, and return the
Axes, so a notebook can put several of them side by side.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Background colours for HTML tokens, used in turn so neighbours always differ.
HTML_COLOURS = ("#cfe8ff", "#ffe3b3", "#d4f5d0", "#f9d2e6", "#e4dcff", "#fff5b0")

#: The HTML colour of special tokens such as ``<|endoftext|>``.
HTML_SPECIAL_COLOUR = "#ff9e9e"

#: ANSI 256-colour backgrounds for the terminal, used in turn; black text sits on all of them.
ANSI_COLOURS = (153, 223, 194, 218, 189, 229)

#: The ANSI background of special tokens.
ANSI_SPECIAL_COLOUR = 210

ANSI_RESET = "\x1b[0m"

#: How invisible characters are drawn in HTML. A newline keeps its line break after the mark.
VISIBLE_WHITESPACE = {" ": "·", "\t": "→", "\n": "↵\n", "\r": "␍"}

REPLACEMENT_CHAR = "\ufffd"


@dataclass(frozen=True)
class TokenSpan:
    """One token of an encoded text: its id, its bytes, and how to draw it."""

    token_id: int
    data: bytes
    special: bool

    @property
    def text(self) -> str:
        """The token's own text; bytes of an unfinished character become U+FFFD."""
        return self.data.decode("utf-8", errors="replace")

    @property
    def partial(self) -> bool:
        """True when the token starts or ends inside a UTF-8 character."""
        try:
            self.data.decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False

    def describe(self) -> str:
        """The hover text: the id and the exact bytes."""
        note = " (part of a UTF-8 character)" if self.partial else ""
        kind = "special token " if self.special else ""
        return f"{kind}id {self.token_id}: {self.data!r}{note}"


def _token_bytes(tokenizer: Any, token_id: int) -> bytes:
    """The bytes of one id, for our Tokenizer (``vocab``) or a ``tiktoken.Encoding``."""
    vocab = getattr(tokenizer, "vocab", None)
    if isinstance(vocab, Mapping):
        return vocab[token_id]
    return tokenizer.decode_single_token_bytes(token_id)


def _special_ids(tokenizer: Any) -> set[int]:
    special = getattr(tokenizer, "special_tokens", None)
    if isinstance(special, Mapping):  # our Tokenizer: {token: id}
        return set(special.values())
    names = getattr(tokenizer, "special_tokens_set", None)
    if names:  # tiktoken.Encoding
        return {tokenizer.encode_single_token(name) for name in names}
    return set()


def token_spans(text: str, tokenizer: Any) -> list[tuple[int, bytes]]:
    """The ``(id, bytes)`` of each token of ``text``, special tokens included.

    Works with a :class:`~bpe_course.tokenizer.Tokenizer` and with a ``tiktoken.Encoding``.
    Joining the bytes gives back ``text.encode("utf-8")``.
    """
    ids = tokenizer.encode(text, allowed_special="all")
    return [(token_id, _token_bytes(tokenizer, token_id)) for token_id in ids]


def _spans(text: str, tokenizer: Any) -> list[TokenSpan]:
    special = _special_ids(tokenizer)
    return [TokenSpan(i, data, i in special) for i, data in token_spans(text, tokenizer)]


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


def html_tokens(text: str, tokenizer: Any) -> str:
    """An HTML fragment that draws ``text`` as coloured tokens (hover: id and bytes)."""
    spans = _spans(text, tokenizer)
    parts: list[str] = []
    for index, span in enumerate(spans):
        colour = HTML_SPECIAL_COLOUR if span.special else HTML_COLOURS[index % len(HTML_COLOURS)]
        border = "outline:1px dashed #c00;" if span.partial else ""
        title = html.escape(span.describe(), quote=True)
        parts.append(
            f'<span style="background:{colour};{border}border-radius:2px" '
            f'title="{title}">{_visible(span.text)}</span>'
        )
    n_bytes = sum(len(span.data) for span in spans)
    caption = f"{len(spans)} tokens, {n_bytes} bytes"
    return (
        '<div class="bpe-tokens" style="font-family:monospace;white-space:pre-wrap;'
        f'line-height:1.7;color:#000">{"".join(parts)}</div>'
        f'<div style="font-size:smaller;color:#666">{caption}</div>'
    )


def ansi_tokens(text: str, tokenizer: Any) -> str:
    """``text`` with each token on an alternating ANSI background, for a terminal.

    The characters are printed as they are (a coloured background already shows spaces);
    with the escape codes removed, the output is the text, except that a token ending
    inside a UTF-8 character shows as U+FFFD. Colours are reset before each newline so the
    background does not paint the rest of the line.
    """
    out: list[str] = []
    for index, span in enumerate(_spans(text, tokenizer)):
        colour = ANSI_SPECIAL_COLOUR if span.special else ANSI_COLOURS[index % len(ANSI_COLOURS)]
        start = f"\x1b[30;48;5;{colour}m"
        lines = span.text.split("\n")
        out.append("\n".join(f"{start}{line}{ANSI_RESET}" if line else "" for line in lines))
    return "".join(out)


class TokenView:
    """What :func:`show_tokens` returns: HTML in a notebook, ANSI colours in ``str()``."""

    def __init__(self, text: str, tokenizer: Any) -> None:
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


def show_tokens(text: str, tokenizer: Any) -> TokenView:
    """Show how ``tokenizer`` cuts ``text``: the last line of a notebook cell draws it in
    colour, and ``print(show_tokens(...))`` colours it in a terminal."""
    return TokenView(text, tokenizer)


# Numbers ----------------------------------------------------------------------------------


def bytes_per_token(tokenizer: Any, text: str) -> float:
    """UTF-8 bytes of ``text`` per token: the compression a tokenizer achieves on it.

    Higher is better: the same text costs fewer tokens (and so less model compute).
    """
    n_tokens = len(tokenizer.encode(text, allowed_special="all"))
    if n_tokens == 0:
        raise ValueError("bytes_per_token needs a non-empty text")
    return len(text.encode("utf-8")) / n_tokens


def merge_ranks(tokenizer: Any) -> dict[int, int]:
    """``{token id: merge rank}`` for every token made by a merge (rank 0 = learned first)."""
    ids_of = {data: token_id for token_id, data in sorted(tokenizer.vocab.items(), reverse=True)}
    return {ids_of[left + right]: rank for rank, (left, right) in enumerate(tokenizer.merges)}


# Plots ------------------------------------------------------------------------------------


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


def plot_merge_rank_histogram(tokenizer: Any, text: str, *, bins: int = 50, ax=None):
    """How often ``text`` uses tokens of each merge rank (early merges on the left).

    Tokens learned early are the frequent ones, so a tokenizer suited to ``text`` puts most
    of the mass on the left. Single bytes and special tokens are not merges; the title
    says how many of those were used.
    """
    ranks = merge_ranks(tokenizer)
    used = Counter(tokenizer.encode(text, allowed_special="all"))
    merged = {ranks[token_id]: count for token_id, count in used.items() if token_id in ranks}
    other = sum(count for token_id, count in used.items() if token_id not in ranks)
    ax = _axes(ax)
    top = max(len(tokenizer.merges), 1)
    ax.hist(list(merged), bins=bins, range=(0, top), weights=list(merged.values()))
    ax.set_xlabel("merge rank of the token (0 = learned first)")
    ax.set_ylabel("uses in the text")
    total = sum(used.values())
    ax.set_title(f"{total} tokens; {other} are single bytes or special tokens")
    return ax
