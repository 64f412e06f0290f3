"""``bpe_course.Encoding`` and ``get_encoding``: tiktoken's front door, compared with tiktoken.

The reference for every one of tiktoken's seven encodings is tiktoken's own: its
constructors in ``tiktoken_ext.openai_public`` run with its file reader answered from local
files (each checked against the sha256 the constructor expects), so nothing downloads and
the names, patterns, special tokens and ranks are tiktoken's, not a copy of ours.
``p50k_base.tiktoken`` ships in no package; it is GPT-2's ranks followed by runs of 2 to 25
spaces, which the sha256 check proves, so the tests rebuild it.
"""

from __future__ import annotations

import base64
import copy
import gzip
import hashlib
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import ENDOFTEXT, assigned_char, raw_text, tiktoken_text
from test_openai import HAND_PICKED

import bpe_course
from bpe_course import Encoding, encodings, get_encoding
from bpe_course.encodings import (
    P50K_CACHE_NAME,
    P50K_FILE_ENV,
    P50K_SHA256,
    R50K_PATTERN,
    RECIPES,
    p50k_file,
    tiktoken_cache_dir,
)
from bpe_course.openai import open_maybe_gzipped, openai_file, read_tiktoken_ranks
from bpe_course.pretokens import GPT2_PATTERN
from bpe_course.safety.specials import DisallowedSpecialError
from bpe_course.tiktoken_encoding import REGISTERED
from bpe_course.tokenizer import Tokenizer

NAMES = list(RECIPES)

#: Special tokens of several encodings, whole and broken, for the generated texts.
SPECIAL_PIECES = [
    ENDOFTEXT, "<|endofprompt|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|start|>", "<|end|>",
    "<|message|>", "<|channel|>", "<|reserved_200018|>", "<|reserved_201087|>", "<|call|>",
    "<|startoftext|>", "<|start", "|>", "<|",
]  # fmt: skip

#: Text for every encoding: hard fragments, any of the encodings' special tokens, whitespace.
encoding_text = st.lists(
    tiktoken_text | st.sampled_from(SPECIAL_PIECES) | st.sampled_from(HAND_PICKED), max_size=4
).map("".join)


def rank_file(ranks: dict[bytes, int]) -> bytes:
    """A ``.tiktoken`` file's bytes: each token in base64 and its rank, in rank order."""
    lines = sorted(ranks.items(), key=lambda item: item[1])
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for token, rank in lines)


@pytest.fixture(scope="module")
def tiktoken_files() -> dict[str, bytes]:
    """The files tiktoken's constructors read, by name, from local sources only."""
    import tiktoken.load

    files = {name: openai_file(name).read_bytes() for name in ["encoder.json", "vocab.bpe"]}
    for name in ["cl100k_base.tiktoken", "o200k_base.tiktoken"]:
        with open_maybe_gzipped(openai_file(name)) as file:
            files[name] = file.read()
    with offline_tiktoken(files):
        gpt2_ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks("vocab.bpe", "encoder.json")
    # r50k_base's file is GPT-2's ranks; p50k_base's adds runs of spaces. The constructors
    # check both against tiktoken's sha256 when they read them.
    files["r50k_base.tiktoken"] = rank_file(gpt2_ranks)
    spaces = {b" " * length: 50257 + index for index, length in enumerate(range(2, 26))}
    files["p50k_base.tiktoken"] = rank_file(gpt2_ranks | spaces)
    assert hashlib.sha256(files["p50k_base.tiktoken"]).hexdigest() == P50K_SHA256
    return files


class offline_tiktoken:  # noqa: N801 (a context manager, used like a function)
    """While active, tiktoken reads files from ``files`` by name and never downloads."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.patch = pytest.MonkeyPatch()

    def read_file_cached(self, blobpath: str, expected_hash: str | None = None) -> bytes:
        data = self.files[blobpath.rsplit("/", 1)[-1]]
        if expected_hash is not None:
            assert hashlib.sha256(data).hexdigest() == expected_hash, blobpath
        return data

    def __enter__(self):
        import tiktoken.load

        def no_download(blobpath: str) -> bytes:
            raise AssertionError(f"tiktoken tried to read {blobpath}")

        self.patch.setattr(tiktoken.load, "read_file_cached", self.read_file_cached)
        self.patch.setattr(tiktoken.load, "read_file", no_download)
        return self

    def __exit__(self, *exc_info) -> None:
        self.patch.undo()


@pytest.fixture(scope="module")
def p50k_path(tiktoken_files, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("p50k") / "p50k_base.tiktoken"
    path.write_bytes(tiktoken_files["p50k_base.tiktoken"])
    return path


@pytest.fixture(scope="module", autouse=True)
def p50k_available(p50k_path):
    """get_encoding finds p50k_base.tiktoken through the environment, as a user would."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(P50K_FILE_ENV, str(p50k_path))
        yield


