"""Bad input gets the right answer or a clear error, never a crash or a silent wrong answer.

Each test here was written from a report of something that went wrong (issue 10), and
failed before the fix.
"""

from __future__ import annotations

import json

import pytest

from bpe_course import (
    Tokenizer,
    train_bpe,
    train_bpe_naive,
    train_from_counts,
    train_from_counts_naive,
)
from bpe_course.files import read_merges_txt, read_vocab_json, write_vocab_json
from bpe_course.openai import load_tiktoken_file
from bpe_course.pretokenize import GPT2_PATTERN
from bpe_course.utf8 import byte_vocab

TRAINERS = [train_bpe, train_bpe_naive]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("low lower lowest newer newest " * 20, encoding="utf-8")
    return path


# Training arguments ---------------------------------------------------------------------


@pytest.mark.parametrize("trainer", TRAINERS)
@pytest.mark.parametrize("processes", ["2", 2.0, True])
def test_num_processes_must_be_a_whole_number(trainer, corpus, processes):
    with pytest.raises(TypeError, match="num_processes must be an int or None"):
        trainer(corpus, 300, num_processes=processes)


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


# Files ------------------------------------------------------------------------------------


def test_merges_file_that_is_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_bytes(b"#version: 0.2\nh e\nl \xff\n")
    with pytest.raises(ValueError, match=r"merges.txt:3: not UTF-8"):
        read_merges_txt(path)


def test_files_written_by_notepad_with_a_byte_order_mark_load(tmp_path):
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab = byte_vocab() | {256: b"he"}
    write_vocab_json(vocab_path, vocab)
    vocab_path.write_bytes(b"\xef\xbb\xbf" + vocab_path.read_bytes())
    merges_path.write_bytes(b"\xef\xbb\xbf#version: 0.2\r\nh e\r\n")
    assert read_vocab_json(vocab_path) == vocab
    assert read_merges_txt(merges_path) == [(b"h", b"e")]
    assert Tokenizer.from_files(vocab_path, merges_path).encode("he") == [256]


def test_a_token_given_twice_in_vocab_json_is_refused(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_text('{"a": 0, "b": 1, "a": 2}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"token 'a' appears twice \(ids 0 and 2\)"):
        read_vocab_json(path)


def test_vocab_json_that_is_not_utf8_names_the_offset(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_bytes(b'{"a": 0, "\xff": 1}')
    with pytest.raises(ValueError, match="vocab.json: not UTF-8 at byte offset 10"):
        read_vocab_json(path)


def test_a_rank_file_loads_without_special_tokens(tmp_path):
    import base64

    path = tmp_path / "tiny.tiktoken"
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    lines.append(f"{base64.b64encode(b'ab').decode()} 256")
    path.write_text("\n".join(lines) + "\n")
    tokenizer = load_tiktoken_file(path, GPT2_PATTERN, None)
    assert tokenizer.encode("abc") == [256, ord("c")]
    assert tokenizer.special_tokens == {} and tokenizer.name == "tiny"


def test_config_json_written_by_notepad_loads(tmp_path):
    from bpe_course.folder import load_tokenizer_folder, save_tokenizer

    save_tokenizer(Tokenizer(byte_vocab(), [], ["<s>"]), str(tmp_path / "t"))
    config = tmp_path / "t" / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + config.read_bytes())
    assert load_tokenizer_folder(str(tmp_path / "t")).special_tokens == {"<s>": 256}
    config.write_text(json.dumps({"special_tokens": ["<s>"], "pattern": "nope"}))
    with pytest.raises(ValueError, match="unknown pattern 'nope'"):
        load_tokenizer_folder(str(tmp_path / "t"))
