"""The package's shape: modules in teaching order, every import pointing back, no cycles.

A learner reads the modules in the order the course teaches them, so a module may only
use ideas from modules before it. These tests read the source (imports inside functions
included) rather than trusting a diagram.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import bpe_course

PACKAGE = Path(bpe_course.__file__).resolve().parent

#: The teaching order; ``__init__``, ``__main__`` only gather and start.
ORDER = [
    "utf8", "base", "naive", "pretokenize", "fastsplit", "ranks", "interrupts", "chunks",
    "wordtable", "sharing", "train", "files", "export", "merging", "batches", "tokenizer",
    "folder", "openai", "encodings", "data", "viz", "cli",
]


def package_imports(module: str) -> list[tuple[str, list[str], int]]:
    """``(imported module, names, line)`` for every import of a sibling module in ``module``."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.append((node.module.split(".")[0], [a.name for a in node.names], node.lineno))
            else:  # from . import x, y
                found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bpe_course."):
            found.append((node.module.split(".")[1], [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bpe_course."):
                    found.append((alias.name.split(".")[1], [], node.lineno))
    return found


def test_every_module_is_in_the_teaching_order():
    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert modules == set(ORDER)


@pytest.mark.parametrize("module", ORDER)
def test_imports_point_only_to_earlier_lessons(module):
    for imported, _, line in package_imports(module):
        assert imported in ORDER, f"{module}.py:{line} imports unknown module {imported}"
        assert ORDER.index(imported) < ORDER.index(module), (
            f"{module}.py:{line} imports {imported}, which the course teaches later"
        )


@pytest.mark.parametrize("module", ORDER)
def test_no_private_name_crosses_a_module(module):
    for imported, names, line in package_imports(module):
        private = [name for name in names if name.startswith("_")]
        assert not private, f"{module}.py:{line} imports private {private} from {imported}"


def test_typed_package_marker():
    assert (PACKAGE / "py.typed").is_file()


def test_the_front_door_loads_names_on_first_use():
    """``import bpe_course`` loads none of the modules; each name loads its own, and
    ``pretokenize`` stays the function even once the module of that name is loaded."""
    import subprocess
    import sys

    script = (
        "import sys, bpe_course\n"
        "print(sorted(m for m in sys.modules if m.startswith('bpe_course.')))\n"
        "import bpe_course.tokenizer\n"
        "from bpe_course import pretokenize, Tokenizer\n"
        "print(callable(pretokenize) and pretokenize('a b') == ['a', ' b'], Tokenizer.__name__)\n"
        "print(bpe_course.viz.__name__, 'train_bpe' in dir(bpe_course))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.splitlines() == ["[]", "True Tokenizer", "bpe_course.viz True"], result
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        bpe_course.nonsense  # noqa: B018
