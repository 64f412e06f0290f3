"""The exercise checks of notebooks 01-03 reject wrong answers and accept right ones.

Each notebook's checkers (cells tagged ``exercise-checker``) and collapsed solutions (tagged
``solution``) are loaded with :func:`notebook_cells.run_cells` and called on answers a learner
could plausibly write. A wrong answer must be rejected (the checker returns False) with a hint
that names the mistake; the solution, and other correct ways to write it, must pass.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

import pytest
import regex
from notebook_cells import cells_tagged, load_notebook, run_cells

import bpe_course
from bpe_course import GPT2_PATTERN, GPT4_PATTERN

EARLY_NOTEBOOKS = ["01_bytes_and_utf8", "02_naive_bpe", "03_gpt2_pretokenization"]

#: What notebook 03 builds GPT-2's pattern from, before its exercise cells run.
GPT2_PARTS = {
    "CONTRACTIONS": r"'s|'t|'re|'ve|'m|'ll|'d",
    "LETTERS": r" ?\p{L}+",
    "NUMBERS": r" ?\p{N}+",
    "OTHER": r" ?[^\s\p{L}\p{N}]+",
    "SPACES": r"\s+(?!\S)|\s+",
}


def load_exercises(name: str, **given: Any) -> dict[str, Any]:
    """The namespace of a notebook's checkers and solutions.

    ``given`` stands in for names the solutions take from earlier cells of the notebook.
    """
    notebook = load_notebook(name)
    namespace = run_cells(notebook, "exercise-checker", {"__name__": "exercises", **given})
    return run_cells(notebook, "solution", namespace)


@pytest.fixture(scope="module")
def nb01() -> dict[str, Any]:
    return load_exercises("01_bytes_and_utf8")


@pytest.fixture(scope="module")
def nb02() -> dict[str, Any]:
    return load_exercises(
        "02_naive_bpe", get_pair_counts=bpe_course.get_pair_counts, merge=bpe_course.merge
    )


@pytest.fixture(scope="module")
def nb03() -> dict[str, Any]:
    return load_exercises("03_gpt2_pretokenization", **GPT2_PARTS)


def verdict(capsys, checker: Callable[..., bool], *answer: Any) -> tuple[bool, str]:
    """Run ``checker`` on ``answer``; return its verdict and what it printed."""
    capsys.readouterr()
    result = checker(*answer)
    return result, capsys.readouterr().out


def assert_rejected(capsys, checker, answer: tuple, hint: str) -> None:
    passed, printed = verdict(capsys, checker, *answer)
    assert passed is False, printed
    assert "Correct!" not in printed
    assert hint in printed, printed


def assert_accepted(capsys, checker, answer: tuple) -> None:
    passed, printed = verdict(capsys, checker, *answer)
    assert passed is True, printed
    assert printed.strip() == "Correct!"


# --- 01: bytes and UTF-8 -------------------------------------------------------------------


def length_edge_off_by_one(cp: int) -> int:
    return 1 if cp <= 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


def length_forgets_four_bytes(cp: int) -> int:
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3


UTF8_LENGTH_WRONG = [
    (length_edge_off_by_one, "U+0080 is in the table's row U+0080 to U+07FF"),
    (lambda cp: (cp.bit_length() + 7) // 8, "should be 1, got 0"),  # bytes of the integer
    (lambda cp: len(chr(cp).encode("utf-16-le")), "you gave its length in UTF-16"),
    (length_forgets_four_bytes, "U+10000 is in the table's row U+10000 to U+10FFFF"),
    (lambda cp: None, "got None"),
]


@pytest.mark.parametrize(("answer", "hint"), UTF8_LENGTH_WRONG)
def test_01_utf8_length_check_rejects(nb01, capsys, answer, hint):
    assert_rejected(capsys, nb01["check_utf8_length"], (answer,), hint)


def cut_without_stepping_back(data: bytes, limit: int) -> bytes:
    return data[:limit]


def cut_looking_at_the_byte_before(data: bytes, limit: int) -> bytes:
    end = min(limit, len(data))
    while end > 0 and data[end - 1] & 0b11000000 == 0b10000000:
        end -= 1
    return data[:end]


def cut_without_bounds(data: bytes, limit: int) -> bytes:
    end = limit
    while data[end] & 0b11000000 == 0b10000000:
        end -= 1
    return data[:end]


def cut_stepping_forward(data: bytes, limit: int) -> bytes:
    end = min(limit, len(data))
    while end < len(data) and data[end] & 0b11000000 == 0b10000000:
        end += 1
    return data[:end]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (cut_without_stepping_back, "Your cut splits a character"),
        (cut_looking_at_the_byte_before, "is a continuation byte"),
        (cut_without_bounds, "data[limit] does not exist when limit >= len(data)"),
        (cut_stepping_forward, "at most `limit` bytes"),
    ],
)
def test_01_cut_at_boundary_check_rejects(nb01, capsys, answer, hint):
    assert_rejected(capsys, nb01["check_cut_at_boundary"], (answer,), hint)


def test_01_cut_at_boundary_check_accepts_another_right_answer(nb01, capsys):
    def decode_and_drop(data: bytes, limit: int) -> bytes:
        return data[:limit].decode("utf-8", errors="ignore").encode("utf-8")

    assert_accepted(capsys, nb01["check_cut_at_boundary"], (decode_and_drop,))


def encode_with(change: Callable[[bytes], bytes]) -> Callable[[int], bytes]:
    """A UTF-8 encoder with one mistake, made by changing the right bytes."""
    return lambda cp: change(chr(cp).encode("utf-8"))


def lead_marker_always_two_bytes(cp: int) -> bytes:
    right = chr(cp).encode("utf-8")
    if len(right) == 1:
        return right
    return bytes([0b11000000 | cp >> 6 * (len(right) - 1)]) + right[1:]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (encode_with(lambda b: b[:1] + b[:0:-1]), "continuation bytes are in reverse"),
        (encode_with(lambda b: b[:1] + bytes(x & 63 for x in b[1:])), "start with the bits 10"),
        (lead_marker_always_two_bytes, "starts with 3 ones and a zero"),
        (lambda cp: chr(cp).encode("utf-16-be"), "This code point takes 1 byte(s)"),
        (lambda cp: chr(min(cp, 0x7FF) if cp < 0x1000 else cp).encode("utf-8"), "takes 3 byte(s)"),
    ],
)
def test_01_utf8_encode_check_rejects(nb01, capsys, answer, hint):
    assert_rejected(capsys, nb01["check_utf8_encode"], (answer,), hint)


@pytest.mark.parametrize("exercise", ["utf8_length", "cut_at_boundary", "utf8_encode"])
def test_01_checks_accept_the_solutions(nb01, capsys, exercise):
    assert_accepted(capsys, nb01[f"check_{exercise}"], (nb01[f"solution_{exercise}"],))


# --- 02: naive BPE ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("four", "five", "hint"),
    [
        ([9, 9, 9], [9, 9, 5], "the occurrences overlap"),  # counted (5, 5) three times
        ([9, 9], [9, 9], "a 5 left without a partner stays"),
        ([9, 9], [5, 9, 9], "the 5 left without a partner is the last one"),
        ([9, 9], [9, 9, 9, 9], "the occurrences overlap"),
        ([9, 9], "995", "write the answer as a list"),
    ],
)
def test_02_fives_check_rejects(nb02, capsys, four, five, hint):
    assert_rejected(capsys, nb02["check_fives"], (four, five), hint)


def pick_by_ids(counts, vocab):
    return max(counts, key=lambda p: (counts[p], p))


def pick_by_joined_bytes(counts, vocab):
    return max(counts, key=lambda p: (counts[p], vocab[p[0]] + vocab[p[1]]))


def pick_first_met(counts, vocab):
    return max(counts, key=counts.get)


def pick_smallest(counts, vocab):
    return min(counts, key=lambda p: (-counts[p], vocab[p[0]], vocab[p[1]]))


def pick_by_left_only(counts, vocab):
    return max(counts, key=lambda p: (counts[p], vocab[p[0]]))


def pick_by_bytes_only(counts, vocab):
    return max(counts, key=lambda p: (vocab[p[0]], vocab[p[1]]))


PICK_WRONG = [
    (pick_by_ids, "not their ids"),  # the issue's {(116, 97): 5, (256, 97): 5}
    (pick_by_joined_bytes, "not the two glued together"),
    (pick_first_met, "depends on dict order"),
    (pick_smallest, "not the smallest"),
    (pick_by_left_only, "the right tokens' bytes decide"),
    (pick_by_bytes_only, "the count decides first"),
]


@pytest.mark.parametrize(("answer", "hint"), PICK_WRONG)
def test_02_pick_pair_check_rejects(nb02, capsys, answer, hint):
    assert_rejected(capsys, nb02["check_pick_pair"], (answer,), hint)


def test_02_pick_pair_check_shows_the_issue_example_for_ids(nb02, capsys):
    _, printed = verdict(capsys, nb02["check_pick_pair"], pick_by_ids)
    assert "{(116, 97): 5, (256, 97): 5}" in printed


def trainer(pick, *, stop: bool = True, replace: bool = True, join: bool = True):
    """The training loop of notebook 02, with one of the mistakes a learner can make."""

    def train(ids, num_merges):
        vocab = {i: bytes([i]) for i in range(256)}
        merges = {}
        for new_id in range(256, 256 + num_merges):
            counts = bpe_course.get_pair_counts(ids)
            if stop and not counts:
                break
            best = pick(counts, vocab)
            if replace:
                ids = bpe_course.merge(ids, best, new_id)
            merges[best] = new_id
            vocab[new_id] = vocab[best[0]] + vocab[best[1]] if join else vocab[best[0]]
        return merges, vocab

    return train


def pick_rightly(counts, vocab):
    return max(counts, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))


def pick_least_frequent(counts, vocab):
    return min(counts, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (trainer(pick_by_ids), "not their ids"),
        (trainer(pick_by_joined_bytes), "not the two glued together"),
        (trainer(pick_first_met), "depends on dict order"),
        (trainer(pick_rightly, stop=False), "stop when no pair is left"),
        (trainer(pick_rightly, replace=False), "Replace each merged pair everywhere"),
        (trainer(pick_rightly, join=False), "vocab[256] should be"),
        (trainer(pick_least_frequent), "the package's is"),
        (lambda ids, n: trainer(pick_rightly)(ids, n)[::-1], "return (merges, vocab)"),
    ],
)
def test_02_train_check_rejects(nb02, capsys, answer, hint):
    assert_rejected(capsys, nb02["check_train"], (answer,), hint)


def encoder(choose):
    """An encoder that merges until nothing applies, picking the pair with ``choose``."""

    def encode(text, merges):
        ids = list(text.encode("utf-8"))
        while candidates := [pair for pair in zip(ids, ids[1:]) if pair in merges]:
            pair = choose(candidates, merges)
            ids = bpe_course.merge(ids, pair, merges[pair])
        return ids

    return encode


def encode_one_step(text, merges):
    ids = list(text.encode("utf-8"))
    candidates = [pair for pair in zip(ids, ids[1:]) if pair in merges]
    if candidates:
        pair = min(candidates, key=merges.get)
        ids = bpe_course.merge(ids, pair, merges[pair])
    return ids


def encode_without_default_rank(text, merges):
    ids = list(text.encode("utf-8"))
    while len(ids) >= 2:
        pair = min(zip(ids, ids[1:]), key=merges.get)  # None for unknown pairs
        if pair not in merges:
            break
        ids = bpe_course.merge(ids, pair, merges[pair])
    return ids


def encode_longest_match(text, merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (left, right), new_id in merges.items():
        vocab[new_id] = vocab[left] + vocab[right]
    id_of = {token: i for i, token in vocab.items()}
    data, ids, start = text.encode("utf-8"), [], 0
    while start < len(data):
        end = max(e for e in range(start + 1, len(data) + 1) if data[start:e] in id_of)
        ids.append(id_of[data[start:end]])
        start = end
    return ids


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (encoder(lambda pairs, merges: pairs[0]), "you merged the leftmost pair"),
        (encoder(lambda pairs, merges: max(pairs, key=merges.get)), "the pair learned last"),
        (encoder(lambda pairs, merges: max(pairs, key=pairs.count)), "not the leftmost, the most"),
        (encode_one_step, "keep merging until no pair of neighbours is in merges"),
        (encode_without_default_rank, "give it float('inf')"),
        (encode_longest_match, "merge the pair learned earliest"),
        (lambda text, merges: list(text.encode("utf-16-le")), "do not spell the text"),
    ],
)
def test_02_encode_check_rejects(nb02, capsys, answer, hint):
    assert_rejected(capsys, nb02["check_encode"], (answer,), hint)


def test_02_encode_check_accepts_replaying_every_merge_in_order(nb02, capsys):
    def replay_all(text, merges):
        ids = list(text.encode("utf-8"))
        for pair, new_id in merges.items():
            ids = bpe_course.merge(ids, pair, new_id)
        return ids

    assert_accepted(capsys, nb02["check_encode"], (replay_all,))


NEWER = [b"ne", b"w", b"e", b"r"]


@pytest.mark.parametrize(
    ("lowest", "newer", "hint"),
    [
        ([b"lo", b"west"], NEWER, "b'lo' is not a token"),
        ([b"l", b"o", b"west"], NEWER, "the earliest merge that applies anywhere"),
        ([b"low", b"e", b"st"], NEWER, "(b'e', b'st') still applies"),
        ([b"low", b"est"], [b"n", b"e", b"w", b"e", b"r"], "(b'n', b'e') still applies"),
        ([b"low", b"est"], [b"new", b"er"], "b'new' is not a token"),
        (["low", "est"], NEWER, "write a list of bytes"),
        ([b"low", b"es"], NEWER, "join back into the word"),
    ],
)
def test_02_words_check_rejects(nb02, capsys, lowest, newer, hint):
    assert_rejected(capsys, nb02["check_words"], (lowest, newer), hint)


@pytest.mark.parametrize(
    ("checker", "solution"),
    [
        ("check_fives", ("solution_four_fives", "solution_five_fives")),
        ("check_pick_pair", ("solution_pick_pair",)),
        ("check_train", ("solution_train",)),
        ("check_encode", ("solution_encode",)),
        ("check_words", ("solution_lowest_tokens", "solution_newer_tokens")),
    ],
)
def test_02_checks_accept_the_solutions(nb02, capsys, checker, solution):
    assert_accepted(capsys, nb02[checker], tuple(nb02[name] for name in solution))


def test_02_pick_pair_check_accepts_another_right_answer(nb02, capsys):
    def sort_and_take_last(counts, vocab):
        return sorted(counts, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))[-1]

    assert_accepted(capsys, nb02["check_pick_pair"], (sort_and_take_last,))


# --- 03: GPT-2 pretokenization ----------------------------------------------------------------

PIECES = ["We", "'ll", " pay", " $", "100", " for", " 2", " dogs", "!!"]


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (PIECES + [""], "piece 9 is an empty string"),  # the issue's StopIteration crash
        (["", *PIECES], "piece 0 is an empty string"),
        (["We'll", *PIECES[2:]], "\"We'll\" is more than one piece"),
        (["We", "'", "ll", *PIECES[2:]], "\"'\" is too short"),
        ([*PIECES[:3], " $100", *PIECES[5:]], "' $100' is more than one piece"),
        ([*PIECES[:3], " ", "$", *PIECES[4:]], "' ' is too short"),
        (PIECES[:-1], "join back into the sentence"),
        ("We'll pay", "write a list of strings"),
    ],
)
def test_03_pieces_check_rejects(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_pieces"], (answer,), hint)


def with_numbers(alternative: str) -> str:
    """GPT-2's pattern as notebook 03 builds it, with another numbers alternative."""
    parts = GPT2_PARTS
    return "|".join([parts["CONTRACTIONS"], parts["LETTERS"], alternative, parts["OTHER"],
                     parts["SPACES"]])


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (with_numbers(r" ?\p{N}{3}"), "{3} means exactly three"),
        (with_numbers(r"\p{N}{1,3}"), "keep the optional space in front of a number"),
        (with_numbers(r" ?\d{1,3}"), r"\d misses number characters"),
        (with_numbers(r" ?\p{N}+"), "more than three digits"),
        (with_numbers(r"(?: ?\p{N}){1,3}"), "no space inside it"),
        (GPT4_PATTERN, "keep the optional space"),
        ("(", "not a pattern"),
        (None, "not a pattern"),
    ],
)
def test_03_pattern_check_rejects(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_pattern"], (answer,), hint)


def test_03_pattern_check_expects_what_the_solution_pattern_does():
    """The checker's expected pieces (GPT-2's, regrouped) are what the solution's pattern
    gives, on text where GPT-2's space handling and number characters interact."""
    namespace = load_exercises("03_gpt2_pretokenization", **GPT2_PARTS)
    texts = namespace["pattern_samples"](seed=99) + ["  1234  56789\n 1", "x1234567890y ½²³"]
    for text in texts:
        regrouped = namespace["in_groups_of_three"](bpe_course.pretokenize(text, GPT2_PATTERN))
        assert regrouped == regex.findall(namespace["solution_pattern"], text), text


def split_unescaped(text, specials):
    if not specials:
        return [text]
    return regex.split("(" + "|".join(sorted(specials, key=len, reverse=True)) + ")", text)


def split_in_given_order(text, specials):
    if not specials:
        return [text]
    return regex.split("(" + "|".join(map(regex.escape, specials)) + ")", text)


def split_shortest_first(text, specials):
    if not specials:
        return [text]
    return regex.split("(" + "|".join(map(regex.escape, sorted(specials, key=len))) + ")", text)


def split_without_group(text, specials):
    if not specials:
        return [text]
    return regex.split("|".join(map(regex.escape, sorted(specials, key=len, reverse=True))), text)


def split_even_without_specials(text, specials):
    ordered = sorted(specials, key=len, reverse=True)
    return regex.split("(" + "|".join(map(regex.escape, ordered)) + ")", text)


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (split_unescaped, "escape the tokens"),
        (split_in_given_order, "try the longest special tokens first"),
        (split_shortest_first, "try the longest special tokens first"),
        (split_without_group, "a capturing group (...)"),
        (split_even_without_specials, "with no special tokens, return [text]"),
    ],
)
def test_03_split_check_rejects(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_split_on_specials"], (answer,), hint)


def test_03_split_check_accepts_reverse_sorted_tokens(nb03, capsys):
    """Reverse lexicographic order also puts every token before its prefixes: right too."""

    def reverse_sorted(text, specials):
        if not specials:
            return [text]
        return regex.split("(" + "|".join(map(regex.escape, sorted(specials, reverse=True)))
                           + ")", text)

    assert_accepted(capsys, nb03["check_split_on_specials"], (reverse_sorted,))


def spelled_runs(codes: list[int], write: Callable[[int, int], str], joiner: str = "") -> str:
    """``codes`` cut into runs of consecutive code points, each written by ``write(a, b)``."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return joiner.join(write(first, last) for first, last in runs)


def spelling(escape: Callable[[int], str], dash: str = "-", joiner: str = "", shift: int = 0):
    """An answer to notebook 03's `spell_out`: runs as ``first`` or ``first-last``, each code
    point written by ``escape``; ``shift`` moves every range's end (off by one)."""

    def spell(codes: list[int]) -> str:
        return spelled_runs(
            codes, lambda a, b: escape(a) + (dash + escape(b + shift) if b > a else ""), joiner)

    return spell


def hex_escape(code: int) -> str:
    return f"\\u{code:04x}"


def spell_without_the_last_run(codes):
    out, start = [], None
    for previous, code in zip([None, *codes], codes):
        if start is not None and code != previous + 1:
            out.append(spelling(hex_escape)(list(range(start, previous + 1))))
            start = None
        start = code if start is None else start
    return "".join(out)


def spell_merging_gaps_of_one(codes):
    given = set(codes)  # a gap of one between two runs is filled in, joining them
    filled = [c for c in range(0x10000) if c in given or {c - 1, c + 1} <= given]
    return spelling(hex_escape)(filled)


def spell_crashing_on_empty(codes):
    codes[0]  # IndexError on []
    return spelling(hex_escape)(codes)


SPELL_OUT_WRONG = [
    (spell_without_the_last_run, "The last run is missing"),
    (spelling(hex_escape, shift=1), "not the one after it"),
    (spelling(hex_escape, shift=-1), "your class misses U+0039 '9'. A range first-last includes"),
    (spell_merging_gaps_of_one, "a gap of one code point ends the run"),
    (spelling(lambda c: f"\\u{c:04d}"), "\\u reads hexadecimal digits: 48 is \\u0030"),
    (spelling(chr), "spell_out([43, 45, 47]) gave '+-/'. Hint: your class also matches U+002C ','"),
    (lambda codes: f"[{spelling(hex_escape)(codes)}]" if codes else "", "leave out the brackets"),
    (lambda codes: spelling(hex_escape)(codes).split("\\u0"), "not a list"),
    (lambda codes: None, "not None"),
    (spell_crashing_on_empty, "raised IndexError"),
    (spelling(lambda c: f"\\u{c:x}"), "\\u needs exactly four hex digits"),
    (spelling(hex_escape, joiner=", "), "your string holds ' '"),
    (spelling(lambda c: f"\\U{c:04x}"), "\\U takes eight hex digits"),
    (spelling(hex_escape, dash=""), "A range needs a - between its ends"),
]


@pytest.mark.parametrize(("answer", "hint"), SPELL_OUT_WRONG)
def test_03_spell_out_check_rejects(nb03, capsys, answer, hint):
    assert_rejected(capsys, nb03["check_spell_out"], (answer,), hint)


def spell_two_as_singles(codes):
    return spelled_runs(codes, lambda a, b: hex_escape(a) + hex_escape(b) if b == a + 1
                        else spelling(hex_escape)(list(range(a, b + 1))))


@pytest.mark.parametrize(
    "answer",
    [
        lambda codes: "".join(map(hex_escape, codes)),  # no ranges at all: the same characters
        spell_two_as_singles,
        lambda codes: spelled_runs(codes, lambda a, b: f"\\u{a:04X}-\\u{b:04X}"),  # A-A too
        spelling(lambda c: re.escape(chr(c))),  # the characters themselves, escaped by re
    ],
)
def test_03_spell_out_check_accepts_any_class_with_the_same_characters(nb03, capsys, answer):
    assert_accepted(capsys, nb03["check_spell_out"], (answer,))


def test_03_spell_out_cases_hold_the_package_properties_and_the_edge_cases(nb03):
    cases = nb03["spell_out_cases"]()
    assert {"[]", "[65]", "[65, 67]", "[65, 66]"} <= {what for what, _, _ in cases}
    assert len(cases) > 300 and sum(spelled is not None for _, _, spelled in cases) == 8
    for what, codes, spelled in cases:
        assert codes == sorted(set(codes)) and all(0 <= c < 0x10000 for c in codes), what
        if spelled is not None:  # the package's spelling is what the solution writes
            assert nb03["solution_spell_out"](codes) == spelled, what


@pytest.mark.parametrize(
    ("checker", "solution"),
    [("check_pieces", "solution_pieces"), ("check_pattern", "solution_pattern"),
     ("check_split_on_specials", "solution_split_on_specials"),
     ("check_spell_out", "solution_spell_out")],
)
def test_03_checks_accept_the_solutions(nb03, capsys, checker, solution):
    assert_accepted(capsys, nb03[checker], (nb03[solution],))


# --- every early notebook: Run All keeps the learner's answer ---------------------------------


def assigned_names(source: str) -> set[str]:
    """Names a cell defines at top level (functions, classes, assignments)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


@pytest.mark.parametrize("name", EARLY_NOTEBOOKS)
def test_solutions_and_checks_never_assign_the_learners_names(name):
    notebook = load_notebook(name)
    learners = set().union(*map(assigned_names, cells_tagged(notebook, "exercise")))
    for tag in ("solution", "exercise-checker", "exercise-check"):
        for source in cells_tagged(notebook, tag):
            assert not assigned_names(source) & learners, (tag, source)


@pytest.mark.parametrize("name", EARLY_NOTEBOOKS)
def test_learner_stubs_are_unwritten_in_the_committed_notebook(name):
    """nbval then verifies the solutions, and a learner starts from a blank answer."""
    for source in cells_tagged(load_notebook(name), "exercise"):
        assert 'raise NotImplementedError("your turn")' in source or "= ...  #" in source, source


@pytest.mark.parametrize(
    ("name", "given"),
    [("01_bytes_and_utf8", {}),
     ("02_naive_bpe", {"get_pair_counts": bpe_course.get_pair_counts, "merge": bpe_course.merge}),
     ("03_gpt2_pretokenization", GPT2_PARTS)],
)
def test_check_exercise_keeps_a_wrong_answer_and_says_only_what_is_wrong(name, given, capsys):
    namespace = load_exercises(name, **given)
    check_exercise = namespace["check_exercise"]

    def wrong(*args):
        return None

    solutions = [v for k, v in namespace.items() if k.startswith("solution_") and callable(v)]
    assert solutions
    solution = solutions[-1]  # the last function exercise of the notebook
    checker = namespace["check_" + solution.__name__.removeprefix("solution_")]
    assert check_exercise(wrong, solution, checker) is solution
    printed = capsys.readouterr().out
    assert printed.startswith("Not yet") and "Correct!" not in printed

    def stub(*args):
        raise NotImplementedError("your turn")

    assert check_exercise(stub, solution, checker) is solution
    assert capsys.readouterr().out == (
        "`stub` is not written yet: checking the reference solution instead.\nCorrect!\n"
    )
    assert check_exercise(solution, solution, checker) is solution
    assert capsys.readouterr().out == "Correct!\n"


@pytest.mark.parametrize("name", EARLY_NOTEBOOKS)
def test_notebook_is_clean_for_jupyterlab_and_slides(name):
    notebook = load_notebook(name)
    assert notebook["metadata"]["kernelspec"] == {
        "display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"
    }
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        assert "NBVAL_" not in source, source
        assert "slide_type" in cell["metadata"].get("slideshow", {}), source
        tags = cell["metadata"].get("tags", [])
        if "solution" in tags:
            assert cell["metadata"]["jupyter"]["source_hidden"] is True, source
        if "plt.subplots" in source or "exercise-checker" in tags:
            assert "hide-input-on-slides" in tags, source
