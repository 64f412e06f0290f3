"""The command line as real processes: signals, two trainings at once, checks before work.

These run ``bpe-course`` in child processes and send real signals. Where a test needs the
child to stop at a precise moment (while saving), the child is started through a small
harness that wraps one library function to announce itself on stdout and wait; everything
else is the real program.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bpe_course.base import ENDOFTEXT
from bpe_course.course.data import english_prose
from bpe_course.formats.folder import OUTPUT_FILES

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals")

#: Runs ``bpe-course ARGS`` with ``bpe_course.formats.folder.save_tokenizer_folder`` wrapped so that
#: it prints "saving" and sleeps SLEEP seconds before (BEFORE=1) or while (BEFORE=0) saving;
#: with NO_TRAINING=1, starting to train prints "training started" and exits with 99; with
#: PUBLISHING_SLEEP or SUMMARY_SLEEP it prints "publishing" (in the final swap) or "summary"
#: (after saving) and sleeps that long.
HARNESS = textwrap.dedent(
    """
    import os, sys, time
    from bpe_course.app import cli
    from bpe_course.formats import folder

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

    def pause(name, real):
        def paused(*args, **kwargs):
            print(name, flush=True)
            time.sleep(float(os.environ[name.upper() + "_SLEEP"]))
            return real(*args, **kwargs)
        return paused

    real_save = folder.save_tokenizer_folder
    folder.save_tokenizer_folder = announce_and_wait
    if "PUBLISHING_SLEEP" in os.environ:  # pause inside the swap, signals held back
        folder.publish_folder = pause("publishing", folder.publish_folder)
    if "SUMMARY_SLEEP" in os.environ:  # pause after saving, before the summary
        cli.corpus_head = pause("summary", cli.corpus_head)
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


# Signals at the moments that matter, and at many moments ------------------------------------


def error_lines(err: bytes) -> list[str]:
    return [line for line in err.decode().splitlines() if line.startswith("bpe-course: error")]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_the_summary_says_the_tokenizer_is_saved(small_corpus, tmp_path, signum):
    """Once saved, the tokenizer stays; the message said so, then also "nothing was
    written", and SIGTERM exited with Ctrl-C's code."""
    out = tmp_path / "tok"
    process = start(
        ["train", str(small_corpus), "--vocab-size", "300", "--out", str(out), "--quiet"],
        harness=True, env={"BEFORE": "1", "SLEEP": "0", "SUMMARY_SLEEP": "30"},
    )
    wait_for_line(process, b"saving")
    wait_for_line(process, b"summary")
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + signum
    assert error_lines(err) == [f"bpe-course: error: interrupted; the tokenizer is saved in {out}"]
    assert "Traceback" not in err.decode()
    assert leftovers(out) == sorted(OUTPUT_FILES)


def test_sighup_while_saving_leaves_nothing_behind(small_corpus, tmp_path):
    """Closing the terminal sends SIGHUP: it used to kill the process mid-save."""
    process = start(
        ["train", str(small_corpus), "--vocab-size", "300", "--out", str(tmp_path / "tok"),
         "--quiet"], harness=True, env={"BEFORE": "0", "SLEEP": "30"},
    )
    wait_for_line(process, b"saving")
    time.sleep(0.5)  # inside the slow write: the staging folder exists now
    process.send_signal(signal.SIGHUP)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 129, err
    assert error_lines(err) == ["bpe-course: error: interrupted; nothing was written"]
    assert leftovers(tmp_path) == []


def test_a_signal_inside_the_swap_takes_effect_after_it_and_says_so(small_corpus, tmp_path):
    out = tmp_path / "tok"
    out.mkdir()
    (out / "config.json").write_text('{"format": "bpe-course tokenizer"}')  # an old one of ours
    process = start(
        ["train", str(small_corpus), "--vocab-size", "300", "--out", str(out), "--quiet"],
        harness=True, env={"BEFORE": "1", "SLEEP": "0", "PUBLISHING_SLEEP": "2"},
    )
    wait_for_line(process, b"saving")
    wait_for_line(process, b"publishing")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert error_lines(err) == [f"bpe-course: error: interrupted; the tokenizer is saved in {out}"]
    assert json.loads((out / "config.json").read_text())["vocab_size"] == 300
    assert leftovers(tmp_path) == ["tok"]


