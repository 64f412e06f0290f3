"""``bench.encode --open-models`` still runs: its ``--quick`` mode, gated on exact ids."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import encode as bench_encode  # noqa: E402
from bench import open_models  # noqa: E402

for package in ("llama-models", "mistral-common"):
    try:
        importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"the quick run needs {package}: pip install 'bpe-course[models]'",
                    allow_module_level=True)


def test_open_models_benchmark_quick(capsys) -> None:
    status = bench_encode.main(["--quick", "--repeat", "1", "--open-models"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "PASS  llama3 ids == reference's" in out and "FAIL" not in out
    assert "| mistral_v1 | English prose |" in out and "| llama3 |" in out


def test_a_wrong_open_model_stops_the_benchmark(monkeypatch, capsys) -> None:
    real = open_models.open_model

    def one_off(name):
        tokenizer = real(name)
        broken = type("Broken", (), {})()
        broken.encode_ordinary = lambda text: [*tokenizer.encode_ordinary(text)[:-1], 0]
        return broken

    monkeypatch.setattr(open_models, "open_model", one_off)
    assert open_models.run(quick=True, repeat=1) == 1
    assert "FAIL  llama3 ids == reference's" in capsys.readouterr().out
