"""The checks of notebook 05 (OpenAI's files): spelling a token as GPT-2's files do, a byte's
id in GPT-2, and writing a ``.tiktoken`` file for a vocabulary of our own.

The expected answers come from OpenAI's files themselves (``encoder.json``) and from the
package's GPT-2 spelling (:mod:`bpe_course.formats.gpt2`), never from the notebook's
solutions.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from typing import Any

from ...formats.gpt2 import bytes_to_unicode, str_to_token, token_to_str
from ...openai import openai_file
from ...pretokens import count_pretokens
from ...train import train_from_counts
from ..data import course_text
from .harness import attempt, correct, not_yet, short


def spell_cases() -> list[tuple[bytes, str]]:
    """Every token of encoder.json (bytes, its spelling), then 300 random byte strings."""
    encoder = json.loads(openai_file("encoder.json").read_text(encoding="utf-8"))
    cases = [(str_to_token(token), token) for token in encoder]
    rng = random.Random(5)
    for _ in range(300):
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 6)))
        cases.append((data, token_to_str(data)))
    return cases


def check_spell(candidate: Callable[..., Any]) -> bool:
    """``spell(data)``: one character per byte, as encoder.json writes tokens."""
    for data, expected in spell_cases():
        got, error = attempt(candidate, data)
        if error:
            return not_yet(f"spell({data!r}) raised {error}; spell each byte on its own")
        if got == expected:
            continue
        hint = f"spell({data!r}) gave {short(got)}, expected {expected!r}"
        if got is None:
            return not_yet(hint + ": a `return` is missing")
        if not isinstance(got, str):
            return not_yet(hint + ": return a str")
        if len(got) != len(data):
            return not_yet(hint + ": one character per byte (do not decode UTF-8 first)")
        if "\ufffd" in got:
            return not_yet(
                hint + ": a token need not be valid UTF-8 (b'\\xa1' is not): spell each byte"
            )
        i = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
        hint += f": byte {data[i]} is written {expected[i]!r} (U+{ord(expected[i]):04X})"
        if got[i] == chr(data[i]):
            hint += (
                ", not itself: invisible bytes are shifted, so look each byte up in byte_to_char"
            )
        return not_yet(hint)
    return correct()


def check_byte_id(candidate: Callable[..., Any]) -> bool:
    """``byte_id(byte)``: GPT-2's id of each one-byte token, tried in id order."""
    encoder = json.loads(openai_file("encoder.json").read_text(encoding="utf-8"))
    table = bytes_to_unicode()
    for byte in sorted(range(256), key=lambda byte: encoder[table[byte]]):  # in id order
        expected = encoder[table[byte]]
        got, error = attempt(candidate, byte)
        if error:
            return not_yet(f"byte_id({byte}) raised {error}")
        if got == expected:
            continue
        hint = f"byte_id({byte}) gave {got!r}, but byte {byte} ({bytes([byte])!r}) is id {expected}"
        if got is None:
            hint += ": a `return` is missing"
        elif got == byte:
            hint += (": that is its value, the id our own tokenizers use; GPT-2's ids follow "
                     "byte_to_char's characters")
        elif table[byte] == chr(byte):
            hint += (": the 188 bytes that stand for themselves get ids 0 to 187, in byte "
                     "order, without gaps")
        else:
            hint += ": the 68 shifted bytes come after them, ids 188 to 255, in byte order"
        return not_yet(hint)
    return correct()


# tiktoken_file: a vocabulary of our own, special tokens in it ------------------------------


def tiktoken_cases() -> list[tuple[dict[int, bytes], list[str]]]:
    """(vocab, special tokens): a trained vocabulary whose special tokens sit at ids 256 and
    257, listed in a shuffled order, and a hand-made one whose tokens need '+' and '/'."""
    specials = ["<|endoftext|>", "<|im_end|>"]
    counts = count_pretokens(course_text("dog_park.txt"), specials)
    vocab, _ = train_from_counts(counts, 400, specials)
    items = list(vocab.items())
    random.Random(1).shuffle(items)
    odd = {i: bytes([i]) for i in range(256)} | {
        256: b"<|endoftext|>",
        257: b"\xfb\xff",
        258: b"\xff\xfe\xfd",
        259: b" \n",
    }
    return [(dict(items), specials), (odd, ["<|endoftext|>"]), (odd, [])]


def tiktoken_text(vocab: dict[int, bytes], specials: list[str]) -> str:
    """The file's text: one line per ordinary token, in id order, base64 and the id."""
    special_bytes = {token.encode("utf-8") for token in specials}
    return "".join(
        f"{base64.b64encode(token).decode('ascii')} {token_id}\n"
        for token_id, token in sorted(vocab.items())
        if token not in special_bytes
    )


def tiktoken_hint(got: str, expected: str, vocab: dict[int, bytes], specials: list[str]) -> str:
    """Why the text differs, from the first line that differs."""
    got_lines, wanted = got.split("\n"), expected.split("\n")
    at = next((i for i, (a, b) in enumerate(zip(got_lines, wanted)) if a != b), None)
    hint = (
        f"line {at + 1} is {short(got_lines[at], 60)}, expected {wanted[at]!r}"
        if at is not None
        else f"{len(got_lines)} lines, expected {len(wanted)}"
    )
    special_lines = {base64.b64encode(s.encode("utf-8")).decode("ascii") for s in specials}
    firsts = [line.split(" ")[0] for line in got_lines]
    if got.startswith("b'") or "b'" in got:
        return hint + ": base64.b64encode returns bytes; .decode('ascii') them before formatting"
    if any(first in special_lines for first in firsts):
        return hint + (
            ": special tokens are not in a .tiktoken file (tiktoken is given them "
            "separately, as cl100k_base's are): leave them out"
        )
    if got.rstrip("\n") == expected.rstrip("\n"):
        return hint + ": end every line with a newline, the last one too, as OpenAI's files do"
    if got.translate(str.maketrans("-_", "+/")) == expected:
        return (
            hint + ": the file uses standard base64 (+ and /), not the URL-safe alphabet (- and _)"
        )
    if sorted(got.splitlines()) == sorted(expected.splitlines()):
        return hint + ": list the tokens in rank order (by id), whatever order the dict is in"
    ranks = [line.rsplit(" ", 1)[-1] for line in got.splitlines()]
    if ranks == [str(i) for i in range(len(ranks))] and len(ranks) < len(vocab):
        return hint + (
            ": the rank is the token's id, not its line number; after a special token "
            "the ids have a gap, and the file keeps it"
        )
    return hint + ": each line is the token in base64, one space, its id"


def check_tiktoken_file(candidate: Callable[..., Any]) -> bool:
    """``tiktoken_file(vocab, special_tokens)``: the text of a .tiktoken file."""
    for vocab, specials in tiktoken_cases():
        call = f"tiktoken_file(<{len(vocab)} tokens>, {specials})"
        got, error = attempt(candidate, dict(vocab), list(specials))
        if error:
            return not_yet(f"{call} raised {error}")
        expected = tiktoken_text(vocab, specials)
        if got == expected:
            continue
        if got is None:
            return not_yet(f"{call} returned None: a `return` is missing; return the file's text")
        if isinstance(got, bytes):
            return not_yet(
                f"{call} returned bytes; return the text (a str), as it would be written"
            )
        if not isinstance(got, str):
            return not_yet(f"{call} returned {type(got).__name__}; return the file's text (a str)")
        return not_yet(f"{call}: " + tiktoken_hint(got, expected, vocab, specials))
    return correct()
