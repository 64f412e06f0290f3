"""The exercise checks of notebooks 04-06 reject wrong answers and accept the solutions.

Each checker cell (tag ``exercise-checker``) is run in a fresh namespace together with the
notebook's solution cells (tag ``solution``); the few notebook globals a solution uses are
supplied here. Every wrong answer below is one a learner could plausibly write (the issue names
some of them); each must make its checker return False with a hint that names the mistake.
"""

from __future__ import annotations

import base64
import codecs
import json
import random
from typing import Any

import pytest
import regex
from notebook_cells import load_notebook, run_cells
from test_exercises_early import (
    load_exercises,
    split_in_given_order,
    split_unescaped,
    verdict,
)

from bpe_course import GPT2_PATTERN, merge, pretokenize, split_on_special_tokens
from bpe_course.course.data import python_source
from bpe_course.formats.gpt2 import bytes_to_unicode
from bpe_course.train import descending_key

EOT = "<|endoftext|>"


# Notebook 04 ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb04() -> dict[str, Any]:
    return load_exercises(
        "04_fast_training", merge_ids=merge, descending_key=descending_key, EOT=EOT
    )


def count_pair_non_overlapping(counts, left, right):
    """The answer issue 12 names: bytes.count misses overlapping runs such as four spaces."""
    return sum(n * word.encode("utf-8").count(left + right) for word, n in counts.items())


def count_pair_unweighted(counts, left, right):
    total = 0
    for word in counts:
        data = word.encode("utf-8")
        total += sum(1 for pair in zip(data, data[1:]) if pair == (left[0], right[0]))
    return total


def count_pair_in_characters(counts, left, right):
    target = left.decode("utf-8") + right.decode("utf-8")
    return sum(n * sum(1 for pair in zip(word, word[1:]) if "".join(pair) == target)
               for word, n in counts.items())


COUNT_PAIR_WRONG = [  # check_count_pair: (wrong answer, what its hint must say)
        (count_pair_non_overlapping, "overlapping"),
        (count_pair_unweighted, "multiply by its count"),
        (count_pair_in_characters, "count bytes, not characters"),
]


def apply_merge_neighbours_only(pair, new_id, words, freqs, pair_counts, where):
    """Fixes up only the pairs next to each occurrence: wrong when occurrences overlap or touch."""
    changed, touched = set(), where.pop(pair)

    def add(p, amount, index):
        pair_counts[p] += amount
        changed.add(p)
        if amount > 0:
            where[p].add(index)

    for index in touched:
        old, weight = words[index], freqs[index]
        i = 0
        while i < len(old) - 1:
            if (old[i], old[i + 1]) == pair:
                add(pair, -weight, index)
                if i > 0:
                    add((old[i - 1], old[i]), -weight, index)
                    add((old[i - 1], new_id), weight, index)
                if i + 2 < len(old):
                    add((old[i + 1], old[i + 2]), -weight, index)
                    add((new_id, old[i + 2]), weight, index)
                i += 2
            else:
                i += 1
        words[index] = merge(old, pair, new_id)
    for p in changed:
        if pair_counts[p] <= 0:
            del pair_counts[p]
    return changed, len(touched)


def apply_merge_variant(remove_old=True, weighted=True, drop_zeros=True, note_where=True,
                        report_changed=True, store=True):
    """The solution with one step left out or done wrong."""

    def apply_merge(pair, new_id, words, freqs, pair_counts, where):
        changed, touched = set(), where.pop(pair)
        for index in touched:
            old = words[index]
            new = merge(old, pair, new_id)
            weight = freqs[index] if weighted else 1
            if remove_old:
                for p in zip(old, old[1:]):
                    pair_counts[p] -= weight
                    changed.add(p)
            for p in zip(new, new[1:]):
                pair_counts[p] += weight
                if report_changed:
                    changed.add(p)
                if note_where:
                    where[p].add(index)
            if store:
                words[index] = new
        if drop_zeros:
            for p in changed:
                if pair_counts[p] <= 0:
                    del pair_counts[p]
        return changed, len(touched)

    return apply_merge


