"""The package's shape: a teaching core on top, subpackages below it, every import pointing back.

A learner reads the core's modules in the order the course teaches them, so a module may
only use ideas from modules before it. The machinery the core stands on lives in
subpackages named for what they hold, and the core reaches it without knowing more than
one name per idea. These tests read the source (imports inside functions included) rather
than trusting a diagram.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import bpe_course

PACKAGE = Path(bpe_course.__file__).resolve().parent

#: The teaching core: the top-level modules, in the order the course teaches them.
CORE = ["utf8", "base", "naive", "pretokens", "train", "tokenizer"]

#: Top-level modules that are not lessons but public doors: tiktoken's surface beyond encode
#: and decode, OpenAI's files, and tiktoken's drop-in names (``get_encoding``, ...).
FRONT = ["tiktoken_methods", "openai", "models", "tiktoken_encoding", "encodings"]

#: Every module, in one order in which each imports only modules before it. The core's
#: modules keep their teaching order; each subpackage's modules sit where the core first
#: needs them.
ORDER = [
    "utf8", "safety.quoting", "base", "naive", "pretokens",
    "safety.interrupts", "safety.files", "safety.staging", "safety.reading", "safety.proven",
    "safety.patterns",
    "speed.workers", "speed.cachefiles", "speed.fastsplit", "speed.cuts", "speed.wordtable",
    "speed.counting", "speed.sharing",
    "train",
    "formats.gpt2", "formats.ranks", "formats.export",
    "speed.merging", "speed.piececache", "speed.batches",
    "safety.specials", "speed.streaming",
    "tiktoken_methods", "tokenizer", "speed.startcache",
    "formats.folder", "openai",
    "formats.rankbpe", "formats.hf_json", "formats.protobuf", "formats.sentencepiece",
    "formats.arrays", "models",
    "tiktoken_encoding", "encodings",
    "course.data", "course.viz", "course.checks.harness",
    "course.checks.why_tokenization", "course.checks.bytes_utf8", "course.checks.naive_bpe",
    "course.checks.pretokenization",
    "course.checks.fast_training", "course.checks.openai_files",
    "course.checks.encoding_in_practice", "course.checks.build_your_own",
    "course.checks.wild", "course.checks.open_models", "course.checks.tokens_for_models",
    "app.terminal", "app.cli",
]

#: Which subpackages each part may import from (besides itself). The core and the
#: machinery below it know nothing of the command line or the notebooks' helpers.
MAY_USE = {
    "core": {"core", "speed", "formats", "safety"},
    "speed": {"core", "speed", "safety"},
    "formats": {"core", "speed", "formats", "safety"},
    "safety": {"core", "safety"},
    "course": {"core", "speed", "formats", "safety", "course"},
    "app": {"core", "speed", "formats", "safety", "course", "app"},
}

#: Lines a learner should be able to read in one sitting: the whole core, and one module.
CORE_LINES = 1_325
MODULE_LINES = 600


def part_of(module: str) -> str:
    """``"core"`` for a top-level module (``openai`` and ``models`` are the core's doors to
    OpenAI's files and the open models'), else the subpackage's name."""
    return module.split(".")[0] if "." in module else "core"


def source_path(module: str) -> Path:
    return PACKAGE.joinpath(*module.split(".")).with_suffix(".py")


def all_modules() -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] not in ("__init__", "__main__"):
            found.add(".".join(parts))
    return found


def package_imports(module: str) -> list[tuple[str, list[str], int]]:
    """``(imported module, names, line)`` for every import of a package module in ``module``.

    ``from ..formats import export`` counts as importing ``formats.export``.
    """
    here = module.split(".")[:-1]  # the subpackage the module is in, if any
    tree = ast.parse(source_path(module).read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
            target = [*base, *(node.module.split(".") if node.module else [])]
            for alias in node.names:
                candidate = ".".join([*target, alias.name])
                if candidate in all_modules():
                    found.append((candidate, [], node.lineno))
                else:
                    found.append((".".join(target), [alias.name], node.lineno))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bpe_course."):
            found.append((node.module.removeprefix("bpe_course."), [a.name for a in node.names],
                          node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bpe_course."):
                    found.append((alias.name.removeprefix("bpe_course."), [], node.lineno))
    return found


def test_every_module_has_a_place_in_the_order():
    assert all_modules() == set(ORDER)
    top_level = [module for module in ORDER if part_of(module) == "core"]
    assert [module for module in top_level if module in CORE] == CORE
    assert set(top_level) - set(CORE) == set(FRONT)


@pytest.mark.parametrize("module", ORDER)
def test_imports_point_only_to_earlier_modules(module):
    for imported, _, line in package_imports(module):
        assert imported in ORDER, f"{module}: line {line} imports unknown module {imported}"
        assert ORDER.index(imported) < ORDER.index(module), (
            f"{module}: line {line} imports {imported}, which comes later"
        )


@pytest.mark.parametrize("module", ORDER)
def test_no_part_imports_upward(module):
    """The core and its machinery never import the command line or the notebooks' helpers."""
    for imported, _, line in package_imports(module):
        assert part_of(imported) in MAY_USE[part_of(module)], (
            f"{module}: line {line} imports {imported}: {part_of(module)} may not use "
            f"{part_of(imported)}"
        )


@pytest.mark.parametrize("module", ORDER)
def test_no_private_name_crosses_a_module(module):
    for imported, names, line in package_imports(module):
        private = [name for name in names if name.startswith("_")]
        assert not private, f"{module}: line {line} imports private {private} from {imported}"


def test_the_core_reads_in_an_afternoon():
    lines = {module: len(source_path(module).read_text().splitlines()) for module in CORE}
    assert sum(lines.values()) <= CORE_LINES, lines
    for module in all_modules():
        assert len(source_path(module).read_text().splitlines()) <= MODULE_LINES, module


def test_every_subpackage_says_what_it_holds():
    for folder in ("speed", "formats", "safety", "course", "app"):
        init = PACKAGE / folder / "__init__.py"
        docstring = ast.get_docstring(ast.parse(init.read_text()))
        assert docstring, f"{folder}/__init__.py has no docstring"
        for path in (PACKAGE / folder).glob("*.py"):
            if path.stem != "__init__":
                assert f":mod:`.{path.stem}`" in docstring, f"{folder} does not list {path.stem}"


def test_typed_package_marker():
    assert (PACKAGE / "py.typed").is_file()


def test_the_front_door_loads_names_on_first_use():
    """``import bpe_course`` loads none of the modules; each name loads its own, and
    ``pretokenize`` is the function, beside the module ``pretokens``."""
    script = (
        "import sys, bpe_course\n"
        "print(sorted(m for m in sys.modules if m.startswith('bpe_course.')))\n"
        "from bpe_course import pretokenize, Tokenizer\n"
        "print(callable(pretokenize) and pretokenize('a b') == ['a', ' b'], Tokenizer.__name__)\n"
        "print(bpe_course.speed.__name__, 'train_bpe' in dir(bpe_course))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.splitlines() == ["[]", "True Tokenizer", "bpe_course.speed True"], result
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        bpe_course.nonsense  # noqa: B018
