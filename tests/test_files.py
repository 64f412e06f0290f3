"""GPT-2's vocab.json/merges.txt format, loading other people's files, and atomic saves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import ENDOFTEXT, special_text

from bpe_course import Tokenizer, train_bpe
from bpe_course.course.data import english_prose
from bpe_course.formats import gpt2 as files_module
from bpe_course.formats.gpt2 import (
    bytes_to_unicode,
    read_merges_txt,
    read_vocab_json,
    str_to_token,
    token_to_str,
    unicode_to_bytes,
    write_merges_txt,
    write_vocab_json,
)
from bpe_course.openai import openai_file
from bpe_course.safety.files import atomic_write


def test_bytes_to_unicode_is_a_bijection_onto_printable_characters():
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256))
    assert len(set(table.values())) == 256
    assert all(char.isprintable() and not char.isspace() for char in table.values())
    assert unicode_to_bytes() == {char: byte for byte, char in table.items()}


def test_bytes_to_unicode_known_characters():
    table = bytes_to_unicode()
    assert table[ord(" ")] == "Ġ"  # U+0120
    assert table[ord("\n")] == "Ċ"  # U+010A
    assert table[0] == "Ā"  # U+0100: the first byte that is not printable
    assert table[ord("a")] == "a"
    assert table[0xE9] == "é"  # printable Latin-1 stands for itself


@given(token=st.binary(max_size=20))
def test_token_to_str_round_trips(token):
    assert str_to_token(token_to_str(token)) == token


def test_token_to_str_examples():
    assert token_to_str(b" the") == "Ġthe"
    assert token_to_str("é".encode()) == "Ã©"


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Tokenizer:
    corpus = tmp_path_factory.mktemp("corpus") / "prose.txt"
    corpus.write_text(english_prose(40_000).replace("\n\n\n", ENDOFTEXT), encoding="utf-8")
    vocab, merges = train_bpe(corpus, 700, [ENDOFTEXT])
    return Tokenizer(vocab, merges, [ENDOFTEXT])


def test_save_and_load_round_trip(trained, tmp_path):
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    trained.save(vocab_path, merges_path)
    loaded = Tokenizer.from_files(vocab_path, merges_path, [ENDOFTEXT])
    assert loaded.vocab == trained.vocab
    assert loaded.merges == trained.merges
    assert loaded.special_tokens == trained.special_tokens
    text = english_prose()[100_000:110_000] + ENDOFTEXT + "ünïcödé 😀 \x00\r\n"
    assert loaded.encode(text) == trained.encode(text)


@pytest.fixture(scope="module")
def reloaded(trained, tmp_path_factory) -> Tokenizer:
    folder = tmp_path_factory.mktemp("saved")
    trained.save(folder / "vocab.json", folder / "merges.txt")
    return Tokenizer.from_files(folder / "vocab.json", folder / "merges.txt", [ENDOFTEXT])


@given(text=special_text)
def test_reloaded_tokenizer_gives_identical_ids(trained, reloaded, text):
    assert reloaded.encode(text) == trained.encode(text)


def test_saved_files_use_gpt2_format(trained, tmp_path):
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    trained.save(vocab_path, merges_path)
    raw = json.loads(vocab_path.read_text(encoding="utf-8"))
    assert raw["Ġ"] == 32 and raw["Ċ"] == 10 and raw["a"] == 97 and raw["Ā"] == 0
    assert raw[ENDOFTEXT] == 256
    assert all(len(token) == len(str_to_token(token)) for token in raw if token != ENDOFTEXT)
    lines = merges_path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "#version: 0.2"
    assert len(lines) == 1 + len(trained.merges)
    first, second = trained.merges[0]
    assert lines[1] == f"{token_to_str(first)} {token_to_str(second)}"
    assert all(line.count(" ") == 1 for line in lines[1:])


def test_read_and_write_helpers_round_trip(tmp_path):
    vocab = {i: bytes([i]) for i in range(256)} | {256: b" \n", 257: "é".encode()}
    merges = [(b" ", b"\n"), (b"\xc3", b"\xa9")]
    write_vocab_json(tmp_path / "v.json", vocab)
    write_merges_txt(tmp_path / "m.txt", merges)
    assert read_vocab_json(tmp_path / "v.json") == vocab
    assert read_merges_txt(tmp_path / "m.txt") == merges


def test_merges_file_without_version_header_and_with_blank_lines(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_text("Ġ t\n\nh e\r\n", encoding="utf-8")
    assert read_merges_txt(path) == [(b" ", b"t"), (b"h", b"e")]


def test_from_files_reads_gpt2_encoder_json_and_vocab_bpe(gpt2_tokenizer):
    encoder_json, vocab_bpe = openai_file("encoder.json"), openai_file("vocab.bpe")
    loaded = Tokenizer.from_files(encoder_json, vocab_bpe, [ENDOFTEXT])
    assert loaded.vocab_size == 50257
    assert loaded.special_tokens == {ENDOFTEXT: 50256}
    assert loaded.encode("Hello world") == [15496, 995]
    assert loaded.merges == gpt2_tokenizer.merges


def test_from_files_reads_cs336_reference_vocab_and_merges(cs336_dir, tmp_path):
    reference = Tokenizer.from_files(
        cs336_dir / "train-bpe-reference-vocab.json",
        cs336_dir / "train-bpe-reference-merges.txt",
        [ENDOFTEXT],
    )
    assert reference.vocab_size == 500
    assert len(reference.merges) == 243
    assert reference.special_tokens == {ENDOFTEXT: 0}  # CS336 numbers it first

    # Our trainer's tokenizer cuts text into the very same tokens (with other ids).
    vocab, merges = train_bpe(cs336_dir / "corpus.en", 500, [ENDOFTEXT])
    ours = Tokenizer(vocab, merges, [ENDOFTEXT])
    text = (cs336_dir / "corpus.en").read_text(encoding="utf-8")[:20_000] + ENDOFTEXT + "end"
    ours_tokens = [ours.vocab[i] for i in ours.encode(text)]
    assert [reference.vocab[i] for i in reference.encode(text)] == ours_tokens
    assert reference.decode(reference.encode(text)) == text


# Atomic saves ------------------------------------------------------------------------------


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith(".tmp-"))


def test_a_failed_vocab_save_keeps_the_old_file(trained, tmp_path, monkeypatch):
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    trained.save(vocab_path, merges_path)
    before = vocab_path.read_bytes()

    def dump_half_then_fail(obj, file, **kwargs):
        file.write('{"half": ')
        raise OSError("disk full")

    monkeypatch.setattr(files_module.json, "dump", dump_half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        Tokenizer({i: bytes([i]) for i in range(256)}, []).save(vocab_path, merges_path)
    assert vocab_path.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_a_failed_merges_save_keeps_the_old_file(trained, tmp_path, monkeypatch):
    merges_path = tmp_path / "merges.txt"
    write_merges_txt(merges_path, trained.merges)
    before = merges_path.read_bytes()
    calls = []

    def fail_on_the_fifth_token(token: bytes) -> str:
        calls.append(token)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return token.hex()

    monkeypatch.setattr(files_module, "token_to_str", fail_on_the_fifth_token)
    with pytest.raises(KeyboardInterrupt):
        write_merges_txt(merges_path, [(b"a", b"b")] * 10)
    assert merges_path.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_atomic_write_replaces_only_on_success(tmp_path):
    path = tmp_path / "file.txt"
    path.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError):
        with atomic_write(path) as file:
            file.write("new, but never finished")
            raise RuntimeError("crash")
    assert path.read_text(encoding="utf-8") == "old"
    with atomic_write(path) as file:
        file.write("new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
    with atomic_write(tmp_path / "data.bin", "wb") as file:
        file.write(b"\x00\xff")
    assert (tmp_path / "data.bin").read_bytes() == b"\x00\xff"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("can_exchange", [True, False])
def test_publish_folder_replaces_the_whole_folder(tmp_path, monkeypatch, can_exchange):
    from bpe_course.safety import files

    if not can_exchange:  # a system without renameat2: move aside, then move in
        monkeypatch.setattr(files, "exchange_paths", lambda first, second: False)
    target = tmp_path / "tok"
    target.mkdir()
    (target / "old.txt").write_text("old")
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "new.txt").write_text("new")
    files.publish_folder(str(staging), str(target))
    assert sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tok"]


def test_publish_folder_into_a_new_place(tmp_path):
    from bpe_course.safety.files import publish_folder

    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / "a").write_text("a")
    publish_folder(str(staging), str(tmp_path / "new"))
    assert (tmp_path / "new" / "a").read_text() == "a" and not staging.exists()