APPLY_MERGE_WRONG = [  # check_apply_merge: (wrong answer, what its hint must say)
        (apply_merge_neighbours_only, "overlap or touch"),
        (apply_merge_variant(remove_old=False), "take each old word's pairs out"),
        (apply_merge_variant(weighted=False), "holds each of its pairs"),
        (apply_merge_variant(drop_zeros=False), "with count 0"),
        (apply_merge_variant(note_where=False), "does not list word"),
        (apply_merge_variant(report_changed=False), "not in `changed`"),
        (apply_merge_variant(store=False), "store the merged word"),
]


def flip(token: bytes) -> bytes:
    return bytes(255 - x for x in token)


HEAP_KEY_WRONG = [  # check_heap_key: (wrong answer, what its hint must say)
        (lambda count, left, right: (-count, flip(left) + flip(right)), "same key"),
        (lambda count, left, right: (-count, flip(left), flip(right)), "own prefix"),
        (lambda count, left, right: (-count, descending_key(left + right)), "same key"),
        (lambda n, left, right: (n, descending_key(left) + descending_key(right)), "-count"),
        (lambda count, left, right: (-count, left, right), "greater (left, right)"),
        (lambda count, left, right: None, "same key"),
]


SAFE_CUT_WRONG = [  # check_safe_cut: (wrong answer, what its hint must say)
        (lambda data, position: data.find(EOT.encode(), position), "not -1"),
        (lambda data, position: data.index(EOT.encode(), position), "raised"),
        (lambda data, position: max(data.find(EOT.encode()), 0), "search from `position`"),
        (
            lambda data, position: (
                len(data) if (found := data[position:].find(EOT.encode())) < 0 else found
            ),
            "add `position`",
        ),
        (
            lambda data, position: (
                len(data) if (found := data.find(EOT.encode(), position)) < 0 else found + len(EOT)
            ),
            "where the token starts",
        ),
]


def test_check_exercise_falls_back_to_the_solution_until_the_learner_passes(nb04, capsys):
    check_exercise = nb04["check_exercise"]
    solution = nb04["solution_safe_cut"]

    def safe_cut(data, position):
        raise NotImplementedError("your turn")

    assert check_exercise(safe_cut, solution, nb04["check_safe_cut"]) is solution
    assert "`safe_cut` is not written yet" in capsys.readouterr().out

    def wrong(data, position):
        return data.find(EOT.encode(), position)

    assert check_exercise(wrong, solution, nb04["check_safe_cut"]) is solution
    assert "Not yet" in capsys.readouterr().out

    def right(data, position):
        found = data.find(EOT.encode(), position)
        return len(data) if found < 0 else found

    assert check_exercise(right, solution, nb04["check_safe_cut"]) is right
    assert capsys.readouterr().out == "Correct!\n"


# Notebook 05 ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nb05() -> dict[str, Any]:
    return load_exercises("05_openai_files", byte_to_char=bytes_to_unicode(), base64=base64)


SPELL_WRONG = [  # check_spell: (wrong answer, what its hint must say)
        (lambda data: data.decode("latin-1"), "not itself"),
        (lambda data: data.decode("utf-8", errors="replace"), "need not be valid UTF-8"),
        (lambda data: data.decode("utf-8", errors="ignore"), "one character per byte"),
        (lambda data: "".join(chr(256 + byte) for byte in data), "byte 33 is written '!'"),
        (lambda data: data, "return a str"),
]


VISIBLE = [byte for byte, char in bytes_to_unicode().items() if char == chr(byte)]


BYTE_ID_WRONG = [  # check_byte_id: (wrong answer, what its hint must say)
        (lambda byte: byte, "that is its value"),
        (lambda byte: ord(bytes_to_unicode()[byte]) - 33, "without gaps"),
        (lambda byte: VISIBLE.index(byte), "raised"),
        (lambda byte: VISIBLE.index(byte) if byte in VISIBLE else 188 + byte, "68 shifted bytes"),
]