@pytest.fixture(scope="module")
def reference(tiktoken_files):
    """``reference(name)``: tiktoken's own Encoding of that name, built offline once."""
    import tiktoken
    from tiktoken_ext import openai_public

    built: dict[str, tiktoken.Encoding] = {}

    def make(name: str) -> tiktoken.Encoding:
        if name not in built:
            with offline_tiktoken(tiktoken_files):
                built[name] = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
        return built[name]

    return make


@pytest.fixture
def fresh_registry():
    """An empty registry, so that get_encoding builds again (and finds files again)."""
    saved = dict(REGISTERED)
    REGISTERED.clear()
    yield
    REGISTERED.clear()
    REGISTERED.update(saved)


def outcome(function, *args, **kwargs):
    """A call's result, or what it raised, in words both libraries share."""
    try:
        return function(*args, **kwargs)
    except DisallowedSpecialError as error:
        return ("refused", error.token)
    except KeyError:
        return ("KeyError",)
    except ValueError as error:  # tiktoken's refusal is a plain ValueError
        if "disallowed special token" in str(error):
            return ("refused", str(error).split("'")[1])
        return ("ValueError",)


# The seven encodings are tiktoken's -----------------------------------------------------------


def test_the_names_are_tiktokens():
    from tiktoken_ext import openai_public

    assert bpe_course.list_encoding_names() == list(openai_public.ENCODING_CONSTRUCTORS)


@pytest.mark.parametrize("name", NAMES)
def test_each_encoding_is_built_from_tiktokens_definition(name, tiktoken_files):
    from tiktoken_ext import openai_public

    with offline_tiktoken(tiktoken_files):
        theirs = openai_public.ENCODING_CONSTRUCTORS[name]()
    ours = get_encoding(name)
    assert ours.name == theirs["name"] == name
    assert ours._pat_str == theirs["pat_str"]
    assert ours._special_tokens == theirs["special_tokens"]
    assert ours._mergeable_ranks == theirs["mergeable_ranks"]
    assert RECIPES[name].n_vocab == theirs.get("explicit_n_vocab")


@pytest.mark.parametrize("name", NAMES)
def test_properties_match_tiktoken(name, reference):
    ours, theirs = get_encoding(name), reference(name)
    assert repr(ours) == repr(theirs) == f"<Encoding {name!r}>"
    assert ours.n_vocab == theirs.n_vocab
    assert ours.max_token_value == theirs.max_token_value
    assert ours.eot_token == theirs.eot_token
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours.token_byte_values() == theirs.token_byte_values()
    for token_id in [0, 255, 50256, 50281, 100257, 199998, 200018, 201087]:
        assert ours.is_special_token(token_id) == theirs.is_special_token(token_id)


def test_gpt2_and_cl100k_are_the_course_tokenizers(gpt2_tokenizer, cl100k_tokenizer):
    for ours, tokenizer in [(get_encoding("gpt2"), gpt2_tokenizer),
                            (get_encoding("cl100k_base"), cl100k_tokenizer)]:  # fmt: skip
        assert ours.vocab == tokenizer.vocab
        assert ours.merges == tokenizer.merges
        assert ours.special_tokens == tokenizer.special_tokens


def test_gpt2s_pattern_as_tiktoken_spells_it_splits_alike():
    from tiktoken_ext import openai_public

    from bpe_course.pretokens import pretokenize

    assert R50K_PATTERN == openai_public.r50k_pat_str
    encoding = get_encoding("r50k_base")
    assert encoding._pat_str == R50K_PATTERN and encoding.pattern == GPT2_PATTERN
    for text in HAND_PICKED:
        assert pretokenize(text, R50K_PATTERN) == pretokenize(text, GPT2_PATTERN)


