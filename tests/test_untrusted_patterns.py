"""Split patterns from anywhere: a pattern that could lose text is refused, one that hangs stops.

A capture group made ``findall`` return the groups and drop the rest; a pattern that does not
match every character dropped what it skipped; ``(?:a|a)+b`` took longer with every ``a``.
Each came in through ``Tokenizer(pattern=...)``, a tokenizer folder's ``config.json`` and
``train_bpe(pattern=...)``.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
import regex
from hypothesis import assume, event, given
from hypothesis import strategies as st

from bpe_course import Tokenizer, train_bpe
from bpe_course.app.cli import main
from bpe_course.formats.folder import load_tokenizer_folder, save_tokenizer
from bpe_course.models import LLAMA3_PATTERN, QWEN3_6_PATTERN, QWEN_PATTERN
from bpe_course.pretokens import NAMED_PATTERNS
from bpe_course.utf8 import byte_vocab
from tests.strategies import any_char, nasty

CATASTROPHIC = r"(?:a|a)+b|[\s\S]"


def folder_with_pattern(tmp_path: Path, pattern: str) -> Path:
    """A tokenizer folder whose config.json was edited to hold ``pattern``."""
    folder = tmp_path / "tok"
    save_tokenizer(Tokenizer(byte_vocab(), []), str(folder))
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config.update(pattern=None, pattern_regex=pattern)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def corpus(tmp_path: Path, text: str = "Hello world 42! " * 50) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    return path


# Capture groups ---------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", [r"(\w)+|\s", r"(?P<word>\w+)|\W", r"(a)|(b)|[\s\S]"])
def test_a_capture_group_is_refused_wherever_the_pattern_comes_from(tmp_path, pattern):
    # Tokenizer(vocab, [], pattern=r"(\w)+|\s").encode("Hello world 42!") gave the ids of
    # "o", "d" and "2": the groups, not the pieces.
    with pytest.raises(ValueError, match="capture group.*\\(\\?:\\.\\.\\.\\)"):
        Tokenizer(byte_vocab(), [], pattern=pattern)
    with pytest.raises(ValueError, match="capture group"):
        train_bpe(corpus(tmp_path), 300, pattern=pattern)
    folder = folder_with_pattern(tmp_path, pattern)
    with pytest.raises(ValueError, match=r"config\.json: pattern_regex: .*capture group"):
        load_tokenizer_folder(str(folder))


def test_groups_that_do_not_capture_are_fine():
    tokenizer = Tokenizer(byte_vocab(), [], pattern=r"(?:\w)+|(?=\s)\s|(?i:X)|[\s\S]")
    assert tokenizer.decode(tokenizer.encode("Hello world 42!")) == "Hello world 42!"


# Text no piece covers --------------------------------------------------------------------


def test_text_the_pattern_leaves_out_is_refused_naming_the_first_character():
    # [a-z]+ gave the ids of "ello", "world": H, the spaces and "42!" were dropped silently.
    tokenizer = Tokenizer(byte_vocab(), [], pattern="[a-z]+")
    for encode in (tokenizer.encode, tokenizer.encode_ordinary, tokenizer.encode_naive):
        with pytest.raises(ValueError, match=r"leaves out 'H' \(U\+0048\) in 'Hello world"):
            encode("Hello world 42!")
    with pytest.raises(ValueError, match=r"leaves out ' '"):
        list(tokenizer.encode_iterable(["hello", " world"]))
    with pytest.raises(ValueError, match=r"leaves out '4'"):
        tokenizer.encode_batch(["ok", "then42"], num_processes=1)
    assert tokenizer.encode("hello") == list(b"hello")  # text it covers still encodes


def test_a_folder_whose_pattern_leaves_text_out_refuses_that_text(tmp_path):
    tokenizer = load_tokenizer_folder(str(folder_with_pattern(tmp_path, r"\w+")))
    with pytest.raises(ValueError, match=r"leaves out ' ' \(U\+0020\)"):
        tokenizer.encode("two words")


def test_training_refuses_a_corpus_the_pattern_leaves_out_naming_the_corpus(tmp_path):
    path = corpus(tmp_path)
    with pytest.raises(ValueError, match=rf"{regex.escape(str(path))}: .*leaves out 'H'"):
        train_bpe(path, 300, pattern="[a-z]+", num_processes=1)


#: Pieces patterns are made of: classes, literals, quantifiers, groups and lookarounds.
ATOMS = [r"\w", r"\s", r"\d", r"\S", r"\W", ".", "[a-z]", "[^a]", r"\p{L}", r"\p{N}", "a",
         " ", "'", r"[\s\S]", "(?=a)", "(?!a)", r"(?<=\s)"]
QUANTIFIERS = ["", "+", "*", "?", "{1,3}", "+?"]


@st.composite
def patterns(draw) -> str:
    """Alternations of short sequences of atoms, some in groups that capture."""
    alternatives = []
    for _ in range(draw(st.integers(1, 4))):
        sequence = ""
        for _ in range(draw(st.integers(1, 3))):
            atom = draw(st.sampled_from(ATOMS)) + draw(st.sampled_from(QUANTIFIERS))
            group = draw(st.sampled_from(["", "", "(?:", "("]))
            sequence += f"{group}{atom})" if group else atom
        alternatives.append(sequence)
    return "|".join(alternatives)


@given(pattern=patterns(), text=nasty(any_char))
def test_an_accepted_pattern_gives_back_every_character(trained_tokenizer, pattern, text):
    """decode(encode(s)) == s for every pattern and text that are not refused; and a refusal
    is for a reason that holds (a group, an empty match, a character no piece covers)."""
    compiled = regex.compile(pattern)
    try:
        tokenizer = Tokenizer(trained_tokenizer.vocab, trained_tokenizer.merges, pattern=pattern)
    except ValueError:
        assert compiled.groups or compiled.match("") is not None
        event("refused when made")
        return
    try:
        ids = tokenizer.encode_ordinary(text)
    except ValueError as error:
        assert "leaves out" in str(error)
        assert "".join(compiled.findall(text)) != text
        event("refused the text")
        return
    assert tokenizer.decode(ids) == text
    event("gave the text back")


#: Every pattern the package ships: the named ones and the open models' (Llama 3, Qwen).
SHIPPED = sorted({*NAMED_PATTERNS.values(), LLAMA3_PATTERN, QWEN_PATTERN, QWEN3_6_PATTERN})


@given(pattern=st.sampled_from(SHIPPED), text=nasty(any_char))
def test_the_package_patterns_cover_any_text(pattern, text):
    assume(text)
    tokenizer = Tokenizer(byte_vocab(), [], pattern=pattern)
    assert tokenizer.decode(tokenizer.encode_ordinary(text)) == text


def test_the_package_patterns_keep_the_fast_path():
    # Llama 3's and Qwen's patterns were guarded: regex under a clock, 2.5x the time.
    for pattern in SHIPPED:
        splitter = Tokenizer(byte_vocab(), [], pattern=pattern)._compiled
        assert splitter.fast is not None and not splitter.guarded


# Catastrophic backtracking ----------------------------------------------------------------


@pytest.fixture
def short_limit(monkeypatch):
    """A time limit of a tenth of a second (the default allows a second and more)."""
    from bpe_course.safety import patterns  # (imported here so the rest ran before it existed)

    monkeypatch.setattr(patterns, "PATTERN_SECONDS", 0.1)


def test_a_pattern_that_backtracks_without_end_is_stopped(tmp_path, short_limit):
    # Encoding 28 a's and a c took more than 30 s, twice as long for each more a.
    tokenizer = load_tokenizer_folder(str(folder_with_pattern(tmp_path, CATASTROPHIC)))
    with pytest.raises(ValueError, match=r"took more than 0\.1 s .*backtracks too much"):
        tokenizer.encode("a" * 28 + "c")
    assert tokenizer.encode("ab c") == [ord(c) for c in "ab c"]  # ordinary text is fine


def test_training_with_such_a_pattern_is_stopped(tmp_path, short_limit):
    path = corpus(tmp_path, "a" * 28 + "c")
    with pytest.raises(ValueError, match=r"backtracks too much"):
        train_bpe(path, 300, pattern=CATASTROPHIC, num_processes=1)


def test_the_command_line_says_so_in_one_line(tmp_path, short_limit, monkeypatch, capsys):
    folder = folder_with_pattern(tmp_path, CATASTROPHIC)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a" * 28 + b"c")))
    code = main(["encode", "--tokenizer", str(folder)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "backtracks too much" in err, err


def test_without_a_time_limit_a_pattern_of_ones_own_is_fast_and_still_checked(monkeypatch):
    from bpe_course.safety import patterns

    monkeypatch.setattr(patterns, "PATTERN_SECONDS", None)
    tokenizer = Tokenizer(byte_vocab(), [], pattern=r"\w+|[^\w\d]")
    assert tokenizer._compiled.fast is not None  # the standard library's re
    assert tokenizer.decode(tokenizer.encode("Hello, world")) == "Hello, world"
    with pytest.raises(ValueError, match=r"leaves out '4'"):
        Tokenizer(byte_vocab(), [], pattern=r"[^\W\d]+|\s").encode("route 42")