TIKTOKEN_LINE_WRONG = [  # check_tiktoken_line: (wrong answer, what its hint must say)
        (lambda token, rank: f"{base64.b64encode(token)} {rank}", "returns bytes"),
        (lambda token, rank: f"{base64.urlsafe_b64encode(token).decode()} {rank}", "URL-safe"),
        (lambda token, rank: f"{base64.b64encode(token).decode()} {rank}\n", "newline"),
        (lambda token, rank: f"{token.hex()} {rank}", "in base64, one space"),
        (lambda token, rank: f"{base64.b64encode(token).decode()} {rank + 1}", "in base64"),
]


# Notebook 06 ---------------------------------------------------------------------------------


def run_cell_starting(notebook: str, start: str, namespace: dict[str, Any]) -> None:
    """Run the one code cell whose source starts with ``start`` (a lesson cell a solution needs)."""
    sources = [
        "".join(cell["source"])
        for cell in load_notebook(notebook)["cells"]
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith(start)
    ]
    assert len(sources) == 1, f"{len(sources)} cells start with {start!r}"
    exec(compile(sources[0], f"<cell {start}>", "exec"), namespace)


@pytest.fixture(scope="module")
def nb06() -> dict[str, Any]:
    notebook = "06_encoding_in_practice"
    namespace = {"__name__": "notebook_cells", "regex": regex, "json": json,
                 "bytes_to_unicode": bytes_to_unicode}
    run_cells(notebook, "exercise-checker", namespace)
    run_cell_starting(notebook, "class TokenizerBase", namespace)  # SolutionTokenizer's base
    run_cells(notebook, "solution", namespace)
    pieces = ["encode_stream", "encode_pretoken", "split_on_specials", "save_gpt2", "load_gpt2"]
    for piece in pieces:
        setattr(namespace["pieces"], piece, namespace[f"solution_{piece}"])
    return namespace


def stream_variant(hold_pretokens=2, specials="longest fits", whitespace=True, flush=True):
    """The solution's hold-back with one rule weakened.

    ``specials``: "longest fits" (right: a complete special token is final once the longest
    special token fits after its start), "any end" (holds back any end of the text that
    begins a special token, even the end of a complete longer one, which it cuts in two),
    "after the last one" (a complete special token is always final), or "ignored".
    ``whitespace``: hold back more pretokens while the text before the cut ends in whitespace.
    """

    def encode_stream(chunks, tokenizer):
        names = list(tokenizer.special_tokens)
        longest = max(map(len, names), default=0)
        held = ""
        for chunk in chunks:
            text = held + chunk
            parts = split_on_special_tokens(text, names)
            cut, start = len(text), 0
            for index, part in enumerate(parts):
                if specials == "longest fits" and index % 2 and start + longest > len(text):
                    cut = start
                    break
                start += len(part)
            ends = text if specials == "any end" else parts[-1] if cut == len(text) else ""
            if specials != "ignored":
                cut -= max(
                    (n for name in names for n in range(1, len(name)) if ends.endswith(name[:n])),
                    default=0,
                )
            tail = split_on_special_tokens(text[:cut], names)[-1]
            pretokens = pretokenize(tail, tokenizer.pattern) if tail else []
            kept = len(pretokens) - hold_pretokens
            while whitespace and kept > 0 and pretokens[kept - 1][-1].isspace():
                kept -= 1
            cut -= sum(map(len, pretokens[max(kept, 0) :]))
            yield from tokenizer.encode(text[:cut])
            held = text[cut:]
        if flush:
            yield from tokenizer.encode(held)

    return encode_stream


def stream_each_chunk(chunks, tokenizer):
    for chunk in chunks:
        yield from tokenizer.encode(chunk)