def test_shared_rank_tables_are_loaded_once():
    for name, other in [("o200k_harmony", "o200k_base"), ("r50k_base", "gpt2"),
                        ("p50k_edit", "p50k_base")]:  # fmt: skip
        assert get_encoding(name)._mergeable_ranks is get_encoding(other)._mergeable_ranks


def test_harmony_has_two_names_for_200018(reference):
    ours, theirs = get_encoding("o200k_harmony"), reference("o200k_harmony")
    for token in ["<|endofprompt|>", "<|reserved_200018|>"]:
        assert ours.encode_single_token(token) == theirs.encode_single_token(token) == 200018
        assert ours.encode(token, allowed_special="all") == [200018]
    assert ours.decode_single_token_bytes(200018) == theirs.decode_single_token_bytes(200018)
    assert ours.decode([200018]) == "<|endofprompt|>"
    assert len(ours.special_tokens) == 1091 and ours.n_vocab == 201088


# Encoding and decoding give tiktoken's answers ---------------------------------------------------

POLICIES = [
    {},  # tiktoken's defaults, which an Encoding shares
    {"allowed_special": "all"},
    {"disallowed_special": ()},
    {"allowed_special": "all", "disallowed_special": ()},
    {"allowed_special": {ENDOFTEXT}},
    {"allowed_special": {ENDOFTEXT, "<|not a special token|>"}},  # the unknown one is ignored
    {"allowed_special": {"<|endofprompt|>"}, "disallowed_special": {ENDOFTEXT}},
    {"allowed_special": {"<|start|>"}, "disallowed_special": ()},
    {"disallowed_special": {"<|not a special token|>", "<|"}},  # searched for as text
    {"allowed_special": "all", "disallowed_special": {ENDOFTEXT}},
]


def compare_encode(ours, theirs, text: str) -> None:
    for policy in POLICIES:
        assert outcome(ours.encode, text, **policy) == outcome(theirs.encode, text, **policy)
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def compare_decode(ours, theirs, ids: list[int]) -> None:
    assert ours.decode_bytes(ids) == theirs.decode_bytes(ids)
    assert ours.decode(ids) == theirs.decode(ids)
    strict = outcome(theirs.decode, ids, errors="strict")
    assert outcome(ours.decode, ids, errors="strict") == strict
    assert ours.decode_tokens_bytes(ids) == theirs.decode_tokens_bytes(ids)
    assert outcome(ours.decode_with_offsets, ids) == outcome(theirs.decode_with_offsets, ids)


@pytest.mark.parametrize("name", NAMES)
def test_hand_picked_texts_match_tiktoken(name, reference):
    ours, theirs = get_encoding(name), reference(name)
    for text in HAND_PICKED + SPECIAL_PIECES + ["a<|endoftext|>b<|start|>c<|reserved_200018|>"]:
        compare_encode(ours, theirs, text)
        compare_decode(ours, theirs, theirs.encode(text, allowed_special="all"))


@given(text=encoding_text, name=st.sampled_from(NAMES))
@example(text="<|reserved_200018|>", name="o200k_harmony")  # <|endofprompt|>'s id too
def test_generated_texts_match_tiktoken(reference, text, name):
    ours, theirs = get_encoding(name), reference(name)
    compare_encode(ours, theirs, text)
    ids = theirs.encode(text, allowed_special="all")
    assert ours.encode(text, allowed_special="all") == ids
    assert ours.decode(ids) == spelled_as_decoded(theirs, text)
    compare_decode(ours, theirs, ids)


def spelled_as_decoded(reference, text: str) -> str:
    """``text`` with each special token that shares its id with another spelled as the
    reference decodes that id: o200k_harmony's ``<|reserved_200018|>`` is also
    ``<|endofprompt|>``, and decoding the id can give back only one of the two."""
    for special in sorted(reference.special_tokens_set, key=len, reverse=True):
        spelled = reference.decode([reference.encode_single_token(special)])
        if spelled != special:
            text = text.replace(special, spelled)
    return text


@given(text=raw_text, name=st.sampled_from(NAMES))
def test_surrogates_and_control_characters_match_tiktoken(reference, text, name):
    compare_encode(get_encoding(name), reference(name), text)