@pytest.fixture(scope="module")
def megabyte_corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("m") / "corpus.txt"
    path.write_text(english_prose() * 2, encoding="utf-8")  # ~0.9 MB: about a second to train
    return path


@pytest.mark.parametrize("delay", [0.0, 0.3, 0.7, 1.1])
@pytest.mark.parametrize(
    ("signum", "to_group"),
    [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGHUP, True)],
    ids=["ctrl-c", "kill", "hangup"],
)
def test_a_signal_at_any_moment_of_training(megabyte_corpus, tmp_path, signum, to_group, delay):
    """Whenever it arrives (counting, merging, saving, the summary, or too late): no
    traceback, 128 + signal or success, and either no folder or a whole one, as said."""
    work = tmp_path / "work"
    work.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "bpe_course", "train", str(megabyte_corpus), "--vocab-size",
         "600", "--processes", "2", "--out", "tok"],
        cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    first = process.stderr.read(1)  # the progress bar: imports are done, handlers are set
    time.sleep(delay)
    try:
        (os.killpg if to_group else os.kill)(process.pid, signum)
    except ProcessLookupError:
        pass
    out, err = process.communicate(timeout=120)
    err = first + err
    assert "Traceback" not in err.decode(), err.decode()
    assert process.returncode in (0, 128 + signum), (out, err.decode()[-300:], leftovers(work))
    saved = process.returncode == 0 or b"the tokenizer is saved in tok" in err
    assert leftovers(work) == (["tok"] if saved else [])
    if saved:
        assert leftovers(work / "tok") == sorted(OUTPUT_FILES)