def stream_pretokens_across_specials(chunks, tokenizer):
    """Holds back the right end, but counts two pretokens across complete special tokens."""
    held = ""
    for chunk in chunks:
        text = held + chunk
        cut = min([len(text)] + [len(text) - n for s in tokenizer.special_tokens
                                 for n in range(1, len(s)) if text.endswith(s[:n])])
        cut -= sum(map(len, pretokenize(text[:cut], tokenizer.pattern)[-2:]))
        yield from tokenizer.encode(text[:cut])
        held = text[cut:]
    yield from tokenizer.encode(held)


def stream_read_all(chunks, tokenizer):
    yield from tokenizer.encode("".join(chunks))


def stream_as_list(chunks, tokenizer):
    return tokenizer.encode("".join(chunks))


ENCODE_STREAM_WRONG = [  # check_encode_stream: (wrong answer, what its hint must say)
        (stream_each_chunk, "a chunk can end inside a pretoken"),
        (stream_variant(hold_pretokens=1), "hold back the last two pretokens"),
        (stream_variant(specials="ignored"), "a special token can arrive in pieces"),
        (stream_variant(specials="after the last one"), "may begin a longer one"),
        (stream_variant(specials="any end"), "cut it in two"),
        (stream_variant(whitespace=False), "do not let a cut follow whitespace"),
        (stream_variant(flush=False), "ended early"),
        (stream_pretokens_across_specials, "cuts inside it"),
    (stream_read_all, "Yield the ids of the finished text before reading on"),
        (stream_as_list, "make it a generator"),
]


def test_the_reference_encode_stream_is_right_on_many_random_streams(nb06):
    # The checker's cases are a sample; the reference solution must be right beyond them,
    # on texts built to meet its traps (whitespace runs before symbols, special tokens that
    # begin longer ones, arriving in pieces) and on real source read line by line.
    solution = nb06["solution_encode_stream"]
    tokenizers = nb06["checker_tokenizers"]()
    parts = ["we", "'", "ll", " ", "  ", "\n", "\n\n", "\r\n", "\t", "word", "Word", "123", ".",
             "!?", '"""', "é", "🙂", "<|endoftext|>", "<|endof", "text|>", "<pad>", "<", "|", " \n"]
    rng = random.Random(9)
    for _ in range(3000):
        text = "".join(rng.choices(parts, k=rng.randint(0, 14)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 7))))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        for tokenizer in tokenizers:
            assert list(solution(iter(chunks), tokenizer)) == tokenizer.encode(text), chunks
    lines = python_source(200_000).splitlines(keepends=True)
    for tokenizer in tokenizers:
        assert list(solution(iter(lines), tokenizer)) == tokenizer.encode("".join(lines))


ENCODE_UNTRUSTED_WRONG = [  # check_encode_untrusted: (wrong answer, what its hint must say)
        (lambda enc, text: enc.encode(text), "say that nothing is special"),
        (lambda enc, text: enc.encode(text, allowed_special=set()), "say that nothing is special"),
        (lambda enc, text: enc.encode(text, allowed_special="all"), "became its special id"),
        (lambda enc, text: enc.encode(text.replace("<|", ""), disallowed_special=()), "decode to"),
        (lambda enc, text: None, "returned None"),
]


def decode_whole_input(token_bytes):
    """Issue 12's first wrong answer: reads every piece before yielding anything."""
    yield b"".join(token_bytes).decode("utf-8", errors="replace")


