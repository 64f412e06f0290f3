"""tiktoken's ``Encoding`` surface on our ``Tokenizer``, compared with tiktoken call by call.

A learner who moves on to tiktoken should find the same names doing the same things, so
every name below is called on our tokenizer and on tiktoken's own encoding (built offline
from the same files) with the same arguments, and both must give the same answer, or both
refuse. Where this package chose differently (``allowed_special="all"`` by default,
``eot_token`` None instead of a ``KeyError``, bools refused as ids) the test says so.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import ENDOFTEXT, raw_text, split_points, tiktoken_text
from test_openai import HAND_PICKED

from bpe_course.safety.specials import SPECIAL_POLICIES, DisallowedSpecialError
from bpe_course.speed import streaming

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]


def outcome(function, *args, **kwargs):
    """What a call gives: its result, or the kind of error it raised (and for a refused
    special token, the token, which both libraries name in their messages)."""
    try:
        return function(*args, **kwargs)
    except DisallowedSpecialError as error:
        return ("refused", error.token)
    except KeyError:  # an unknown id (ours is a ValueError too)
        return ("KeyError",)
    except ValueError as error:  # tiktoken's refusal is a plain ValueError
        if "disallowed special token" in str(error):
            return ("refused", str(error).split("'")[1])
        return ("ValueError",)


@pytest.fixture(scope="module")
def pair(openai_pairs):
    return openai_pairs


# Properties --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ENCODINGS)
def test_properties_match_tiktoken(pair, name):
    ours, theirs = pair[name]
    assert ours.name == theirs.name == name
    assert ours.n_vocab == theirs.n_vocab
    assert ours.max_token_value == theirs.max_token_value
    assert ours.eot_token == theirs.eot_token
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours.token_byte_values() == theirs.token_byte_values()


def test_properties_of_a_trained_tokenizer_match_its_tiktoken_export(trained_tokenizer):
    ours = trained_tokenizer
    theirs = ours.to_tiktoken("trained")
    assert ours.n_vocab == theirs.n_vocab == ours.vocab_size
    assert ours.max_token_value == theirs.max_token_value
    assert ours.eot_token == theirs.eot_token == ours.special_tokens[ENDOFTEXT]
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours.token_byte_values() == theirs.token_byte_values()


def test_eot_token_is_none_without_endoftext():
    # tiktoken raises KeyError here; None lets ``if tokenizer.eot_token is not None`` work.
    from bpe_course import Tokenizer
    from bpe_course.utf8 import byte_vocab

    assert Tokenizer(byte_vocab(), []).eot_token is None
    assert Tokenizer(byte_vocab(), [], ["<pad>"]).eot_token is None
    assert Tokenizer(byte_vocab(), [], ["<pad>"]).name == "bpe_course"


# encode and its special-token rules ---------------------------------------------------------

#: ``allowed_special`` / ``disallowed_special`` pairs, as tiktoken takes them (sets).
POLICIES = [
    {},  # tiktoken's default; ours differs (see test_default_differs_from_tiktoken)
    {"allowed_special": "all"},
    {"allowed_special": set()},
    {"allowed_special": set(), "disallowed_special": ()},
    {"allowed_special": {ENDOFTEXT}},
    {"allowed_special": {ENDOFTEXT}, "disallowed_special": ()},
    {"allowed_special": {"<|endofprompt|>"}, "disallowed_special": {ENDOFTEXT}},
    {"allowed_special": "all", "disallowed_special": {ENDOFTEXT}},
]


def usable(policy: dict, tokenizer) -> dict:
    """``policy`` with only the special tokens this tokenizer has (ours refuses others)."""
    known = tokenizer.special_tokens_set
    return {
        key: value if isinstance(value, str) else set(value) & known
        for key, value in policy.items()
    }


def compare_encode(ours, theirs, text: str) -> None:
    for policy in POLICIES:
        policy = usable(policy, ours)
        explicit = {"allowed_special": set(), **policy}  # tiktoken's default, spelled out
        expected = outcome(theirs.encode, text, **explicit)
        assert outcome(ours.encode, text, **explicit) == expected, policy
    assert ours.encode(text) == theirs.encode(text, allowed_special="all")
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


@pytest.mark.parametrize("name", ENCODINGS)
def test_encode_follows_tiktoken_special_token_rules(pair, name):
    ours, theirs = pair[name]
    texts = HAND_PICKED + [f"a{ENDOFTEXT}b<|endofprompt|>c<|fim_prefix|>", "<|endofprompt|>"]
    for text in texts:
        compare_encode(ours, theirs, text)


@given(text=tiktoken_text, name=st.sampled_from(ENCODINGS))
def test_encode_follows_tiktoken_special_token_rules_generated(pair, text, name):
    compare_encode(*pair[name], text)


@pytest.mark.parametrize("name", ENCODINGS)
def test_default_differs_from_tiktoken(pair, name):
    # Ours honours special tokens by default (as CS336's Tokenizer does); tiktoken refuses
    # them, so a user's text cannot smuggle in <|endoftext|>. Both are one argument away.
    ours, theirs = pair[name]
    text = f"end{ENDOFTEXT}"
    assert ours.encode(text) == theirs.encode(text, allowed_special="all")
    with pytest.raises(ValueError, match="disallowed special token"):
        theirs.encode(text)
    with pytest.raises(DisallowedSpecialError, match="disallowed"):
        ours.encode(text, allowed_special=set())
    assert ours.encode(text, **SPECIAL_POLICIES["none"]) == theirs.encode(
        text, disallowed_special=()
    )


# Decoding ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ENCODINGS)
def test_single_tokens_and_their_bytes_match_tiktoken(pair, name):
    ours, theirs = pair[name]
    ids = [*range(0, theirs.max_token_value + 1, 997), *theirs._special_tokens.values()]
    ids = [i for i in ids if outcome(theirs.decode_single_token_bytes, i) != ("KeyError",)]
    for token_id in ids:
        assert ours.decode_single_token_bytes(token_id) == theirs.decode_single_token_bytes(
            token_id
        )
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    unknown = theirs.max_token_value + 1
    assert outcome(ours.decode_single_token_bytes, unknown) == ("KeyError",)
    assert outcome(theirs.decode_single_token_bytes, unknown) == ("KeyError",)


def compare_decode(ours, theirs, ids: list[int]) -> None:
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
    assert ours.decode(ids) == theirs.decode(ids)
    strict = outcome(theirs.decode, ids, errors="strict")
    assert outcome(ours.decode, ids, errors="strict") == strict
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    offsets = outcome(theirs.decode_with_offsets, ids)
    assert outcome(ours.decode_with_offsets, ids) == offsets


@pytest.mark.parametrize("name", ENCODINGS)
def test_decode_with_offsets_matches_tiktoken(pair, name):
    ours, theirs = pair[name]
    for text in HAND_PICKED:
        ids = theirs.encode(text, allowed_special="all")
        compare_decode(ours, theirs, ids)
        decoded, offsets = ours.decode_with_offsets(ids)
        assert decoded == text
        assert offsets == sorted(offsets) and all(0 <= o <= max(len(text) - 1, 0) for o in offsets)
    # A token that starts inside a character gets that character's offset.
    ids = theirs.encode("a😀b")
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)


@given(data=st.data(), name=st.sampled_from(ENCODINGS))
def test_decode_of_arbitrary_ids_matches_tiktoken(pair, data, name):
    # Random ids cut characters anywhere: strict decoding and offsets then refuse, in both.
    ours, theirs = pair[name]
    valid = st.integers(0, theirs.max_token_value).filter(lambda i: i in ours.vocab)
    compare_decode(ours, theirs, data.draw(st.lists(valid, max_size=12)))


# Surrogates and control characters -----------------------------------------------------------


@pytest.mark.parametrize("name", ENCODINGS)
def test_lone_surrogates_match_tiktoken(pair, name):
    ours, theirs = pair[name]
    for text in ["\ud83d", "a\udc00b", "\ud83d\ude00", "x\ude00\ud83dy", f"\ud800{ENDOFTEXT}"]:
        compare_encode(ours, theirs, text)
        expected = theirs.encode(text, allowed_special="all")
        assert list(ours.encode_iterable(list(text))) == expected
        assert ours.encode_batch([text, text]) == theirs.encode_batch(
            [text, text], allowed_special="all"
        )


@given(data=st.data(), text=raw_text, name=st.sampled_from(ENCODINGS), buffer=st.integers(1, 30))
def test_text_with_surrogates_and_control_characters_matches_tiktoken(
    pair, data, text, name, buffer
):
    ours, theirs = pair[name]
    compare_encode(ours, theirs, text)
    ids = theirs.encode(text, allowed_special="all")
    chunks = data.draw(split_points(text))  # pairs cut in two, too
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(streaming, "STREAM_BUFFER", buffer)
        assert list(ours.encode_iterable(chunks)) == ids
        refused = outcome(theirs.encode, text, allowed_special=set())
        stream = ours.encode_iterable(chunks, allowed_special=set())
        assert outcome(list, stream) == refused
    compare_decode(ours, theirs, ids)