@given(data=st.data(), name=st.sampled_from(NAMES))
def test_decoding_arbitrary_ids_matches_tiktoken(reference, data, name):
    ours, theirs = get_encoding(name), reference(name)
    known = st.integers(0, ours.max_token_value).filter(lambda i: i in ours.vocab)
    compare_decode(ours, theirs, data.draw(st.lists(known, max_size=12)))


@pytest.mark.parametrize("name", NAMES)
def test_unknown_ids_are_key_errors(name, reference):
    ours, theirs = get_encoding(name), reference(name)
    for token_id in [ours.max_token_value + 1, 100261]:
        if token_id not in ours.vocab:
            for method in ["decode_single_token_bytes", "decode_bytes", "decode"]:
                argument = token_id if method == "decode_single_token_bytes" else [token_id]
                assert outcome(getattr(ours, method), argument) == ("KeyError",)
                assert outcome(getattr(theirs, method), argument) == ("KeyError",)


@pytest.mark.parametrize("name", NAMES)
def test_single_tokens_match_tiktoken(name, reference):
    ours, theirs = get_encoding(name), reference(name)
    ids = [*range(0, ours.max_token_value + 1, 211), *ours.special_tokens.values()]
    for token_id in ids:
        data = outcome(theirs.decode_single_token_bytes, token_id)
        assert outcome(ours.decode_single_token_bytes, token_id) == data
        if data != ("KeyError",):
            assert ours.encode_single_token(data) == theirs.encode_single_token(data)
    for text in ["hello", " world", *ours.special_tokens_set]:
        assert ours.encode_single_token(text) == theirs.encode_single_token(text)
    for missing in ["hello world", b"\xff\xfe\xfd", "<|nope|>"]:
        assert outcome(ours.encode_single_token, missing) == ("KeyError",)
        assert outcome(theirs.encode_single_token, missing) == ("KeyError",)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_harmony"])
def test_numpy_arrays_match_tiktoken(name, reference):
    ours, theirs = get_encoding(name), reference(name)
    for text in [text for text in HAND_PICKED if "<|" not in text]:
        mine, expected = ours.encode_to_numpy(text), theirs.encode_to_numpy(text)
        assert mine.dtype == expected.dtype and mine.tolist() == expected.tolist()
        assert mine.flags.writeable == expected.flags.writeable
    text = f"a{ENDOFTEXT}"
    assert outcome(ours.encode_to_numpy, text) == outcome(theirs.encode_to_numpy, text)
    mine = ours.encode_to_numpy(text, allowed_special="all")
    assert mine.tolist() == theirs.encode_to_numpy(text, allowed_special="all").tolist()


@pytest.mark.parametrize("name", ["r50k_base", "p50k_edit", "o200k_base"])
def test_batches_match_tiktoken(name, reference):
    ours, theirs = get_encoding(name), reference(name)
    texts = HAND_PICKED[:30]
    assert ours.encode_batch(texts) == theirs.encode_batch(texts)
    assert ours.encode_ordinary_batch(texts) == theirs.encode_ordinary_batch(texts)
    everything = {"allowed_special": "all"}
    ids = theirs.encode_batch([*texts, ENDOFTEXT], **everything)
    assert ours.encode_batch([*texts, ENDOFTEXT], num_threads=2, **everything) == ids
    assert ours.decode_batch(ids) == theirs.decode_batch(ids)
    assert ours.decode_bytes_batch(ids, num_threads=1) == theirs.decode_bytes_batch(ids)
    refused = outcome(theirs.encode_batch, ["fine", f"not {ENDOFTEXT}"])
    assert outcome(ours.encode_batch, ["fine", f"not {ENDOFTEXT}"]) == refused


@given(text=encoding_text, name=st.sampled_from(NAMES), cut=st.integers(1, 7))
def test_a_stream_gives_the_ids_of_encode(text, name, cut):
    # An Encoding's stream has its defaults; special tokens may end the last chunk.
    encoding = get_encoding(name)
    chunks = [text[start : start + cut] for start in range(0, len(text), cut)]
    for policy in POLICIES[:4]:
        stream = encoding.encode_iterable(chunks, **policy)
        assert outcome(list, stream) == outcome(encoding.encode, text, **policy)


# tiktoken's byte-level extras -----------------------------------------------------------------