def decode_to_list(token_bytes):
    """Issue 12's second wrong answer: returns a list instead of yielding."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return [decoder.decode(piece) for piece in token_bytes] + [decoder.decode(b"", final=True)]


def decode_each_piece(token_bytes):
    for piece in token_bytes:
        yield piece.decode("utf-8", errors="replace")


def decode_dropping_partials(token_bytes):
    for piece in token_bytes:
        yield piece.decode("utf-8", errors="ignore")


def decode_whole_buffer(token_bytes):
    """Holds every finished character while the buffer also ends inside one."""
    buffer = b""
    for piece in token_bytes:
        buffer += piece
        try:
            text = buffer.decode("utf-8")
        except UnicodeDecodeError:
            continue
        buffer = b""
        yield text
    if buffer:
        yield buffer.decode("utf-8", errors="replace")


def decode_without_flush(token_bytes):
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for piece in token_bytes:
        yield decoder.decode(piece)


def decode_strict(token_bytes):
    decoder = codecs.getincrementaldecoder("utf-8")()
    for piece in token_bytes:
        yield decoder.decode(piece)
    yield decoder.decode(b"", final=True)


STREAM_DECODE_WRONG = [  # check_stream_decode: (wrong answer, what its hint must say)
        (decode_whole_input, "while still holding"),
        (decode_to_list, "make it a generator"),
        (decode_each_piece, "U+FFFD"),
        (decode_dropping_partials, "joined output"),
        (decode_whole_buffer, "while still holding"),
        (decode_strict, "errors='replace'"),
    (decode_without_flush, "final U+FFFD"),
]


def pretoken_by_rule(choose):
    """Join pairs until none is a merge, choosing which pair with ``choose(ranked pairs)``."""

    def encode_pretoken(data, ranks):
        parts = [bytes([byte]) for byte in data]
        while True:
            ranked = [(ranks[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in ranks]
            if not ranked:
                return parts
            _, i = choose(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]

    return encode_pretoken


def pretoken_one_pass(data, ranks):
    """Applies each merge once, in rank order, but only left to right in a single sweep."""
    parts = [bytes([byte]) for byte in data]
    i = 0
    while i < len(parts) - 1:
        if (parts[i], parts[i + 1]) in ranks:
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        else:
            i += 1
    return parts


ENCODE_PRETOKEN_WRONG = [  # check_encode_pretoken: (wrong answer, what its hint must say)
    (pretoken_by_rule(lambda ranked: ranked[0]), "lowest rank"),  # the leftmost merge pair
    (pretoken_by_rule(max), "lowest rank"),  # the latest-learned merge first
    (pretoken_by_rule(lambda ranked: min(ranked, key=lambda r: (r[0], -r[1]))), "leftmost"),
    (pretoken_one_pass, "lowest rank"),
]


def split_dropping_empty(text, special_tokens):
    return [part for part in split_on_special_tokens(text, special_tokens) if part]


def split_dropping_tokens(text, special_tokens):
    if not special_tokens:
        return [text]
    return regex.split("|".join(map(regex.escape, special_tokens)), text)


SPLIT_SPECIAL_WRONG = [  # check_split_on_specials: (wrong answer, what its hint must say)
        (split_unescaped, "regex.escape"),
        (split_in_given_order, "longer special tokens first"),
        (split_dropping_tokens, "keep the special tokens as items"),
    (split_dropping_empty, "keep the empty strings"),
]


def save_variant(header=True, swapped=False, spelling="gpt2"):
    table = bytes_to_unicode()

    def spell(token):
        return "".join(table[b] for b in token) if spelling == "gpt2" else token.decode("latin-1")

    def save_gpt2(vocab, merges, vocab_path, merges_path):
        entries = {str(i): spell(t) for i, t in vocab.items()} if swapped else {
            spell(t): i for i, t in vocab.items()}
        with open(vocab_path, "w", encoding="utf-8") as file:
            json.dump(entries, file, ensure_ascii=False)
        with open(merges_path, "w", encoding="utf-8") as file:
            if header:
                file.write("#version: 0.2\n")
            file.writelines(f"{spell(a)} {spell(b)}\n" for a, b in merges)

    return save_gpt2


SAVE_GPT2_WRONG = [  # check_save_gpt2: (wrong answer, what its hint must say)
        (save_variant(header=False), "#version: 0.2"),
        (save_variant(swapped=True), "{token: id}, not {id: token}"),
        (save_variant(spelling="latin-1"), "spell every byte"),
]


def load_variant(skip_header=True, as_bytes=True):
    byte_of = {char: byte for byte, char in bytes_to_unicode().items()}

    def read(spelled):
        return bytes(byte_of[c] for c in spelled) if as_bytes else spelled

    def load_gpt2(vocab_path, merges_path):
        with open(vocab_path, encoding="utf-8") as file:
            vocab = {i: read(token) for token, i in json.load(file).items()}
        with open(merges_path, encoding="utf-8") as file:
            lines = [line.rstrip("\n") for line in file if line.strip()]
        if skip_header:
            lines = [line for line in lines if not line.startswith("#version")]
        return vocab, [tuple(map(read, line.split(" "))) for line in lines]

    return load_gpt2


LOAD_GPT2_WRONG = [  # check_load_gpt2: (wrong answer, what its hint must say)
        (load_variant(skip_header=False), "is not a merge"),
        (load_variant(as_bytes=False), "map ids to bytes"),
        (lambda vocab_path, merges_path: None, "return (vocab, merges)"),
]


@pytest.fixture(scope="module")
def wrong_tokenizers(nb06) -> dict[str, type]:
    """Three plausible MyTokenizer classes, each with one mistake."""
    base, pieces = nb06["TokenizerBase"], nb06["pieces"]

    def encode_with(self, text, pattern, specials):
        ids = []
        parts = pieces.split_on_specials(text, list(self.special_tokens)) if specials else [text]
        for index, part in enumerate(parts):
            if index % 2:
                ids.append(self.special_tokens[part])
                continue
            for pretoken in regex.findall(pattern or self.pattern, part):
                tokens = pieces.encode_pretoken(pretoken.encode(), self.ranks)
                ids += [self.id_of[t] for t in tokens]
        return ids

    def decode(self, ids):
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def make(pattern=None, specials=True, strict=False):
        def strict_decode(self, ids):
            return b"".join(self.vocab[i] for i in ids).decode("utf-8")

        return type("MyTokenizer", (base,), {
            "encode": lambda self, text: encode_with(self, text, pattern, specials),
            "decode": strict_decode if strict else decode,
        })

    return {
        "ignores special tokens": make(specials=False),
        "always GPT-2's pattern": make(pattern=GPT2_PATTERN),
        "strict decode": make(strict=True),
    }


MY_TOKENIZER_WRONG = [  # check_my_tokenizer: (a class in wrong_tokenizers, what its hint must say)
    ("ignores special tokens", "cut out the special tokens first"),
    ("always GPT-2's pattern", "use self.pattern"),
    ("strict decode", "errors='replace'"),
]


# Every checker against every wrong answer above, and against its notebook's solution ------------

REJECTIONS = [
    *[("nb04", "check_count_pair", wrong, hint) for wrong, hint in COUNT_PAIR_WRONG],
    *[("nb04", "check_apply_merge", wrong, hint) for wrong, hint in APPLY_MERGE_WRONG],
    *[("nb04", "check_heap_key", wrong, hint) for wrong, hint in HEAP_KEY_WRONG],
    *[("nb04", "check_safe_cut", wrong, hint) for wrong, hint in SAFE_CUT_WRONG],
    *[("nb05", "check_spell", wrong, hint) for wrong, hint in SPELL_WRONG],
    *[("nb05", "check_byte_id", wrong, hint) for wrong, hint in BYTE_ID_WRONG],
    *[("nb05", "check_tiktoken_line", wrong, hint) for wrong, hint in TIKTOKEN_LINE_WRONG],
    *[("nb06", "check_encode_stream", wrong, hint) for wrong, hint in ENCODE_STREAM_WRONG],
    *[("nb06", "check_encode_untrusted", wrong, hint) for wrong, hint in ENCODE_UNTRUSTED_WRONG],
    *[("nb06", "check_stream_decode", wrong, hint) for wrong, hint in STREAM_DECODE_WRONG],
    *[("nb06", "check_split_on_specials", wrong, hint) for wrong, hint in SPLIT_SPECIAL_WRONG],
    *[("nb06", "check_save_gpt2", wrong, hint) for wrong, hint in SAVE_GPT2_WRONG],
    *[("nb06", "check_load_gpt2", wrong, hint) for wrong, hint in LOAD_GPT2_WRONG],
    *[("nb06", "check_encode_pretoken", wrong, hint) for wrong, hint in ENCODE_PRETOKEN_WRONG],
    *[("nb06", "check_my_tokenizer", wrong, hint) for wrong, hint in MY_TOKENIZER_WRONG],
]


@pytest.mark.parametrize(
    ("notebook", "check", "wrong", "hint"),
    REJECTIONS,
    ids=[f"{check}: {hint}" for _, check, _, hint in REJECTIONS],
)
def test_check_rejects_the_wrong_answer(request, capsys, notebook, check, wrong, hint):
    namespace = request.getfixturevalue(notebook)
    if isinstance(wrong, str):  # a class that needs the notebook's base class
        wrong = request.getfixturevalue("wrong_tokenizers")[wrong]
    passed, out = verdict(capsys, namespace[check], wrong)
    assert passed is False, f"{check} accepted a wrong answer"
    assert out.startswith("Not yet: ")
    assert hint in out


SOLUTIONS = [
    ("nb04", "check_count_pair", "solution_count_pair"),
    ("nb04", "check_apply_merge", "solution_apply_merge"),
    ("nb04", "check_heap_key", "solution_heap_key"),
    ("nb04", "check_safe_cut", "solution_safe_cut"),
    ("nb05", "check_spell", "solution_spell"),
    ("nb05", "check_byte_id", "solution_byte_id"),
    ("nb05", "check_tiktoken_line", "solution_tiktoken_line"),
    ("nb06", "check_encode_stream", "solution_encode_stream"),
    ("nb06", "check_encode_untrusted", "solution_encode_untrusted"),
    ("nb06", "check_stream_decode", "solution_stream_decode"),
    ("nb06", "check_encode_pretoken", "solution_encode_pretoken"),
    ("nb06", "check_split_on_specials", "solution_split_on_specials"),
    ("nb06", "check_save_gpt2", "solution_save_gpt2"),
    ("nb06", "check_load_gpt2", "solution_load_gpt2"),
    ("nb06", "check_my_tokenizer", "SolutionTokenizer"),
]


@pytest.mark.parametrize(("notebook", "check", "solution"), SOLUTIONS)
def test_check_accepts_the_solution(request, capsys, notebook, check, solution):
    namespace = request.getfixturevalue(notebook)
    passed, out = verdict(capsys, namespace[check], namespace[solution])
    assert passed is True, out
    assert out == "Correct!\n"


# The notebook conventions (issue 13), for notebooks 04-06 ------------------------------------

LATE_NOTEBOOKS = ["04_fast_training", "05_openai_files", "06_encoding_in_practice"]


def defined_names(source: str) -> set[str]:
    """The top-level names a cell defines (functions, classes, assignments)."""
    import ast

    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


@pytest.mark.parametrize("notebook", LATE_NOTEBOOKS)
def test_late_notebooks_follow_the_conventions(notebook):
    nb = load_notebook(notebook)
    assert nb["metadata"]["kernelspec"] == {
        "display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    learner_names, solution_names = set(), set()
    for cell in nb["cells"]:
        source, meta = "".join(cell["source"]), cell["metadata"]
        tags = meta.get("tags", [])
        assert "slide_type" in meta.get("slideshow", {}), source[:60]
        if cell["cell_type"] != "code":
            continue
        assert "NBVAL_" not in source, source[:60]
        if "exercise" in tags:
            learner_names |= defined_names(source)
            assert "NotImplementedError" in source, source[:60]
        if "solution" in tags:
            assert meta.get("jupyter", {}).get("source_hidden") is True, source[:60]
            solution_names |= defined_names(source)
        if "exercise-checker" in tags:
            assert "hide-input-on-slides" in tags, source[:60]
    assert learner_names, "no exercise cells"
    # Run All must keep the learner's answer: no solution cell may define a learner's name.
    assert not learner_names & solution_names
    checks = "".join("".join(c["source"]) for c in nb["cells"] if "exercise-check" in
                     c["metadata"].get("tags", []))
    for name in learner_names:
        assert f"check_exercise({name}," in checks, f"{name} is never checked"