# A full disk, read-only places and odd paths, for real ----------------------------------------


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KB tmpfs (needs root, as on CI containers); the test is skipped elsewhere."""
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                             capture_output=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    yield where
    subprocess.run(["umount", str(where)], check=True)


def test_a_full_disk_keeps_the_old_tokenizer_and_names_the_folder(small_corpus, tiny_disk):
    out = tiny_disk / "tok"
    first = subprocess.run([sys.executable, "-m", "bpe_course", "train", str(small_corpus),
                            "--vocab-size", "260", "--out", str(out), "--quiet"],
                           capture_output=True, timeout=120)
    assert first.returncode == 0, first.stderr
    before = {name: (out / name).read_bytes() for name in OUTPUT_FILES}
    second = subprocess.run([sys.executable, "-m", "bpe_course", "train", str(small_corpus),
                             "--vocab-size", "2000", "--out", str(out), "--quiet"],
                            capture_output=True, timeout=120)
    err = second.stderr.decode()
    assert second.returncode == 1 and "Traceback" not in err
    assert f"cannot save the tokenizer in {out}: No space left on device" in err
    assert {name: (out / name).read_bytes() for name in OUTPUT_FILES} == before
    assert leftovers(tiny_disk) == ["tok"]


def test_odd_but_legal_paths_work_end_to_end(small_corpus, tmp_path):
    """Spaces, a newline and a byte that is not UTF-8, in the corpus name and in --out."""
    odd = os.fsencode(tmp_path) + b"/my corpus\n\xff.txt"
    with open(odd, "wb") as file:
        file.write(small_corpus.read_bytes())
    out = os.fsencode(tmp_path) + b"/out dir\n\xfe"
    run = [sys.executable, "-m", "bpe_course"]
    trained = subprocess.run([*run, "train", odd, "--vocab-size", "270", "--out", out,
                              "--quiet"], capture_output=True, timeout=120)
    assert trained.returncode == 0, trained.stderr
    assert b"to " + out.replace(b"\xfe", b"\\udcfe") in trained.stdout
    encoded = subprocess.run([*run, "encode", "--tokenizer", out, odd], capture_output=True,
                             timeout=120)
    decoded = subprocess.run([*run, "decode", "--tokenizer", out], input=encoded.stdout,
                             capture_output=True, timeout=120)
    assert decoded.stdout == small_corpus.read_bytes()


@pytest.mark.parametrize(
    ("env", "coloured"),
    [({}, False), ({"FORCE_COLOR": "1"}, True), ({"NO_COLOR": "1"}, False),
     ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False)],
)
def test_show_colours_only_a_terminal_unless_told(env, coloured):
    """Into a pipe (as here) no escape codes, unless FORCE_COLOR; NO_COLOR always wins."""
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    result = subprocess.run(
        [sys.executable, "-m", "bpe_course", "show", "--tokenizer", "gpt2", "--text",
         "Hello, 你好"], capture_output=True, timeout=60, env={**base, **env},
    )
    assert result.returncode == 0
    out = result.stdout.decode()
    assert ("\x1b[" in out) == coloured
    if not coloured:
        assert out == "Hello|,| |你[e4 bd|a0]|好[e5 a5|bd]\n"


# Ctrl-C before the command has even loaded ------------------------------------------------


#: A traceback line in one of the package's own files.
OUR_FRAME = re.compile(r'File "([^"]*[/\\\\]bpe_course[/\\\\][^"]*)"')
NOT_COVERED = ("__init__.py", "__main__.py")


def startup_seconds(command: list[str]) -> float:
    """How long Python takes to run ``command`` when it does nothing but start (``--help``)."""
    began = time.perf_counter()
    subprocess.run(command + ["--help"], capture_output=True, check=True, timeout=60)
    return time.perf_counter() - began


@pytest.mark.parametrize(
    "command",
    [[sys.executable, "-m", "bpe_course"], [str(Path(sys.executable).with_name("bpe-course"))]],
    ids=["python -m", "console script"],
)
def test_ctrl_c_while_the_package_loads_prints_no_traceback(command):
    """Python installs its Ctrl-C handler (which raises KeyboardInterrupt) before it runs any
    of our code, so a Ctrl-C while the package is still being imported used to end in
    Python's traceback through our modules. Signals are sent across the whole start-up."""
    if not Path(command[0]).exists():
        pytest.skip(f"{command[0]} is not installed (pip install -e . makes it)")
    whole = startup_seconds(command)
    for step in range(12):
        process = subprocess.Popen(
            command + ["show", "--tokenizer", "gpt2", "--text", "hi"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        time.sleep(whole * step / 12)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
        text = err.decode()
        # Before our handler is set, Python may still print a traceback: in its own start-up
        # (site), or in the millisecond of bpe_course/__init__.py and __main__.py's first
        # lines. No frame may be in a module that those two load.
        assert not [f for f in OUR_FRAME.findall(text) if not f.endswith(NOT_COVERED)], text
        if "init_import_site" in text:  # Python's own start-up was cut short
            continue
        assert process.returncode in (0, 130, -signal.SIGINT), (process.returncode, text)
        if process.returncode == 130 and text:
            assert text.startswith("bpe-course: error: interrupted"), text


def screen_lines(err: bytes) -> list[str]:
    """The lines a terminal would show: a carriage return starts its line over."""
    return [line.split("\r")[-1] for line in err.decode().split("\n") if line.split("\r")[-1]]


@pytest.mark.parametrize("bar", ["pretokenize", "merges"])
def test_the_interrupted_message_is_the_last_line_not_under_a_bar(megabyte_corpus, tmp_path, bar):
    """A bar left open when Ctrl-C unwound the work used to be redrawn after the message
    (tqdm closes a bar when it is collected): the message ended up after a bar on the same
    line, and then under the bar's last redraw."""
    for attempt in range(5):  # the signal must land while that bar is on the screen
        process = subprocess.Popen(
            [sys.executable, "-m", "bpe_course", "train", str(megabyte_corpus), "--vocab-size",
             "8000", "--processes", "2", "--out", str(tmp_path / f"tok{attempt}")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        seen = b""
        while bar.encode() not in seen and process.poll() is None:
            seen += process.stderr.read1(4096)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
        if process.returncode == 130:
            break
    else:
        pytest.skip("training finished before every signal")
    lines = screen_lines(seen + err)
    assert lines[-1] == "bpe-course: error: interrupted; nothing was written", lines[-3:]
    assert not any("bpe-course: error" in line[1:] for line in lines), lines
