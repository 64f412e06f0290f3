"""Bytes and UTF-8: decoding that never crashes, errors that name the file and the offset,
streams decoded block by block, and text with lone surrogates made encodable."""

from __future__ import annotations

import io
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_course import utf8
from bpe_course.utf8 import (
    InvalidUtf8Error,
    byte_vocab,
    decode_text,
    decode_utf8,
    iter_utf8,
    replace_lone_surrogates,
)

#: Text of one- to four-byte characters, with line ends of every kind among them.
utf8_text = st.lists(
    st.sampled_from(["a", " ", "\r\n", "\r", "\n", "é", "你", "🙂", "\x00"])
    | st.characters(codec="utf-8"),
    max_size=20,
).map("".join)

#: Bytes that are not UTF-8 wherever they stand: a lone continuation byte, a byte never used,
#: an encoded surrogate.
NEVER_UTF8 = [b"\x80", b"\xff", b"\xed\xa0\x80"]


def test_the_256_byte_tokens_spell_any_text():
    vocab = byte_vocab()
    assert sorted(vocab) == list(range(256)) and set(map(len, vocab.values())) == {1}
    data = "牛 and 🙂".encode()
    assert b"".join(vocab[byte] for byte in data) == data


# Decoding that never crashes, and decoding that names the place ----------------------------


@given(data=st.binary(max_size=50))
def test_decode_utf8_never_raises_and_agrees_with_python_on_valid_text(data):
    assert decode_utf8(data) == data.decode("utf-8", errors="replace")


@given(text=utf8_text, start=st.integers(0, 10**9), bad=st.sampled_from(NEVER_UTF8))
def test_an_invalid_byte_is_named_at_its_offset_in_the_file(text, start, bad):
    prefix = text.encode()
    assert decode_text(prefix, "corpus.txt", start_offset=start) == text
    with pytest.raises(InvalidUtf8Error, match=f"corpus.txt: .* byte offset {start + len(prefix)}"):
        decode_text(prefix + bad + b"ok", "corpus.txt", start_offset=start)
    assert decode_text(prefix + bad, "corpus.txt", "replace").startswith(text + "\ufffd")


def test_an_unknown_errors_mode_is_refused_before_decoding():
    with pytest.raises(ValueError, match="errors must be 'strict' or 'replace', got 'ignore'"):
        decode_text(b"fine", "corpus.txt", errors="ignore")
    with pytest.raises(ValueError, match="got 'ignore'"):
        iter_utf8(io.BytesIO(b"fine"), "stdin", errors="ignore").__next__()


def test_the_error_survives_the_trip_back_from_a_worker_process():
    error = InvalidUtf8Error("/data/corpus.txt", 1234, "invalid start byte")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.source, copy.offset, copy.reason, str(copy)) == (
        error.source, error.offset, error.reason, str(error)
    )


# Streams, block by block ---------------------------------------------------------------------


def test_reading_utf8_in_small_blocks(monkeypatch):
    monkeypatch.setattr(utf8, "READ_BLOCK", 3)
    text = "añb你🙂\r\nz"
    assert "".join(utf8.iter_utf8(io.BytesIO(text.encode()), "t")) == text
    data = "añb你".encode() + b"\xe4\xbd" + b"x"  # a character cut short, across blocks
    with pytest.raises(InvalidUtf8Error) as caught:
        list(utf8.iter_utf8(io.BytesIO(data), "t"))
    assert caught.value.offset == len("añb你".encode())


@given(text=utf8_text, block=st.integers(1, 9), bad=st.none() | st.sampled_from(NEVER_UTF8))
def test_a_stream_decodes_as_the_whole_would_whatever_the_block_size(text, block, bad):
    data = text.encode() + (bad or b"") + b"tail"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(utf8, "READ_BLOCK", block)
        if bad is None:
            assert "".join(iter_utf8(io.BytesIO(data), "stdin")) == text + "tail"
        else:
            with pytest.raises(InvalidUtf8Error, match=f"stdin: .* offset {len(text.encode())}"):
                list(iter_utf8(io.BytesIO(data), "stdin"))
        replaced = "".join(iter_utf8(io.BytesIO(data), "stdin", "replace"))
        assert replaced == data.decode("utf-8", errors="replace")


def test_a_failed_read_names_the_stream():
    class Broken(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            raise OSError(5, "Input/output error")

    with pytest.raises(OSError, match="cannot read /mnt/corpus.txt: Input/output error"):
        list(iter_utf8(Broken(), "/mnt/corpus.txt"))


# Lone surrogates -------------------------------------------------------------------------------


@given(text=st.text(st.characters(codec="utf-8") | st.characters(categories=["Cs"])))
def test_any_python_string_becomes_encodable(text):
    encodable = replace_lone_surrogates(text)
    encodable.encode("utf-8")  # never raises
    assert len(encodable) <= len(text)  # a pair becomes one character; nothing is added


@given(text=st.text(st.characters(codec="utf-8")))
def test_text_without_surrogates_is_returned_as_it_is(text):
    assert replace_lone_surrogates(text) is text


def test_pairs_are_joined_and_lone_halves_replaced():
    assert replace_lone_surrogates("\ud83d\ude00") == "😀"
    assert replace_lone_surrogates("a\ude00\ud83d") == "a\ufffd\ufffd"  # reversed: two halves
    assert replace_lone_surrogates("\ud83d\ud83d\ude00") == "\ufffd😀"