UNSTABLE_TEXTS = [
    "hello fanta", "hello world\n\n", "a", " ", "x😀", "  \n ", "hello <|endoftext|>",
    "日本語のテキスト", "12345", "tab\t", "word \u3000", "end\u2028", "x\x1c", "", "\n\n0",
]  # fmt: skip


def compare_unstable(ours, theirs, text: str, **policy) -> None:
    expected = outcome(theirs.encode_with_unstable, text, **policy)
    if isinstance(expected, tuple) and isinstance(expected[1], list):
        expected = (expected[0], sorted(expected[1]))  # tiktoken's order is a hash set's
    assert outcome(ours.encode_with_unstable, text, **policy) == expected


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_encode_with_unstable_matches_tiktoken(name, reference):
    ours, theirs = get_encoding(name), reference(name)
    for text in UNSTABLE_TEXTS:
        compare_unstable(ours, theirs, text, allowed_special="all")
    compare_unstable(ours, theirs, f"x{ENDOFTEXT}")  # refused by default, as in tiktoken


@given(text=st.text(assigned_char, max_size=6) | st.sampled_from(UNSTABLE_TEXTS))
def test_encode_with_unstable_matches_tiktoken_generated(reference, text):
    compare_unstable(get_encoding("gpt2"), reference("gpt2"), text, disallowed_special=())


def test_encode_with_unstable_on_o200k(reference):
    ours, theirs = get_encoding("o200k_harmony"), reference("o200k_harmony")
    for text in ["hello fanta", "<|start|>user<|message|>hi", "a\n\n"]:
        compare_unstable(ours, theirs, text, allowed_special="all")


BYTES = [b"", b"hello", b" \xec\x8b\xa4\xed", b"\x80" * 5, b"hello \xe4\xb8", b"  \n \xff",
         b"\xff\xfe", b"word\xf0\x9f\x98", b"<|endoftext|>\xc3"]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_encode_bytes_matches_tiktoken(name, reference):
    ours, theirs = get_encoding(name), reference(name)
    for data in BYTES:
        assert ours._encode_bytes(data) == theirs._encode_bytes(data)
        assert ours.decode_bytes(ours._encode_bytes(data)) == data


@given(
    head=st.text(assigned_char, max_size=8),
    tail=st.binary(max_size=8),
    name=st.sampled_from(["r50k_base", "cl100k_base", "o200k_base"]),
)
def test_encode_bytes_matches_tiktoken_generated(reference, head, tail, name):
    data = head.encode("utf-8") + tail
    assert get_encoding(name)._encode_bytes(data) == reference(name)._encode_bytes(data)


# The constructor ----------------------------------------------------------------------------


def small_ranks() -> dict[bytes, int]:
    return {bytes([byte]): byte for byte in range(256)} | {b"ab": 256, b"abc": 257}


