"""A tokenizer folder: everything ``bpe-course train`` writes, saved and loaded as one unit.

One trained tokenizer is several files: GPT-2's ``vocab.json`` and ``merges.txt``, Hugging
Face's ``tokenizer.json``, tiktoken's ``tokenizer.tiktoken``, and ``config.json`` with what
the others leave out (the split pattern and the special tokens). They only make sense
together, so they are saved together: written into a hidden staging folder, then swapped
in whole (:func:`bpe_course.safety.files.publish_folder`). These rules protect what the user has:

- A folder that is not one of ours and is not empty is never replaced without ``force``.
- Only what the folder held when the work started is ever replaced: a file that appears in
  it during training is seen just before the swap, and the swap is refused (the new
  tokenizer is left beside it, named in the message); one that appears during the swap
  itself keeps the old folder, moved beside the new one and named.
- A reader sees the old tokenizer or the new one, never a mix of files from both.
- Two trainings into the same folder at once: the one that finishes second sees that the
  folder changed after it started, and refuses to overwrite the other's result.
- The new folder and files keep the old ones' permissions, so a private tokenizer stays
  private; a staging folder left by a killed run is removed by the next save beside it
  (:mod:`bpe_course.safety.staging`).

Loading checks that the files belong together (``config.json`` records the vocabulary size
and the number of merges), and reads the folder again if a training swapped a new one in
while it was being read.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from ..base import check_special_tokens
from ..pretokens import NAMED_PATTERNS
from ..safety.files import is_temporary_of, kind_of, publish_folder, set_aside
from ..safety.interrupts import stop_signals_deferred
from ..safety.patterns import check_split_pattern
from ..safety.quoting import quote
from ..safety.reading import check_regular, read_bytes
from ..safety.staging import Staging, folder_locked, start_staging
from ..tokenizer import Tokenizer

#: The files a tokenizer folder holds.
OUTPUT_FILES = ("vocab.json", "merges.txt", "tokenizer.json", "tokenizer.tiktoken", "config.json")

#: ``config.json``'s ``format`` value, which marks a folder as one this package wrote.
FOLDER_FORMAT = "bpe-course tokenizer"


class FolderError(ValueError):
    """A tokenizer folder cannot be written or read; the message names the folder and why."""


def pattern_name(pattern: str) -> str | None:
    """The short name of a known split pattern (``"gpt2"``, ``"gpt4"``, ``"o200k"``), else None."""
    return next((name for name, known in NAMED_PATTERNS.items() if known == pattern), None)


def write_tokenizer_files(tokenizer: Tokenizer, folder: str) -> None:
    """Write every file of a tokenizer folder into ``folder``, which must exist."""
    tokenizer.save(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"))
    tokenizer.save_hf(os.path.join(folder, "tokenizer.json"))
    tokenizer.save_tiktoken(os.path.join(folder, "tokenizer.tiktoken"))
    config = {
        "format": FOLDER_FORMAT,
        "pattern": pattern_name(tokenizer.pattern),
        "pattern_regex": tokenizer.pattern,
        "special_tokens": tokenizer.special_tokens,
        "vocab_size": tokenizer.vocab_size,
        "merges": len(tokenizer.merges),
    }
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as file:
        json.dump(config, file, ensure_ascii=False, indent=2)
        file.write("\n")


def holds_tokenizer_files(folder: str) -> bool:
    """Is ``folder`` a folder that holds any of a tokenizer folder's files? An unreadable
    folder is taken to, so that loading it says why it cannot be read."""
    if not os.path.isdir(folder):
        return False
    try:
        return not set(os.listdir(folder)).isdisjoint(OUTPUT_FILES)
    except OSError:
        return True


def is_tokenizer_folder(folder: str) -> bool:
    """Does ``folder`` hold only a tokenizer this package wrote (so replacing it loses nothing)?"""
    path = os.path.join(folder, "config.json")
    if not os.path.isfile(path):  # a named pipe there would make open() wait for ever
        return False
    try:
        names = set(os.listdir(folder))
        config = json.loads(read_bytes(os.path.join(folder, "config.json"), "config.json"))
    except (OSError, ValueError, RecursionError):
        return False
    return (
        isinstance(config, dict)
        and config.get("format") == FOLDER_FORMAT
        and names <= set(OUTPUT_FILES)
    )


@dataclass
class OutputClaim:
    """What stood at the output folder when the work started (its inode, or None, and the
    names in it: all that saving may replace), and whether the new tokenizer has been put
    there (``saved``), for messages after Ctrl-C."""

    target: str
    inode: int | None
    saved: bool = False
    names: frozenset[str] = frozenset()


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), folder]) == folder


def claim_output_folder(
    out: str, force: bool = False, keep: Sequence[str] = ()
) -> OutputClaim:
    """Check, before any work, that a tokenizer can be saved at ``out``; remember what is there.

    Raises :class:`FolderError` when ``out`` is empty text, is a file, lies under a file
    or in a folder that cannot be written, or is a non-empty folder that is not a tokenizer
    folder of ours (unless ``force``). Even with ``force``, a folder holding the current
    directory or any path in ``keep`` (the corpus files) is never replaced: saving swaps the
    whole folder, and they would go with it. A symbolic link is followed to its folder.
    """
    if not isinstance(out, str) or not out.strip():
        raise FolderError("the output folder must be a non-empty path")
    target = os.path.realpath(out)
    for path in [os.getcwd(), *keep]:
        if _inside(path, target):
            raise FolderError(
                f"{out!r} holds {path!r}, which replacing the folder would delete; "
                "save the tokenizer in a folder of its own"
            )
    if os.path.exists(target) and not os.path.isdir(target):
        raise FolderError(f"{out!r} is a file, not a folder")
    if os.path.ismount(target):
        raise FolderError(
            f"{out!r} is a mount point, which cannot be replaced as a whole (saving swaps "
            "the folder); save into a new folder inside it"
        )
    parent = os.path.dirname(target)
    existing = parent
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise FolderError(f"cannot create {out!r}: {existing!r} is a file, not a folder")
    try:  # the only sure test of "can I create things here" (root ignores permission bits)
        os.rmdir(tempfile.mkdtemp(prefix=".bpe-course-check-", dir=existing))
    except OSError as error:
        raise FolderError(f"cannot write to {existing!r} ({error.strerror})") from None
    if os.path.isdir(target) and os.listdir(target) and not is_tokenizer_folder(target):
        if not force:
            raise FolderError(
                f"{out!r} is a folder with files this tool did not write; choose an empty or "
                "new folder, or pass force (--force) to replace the folder and everything in it"
            )
    names = frozenset(os.listdir(target)) if os.path.isdir(target) else frozenset()
    return OutputClaim(target, _inode(target), names=names)


def save_tokenizer_folder(tokenizer: Tokenizer, claim: OutputClaim) -> None:
    """Write all files of ``tokenizer`` and put them at ``claim.target`` in one step.

    Raises :class:`FolderError`, leaving the folder as it was, when something else was
    saved there since the claim was made (another training finished first), or when files
    that were not there at the claim have appeared in it (the new tokenizer is then left
    beside it, and the message says where); and an ``OSError`` naming the folder when the
    disk is full or the folder cannot be written. Staging folders that killed runs left
    beside it are removed first (:mod:`bpe_course.safety.staging`). A stop signal during
    the swap takes effect once it is done and ``claim.saved`` is set, so the caller can say
    truthfully whether the tokenizer was saved.
    """
    parent = os.path.dirname(claim.target)
    try:
        os.makedirs(parent, exist_ok=True)
        staging, kept = start_staging(claim.target, _ours)
    except OSError as error:
        raise _cannot_save(claim, error) from None
    for path in kept:
        warnings.warn(f"{path}: left by a run that was killed while saving, and holds files "
                      "this tool did not write; it was kept, look through it", stacklevel=2)
    try:
        write_tokenizer_files(tokenizer, staging.new)
        with folder_locked(parent), stop_signals_deferred():
            _check_unchanged(claim, staging)
            kept_old = publish_folder(staging.new, claim.target, owned=claim.names.__contains__,
                                      aside=staging.old)
            claim.saved = True
        if kept_old is not None:
            raise FolderError(
                f"files appeared in {claim.target} while it was being replaced; the folder "
                f"that holds them is kept as {kept_old}"
            )
    except OSError as error:
        if claim.saved:
            raise
        raise _cannot_save(claim, error) from None
    finally:
        staging.close(discard_new=not claim.saved)


def _ours(name: str) -> bool:
    """Is ``name`` a file that saving a tokenizer folder writes (or its temporary file)?"""
    return name in OUTPUT_FILES or is_temporary_of(name, OUTPUT_FILES)


def _check_unchanged(claim: OutputClaim, staging: Staging) -> None:
    """Refuse to replace ``claim.target`` if it is not what was claimed: another run saved
    there, or it holds names it did not hold then (someone's notes), or it is no longer a
    folder. But for the first case, the new tokenizer is kept, moved beside the folder
    under a name the message gives."""
    try:
        status = os.lstat(claim.target)
    except FileNotFoundError:  # nothing there (any more): nothing to lose
        return
    same = status.st_ino == claim.inode
    if not same and is_tokenizer_folder(claim.target):
        raise FolderError(
            f"{claim.target} changed while this tokenizer was being trained (another "
            "run saved there first); this result was not saved, the other one is kept"
        )
    if not stat.S_ISDIR(status.st_mode):
        what = f"became {kind_of(status.st_mode)}"
    else:
        added = sorted(set(os.listdir(claim.target)) - (claim.names if same else set()))
        if not added:
            return
        more = f" and {len(added) - 3} more" if len(added) > 3 else ""
        what = f"got {', '.join(map(repr, added[:3]))}{more}"
    where = set_aside(staging.new, claim.target, "new")
    kept = f"the new tokenizer is in {where}" if where != staging.new else (
        "the new tokenizer could not be kept beside it either, so it was not saved")
    raise FolderError(
        f"{claim.target} {what} while this tokenizer was being trained, so it was not "
        f"replaced; {kept}"
    )


def _cannot_save(claim: OutputClaim, error: OSError) -> OSError:
    reason = error.strerror or str(error)
    return OSError(
        f"cannot save the tokenizer in {claim.target}: {reason}; the folder was left as it was"
    )


def save_tokenizer(tokenizer: Tokenizer, out: str, *, force: bool = False) -> None:
    """Save ``tokenizer`` as a folder at ``out`` (the one-call form of claim + save)."""
    save_tokenizer_folder(tokenizer, claim_output_folder(out, force=force))


#: How often a folder that keeps being replaced while it is read is read again.
READ_ATTEMPTS = 5


def _read_config(folder: str) -> dict:
    path = os.path.join(folder, "config.json")
    data = read_bytes(path, "config.json")
    try:
        config = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError) as error:  # bad JSON, bad UTF-8, absurd nesting
        raise FolderError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(config, dict):
        raise FolderError(f"{path}: expected a JSON object")
    return config


def _config_pattern(config: dict, path: str) -> str:
    """The split pattern ``config.json`` asks for, checked (default: GPT-2's)."""
    name, regex = config.get("pattern"), config.get("pattern_regex")
    if name is not None and (not isinstance(name, str) or name not in NAMED_PATTERNS):
        known = ", ".join(NAMED_PATTERNS)
        raise FolderError(f"{path}: unknown pattern {quote(name)} (known: {known})")
    if regex is None:
        return NAMED_PATTERNS[name or "gpt2"]
    if not isinstance(regex, str):
        raise FolderError(f"{path}: pattern_regex must be a string")
    if name is not None and NAMED_PATTERNS[name] != regex:
        raise FolderError(
            f"{path}: pattern {name!r} and pattern_regex disagree; keep only the one you mean"
        )
    try:
        check_split_pattern(regex)  # no capture groups, no empty pieces
    except ValueError as error:
        raise FolderError(f"{path}: pattern_regex: {error}") from None
    return regex


def _config_specials(config: dict, path: str) -> list[str]:
    specials = config.get("special_tokens", {})
    if isinstance(specials, dict):
        specials = list(specials)
    if not isinstance(specials, list) or not all(isinstance(t, str) for t in specials):
        raise FolderError(f"{path}: special_tokens must be a list of strings")
    try:
        return check_special_tokens(specials)
    except ValueError as error:
        raise FolderError(f"{path}: {error}") from None


def _check_counts(tokenizer: Tokenizer, config: dict, folder: str, path: str) -> None:
    """The sizes ``config.json`` records must be those of vocab.json and merges.txt: files
    copied in from another tokenizer would otherwise load silently and give wrong ids."""
    size, merges = config.get("vocab_size"), config.get("merges")
    for key, value in (("vocab_size", size), ("merges", merges)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise FolderError(
                f"{path}: {key} must be a whole number, not {type(value).__name__} "
                f"{quote(value)}"
            )
    if size is not None and size != tokenizer.vocab_size:
        raise FolderError(
            f"{path}: says vocab_size {size!r}, but {folder} holds {tokenizer.vocab_size} "
            "tokens; its files come from different tokenizers"
        )
    if merges is not None and merges != len(tokenizer.merges):
        raise FolderError(
            f"{path}: says {merges!r} merges, but merges.txt in {folder} has "
            f"{len(tokenizer.merges)}; its files come from different tokenizers"
        )
    wanted = config.get("special_tokens")
    if isinstance(wanted, dict) and wanted != tokenizer.special_tokens:
        raise FolderError(
            f"{path}: special token ids {quote(wanted)} do not match vocab.json "
            f"({quote(tokenizer.special_tokens)})"
        )


def _load_once(folder: str) -> Tokenizer:
    names = ("vocab.json", "merges.txt", "config.json")
    try:
        present = set(os.listdir(folder))
    except OSError as error:  # permission denied, most often: say so, not "it has no files"
        raise FolderError(f"cannot read the folder {folder}: {error.strerror or error}") from None
    missing = [name for name in names if name not in present]
    if missing:
        raise FolderError(
            f"{folder} has no {' or '.join(missing)}; a tokenizer folder holds vocab.json, "
            "merges.txt and config.json (the split pattern and special tokens) as written "
            "by 'bpe-course train'"
        )
    vocab_path, merges_path, config_path = (os.path.join(folder, name) for name in names)
    for name, path in zip(names, (vocab_path, merges_path, config_path)):
        check_regular(path, name)  # before any is read: a FIFO or a device is named as such
    config = _read_config(folder)
    pattern = _config_pattern(config, config_path)
    specials = _config_specials(config, config_path)
    try:
        tokenizer = Tokenizer.from_files(vocab_path, merges_path, specials, pattern)
    except ValueError as error:
        if folder in str(error):
            raise
        raise FolderError(f"{vocab_path}: {error}") from None
    _check_counts(tokenizer, config, folder, config_path)
    return tokenizer


def load_tokenizer_folder(folder: str) -> Tokenizer:
    """Load a folder written by :func:`save_tokenizer` (or ``bpe-course train``).

    A training may swap a new tokenizer into the folder while it is being read; the folder's
    inode tells, and the folder is then read again, so the result is one tokenizer, never
    the old config with the new vocabulary.
    """
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        raise FolderError(f"{folder!r} is not a folder")
    for attempt in range(READ_ATTEMPTS):
        before = _inode(folder)
        try:
            tokenizer = _load_once(folder)
        except (ValueError, OSError):
            if _inode(folder) == before:
                raise
        else:
            if _inode(folder) == before:
                return tokenizer
        time.sleep(0.01 * (attempt + 1))  # the other process is between two renames
    raise FolderError(f"{folder} kept changing while it was read; try again when no training "
                      "saves there")
