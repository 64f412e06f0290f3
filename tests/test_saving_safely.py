"""Saving over what the user has: links, pipes, devices, permissions, files that appear
while a folder is replaced, and staging folders left by runs that were killed.

The rule behind every test here: no file of the user's is lost, overwritten through the
wrong name, or made readable to more people than before.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bpe_course import Tokenizer
from bpe_course.app.cli import main
from bpe_course.course.data import english_prose
from bpe_course.formats import folder
from bpe_course.formats.folder import OUTPUT_FILES
from bpe_course.safety import files
from bpe_course.safety.files import atomic_write, publish_folder

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX files")


@pytest.fixture(scope="module")
def bytes_only() -> Tokenizer:
    return Tokenizer({i: bytes([i]) for i in range(256)}, [])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(english_prose(20_000), encoding="utf-8")
    return path


def names(where: Path) -> list[str]:
    return sorted(path.name for path in where.iterdir())


def train(corpus: Path, out: Path, *extra: str) -> int:
    return main(["train", str(corpus), "--vocab-size", "270", "--out", str(out), "--quiet",
                 "--processes", "1", *extra])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# Links, pipes and devices -------------------------------------------------------------------


def test_a_symbolic_link_is_written_through_and_stays_a_link(bytes_only, tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    (tmp_path / "link.json").symlink_to("real.json")
    bytes_only.save_hf(tmp_path / "link.json")
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads(real.read_text())["model"]["type"] == "BPE"
    assert names(tmp_path) == ["link.json", "real.json"]


def test_a_dangling_link_gets_its_file_made(bytes_only, tmp_path):
    (tmp_path / "link.json").symlink_to("made.json")
    bytes_only.save_tiktoken(tmp_path / "link.json")
    assert (tmp_path / "link.json").is_symlink() and (tmp_path / "made.json").is_file()


def test_a_named_pipe_is_refused_and_left_as_it_is(bytes_only, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="is a named pipe, not a regular file") as caught:
        bytes_only.save_hf(fifo)
    assert caught.value.filename == str(fifo)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert names(tmp_path) == ["fifo"]  # no temporary file either


@pytest.fixture
def open_elsewhere(tmp_path):
    """Open files for the test to name through /proc: a regular file and a pipe."""
    opened: list[int] = []

    def open_one(kind: str) -> int:
        if kind == "pipe":
            opened.extend(os.pipe())
        else:
            opened.append(os.open(tmp_path / "redirected.txt", os.O_WRONLY | os.O_CREAT))
        return opened[-1]

    yield open_one
    for fd in opened:
        os.close(fd)


@pytest.mark.parametrize(
    "kind", ["device", "link to a device", "link to a pipe", "link to an open file", "/proc"]
)
def test_devices_and_open_files_are_refused(tmp_path, open_elsewhere, kind):
    """As root, saving to /dev/null or to /dev/stdout replaced the system's node, and
    through /dev/stdout redirected to a file, it replaced the file the shell had opened.
    (Every path here is the test's own: the code under test may be the broken one.)"""
    if "device" in kind:
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(tmp_path / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        leads_to = str(tmp_path / "null")
    else:
        leads_to = f"/proc/self/fd/{open_elsewhere('pipe' if 'pipe' in kind else 'file')}"
    path = leads_to
    if kind.startswith("link"):
        path = str(tmp_path / "out.json")
        os.symlink(leads_to, path)
    before = os.stat(path)
    with pytest.raises(OSError) as caught:
        with atomic_write(path) as file:
            file.write("x")
    assert caught.value.filename == path
    assert os.path.samestat(os.stat(path), before)
    if "pipe" not in kind and "device" not in kind:
        assert (tmp_path / "redirected.txt").read_bytes() == b""
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".tmp-")]


def test_a_loop_of_links_is_named(tmp_path):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(OSError) as caught:
        with atomic_write(tmp_path / "a") as file:
            file.write("x")
    assert caught.value.filename == str(tmp_path / "a")