def test_the_readme_way_to_extend_an_encoding(reference):
    # tiktoken's README: a new Encoding from an old one's private attributes.
    def extend(base, module):
        return module.Encoding(
            name="cl100k_im",
            pat_str=base._pat_str,
            mergeable_ranks=base._mergeable_ranks,
            special_tokens={**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
        )

    import tiktoken

    ours = extend(get_encoding("cl100k_base"), bpe_course)
    theirs = extend(reference("cl100k_base"), tiktoken)
    text = "<|im_start|>user\nhi<|im_end|><|endoftext|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.n_vocab == theirs.n_vocab == 100277


@pytest.mark.parametrize(
    "arguments",
    [
        {"explicit_n_vocab": 260},  # 258 ranks and one special token make 259
        {"explicit_n_vocab": 259, "special_tokens": {"<|x|>": 300}},  # the largest id is 300
    ],
)
def test_explicit_n_vocab_is_checked_as_tiktoken_checks_it(arguments):
    import tiktoken

    options = {"pat_str": r"\w+|\s", "mergeable_ranks": small_ranks()}
    options |= {"special_tokens": {"<|x|>": 258}} | arguments
    for module in [tiktoken, bpe_course]:
        with pytest.raises(AssertionError):
            module.Encoding("small", **options)
    options["explicit_n_vocab"] = None
    assert bpe_course.Encoding("small", **options).encode("abc") == [257]


@pytest.mark.parametrize(
    "options, error",
    [
        ({"mergeable_ranks": {}}, ValueError),  # tiktoken: max() of an empty sequence
        ({"pat_str": "("}, ValueError),  # not a regular expression
    ],
)
def test_bad_arguments_fail_as_in_tiktoken(options, error):
    import tiktoken

    arguments = {"pat_str": r"\w+", "mergeable_ranks": small_ranks(), "special_tokens": {}}
    for module in [tiktoken, bpe_course]:
        with pytest.raises(error):
            module.Encoding("bad", **(arguments | options))


@pytest.mark.parametrize(
    "ranks, special_tokens, message",
    [
        ({b"a": 0, b"b": 1}, {}, "no token for 254 single bytes"),
        (small_ranks() | {b"xy": 256}, {}, "both have rank 256"),
        (small_ranks() | {b"abcd": 300, b"zzz": 301}, {}, "cannot be built"),
        (small_ranks(), {"<|x|>": 256}, "the rank of b'ab'"),
        (small_ranks(), {"abc": 400}, "bytes of the ranked token 257"),
        (small_ranks(), {"": 400}, "empty"),
    ],
)
def test_tables_tiktoken_would_misread_are_refused(ranks, special_tokens, message):
    # tiktoken accepts these and then panics, or encodes and decodes inconsistently.
    with pytest.raises(ValueError, match=message):
        Encoding("bad", pat_str=r"\w+", mergeable_ranks=ranks, special_tokens=special_tokens)


@pytest.mark.parametrize(
    "argument, value",
    [
        ("allowed_special", "<|endoftext|>"),
        ("disallowed_special", "<|endoftext|>"),
        ("allowed_special", None),
        ("allowed_special", [1]),
    ],
)
def test_special_arguments_of_the_wrong_type_are_refused(argument, value):
    with pytest.raises(TypeError):
        get_encoding("gpt2").encode("hi", **{argument: value})


# Pickling and copies ------------------------------------------------------------------------


def test_a_registered_encoding_pickles_as_its_name():
    encoding = get_encoding("cl100k_base")
    data = pickle.dumps(encoding)
    assert len(data) < 100 and pickle.loads(data) is encoding


def test_an_encoding_of_ones_own_pickles_by_its_arguments():
    base = get_encoding("r50k_base")
    custom = Encoding(
        "custom",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={"<|pickle|>": 100_000},
    )
    again = pickle.loads(pickle.dumps(custom))
    assert type(again) is Encoding and again is not custom and again.name == "custom"
    text = "hello world<|pickle|>"
    assert again.encode(text, allowed_special="all") == custom.encode(text, allowed_special="all")
    assert again.encode(text, allowed_special="all")[-1] == 100_000


def test_a_tokenizer_pickles_as_its_definition(trained_tokenizer):
    data = pickle.dumps(trained_tokenizer)
    again = pickle.loads(data)
    assert type(again) is Tokenizer
    assert again.vocab == trained_tokenizer.vocab and again.merges == trained_tokenizer.merges
    assert again.special_tokens == trained_tokenizer.special_tokens
    assert again.pattern == trained_tokenizer.pattern and again.name == trained_tokenizer.name
    assert b"PieceTable" not in data  # the caches stay behind


def test_a_copy_shares_every_table():
    encoding = get_encoding("gpt2")
    clone = copy.copy(encoding)
    assert type(clone) is Encoding and clone is not encoding
    assert clone.vocab is encoding.vocab and clone._pieces is encoding._pieces


# Where p50k_base's file comes from ----------------------------------------------------------------


def test_the_cache_name_is_the_one_tiktoken_uses(tiktoken_files):
    from tiktoken_ext import openai_public

    seen: list[str] = []
    offline = offline_tiktoken(tiktoken_files)
    reader = offline.read_file_cached
    offline.read_file_cached = lambda path, sha=None: seen.append(path) or reader(path, sha)
    with offline:
        openai_public.p50k_base()
    assert [hashlib.sha1(path.encode()).hexdigest() for path in seen] == [P50K_CACHE_NAME]


@pytest.mark.parametrize("variable", ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", None])
def test_p50k_is_found_where_tiktoken_caches_it(
    variable, p50k_path, tmp_path, monkeypatch, fresh_registry
):
    import tiktoken.load
    from tiktoken_ext import openai_public

    monkeypatch.delenv(P50K_FILE_ENV)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    if variable is None:
        monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
        folder = tmp_path / "data-gym-cache"
    else:
        folder = tmp_path / "cache"
        monkeypatch.setenv(variable, str(folder))
    assert tiktoken_cache_dir() == folder
    folder.mkdir()
    (folder / P50K_CACHE_NAME).write_bytes(p50k_path.read_bytes())
    assert get_encoding("p50k_edit").encode("    x") == [50258, 2124]  # 3 spaces, " x"

    # tiktoken itself reads the same file from the same place, without downloading.
    def no_download(blobpath: str) -> bytes:
        raise AssertionError(f"tiktoken tried to download {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    assert len(openai_public.p50k_base()["mergeable_ranks"]) == 50280


def test_without_a_p50k_file_its_table_is_made_from_gpt2s(
    tmp_path, monkeypatch, fresh_registry, p50k_path
):
    monkeypatch.delenv(P50K_FILE_ENV, raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    made = get_encoding("p50k_base")
    assert made._mergeable_ranks == read_tiktoken_ranks(p50k_path)
    assert get_encoding("p50k_edit").encode("    x") == [50258, 2124]  # 3 spaces, " x"


def test_a_p50k_table_that_does_not_match_tiktokens_file_is_refused(monkeypatch, fresh_registry):
    monkeypatch.setattr(encodings, "P50K_SPACE_RUNS", range(2, 25))  # one run short
    with pytest.raises(ValueError, match="does not have the sha256 tiktoken expects"):
        encodings.p50k_ranks_from_gpt2()


def test_p50k_file_says_how_to_provide_it(tmp_path, monkeypatch):
    monkeypatch.delenv(P50K_FILE_ENV, raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError) as caught:
        p50k_file("p50k_edit")
    message = str(caught.value)
    for words in ["p50k_edit needs", "p50k_base.tiktoken", P50K_SHA256, P50K_FILE_ENV,
                  str(tmp_path / P50K_CACHE_NAME)]:  # fmt: skip
        assert words in message
    assert "://" not in message
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken's cache turned off
    with pytest.raises(FileNotFoundError, match="turns tiktoken's cache off"):
        p50k_file()
    (tmp_path / P50K_CACHE_NAME).write_bytes(b"not the file")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="its sha256 is not that one"):
        p50k_file()


def test_a_p50k_file_given_by_the_user_is_checked(p50k_path, tmp_path, monkeypatch):
    gzipped = tmp_path / "p50k_base.tiktoken.gz"
    gzipped.write_bytes(gzip.compress(p50k_path.read_bytes()))
    monkeypatch.setenv(P50K_FILE_ENV, str(gzipped))
    assert p50k_file() == gzipped
    wrong = tmp_path / "wrong.tiktoken"
    wrong.write_bytes(p50k_path.read_bytes()[:-3])
    monkeypatch.setenv(P50K_FILE_ENV, str(wrong))
    with pytest.raises(ValueError, match="sha256"):
        p50k_file()
    monkeypatch.setenv(P50K_FILE_ENV, str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        p50k_file()


# get_encoding and the models ------------------------------------------------------------------


def test_get_encoding_refuses_what_tiktoken_refuses():
    with pytest.raises(ValueError, match="Expected a string"):
        get_encoding(b"gpt2")
    with pytest.raises(ValueError, match="Unknown encoding 'gpt-4'"):
        get_encoding("gpt-4")


def test_the_model_tables_are_tiktokens():
    from tiktoken import model

    assert encodings._MODEL_ENCODING == model.MODEL_TO_ENCODING
    ours = {prefix for prefixes in encodings.MODEL_PREFIXES.values() for prefix in prefixes}
    assert ours == set(model.MODEL_PREFIX_TO_ENCODING)


def model_outcome(function, name: str):
    try:
        return function(name)
    except KeyError as error:
        return ("KeyError", str(error).split(" to a tokeniser")[0])


@given(
    st.sampled_from(
        ["", "ft:", "gpt", "gpt-4o", "gpt-4", "o3", "gpt-5", "ft:gpt-4o", "gpt-oss", "davinci"]
    ).flatmap(lambda start: st.text("-.:o4mni0123abcdefgpstv", max_size=8).map(start.__add__))
)
def test_models_map_as_in_tiktoken(name):
    from tiktoken import model

    assert model_outcome(bpe_course.encoding_name_for_model, name) == model_outcome(
        model.encoding_name_for_model, name
    )


def test_every_model_and_prefix_maps_as_in_tiktoken():
    from tiktoken import model

    names = [*model.MODEL_TO_ENCODING, *model.MODEL_PREFIX_TO_ENCODING]
    for name in names + [f"{name}{end}" for name in names for end in ["x", "-1", "o-mini"]]:
        ours = model_outcome(bpe_course.encoding_name_for_model, name)
        assert ours == model_outcome(model.encoding_name_for_model, name)


def test_encoding_for_model_gives_the_registered_encoding():
    assert bpe_course.encoding_for_model("gpt-4o-mini") is get_encoding("o200k_base")
    assert bpe_course.encoding_for_model("gpt-oss-120b") is get_encoding("o200k_harmony")
    with pytest.raises(KeyError, match="Could not automatically map llama-3 to a tokeniser"):
        bpe_course.encoding_for_model("llama-3")


def test_the_readme_example_runs_as_written():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    blocks = [block.split("```")[0] for block in readme.split("```python\n")[1:]]
    (snippet,) = [block for block in blocks if "encoding_for_model" in block]
    exec(compile(snippet, "README.md", "exec"), {})


# Cold start ---------------------------------------------------------------------------------


def test_numpy_and_tiktoken_are_not_loaded_until_needed():
    script = (
        "import sys, bpe_course\n"
        "enc = bpe_course.get_encoding('gpt2')\n"
        "assert enc.encode('hello world') == [31373, 995]\n"
        "print('numpy' in sys.modules, 'tiktoken' in sys.modules)\n"
        "enc.encode_to_numpy('hi')\n"
        "print('numpy' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.split() == ["False", "False", "True"], result.stderr


# The Tokenizer's share of tiktoken's surface --------------------------------------------------


def test_a_tokenizer_has_the_generally_useful_methods(trained_tokenizer):
    tokenizer = trained_tokenizer
    text = f"the cat{ENDOFTEXT}"
    ids = tokenizer.encode(text)
    assert tokenizer.encode_to_numpy(text).tolist() == ids  # Tokenizer's default: all allowed
    assert tokenizer.decode_batch([ids, ids[:2]]) == [text, tokenizer.decode(ids[:2])]
    assert tokenizer.decode_bytes_batch([ids]) == [text.encode()]
    eot = tokenizer.special_tokens[ENDOFTEXT]
    assert tokenizer.encode_single_token(ENDOFTEXT) == eot and tokenizer.is_special_token(eot)
    assert tokenizer.encode_single_token(tokenizer.vocab[300]) == 300
    assert not tokenizer.is_special_token(300)
    with pytest.raises(KeyError):
        tokenizer.encode_single_token("the cat")
    with pytest.raises(TypeError):
        tokenizer.is_special_token(3.0)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base", "o200k_harmony"])
def test_encodings_with_cached_tables_do_not_derive_merges_again(name, reference, fresh_registry,
                                                                  monkeypatch):
    """The three tables OpenAI's tokenizers keep in the start-up cache come from there:
    recovering o200k_base's merges from its ranks takes seconds, reading them milliseconds."""

    def derive(ranks):
        raise AssertionError(f"{name}: the merges were derived from the ranks again")

    monkeypatch.setattr("bpe_course.tiktoken_encoding.merges_from_ranks", derive)
    ours, theirs = get_encoding(name), reference(name)
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    for text in HAND_PICKED:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


@pytest.mark.parametrize("cache", ["empty", "filled", "off"])
def test_an_encoding_is_the_same_whether_the_start_up_cache_is_empty_filled_or_off(
        cache, reference, fresh_registry, monkeypatch, tmp_path):
    from bpe_course.speed.cachefiles import CACHE_ENV

    monkeypatch.setenv(CACHE_ENV, "off" if cache == "off" else str(tmp_path))
    if cache == "filled":
        get_encoding("gpt2")
        REGISTERED.clear()
        assert list(tmp_path.iterdir()), "the first build wrote no cache file"
    ours, theirs = get_encoding("gpt2"), reference("gpt2")
    assert ours._mergeable_ranks == theirs._mergeable_ranks
    assert ours.merges == get_encoding("r50k_base").merges
    for text in HAND_PICKED:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
