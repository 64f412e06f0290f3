"""Check that live presenting with RISE works offline: ``make check-rise``.

RISE (the ``jupyterlab-rise`` package) shows a running notebook as reveal.js slides at
``/rise/NOTEBOOK.ipynb`` of a Jupyter server, with cells that still execute. This check
starts JupyterLab on the loopback address with a copy of the notebook (so nothing the
browser does can touch the real one), opens that page in headless Chromium with no
network, moves through a few slides, runs a code cell with Shift+Enter, and fails when the
slides do not appear, the cell does not run, or the page requests anything that is not on
this machine.

Then it walks every slide to the end and measures each one that holds a token picture
(``show_tokens``) the way the offline decks are measured (``DRAWN_JS`` in
:mod:`tools.check_slides`): byte boxes in one row under their characters, hex bytes at a
readable size, right-to-left words in order, and no navigation arrow over text. JupyterLab
shows the stored HTML through its sanitizer, which drops some CSS, so a picture can hold in
the deck and fall apart here. With ``--screenshots``, each of those slides is saved.

Usage: ``python -m tools.check_rise [NOTEBOOK ...] [--screenshots DIR]``
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tools.build_slides import NOTEBOOKS, SLIDE_HEIGHT, SLIDE_WIDTH
from tools.check_slides import DRAWN_JS, drawn_issues
from tools.chromium import ChromiumError, Page, launch

LOOPBACK = "127.0.0.1"
DEFAULT_NOTEBOOK = NOTEBOOKS / "02_naive_bpe.ipynb"

PROMPTS_JS = (
    "Array.from(document.querySelectorAll('.reveal section.present .jp-CodeCell'))"
    ".map(cell => cell.querySelector('.jp-InputPrompt').innerText.trim())"
)


#: In RISE, the smallest hex label a token picture may use, as a share of its text's size.
RISE_TEXT_SHARE = 0.8

#: The slide that is showing, as reveal.js marks it (RISE nests sections like the decks).
PRESENT_JS = ("(() => { const all = document.querySelectorAll('.reveal .slides section.present'); "
              "return all[all.length - 1]; })()")

#: Measure the slide that is showing with the decks' ``measureDrawn``.
MEASURE_PRESENT_JS = DRAWN_JS + f"""
(() => {{
  const slide = {PRESENT_JS};
  const box = document.querySelector('.reveal .slides');
  const scale = box.getBoundingClientRect().width / box.offsetWidth;
  const where = Array.from(document.querySelectorAll('.reveal .slides section.present'))
    .map(s => Array.from(s.parentElement.children).filter(c => c.tagName === 'SECTION')
    .indexOf(s)).join('/');
  const shown = slide.querySelectorAll('.fragment.visible').length;
  const picture = slide.querySelector('.bpe-tokens');
  const textPx = picture ? parseFloat(getComputedStyle(picture).fontSize) * scale : 0;
  return {{where, step: where + '+' + shown, textPx,
           pictures: slide.querySelectorAll('.bpe-tokens').length,
           drawn: measureDrawn(slide, scale, box.offsetWidth, box.offsetHeight)}};
}})()
"""


@dataclass
class RiseReport:
    notebook: Path
    slides: int = 0
    ran_cell: bool = False
    problems: list[str] = field(default_factory=list)
    #: ``(slide address, what DRAWN_JS measured)`` for each slide with a token picture.
    pictures: list[tuple[str, dict]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.slides > 1 and self.ran_cell and not self.problems


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


#: Attempts at starting JupyterLab: a port found free can be taken by another process (a test
#: running beside this one) before the server binds it; the server then stops, and we retry.
SERVER_ATTEMPTS = 3


@contextmanager
def jupyter_server(folder: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab serving ``folder`` on the loopback address; yields its URL and token.

    The server is told not to move to another port (``port_retries=0``): on a port taken in
    the meantime it stops, saying so, instead of answering somewhere this function does not
    look, and a new port is tried."""
    for attempt in range(1, SERVER_ATTEMPTS + 1):
        port, token = _free_port(), secrets.token_hex(16)
        command = [
            sys.executable, "-m", "jupyterlab", "--no-browser",
            f"--ServerApp.ip={LOOPBACK}", f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
        ]
        if os.getuid() == 0:
            command.append("--allow-root")
        log = tempfile.TemporaryFile()
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        base = f"http://{LOOPBACK}:{port}"
        try:
            tail = _wait_for_server(server, log, f"{base}/api/status?token={token}")
            if tail is None:
                yield base, token
                return
            if "already in use" not in tail or attempt == SERVER_ATTEMPTS:
                raise ChromiumError(f"JupyterLab did not start:\n{tail}")
        finally:
            _stop_server(server)
            log.close()


