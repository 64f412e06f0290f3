"""The command line as real processes: signals, two trainings at once, checks before work.

These run ``bpe-course`` in child processes and send real signals. Where a test needs the
child to stop at a precise moment (while saving), the child is started through a small
harness that wraps one library function to announce itself on stdout and wait; everything
else is the real program.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bpe_course.base import ENDOFTEXT
from bpe_course.data import english_prose
from bpe_course.folder import OUTPUT_FILES

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals")

#: Runs ``bpe-course ARGS`` with ``bpe_course.cli.save_tokenizer_folder`` wrapped so that
#: it prints "saving" and sleeps SLEEP seconds before (BEFORE=1) or while (BEFORE=0) saving;
#: with NO_TRAINING=1, starting to train prints "training started" and exits with 99.
HARNESS = textwrap.dedent(
    """
    import os, sys, time
    from bpe_course import cli, folder

    def announce_and_wait(*args, **kwargs):
        print("saving", flush=True)
        if os.environ["BEFORE"] == "1":
            time.sleep(float(os.environ["SLEEP"]))
            return real_save(*args, **kwargs)
        real_write = folder.write_tokenizer_files
        def slow_write(tokenizer, where):
            real_write(tokenizer, where)
            time.sleep(float(os.environ["SLEEP"]))
        folder.write_tokenizer_files = slow_write
        return real_save(*args, **kwargs)

    def must_not_train(*args, **kwargs):
        print("training started", flush=True)
        sys.exit(99)

    real_save = cli.save_tokenizer_folder
    cli.save_tokenizer_folder = announce_and_wait
    if os.environ.get("NO_TRAINING") == "1":
        import bpe_course.train
        bpe_course.train.train_bpe = must_not_train
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("c") / "corpus.txt"
    path.write_text(english_prose(50_000), encoding="utf-8")
    return path


def start(args: list[str], *, harness: bool = False, env: dict[str, str] | None = None):
    command = [sys.executable, "-c", HARNESS] if harness else [sys.executable, "-m", "bpe_course"]
    return subprocess.Popen(
        [*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})}, start_new_session=True,
    )


def wait_for_line(process: subprocess.Popen, expected: bytes) -> None:
    line = process.stdout.readline()
    assert line.strip() == expected, (line, process.stderr.read())


def test_sigterm_while_saving_leaves_nothing_behind(small_corpus, tmp_path):
    out = tmp_path / "tok"
    process = start(
        ["train", str(small_corpus), "--vocab-size", "300", "--out", str(out), "--quiet"],
        harness=True, env={"BEFORE": "0", "SLEEP": "30"},
    )
    wait_for_line(process, b"saving")
    time.sleep(0.5)  # inside the slow write: the staging folder exists now
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "interrupted; nothing was written" in err.decode()
    assert "Traceback" not in err.decode()
    assert leftovers(tmp_path) == []  # no staging folder, no half tokenizer


def test_sigterm_during_pretokenization_stops_workers_quietly(tmp_path):
    corpus = tmp_path / "big.txt"
    corpus.write_text((english_prose() + ENDOFTEXT) * 14, encoding="utf-8")  # ~6.5 MB
    process = start(["train", str(corpus), "--vocab-size", "5000", "--special-tokens",
                     ENDOFTEXT, "--processes", "2", "--out", str(tmp_path / "o")])
    seen = b""
    while seen.count(b"B/s]") < 2:  # the bar has moved: the workers are counting
        seen += process.stderr.read(1) or b"B/s]B/s]"
    workers = child_pids(process.pid)
    process.send_signal(signal.SIGTERM)  # to the main process only, as `kill PID` does
    _, err = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("training finished before the signal arrived")
    assert process.returncode == 143
    assert "Traceback" not in err.decode() and "BrokenPipeError" not in err.decode()
    assert leftovers(tmp_path) == ["big.txt"]
    deadline = time.time() + 10
    while any(alive(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if alive(pid)], "worker processes outlived the command"


def child_pids(parent: int) -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                children.append(int(entry))
    return children


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_two_trainings_into_one_folder_the_second_to_finish_reports_it_lost(
    small_corpus, tmp_path
):
    out = tmp_path / "tok"
    slow = start(["train", str(small_corpus), "--vocab-size", "300", "--out", str(out),
                  "--quiet"], harness=True, env={"BEFORE": "1", "SLEEP": "3"})
    wait_for_line(slow, b"saving")  # trained, claimed the folder, now waiting to save
    fast = start(["train", str(small_corpus), "--vocab-size", "280", "--out", str(out),
                  "--quiet"])
    fast_out, fast_err = fast.communicate(timeout=120)
    slow_out, slow_err = slow.communicate(timeout=120)
    assert fast.returncode == 0, fast_err
    assert slow.returncode == 1
    assert "changed while this tokenizer was being trained" in slow_err.decode()
    assert "Traceback" not in slow_err.decode()
    config = json.loads((out / "config.json").read_text())
    assert config["vocab_size"] == 280  # the winner's tokenizer, whole
    assert leftovers(out) == sorted(OUTPUT_FILES)
    assert leftovers(tmp_path) == ["tok"]


@pytest.mark.parametrize(
    ("make_out", "extra", "message"),
    [
        (lambda tmp: tmp / "afile" / "tok", [], "is a file, not a folder"),
        (lambda tmp: tmp / "afile", [], "is a file, not a folder"),
        (lambda tmp: Path("/proc/bpe-course-test/tok"), [], "cannot write to '/proc'"),
        (lambda tmp: tmp / "tok", ["--special-tokens", "»"], "same spelling as ordinary token"),
        (lambda tmp: tmp / "tok", ["--processes", "0"], "--processes: num_processes must be at"),
    ],
)
def test_mistakes_are_reported_before_training_starts(
    small_corpus, tmp_path, make_out, extra, message
):
    (tmp_path / "afile").write_text("x")
    result = subprocess.run(
        [sys.executable, "-c", HARNESS, "train", str(small_corpus), "--vocab-size", "300",
         "--out", str(make_out(tmp_path)), "--quiet", *extra],
        capture_output=True, timeout=60, env={**os.environ, "NO_TRAINING": "1"},
    )
    assert b"training started" not in result.stdout
    assert result.returncode == 2, result.stderr
    assert message in result.stderr.decode() and "Traceback" not in result.stderr.decode()


def test_a_pipe_is_not_a_corpus_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = subprocess.run(
        [sys.executable, "-m", "bpe_course", "train", str(fifo), "--vocab-size", "300",
         "--out", str(tmp_path / "tok"), "--quiet"],
        capture_output=True, timeout=60,
    )
    assert result.returncode == 2
    assert "not a regular file" in result.stderr.decode()


def test_the_readme_export_snippet_runs_as_written(small_corpus, tmp_path):
    """The README shows how to load a trained folder into HF and tiktoken: run it verbatim."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    blocks = readme.split("```python\n")[1:]
    snippet = next(block.split("```")[0] for block in blocks if "load_tiktoken_bpe" in block)
    trained = subprocess.run(
        [sys.executable, "-m", "bpe_course", "train", str(small_corpus), "--vocab-size", "300",
         "--special-tokens", ENDOFTEXT, "--pattern", "gpt4", "--out", "my_tokenizer",
         "--quiet"], capture_output=True, cwd=tmp_path, timeout=120,
    )
    assert trained.returncode == 0, trained.stderr
    check = "\nassert tk.encode('Hello, world!') == hf.encode('Hello, world!').ids\n"
    result = subprocess.run([sys.executable, "-c", snippet + check], capture_output=True,
                            cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert result.returncode == 0, result.stderr.decode()
