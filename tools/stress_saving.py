"""Stress the saving of tokenizer folders: runs at once, signals at random, a user's files.

Each round starts a few ``bpe-course train`` runs into one output folder at once, sends
each a random signal (SIGINT, SIGTERM, SIGKILL, or none) after a random delay, and
meanwhile writes "user" notes into the folder as a person in another terminal might. After
the round it checks what this package promises:

- every note the user wrote still exists, in the folder or in a folder a message named;
- the output folder is a whole tokenizer (its files agree with each other) or absent;
- no run printed a traceback, and each exit code is 0, 1, 2 or 128 + its signal;
- a folder a message names as holding the new tokenizer holds a whole one;
- once the round is over, one more run leaves no hidden staging folder behind.

Usage: ``python -m tools.stress_saving [--rounds 20] [--runs 3] [--seed 0]``; it prints one
line per round and exits 1 at the first broken promise.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bpe_course.course.data import english_prose
from bpe_course.formats.folder import OUTPUT_FILES

COMMAND = [sys.executable, "-m", "bpe_course", "train"]
SIGNALS = [None, signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
NAMED = re.compile(r"(?:the new tokenizer is in|kept as) (\S+?)(?:;|$)")


def whole_tokenizer(folder: Path) -> bool:
    """Are all of a tokenizer's files in ``folder``, and do they agree?"""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        merges = (folder / "merges.txt").read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError):
        return False
    return (all((folder / name).is_file() for name in OUTPUT_FILES)
            and config["vocab_size"] == len(vocab) and config["merges"] == len(merges) - 1)


def write_notes(out: Path, stop: threading.Event, written: dict[str, str]) -> None:
    """Put a note into ``out`` now and then, as a user would, until ``stop``."""
    number = 0
    if stop.wait(random.uniform(0.3, 1.5)):  # most runs have claimed the folder by now
        return
    while not stop.wait(random.uniform(0.01, 0.3)):
        number += 1
        name, text = f"NOTES-{number}.md", f"note {number} {random.random()}"
        try:
            (out / name).write_text(text)
        except OSError:  # the folder is not there (yet, or just now): nothing was written
            continue
        written[name] = text


def find_note(root: Path, name: str, text: str) -> bool:
    return any(path.read_text() == text for path in root.rglob(name))


def one_round(root: Path, corpus: Path, runs: int) -> tuple[list[str], list[str]]:
    """Run one round in ``root``; what each run did, and the broken promises, if any."""
    out = root / "tok"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    subprocess.run([*COMMAND, str(corpus), "--vocab-size", "300", "--out", str(out), "--quiet",
                    "--processes", "1"], check=True, capture_output=True)
    processes = []
    for _ in range(runs):
        size = str(random.choice([500, 1000, 2000, 3000]))
        processes.append(subprocess.Popen(
            [*COMMAND, str(corpus), "--vocab-size", size, "--out", str(out), "--quiet",
             "--processes", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    stop, written = threading.Event(), {}
    user = threading.Thread(target=write_notes, args=(out, stop, written))
    user.start()
    plans = [(random.choice(SIGNALS), random.uniform(0.3, 1.5)) for _ in processes]
    started = time.monotonic()
    for process, (signum, delay) in sorted(zip(processes, plans), key=lambda p: p[1][1]):
        if signum is not None:
            time.sleep(max(0.0, started + delay - time.monotonic()))
            if process.poll() is None:
                process.send_signal(signum)
    broken, named, outcomes = [], [], []
    for process, (signum, _) in zip(processes, plans):
        _, err = process.communicate(timeout=300)
        text = err.decode(errors="replace")
        reason = next((word for word in ("got", "kept as", "another run", "did not write",
                                         "interrupted") if word in text), "")
        outcomes.append(f"{signal.Signals(signum).name if signum else '-'}:"
                        f"{process.returncode}{'/' + reason if reason else ''}")
        allowed = {0, 1, 2} | ({128 + signum, -signum} if signum else set())
        if "Traceback" in text or process.returncode not in allowed:
            broken.append(f"exit {process.returncode} after {signum}: {text[-300:]}")
        named += NAMED.findall(text)
    stop.set()
    user.join()
    for name, text in written.items():
        if not find_note(root, name, text):
            broken.append(f"{name} is lost")
    if out.exists() and not whole_tokenizer(out):
        broken.append(f"{out} is not a whole tokenizer: {sorted(p.name for p in out.iterdir())}")
    for path in named:
        if "new" in Path(path).name and not whole_tokenizer(Path(path)):
            broken.append(f"{path}, named as holding the new tokenizer, does not")
    for path in [out, *root.glob("tok.*")]:  # notes moved aside: the user tidies up
        for note in path.glob("NOTES-*"):
            note.unlink()
    final = subprocess.run([*COMMAND, str(corpus), "--vocab-size", "270", "--out",
                            str(root / "tok"), "--quiet", "--processes", "1", "--force"],
                           capture_output=True)
    left = [p.name for p in root.iterdir() if ".partial-" in p.name]
    if final.returncode != 0 or left:
        broken.append(f"after the round: exit {final.returncode}, staging left {left}, "
                      f"{final.stderr.decode()[-300:]}")
    return outcomes, broken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    random.seed(args.seed)
    with tempfile.TemporaryDirectory(prefix="stress-saving-") as work:
        corpus = Path(work) / "corpus.txt"
        corpus.write_text(english_prose() * 3, encoding="utf-8")  # about a second to train
        for number in range(1, args.rounds + 1):
            outcomes, broken = one_round(Path(work) / "round", corpus, args.runs)
            verdict = "ok" if not broken else "BROKEN"
            print(f"round {number}: {verdict} ({', '.join(outcomes)})", flush=True)
            for problem in broken:
                print(f"  {problem}")
            if broken:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