def _wait_for_server(server: subprocess.Popen, log, status_url: str) -> str | None:
    """None once the server answers; else the end of its log, when it stopped or took 90 s."""
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(status_url, timeout=2):
                return None
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                return log.read().decode(errors="replace")[-1500:]
            time.sleep(0.5)


def _stop_server(server: subprocess.Popen) -> None:
    """Stop the server and the kernels it started (its process group)."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def _key(page: Page, key: str, code: int, modifiers: int = 0) -> None:
    for kind in ("keyDown", "keyUp"):
        page.send("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key,
                                             "windowsVirtualKeyCode": code,
                                             "modifiers": modifiers})


def _click(page: Page, x: float, y: float) -> None:
    for kind in ("mousePressed", "mouseReleased"):
        page.send("Input.dispatchMouseEvent",
                  {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})


def check_rise(notebook: Path, screenshots: Path | None = None,
               run_a_cell: bool = True) -> RiseReport:
    """Present ``notebook`` with RISE in headless Chromium and report what worked
    (``run_a_cell=False``: only walk the slides, without running a cell in a new kernel)."""
    report = RiseReport(notebook)
    with tempfile.TemporaryDirectory(prefix="bpe-course-rise-") as folder:
        for companion in (notebook, notebook.with_name("rise.css")):  # RISE loads rise.css
            if companion.is_file():
                shutil.copy2(companion, Path(folder) / companion.name)
        with jupyter_server(Path(folder)) as (base, token), launch() as browser:
            page = browser.new_page(SLIDE_WIDTH, SLIDE_HEIGHT)
            page.goto(f"{base}/rise/{notebook.name}?token={token}",
                      ready="document.querySelector('.reveal .slides section.present')",
                      timeout=120)
            time.sleep(2)  # RISE lays the notebook out as slides after the page loads
            report.slides = page.evaluate(
                "document.querySelectorAll('.reveal .slides section section, "
                ".reveal .slides > section:not(:has(section))').length")
            if screenshots:
                page.screenshot(screenshots / f"rise-{notebook.stem}-first.png")
            if run_a_cell:
                run_first_code_cell(page, report, screenshots)
            walk_pictures(page, report, screenshots)
            off_machine = [url for url in page.requested_urls()
                           if not url.startswith((base, f"ws://{LOOPBACK}", "blob:", "about:"))]
            report.problems += [f"requested from the network: {url}" for url in off_machine]
            report.problems += page.errors()
    return report


def run_first_code_cell(page: Page, report: RiseReport, screenshots: Path | None) -> None:
    """Walk right to the first slide with a code cell and run it with Shift+Enter, as a
    presenter would: the cell must run in a new kernel."""
    for _ in range(12):
        if page.evaluate(PROMPTS_JS):
            break
        _key(page, "ArrowRight", 39)
        time.sleep(0.5)
    before = page.evaluate(PROMPTS_JS)
    if not before:
        report.problems.append("no slide with a code cell among the first 12")
        return
    x, y = page.evaluate(
        "(() => { const r = document.querySelector('.reveal section.present "
        ".jp-CodeCell .jp-InputArea-editor').getBoundingClientRect(); "
        "return [r.x + 40, r.y + 8]; })()")
    _click(page, x, y)
    time.sleep(0.5)
    _key(page, "Enter", 13, modifiers=8)  # Shift+Enter
    # The prompt turns to [*] while the cell runs, then to [1] in a new kernel.
    deadline, busy, after = time.monotonic() + 60, False, before
    while time.monotonic() < deadline:
        after = page.evaluate(PROMPTS_JS)
        busy = busy or after[0] == "[*]:"
        if after[0] != "[*]:" and (busy or after[0] != before[0]):
            break
        time.sleep(0.2)
    report.ran_cell = after[0] == "[1]:"
    if not report.ran_cell:
        report.problems.append(f"Shift+Enter did not run the cell ({before[0]!r} "
                               f"-> {after[0]!r})")
    if screenshots:
        page.screenshot(screenshots / f"rise-{report.notebook.stem}-ran-a-cell.png")


def walk_pictures(page: Page, report: RiseReport, screenshots: Path | None,
                  limit: int = 600) -> None:
    """Press Space (reveal's "next") to the last slide; measure each token picture's slide."""
    _key(page, "Escape", 27)  # leave the cell editor, so keys move the slides again
    _key(page, "Home", 36)
    time.sleep(0.5)
    steps: set[str] = set()
    seen: set[str] = set()
    for _ in range(limit):
        found = page.evaluate(MEASURE_PRESENT_JS)
        if found["step"] in steps:
            break  # Space on the last slide, last fragment, stays there
        steps.add(found["step"])
        if found["pictures"] and found["where"] not in seen:
            report.pictures.append((found["where"], found["drawn"]))
            # RISE shows JupyterLab's own sizes (the presenter zooms the browser): hex bytes
            # must read nearly as large as the picture's text, not a fixed number of pixels.
            least = RISE_TEXT_SHARE * found["textPx"] + 1  # drawn_issues allows 1 px less
            for issue in drawn_issues(found["drawn"], least):
                report.problems.append(f"slide {found['where']}: {issue}")
            if screenshots:
                name = found["where"].replace("/", "-")
                page.evaluate(f"{PRESENT_JS}.scrollIntoView()")
                page.screenshot(screenshots / f"rise-{report.notebook.stem}-{name}.png")
        seen.add(found["where"])
        _key(page, " ", 32)
        time.sleep(0.35)
    report.slides = max(report.slides, len(seen))


def notebooks_with_pictures(folder: Path = NOTEBOOKS) -> list[Path]:
    """The notebooks whose stored outputs hold a token picture (``show_tokens``)."""
    return [path for path in sorted(folder.glob("[0-9][0-9]_*.ipynb"))
            if 'class=\\"bpe-tokens\\"' in path.read_text(encoding="utf-8")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, metavar="NOTEBOOK",
                        help=f"default: {DEFAULT_NOTEBOOK.name} and every notebook with a "
                             "token picture")
    parser.add_argument("--screenshots", type=Path, metavar="DIR",
                        help="save the first slide, the slide with the cell it ran and "
                             "every slide with a token picture")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or [DEFAULT_NOTEBOOK, *(
        path for path in notebooks_with_pictures() if path != DEFAULT_NOTEBOOK)]
    for notebook in notebooks:
        if not notebook.is_file():
            parser.error(f"{notebook}: no such notebook")
    failed = False
    for notebook in notebooks:
        try:
            report = check_rise(notebook, args.screenshots)
        except ChromiumError as error:
            print(f"check_rise: {error}", file=sys.stderr)
            return 2
        print(f"{report.notebook.name}: RISE showed {report.slides} slides; "
              f"Shift+Enter ran a cell: {'yes' if report.ran_cell else 'no'}; "
              f"{len(report.pictures)} slides with a token picture")
        for where, drawn in report.pictures:
            print(f"  slide {where}: {drawn['groups']} shared groups, {drawn['stacked']} fell "
                  f"apart, hex {drawn['hexPx'] or 0:.1f} px")
        for problem in report.problems:
            print(f"  PROBLEM: {problem}")
        failed = failed or not report.ok
    print("FAIL" if failed else "RISE works offline")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