@pytest.mark.parametrize("kind", ["file", "link", "pipe"])
def test_publish_folder_refuses_a_target_that_is_not_a_folder(tmp_path, kind):
    target = tmp_path / "tok"
    (tmp_path / "elsewhere").mkdir()
    if kind == "file":
        target.write_text("mine")
    elif kind == "link":
        target.symlink_to("elsewhere")
    else:
        os.mkfifo(target)
    new = tmp_path / "new"
    new.mkdir()
    (new / "vocab.json").write_text("{}")
    with pytest.raises(OSError, match="not a folder") as caught:
        publish_folder(str(new), str(target))
    assert caught.value.filename == str(target)
    assert names(tmp_path) == ["elsewhere", "new", "tok"]
    assert names(tmp_path / "elsewhere") == []


# Permissions --------------------------------------------------------------------------------


def test_a_private_file_stays_private(bytes_only, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("old")
    path.chmod(0o600)
    bytes_only.save_hf(path)
    assert mode(path) == 0o600
    path.chmod(0o640)
    bytes_only.save(path, tmp_path / "merges.txt")
    assert mode(path) == 0o640


def test_a_new_file_follows_the_umask(bytes_only, tmp_path):
    old = os.umask(0o027)
    try:
        bytes_only.save_hf(tmp_path / "tokenizer.json")
    finally:
        os.umask(old)
    assert mode(tmp_path / "tokenizer.json") == 0o640


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_as_root_a_users_file_keeps_its_owner_and_group(bytes_only, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text("old")
    os.chown(path, 12345, 23456)
    path.chmod(0o640)
    bytes_only.save_hf(path)
    status = path.stat()
    assert (status.st_uid, status.st_gid, mode(path)) == (12345, 23456, 0o640)


def test_a_private_tokenizer_folder_stays_private(corpus, tmp_path):
    out = tmp_path / "tk"
    assert train(corpus, out) == 0
    out.chmod(0o700)
    for path in out.iterdir():
        path.chmod(0o600)
    assert train(corpus, out) == 0
    assert mode(out) == 0o700
    assert {name: mode(out / name) for name in OUTPUT_FILES} == dict.fromkeys(OUTPUT_FILES, 0o600)


def test_a_new_tokenizer_folder_follows_the_umask(corpus, tmp_path):
    old = os.umask(0o027)
    try:
        assert train(corpus, tmp_path / "tk") == 0
    finally:
        os.umask(old)
    assert mode(tmp_path / "tk") == 0o750
    assert {mode(path) for path in (tmp_path / "tk").iterdir()} == {0o640}


# Files that appear in the output folder while it is being replaced --------------------------


def add_notes_while_writing(monkeypatch, out: Path) -> None:
    """Make writing the new tokenizer's files also put a user's NOTES.md into ``out``, as
    a user does in another terminal while the training runs."""
    real_write = folder.write_tokenizer_files

    def write_then_add_notes(tokenizer, where):
        real_write(tokenizer, where)
        (out / "NOTES.md").write_text("my notes")

    monkeypatch.setattr(folder, "write_tokenizer_files", write_then_add_notes)


@pytest.mark.parametrize("existing", ["empty", "tokenizer"])
def test_a_file_added_during_training_is_never_deleted(corpus, tmp_path, capsys, monkeypatch,
                                                       existing):
    out = tmp_path / "eo"
    out.mkdir()
    if existing == "tokenizer":
        assert train(corpus, out) == 0
    before = {name: (out / name).read_bytes() for name in names(out)}
    add_notes_while_writing(monkeypatch, out)
    capsys.readouterr()
    assert train(corpus, out) == 1
    err = capsys.readouterr().err
    assert (out / "NOTES.md").read_text() == "my notes"
    assert {name: (out / name).read_bytes() for name in before} == before  # not replaced
    kept = [name for name in names(tmp_path) if name.startswith("eo.new-")]
    assert len(kept) == 1 and names(tmp_path / kept[0]) == sorted(OUTPUT_FILES)
    assert names(tmp_path) == ["eo", kept[0]]  # no hidden staging folder left
    assert "got 'NOTES.md' while this tokenizer was being trained" in err
    assert f"the new tokenizer is in {tmp_path / kept[0]}" in err


@pytest.mark.parametrize("made", ["empty folder", "file"])
def test_an_output_made_during_training_is_respected(corpus, tmp_path, monkeypatch, made):
    """--out named nothing at the start; then the user made it: an empty folder loses
    nothing by being replaced, a file is kept and the new tokenizer put beside it."""
    out = tmp_path / "eo"
    real_write = folder.write_tokenizer_files

    def write_then_make(tokenizer, where):
        real_write(tokenizer, where)
        out.mkdir() if made == "empty folder" else out.write_text("mine")

    monkeypatch.setattr(folder, "write_tokenizer_files", write_then_make)
    if made == "empty folder":
        assert train(corpus, out) == 0 and names(out) == sorted(OUTPUT_FILES)
        return
    assert train(corpus, out) == 1
    assert out.read_text() == "mine"
    (kept,) = [name for name in names(tmp_path) if name.startswith("eo.new-")]
    assert names(tmp_path / kept) == sorted(OUTPUT_FILES)


def test_with_force_only_the_files_there_at_the_start_are_replaced(corpus, tmp_path,
                                                                    monkeypatch):
    out = tmp_path / "eo"
    out.mkdir()
    (out / "draft.txt").write_text("the user said --force")
    add_notes_while_writing(monkeypatch, out)
    assert train(corpus, out, "--force") == 1
    assert names(out) == ["NOTES.md", "draft.txt"]


def test_a_file_added_during_the_swap_itself_is_kept_with_the_old_folder(corpus, tmp_path,
                                                                         capsys, monkeypatch):
    """The check just before the swap cannot see a file written a microsecond later: that
    one lands in the old folder, which is then kept beside the new one, never deleted."""
    out = tmp_path / "eo"
    assert train(corpus, out) == 0
    real_exchange = files.exchange_paths

    def exchange_then_add_notes(first, second):
        done = real_exchange(first, second)
        Path(first, "NOTES.md").write_text("my notes")  # `first` now holds the old folder
        return done

    monkeypatch.setattr(files, "exchange_paths", exchange_then_add_notes)
    capsys.readouterr()
    assert train(corpus, out, "--vocab-size", "280") == 1
    err = capsys.readouterr().err
    assert json.loads((out / "config.json").read_text())["vocab_size"] == 280
    kept = [name for name in names(tmp_path) if name.startswith("eo.old-")]
    assert len(kept) == 1 and (tmp_path / kept[0] / "NOTES.md").read_text() == "my notes"
    assert names(tmp_path) == ["eo", kept[0]]
    assert f"kept as {tmp_path / kept[0]}; the tokenizer is saved in {out}" in err


def test_a_named_pipe_in_the_output_folder_is_refused_not_waited_on(corpus, tmp_path, capsys):
    out = tmp_path / "eo"
    out.mkdir()
    os.mkfifo(out / "config.json")
    process = subprocess.run(
        [sys.executable, "-m", "bpe_course", "train", str(corpus), "--vocab-size", "270",
         "--out", str(out), "--quiet"], capture_output=True, timeout=120)
    assert process.returncode == 2 and b"files this tool did not write" in process.stderr
    assert stat.S_ISFIFO((out / "config.json").lstat().st_mode)


def test_publish_folder_keeps_what_its_caller_does_not_vouch_for(tmp_path):
    target, new = tmp_path / "tok", tmp_path / "new"
    for where in (target, new):
        where.mkdir()
        (where / "vocab.json").write_text(where.name)
    (target / "NOTES.md").write_text("my notes")
    kept = publish_folder(str(new), str(target), owned={"vocab.json"}.__contains__)
    assert names(target) == ["vocab.json"] and (target / "vocab.json").read_text() == "new"
    assert kept is not None and names(Path(kept)) == ["NOTES.md"]
    assert names(tmp_path) == sorted(["tok", Path(kept).name])


# Staging folders of runs that were killed ------------------------------------------------------


#: Runs ``bpe-course ARGS``; once the tokenizer's files are written into the staging
#: folder, prints "written" and sleeps, to be killed there.
PAUSE_AFTER_WRITING = textwrap.dedent(
    """
    import sys, time
    from bpe_course.app import cli
    from bpe_course.formats import folder

    real_write = folder.write_tokenizer_files
    def write_and_wait(tokenizer, where):
        real_write(tokenizer, where)
        print("written", flush=True)
        time.sleep(60)
    folder.write_tokenizer_files = write_and_wait
    sys.exit(cli.main(sys.argv[1:]))
    """
)


def start_paused(corpus: Path, out: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", PAUSE_AFTER_WRITING, "train", str(corpus), "--vocab-size",
         "270", "--out", str(out), "--quiet", "--processes", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    line = process.stdout.readline()
    assert line == b"written\n", process.stderr.read()
    return process


def staging_folders(where: Path) -> list[str]:
    return [name for name in names(where) if ".partial-" in name]


def test_a_later_run_removes_the_staging_folder_of_a_killed_one(corpus, tmp_path):
    out = tmp_path / "tok"
    process = start_paused(corpus, out)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert len(staging_folders(tmp_path)) == 1  # SIGKILL leaves it: nothing can prevent that
    assert train(corpus, out) == 0
    assert names(tmp_path) == ["tok"]


def test_a_staging_folder_whose_run_lives_is_left_alone(corpus, tmp_path):
    process = start_paused(corpus, tmp_path / "slow")
    try:
        assert train(corpus, tmp_path / "fast") == 0
        assert len(staging_folders(tmp_path)) == 1  # the live run's, still locked
    finally:
        process.send_signal(signal.SIGCONT)
        process.kill()
        process.wait(timeout=60)


def test_a_killed_runs_folder_holding_other_files_is_moved_into_sight(corpus, tmp_path, capsys):
    """Killed after swapping a --force folder out, say: the old folder, with the user's files,
    is in the staging folder. Only our files go; the rest is moved beside the output and
    named in a warning."""
    out = tmp_path / "tok"
    process = start_paused(corpus, out)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    (stale,) = staging_folders(tmp_path)
    (tmp_path / stale / "new" / "draft.txt").write_text("the user's")
    capsys.readouterr()
    assert train(corpus, out) == 0
    err = capsys.readouterr().err
    kept = [name for name in names(tmp_path) if name.startswith("tok.old-")]
    assert len(kept) == 1 and names(tmp_path / kept[0]) == ["draft.txt"]
    assert names(tmp_path) == ["tok", kept[0]]
    assert f"warning: {tmp_path / kept[0]}: left by a run that was killed" in err


def test_hidden_folders_that_are_not_ours_are_not_touched(tmp_path):
    from bpe_course.safety import staging

    lookalike = tmp_path / ".tok.partial-abcd1234"
    lookalike.mkdir()
    (lookalike / "vocab.json").write_text("someone else's")
    (lookalike / "lock").write_text("not our marker")
    no_lock = tmp_path / ".tok.partial-wxyz5678"
    no_lock.mkdir()
    (no_lock / "vocab.json").write_text("someone else's")
    piped = tmp_path / ".tok.partial-pipe0000"
    piped.mkdir()
    os.mkfifo(piped / "lock")  # reading it would wait for ever
    assert staging.remove_stale(str(tmp_path), lambda name: True) == []
    assert (lookalike / "vocab.json").exists() and (no_lock / "vocab.json").exists()
    assert stat.S_ISFIFO((piped / "lock").lstat().st_mode)
