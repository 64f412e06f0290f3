"""Tokenizer files broken in every way we could think of: each gets an error naming the file.

An adversarial pass over vocab.json, merges.txt, config.json, .tiktoken rank files and
tokenizer folders: wrong types, impossible ids, merges out of order, old Mac line endings,
a folder that mixes two tokenizers, a folder that changes while it is read.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest

from bpe_course import GPT2_PATTERN, GPT4_PATTERN, Tokenizer
from bpe_course.base import check_special_tokens
from bpe_course.formats import folder as folder_module
from bpe_course.formats.folder import load_tokenizer_folder, save_tokenizer
from bpe_course.formats.gpt2 import read_merges_txt, read_vocab_json, write_vocab_json
from bpe_course.openai import load_tiktoken_file, read_tiktoken_ranks
from bpe_course.utf8 import byte_vocab

SPECIAL = "<|endoftext|>"


def small_tokenizer(pattern: str = GPT2_PATTERN, specials=(SPECIAL,)) -> Tokenizer:
    vocab = byte_vocab() | {256: b"th", 257: b"the", 258: b" the"}
    merges = [(b"t", b"h"), (b"th", b"e"), (b" ", b"the")]
    return Tokenizer(vocab, merges, list(specials), pattern)


@pytest.fixture
def saved(tmp_path) -> Path:
    """A tokenizer folder as ``bpe-course train`` writes it."""
    save_tokenizer(small_tokenizer(), str(tmp_path / "tok"))
    return tmp_path / "tok"


# merges.txt --------------------------------------------------------------------------------


def test_merges_with_old_mac_line_endings_are_read_line_by_line(tmp_path):
    """A lone CR ends a line (no token can hold a raw CR: GPT-2 writes byte 13 as 'č')."""
    path = tmp_path / "merges.txt"
    path.write_bytes(b"#version: 0.2\rt h\rth e\r")
    assert read_merges_txt(path) == [(b"t", b"h"), (b"th", b"e")]  # was [] (one long line)


def test_a_merge_given_twice_is_refused(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_text("#version: 0.2\nt h\nth e\nt h\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:4: merge 't h' repeats line 2")):
        read_merges_txt(path)


def test_merges_out_of_order_are_refused(tmp_path):
    """A merge may only use tokens that earlier merges made: training cannot do otherwise."""
    path = tmp_path / "merges.txt"
    path.write_text("#version: 0.2\nth e\nt h\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: merge uses 'th'")) as caught:
        read_merges_txt(path)
    assert "no earlier line makes" in str(caught.value)


# config.json and the folder ------------------------------------------------------------------


def write_config(folder: Path, **changes) -> None:
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update(changes)
    path.write_text(json.dumps(config), encoding="utf-8")


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"special_tokens": [SPECIAL, SPECIAL]}, "more than once"),
        ({"special_tokens": [""]}, "empty string"),
        ({"pattern": None, "pattern_regex": "(("}, "not a valid regular expression"),
        ({"pattern": ["gpt2"], "pattern_regex": None}, "unknown pattern"),  # TypeError before
        ({"pattern": None, "pattern_regex": ""}, "matches the empty string"),  # gave []
        ({"pattern": "gpt4"}, "disagree"),  # a hand edit of "pattern" was silently ignored
        ({"vocab_size": 5000}, "vocab_size 5000"),  # files from two different tokenizers
        ({"merges": 7}, "7 merges"),
    ],
)
def test_config_mistakes_name_config_json(saved, changes, complaint):
    write_config(saved, **changes)
    with pytest.raises(ValueError, match=re.escape(str(saved / "config.json"))) as caught:
        load_tokenizer_folder(str(saved))
    assert complaint in str(caught.value)


def test_a_folder_without_config_json_is_refused(saved):
    """Without it the special tokens and the pattern were silently dropped."""
    (saved / "config.json").unlink()
    with pytest.raises(ValueError, match=f"{re.escape(str(saved))} has no config.json"):
        load_tokenizer_folder(str(saved))


def test_a_vocab_missing_a_byte_names_vocab_json(saved):
    vocab = json.loads((saved / "vocab.json").read_text(encoding="utf-8"))
    del vocab["A"]
    (saved / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(saved / "vocab.json"))) as caught:
        load_tokenizer_folder(str(saved))
    assert "0x41" in str(caught.value)


def test_a_folder_replaced_while_it_is_read_is_read_whole(tmp_path, monkeypatch):
    """``train`` swaps a new tokenizer in while ``encode --tokenizer`` may be reading the
    old one: the reader must get one tokenizer or the other, not the old config with the
    new vocabulary."""
    out = str(tmp_path / "tok")
    save_tokenizer(small_tokenizer(GPT2_PATTERN, ["<a>"]), out)
    newer = Tokenizer(byte_vocab() | {256: b"<b>"}, [], ["<b>"], GPT4_PATTERN)
    real_read_config = folder_module._read_config
    calls = []

    def read_then_replace(where):
        config = real_read_config(where)
        if not calls:
            calls.append(where)
            save_tokenizer(newer, out)  # another process finishes training right now
        return config

    monkeypatch.setattr(folder_module, "_read_config", read_then_replace)
    loaded = load_tokenizer_folder(out)
    assert (loaded.pattern, loaded.special_tokens) in [
        (GPT2_PATTERN, {"<a>": 256}),
        (GPT4_PATTERN, {"<b>": 256}),
    ]


def test_a_folder_that_is_a_mount_point_is_refused_before_training(tmp_path, monkeypatch):
    """A mount point (a Docker volume, say) cannot be swapped out whole: say so up front,
    not after the training, when the final rename fails with 'Device or resource busy'."""
    from bpe_course.formats.folder import claim_output_folder

    (tmp_path / "volume").mkdir()
    real_ismount = folder_module.os.path.ismount
    monkeypatch.setattr(
        folder_module.os.path, "ismount",
        lambda path: path == str(tmp_path / "volume") or real_ismount(path),
    )
    with pytest.raises(ValueError, match="is a mount point"):
        claim_output_folder(str(tmp_path / "volume"))


def test_a_failed_save_names_the_folder(tmp_path, monkeypatch):
    from bpe_course.formats import gpt2 as files

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.json, "dump", full)
    with pytest.raises(OSError, match=re.escape(f"cannot save the tokenizer in {tmp_path}")):
        save_tokenizer(small_tokenizer(), str(tmp_path / "tok"))
    assert list(tmp_path.iterdir()) == []


# .tiktoken rank files ------------------------------------------------------------------------


def rank_lines(extra: list[str] | None = None) -> list[str]:
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    return lines + [f"{base64.b64encode(b'ab').decode()} 256"] + (extra or [])


def write_ranks(path: Path, lines: list[str], newline: str = "\n", prefix: bytes = b"") -> Path:
    path.write_bytes(prefix + (newline.join(lines) + newline).encode())
    return path


def test_rank_files_with_old_mac_line_endings_or_a_bom_load_as_tiktoken_reads_them(tmp_path):
    expected = read_tiktoken_ranks(write_ranks(tmp_path / "a.tiktoken", rank_lines()))
    assert read_tiktoken_ranks(write_ranks(tmp_path / "b.tiktoken", rank_lines(), "\r")) == expected
    bom = write_ranks(tmp_path / "c.tiktoken", rank_lines(), prefix=b"\xef\xbb\xbf")
    assert read_tiktoken_ranks(bom) == expected


@pytest.mark.parametrize(
    ("rank", "complaint"),
    [("-5", "not a rank"), ("2_56", "not a rank"), ("+256", "not a rank"),
     (str(10**30), "too large")],
)
def test_impossible_ranks_are_named(tmp_path, rank, complaint):
    lines = rank_lines()
    lines[-1] = f"{base64.b64encode(b'ab').decode()} {rank}"
    path = write_ranks(tmp_path / "r.tiktoken", lines)
    with pytest.raises(ValueError, match=re.escape(f"{path}:257:")) as caught:
        read_tiktoken_ranks(path)
    assert complaint in str(caught.value)


def test_a_rank_file_missing_a_byte_names_the_file(tmp_path):
    path = write_ranks(tmp_path / "r.tiktoken", rank_lines()[1:])
    with pytest.raises(ValueError, match=re.escape(str(path))):
        load_tiktoken_file(path, GPT2_PATTERN)


def test_a_gz_name_on_a_plain_file_names_the_file(tmp_path):
    path = write_ranks(tmp_path / "r.tiktoken.gz", rank_lines())
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*gzip"):
        load_tiktoken_file(path, GPT2_PATTERN)


@pytest.mark.parametrize(
    ("specials", "complaint"),
    [
        ({"<s>": -1}, "not an id >= 0"),
        ({"<s>": "300"}, "not an id >= 0"),
        ({"<s>": True}, "not an id >= 0"),
        (["<s>"], "a mapping"),
        ({"ab": 300}, "same bytes as rank 256"),  # was silently given id 256
        ({"a": 300}, "is a single byte"),
        ({"<a>": 300, "<b>": 300}, "both want id 300"),
        ({"<\udcff>": 300}, "lone surrogate"),
    ],
)
def test_impossible_special_token_ids_for_a_rank_file(tmp_path, specials, complaint):
    path = write_ranks(tmp_path / "r.tiktoken", rank_lines())
    with pytest.raises((TypeError, ValueError)) as caught:
        load_tiktoken_file(path, GPT2_PATTERN, specials)
    assert complaint in str(caught.value)


# Special tokens ----------------------------------------------------------------------------


def test_a_special_token_with_a_lone_surrogate_is_refused_up_front():
    """UTF-8 cannot encode it: training and the tokenizer crashed deep inside instead."""
    with pytest.raises(ValueError, match="lone surrogate"):
        check_special_tokens(["<\udcff>"])
    with pytest.raises(ValueError, match="lone surrogate"):
        Tokenizer(byte_vocab(), [], ["<\udcff>"])


def test_vocab_json_written_by_us_still_loads(tmp_path):
    """The checks above must not refuse what the package writes."""
    vocab = byte_vocab() | {256: b"th", 2**31: b"<s>"}
    write_vocab_json(tmp_path / "vocab.json", vocab)
    assert read_vocab_json(tmp_path / "vocab.json") == vocab


# Exports -----------------------------------------------------------------------------------


def test_tiktoken_export_refuses_special_tokens_it_would_match_in_another_order():
    """tiktoken tries special tokens in an order of its own, not longest first: with
    "<|end" beside "<|endoftext|>" it read "<|endoftext|>" as "<|end" + text, silently."""
    import tiktoken

    nested = Tokenizer(byte_vocab(), [], ["<|endoftext|>", "<|end"])
    with pytest.raises(ValueError, match=r"tiktoken would read special token '<\|endoftext\|>'"):
        nested.to_tiktoken_params("x")
    fine = Tokenizer(byte_vocab(), [], ["<|endoftext|>", "<|endoftext|><|endoftext|>"])
    encoding = tiktoken.Encoding(**fine.to_tiktoken_params("x"))  # this order works: allowed
    text = "<|endoftext|><|endoftext|><|endoftext|>"
    assert encoding.encode(text, allowed_special="all") == fine.encode(text)


def test_a_special_token_of_one_byte_is_refused_for_export_with_a_reason():
    from bpe_course.formats.export import check_exportable

    with pytest.raises(ValueError, match=r"special token '\[' is the single byte 0x5b"):
        check_exportable(["["], GPT2_PATTERN)


# Found by the adversarial pass in the trainer and the chunker --------------------------------


def test_a_one_byte_special_token_means_the_same_id_to_trainer_and_tokenizer(tmp_path):
    from bpe_course import train_bpe

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a[b] c[d] " * 50, encoding="utf-8")
    try:
        vocab, merges = train_bpe(corpus, 270, ["["])
        tokenizer = Tokenizer(vocab, merges, ["["])
    except ValueError:
        return  # refusing a one-byte special token up front is a fine answer too
    assert tokenizer.special_tokens == {"[": 256}
    tokenizer.save(tmp_path / "vocab.json", tmp_path / "merges.txt")


def test_a_corpus_that_shrinks_while_it_is_read_is_an_error(tmp_path, monkeypatch):
    from bpe_course import train_bpe
    from bpe_course.speed import counting as chunks

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world, " * 5000 + SPECIAL + "bye " * 5000, encoding="utf-8")
    real_boundaries = chunks.find_chunk_boundaries

    def boundaries_then_truncate(path, *args, **kwargs):
        found = real_boundaries(path, *args, **kwargs)
        with open(path, "r+b") as file:  # another program rewrites the file right now
            file.truncate(1000)
        return found

    monkeypatch.setattr(chunks, "find_chunk_boundaries", boundaries_then_truncate)
    with pytest.raises(ValueError, match="changed while"):
        train_bpe(corpus, 300, [SPECIAL], num_processes=1)


# Corpora -----------------------------------------------------------------------------------


def test_course_text_reads_only_the_course_texts():
    from bpe_course.course.data import course_text

    for name in ["../README.md", "/etc/hostname", "", "."]:
        with pytest.raises(FileNotFoundError, match="there are: dog_park.txt"):
            course_text(name)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: __import__("bpe_course.course.data").course.data.english_prose(-5), ValueError,
         "max_chars must be >= 0, got -5"),  # returned all but the last 5 characters
        (lambda: __import__("bpe_course.course.data").course.data.english_prose(2.5), TypeError,
         "max_chars must be an int"),
        (lambda: __import__("bpe_course.course.data").course.data.python_source(2.5), TypeError,
         "max_bytes must be an int"),
    ],
    ids=["negative", "float-chars", "float-bytes"],
)
def test_corpus_sizes_are_checked(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_corpus_head_takes_one_path_as_well_as_a_list(tmp_path):
    from bpe_course.course.data import corpus_head

    path = tmp_path / "c.txt"
    path.write_text("héllo wörld", encoding="utf-8")
    assert corpus_head(str(path), 6) == "héllo"  # was read as the files 'c', '.', 't', ...
    assert corpus_head([path, path], 100) == "héllo wörld" * 2


# Saving single files -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "complaint"),
    [("afolder", "is a folder"), ("missing/x.json", "No such file or directory"),
     ("afile/x.json", "Not a directory"), ("", "no file name")],
)
@pytest.mark.parametrize("method", ["save_hf", "save_tiktoken", "save"])
def test_a_save_that_cannot_happen_names_the_path_given_not_a_temporary_file(
    tmp_path, monkeypatch, where, complaint, method
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afolder").mkdir()
    (tmp_path / "afile").write_text("x")
    tokenizer = small_tokenizer()
    save = getattr(tokenizer, method)
    with pytest.raises((OSError, ValueError)) as caught:
        save(where, where + ".txt") if method == "save" else save(where)
    assert complaint in str(caught.value)
    assert ".tmp-" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "afolder"]
