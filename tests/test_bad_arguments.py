"""Bad arguments stop with an error that names the argument and what is wrong with it.

Each check runs before any work starts (no corpus is read, no worker starts), so a mistake in
a call costs nothing, and the error says which argument, which value and what would be right.
Files that are missing, broken or change while they are read are in ``test_bad_files.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from bpe_course import (
    Tokenizer,
    train_bpe,
    train_bpe_naive,
    train_from_counts,
    train_from_counts_naive,
)
from bpe_course.base import ENDOFTEXT, check_special_tokens
from bpe_course.pretokens import compile_pattern
from bpe_course.utf8 import byte_vocab

TRAINERS = [train_bpe, train_bpe_naive]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("low lower newest widest " * 20, encoding="utf-8")
    return path


# Training: sizes, processes, patterns, modes and paths -----------------------------------------


@pytest.mark.parametrize("train", TRAINERS)
def test_vocab_size_below_bytes_plus_specials_names_both_numbers(corpus, train):
    with pytest.raises(ValueError, match=r"vocab_size=256\b.*257"):
        train(corpus, 256, [ENDOFTEXT])
    with pytest.raises(ValueError, match=r"vocab_size=100\b.*256"):
        train(corpus, 100)


@pytest.mark.parametrize("train", [train_from_counts, train_from_counts_naive])
def test_vocab_size_checks_in_train_from_counts(train):
    with pytest.raises(ValueError, match=r"vocab_size=257\b.*258"):
        train({"ab": 1}, 257, [ENDOFTEXT, "<pad>"])
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        train({"ab": 1}, 300.0)
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        train({"ab": 1}, True)


@pytest.mark.parametrize("train", TRAINERS)
def test_exactly_bytes_plus_specials_is_a_valid_size(corpus, train):
    vocab, merges = train(corpus, 257, [ENDOFTEXT])
    assert len(vocab) == 257 and merges == []


def test_num_processes_must_be_positive(corpus):
    with pytest.raises(ValueError, match="num_processes must be at least 1, got 0"):
        train_bpe(corpus, 300, num_processes=0)


@pytest.mark.parametrize("trainer", TRAINERS)
@pytest.mark.parametrize("processes", ["2", 2.0, True])
def test_num_processes_must_be_a_whole_number(trainer, corpus, processes):
    with pytest.raises(TypeError, match="num_processes must be an int or None"):
        trainer(corpus, 300, num_processes=processes)


def test_invalid_pattern_is_reported(corpus):
    with pytest.raises(ValueError, match="not a valid regular expression"):
        train_bpe(corpus, 300, pattern="(unclosed")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        compile_pattern("[")


@pytest.mark.parametrize("trainer", TRAINERS)
def test_an_empty_list_of_corpus_files_is_refused(trainer):
    with pytest.raises(ValueError, match="empty list"):
        trainer([], 300)


@pytest.mark.parametrize("trainer", TRAINERS)
def test_an_unknown_errors_mode_is_refused_before_reading(trainer, tmp_path):
    path = tmp_path / "good.txt"
    path.write_text("no bad bytes here", encoding="utf-8")
    with pytest.raises(ValueError, match="errors must be 'strict' or 'replace', got 'bogus'"):
        trainer(path, 300, errors="bogus")


@pytest.mark.parametrize("trainer", TRAINERS)
def test_a_bytes_path_gets_a_clear_error(trainer, corpus):
    with pytest.raises(TypeError, match="not bytes"):
        trainer(bytes(corpus), 300)


@pytest.mark.parametrize("trainer", [train_from_counts, train_from_counts_naive])
def test_a_special_token_among_the_counts_is_refused(trainer):
    # Merging "<" "s" ">" would give the special token's bytes a second id.
    with pytest.raises(ValueError, match="contains the special token '<s>'"):
        trainer({"<s>": 5}, 259, ["<s>"])


# Special tokens --------------------------------------------------------------------------------


def test_duplicate_special_tokens_are_named(corpus):
    with pytest.raises(ValueError, match=re.escape(f"'{ENDOFTEXT}' is given more than once")):
        train_bpe(corpus, 300, [ENDOFTEXT, ENDOFTEXT])
    with pytest.raises(ValueError, match="more than once"):
        Tokenizer(byte_vocab(), [], ["<pad>", "<pad>"])


def test_empty_special_token_is_refused(corpus):
    with pytest.raises(ValueError, match="empty string"):
        train_bpe(corpus, 300, [""])
    with pytest.raises(ValueError, match="empty string"):
        Tokenizer(byte_vocab(), [], [""])


def test_special_tokens_must_be_a_list_of_strings():
    with pytest.raises(TypeError, match="not the single value"):
        check_special_tokens(ENDOFTEXT)
    with pytest.raises(TypeError, match="must be strings"):
        check_special_tokens([b"<pad>"])


@pytest.mark.parametrize("token", ["[", "!", "\n"])
def test_a_one_byte_special_token_is_refused_everywhere(token):
    # Its byte already has an id: the trainer would give it a second one, the tokenizer
    # would map it to the byte's, and no vocab.json can hold both.
    with pytest.raises(ValueError, match="is a single byte"):
        check_special_tokens([token])
    with pytest.raises(ValueError, match="is a single byte"):
        Tokenizer(byte_vocab(), [], [token])


def test_a_one_byte_special_token_means_the_same_id_to_trainer_and_tokenizer(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a[b] c[d] " * 50, encoding="utf-8")
    try:
        vocab, merges = train_bpe(corpus, 270, ["["])
        tokenizer = Tokenizer(vocab, merges, ["["])
    except ValueError:
        return  # refusing a one-byte special token up front is a fine answer too
    assert tokenizer.special_tokens == {"[": 256}
    tokenizer.save(tmp_path / "vocab.json", tmp_path / "merges.txt")


def test_a_special_token_with_a_lone_surrogate_is_refused_up_front():
    """UTF-8 cannot encode it: training and the tokenizer crashed deep inside instead."""
    with pytest.raises(ValueError, match="lone surrogate"):
        check_special_tokens(["<\udcff>"])
    with pytest.raises(ValueError, match="lone surrogate"):
        Tokenizer(byte_vocab(), [], ["<\udcff>"])


# Tokenizer: its tables, and what encode and decode are given -----------------------------------


def test_vocab_without_every_byte_is_refused():
    vocab = byte_vocab()
    del vocab[0x41]
    with pytest.raises(ValueError, match="first: 0x41"):
        Tokenizer(vocab, [])


def test_merge_of_tokens_not_in_vocab_is_refused():
    with pytest.raises(ValueError, match=r"merge 0 uses b'ab', which is not in vocab"):
        Tokenizer(byte_vocab(), [(b"a", b"b")])


def test_encode_needs_text():
    tokenizer = Tokenizer(byte_vocab(), [])
    with pytest.raises(TypeError, match="encode expects str, got bytes"):
        tokenizer.encode(b"hello")
    with pytest.raises(TypeError, match="expects strings, got bytes"):
        list(tokenizer.encode_iterable([b"hello"]))


def test_allowed_special_must_name_known_tokens():
    tokenizer = Tokenizer(byte_vocab(), [], [ENDOFTEXT])
    with pytest.raises(ValueError, match="<pad>"):
        tokenizer.encode("x", allowed_special={"<pad>"})
    with pytest.raises(ValueError, match="allowed_special must be"):
        tokenizer.encode("x", allowed_special="some")


def test_decode_of_an_unknown_id_names_it():
    tokenizer = Tokenizer(byte_vocab(), [])
    with pytest.raises(ValueError, match=r"unknown token id 999\b.*0\.\.255"):
        tokenizer.decode([104, 105, 999])
    with pytest.raises(ValueError, match="unknown token id -1"):
        tokenizer.decode([-1])
    with pytest.raises(KeyError, match="unknown token id 256"):  # tiktoken raises KeyError
        tokenizer.decode_single_token_bytes(256)
    with pytest.raises(TypeError, match="id 0 is 'a' \\(str\\)"):
        tokenizer.decode_bytes(["a"])


def test_decode_names_the_unknown_id_among_numpy_ids(gpt2_tokenizer):
    # It used to name the valid 15496: a NumPy integer is not an ``int``.
    with pytest.raises(ValueError, match=r"unknown token id 99999999\b") as caught:
        gpt2_tokenizer.decode(np.array([15496, 99999999]))
    assert "15496" not in str(caught.value)
    for method in (gpt2_tokenizer.decode_tokens_bytes, gpt2_tokenizer.decode_with_offsets):
        with pytest.raises(KeyError, match="99999999"):
            method(np.array([15496, 99999999]))
    # NumPy integers are ids like any other.
    assert gpt2_tokenizer.decode(np.array([15496, 995])) == "Hello world"
    assert gpt2_tokenizer.decode([np.int64(15496), np.uint16(995)]) == "Hello world"
    assert gpt2_tokenizer.decode_single_token_bytes(np.int32(15496)) == b"Hello"


@pytest.mark.parametrize(
    "bad", [15496.0, True, False, "15496", None, np.float64(1.0), np.bool_(True), 1 + 0j]
)
def test_decode_refuses_ids_that_are_not_integers(gpt2_tokenizer, bad):
    # 15496.0 and True used to decode (as 15496 and 1): a float or a bool is not an id.
    tokenizer = gpt2_tokenizer
    methods = [
        tokenizer.decode,
        tokenizer.decode_bytes,
        tokenizer.decode_tokens_bytes,
        tokenizer.decode_with_offsets,
    ]
    message = f"token ids are integers, but id 1 is {re.escape(repr(bad))}"
    for method in methods:
        with pytest.raises(TypeError, match=message):
            method([15496, bad])
    with pytest.raises(TypeError, match="token ids are integers"):
        tokenizer.decode_single_token_bytes(bad)


def test_decode_needs_a_sequence_and_a_known_error_handler(gpt2_tokenizer):
    with pytest.raises(TypeError, match="a sequence of token ids, got int 15496"):
        gpt2_tokenizer.decode(15496)
    with pytest.raises(LookupError, match="bogus"):  # before any invalid byte shows up
        gpt2_tokenizer.decode([15496], errors="bogus")
    with pytest.raises(UnicodeDecodeError):
        gpt2_tokenizer.decode([47249], errors="strict")  # the first half of 😀
    assert gpt2_tokenizer.decode([47249]) == "\ufffd"
