"""SentencePiece BPE models read by hand give ``sentencepiece``'s ids and text.

Small models are trained here by ``sentencepiece`` itself, with and without byte fallback
and with each whitespace setting, and run beside it on generated text; models of another
type or with a normalization table are refused, naming the field.
"""

from __future__ import annotations

import io
import struct

import pytest
import sentencepiece as spm
from hypothesis import given
from hypothesis import strategies as st
from strategies import tiktoken_text

from bpe_course.course.data import course_text, english_prose
from bpe_course.formats.sentencepiece import (
    SentencePieceBPE,
    UnsupportedSentencePieceModel,
    read_fields,
    read_model_proto,
    read_usual_pieces,
)

CORPUS = (english_prose(60_000) + "\n" + course_text("one_sentence_many_languages.txt")).split("\n")


def train(**options) -> bytes:
    """A small model trained by sentencepiece, as the bytes of its ``.model`` file."""
    model = io.BytesIO()
    settings = dict(model_type="bpe", vocab_size=600, normalization_rule_name="identity",
                    character_coverage=0.9995, minloglevel=2)
    settings.update(options)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_writer=model,
                                   **settings)
    return model.getvalue()


SETTINGS = {
    "byte fallback": dict(byte_fallback=True, remove_extra_whitespaces=False),
    "unknown characters": dict(byte_fallback=False, remove_extra_whitespaces=False),
    "extra spaces removed": dict(byte_fallback=True, remove_extra_whitespaces=True),
    "no dummy prefix": dict(byte_fallback=True, add_dummy_prefix=False,
                            remove_extra_whitespaces=False),
}


@pytest.fixture(scope="module", params=list(SETTINGS))
def pair(request):
    data = train(**SETTINGS[request.param])
    ours = SentencePieceBPE(read_model_proto(data), name=request.param)
    return ours, spm.SentencePieceProcessor(model_proto=data)


TEXTS = ["Hello world", "  two  spaces  ", "", " ", "中文 日本語 😀", "naïve e\u0301",
         "tabs\tand\nnewlines\n\n", "<s> and </s> are text", "▁ is the meta symbol", "x" * 300]


def test_hand_picked_text(pair):
    ours, reference = pair
    for text in TEXTS:
        assert ours.encode_ordinary(text) == reference.encode(text), text
        assert ours.decode(reference.encode(text)) == reference.decode(reference.encode(text))


@given(text=tiktoken_text)
def test_generated_text(pair, text):
    ours, reference = pair
    assert ours.encode_ordinary(text) == reference.encode(text)


@given(data=st.data())
def test_decoding_any_ids(pair, data):
    ours, reference = pair
    ids = data.draw(st.lists(st.integers(0, ours.vocab_size - 1), max_size=12))
    assert ours.decode(ids) == reference.decode(ids)


def test_special_tokens_follow_the_policy(pair):
    ours, _ = pair
    assert ours.special_tokens == {"<s>": 1, "</s>": 2}
    assert ours.encode("<s>a") == [1, *ours.encode_ordinary("a")]
    with pytest.raises(ValueError, match="which is disallowed"):
        ours.encode("<s>a", allowed_special=set())
    assert ours.decode([1, 2]) == ""  # control pieces decode to nothing, as in sentencepiece


def test_streaming_is_refused_not_guessed(pair):
    ours, _ = pair
    with pytest.raises(NotImplementedError, match="safe to cut"):
        ours.encode_iterable(["Hello ", "world"])


def test_another_model_type_is_refused():
    data = train(model_type="unigram")
    with pytest.raises(UnsupportedSentencePieceModel,
                       match=r"trainer_spec.model_type = UNIGRAM: only BPE"):
        SentencePieceBPE(read_model_proto(data, "uni.model"), source="uni.model")


def test_a_normalization_table_is_refused():
    data = train(normalization_rule_name="nmt_nfkc")
    with pytest.raises(UnsupportedSentencePieceModel,
                       match=r"m.model: normalizer_spec.name = 'nmt_nfkc': its rule table"):
        SentencePieceBPE(read_model_proto(data, "m.model"), source="m.model")


def test_user_defined_pieces_are_refused():
    data = train(user_defined_symbols=["<tool>"])
    with pytest.raises(UnsupportedSentencePieceModel, match=r"'<tool>' is USER_DEFINED"):
        SentencePieceBPE(read_model_proto(data, "m.model"), source="m.model")


def test_not_a_model_names_the_file():
    with pytest.raises(ValueError, match=r"x.model: not a SentencePiece model"):
        read_model_proto(b"\x0a\xff\xff", "x.model")
    with pytest.raises(ValueError, match=r"x.model: not a SentencePiece model"):
        read_model_proto(b"", "x.model")


def test_wire_format_fields():
    # field 1 varint 150, field 2 bytes "hi", field 3 fixed32, field 4 fixed64
    data = bytes([0x08, 0x96, 0x01, 0x12, 0x02, 0x68, 0x69, 0x1D, 1, 0, 0, 0,
                  0x21, 2, 0, 0, 0, 0, 0, 0, 0])
    assert list(read_fields(data)) == [(1, 150), (2, b"hi"), (3, 1), (4, 2)]


def message(*fields: tuple[int, int, bytes | int]) -> bytes:
    """Protocol buffer fields, written by hand: (number, wire type, bytes or a small int)."""
    out = b""
    for number, wire, value in fields:
        out += bytes([number << 3 | wire])
        if wire == 2:
            size = len(value)
            out += bytes([size]) if size < 0x80 else bytes([size & 0x7F | 0x80, size >> 7])
        out += bytes([value]) if isinstance(value, int) else value
    return out


def piece(text: str, score: float, *kind: int) -> tuple[int, int, bytes]:
    fields = [(1, 2, text.encode()), (2, 5, struct.pack("<f", score))]
    return (1, 2, message(*fields, *[(3, 0, k) for k in kind]))


def test_the_quick_piece_reader_hands_over_where_the_layout_is_unusual():
    """Pieces as SentencePiece writes them are read by index; from the first that is not
    (fields in another order, a text of 128 bytes or more) the field-by-field reader goes on,
    and the model is the same either way."""
    usual = [piece("<unk>", 0.0, 2), piece("▁the", -1.5), piece("<0x41>", 0.0, 6)]
    unusual = [(1, 2, message((3, 0, 3), (1, 2, b"<s>"), (2, 5, struct.pack("<f", 0.0)))),
               piece("x" * 200, -2.0), piece("▁a", -3.0)]
    data = message(*usual, *unusual, (2, 2, message((3, 0, 2))))
    pieces, scores, types, stop = read_usual_pieces(data)
    assert (pieces, scores, types) == (["<unk>", "▁the", "<0x41>"], [0.0, -1.5, 0.0], [2, 1, 6])
    assert stop == len(message(*usual))
    proto = read_model_proto(data)
    assert proto.pieces == ["<unk>", "▁the", "<0x41>", "<s>", "x" * 200, "▁a"]
    assert proto.scores == [0.0, -1.5, 0.0, 0.0, -2.0, -3.0]
    assert proto.types == [2, 1, 6, 3, 1, 1] and proto.model_type == 2
    with pytest.raises(ValueError, match="x.model: not a SentencePiece model"):
        read_model_proto(data[:-1], "x.model")  # cut short
    with pytest.raises(ValueError, match="x.model: not a SentencePiece model"):
        read_model_proto(message((1, 2, message((1, 2, b"\xff"), (2, 5, b"\0" * 4)))),
                         "x.model")  # a piece that is not UTF-8


@given(data=st.data())
def test_decode_bytes_and_offsets_agree_with_decode(pair, data):
    ours, _ = pair
    text = data.draw(tiktoken_text)
    ids = ours.encode_ordinary(text)
    assert ours.decode_bytes(ids).decode("utf-8", "replace") == ours.decode(ids)
    decoded, offsets = ours.decode_with_offsets(ids)
    assert decoded == ours.decode(ids)
    assert len(offsets) == len(ids) and offsets == sorted(offsets)
    assert all(0 <= offset <= len(decoded) for offset in offsets)


def test_offsets_point_at_the_characters(pair):
    ours, _ = pair
    ids = ours.encode_ordinary("Hello world")
    text, offsets = ours.decode_with_offsets(ids)
    assert text == "Hello world"
    starts = [text[offset:offset + len(piece)] for offset, piece in
              zip(offsets, ours.surfaces(ids))]
    assert "".join(starts) == text
