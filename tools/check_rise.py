"""Check that live presenting with RISE works offline: ``make check-rise``.

RISE (the ``jupyterlab-rise`` package) shows a running notebook as reveal.js slides at
``/rise/NOTEBOOK.ipynb`` of a Jupyter server, with cells that still execute. This check
starts JupyterLab on the loopback address with a copy of the notebook (so nothing the
browser does can touch the real one), opens that page in headless Chromium with no
network, moves through a few slides, runs a code cell with Shift+Enter, and fails when the
slides do not appear, the cell does not run, or the page requests anything that is not on
this machine.

Usage: ``python -m tools.check_rise [NOTEBOOK] [--screenshots DIR]``
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
from tools.chromium import ChromiumError, Page, launch

LOOPBACK = "127.0.0.1"
DEFAULT_NOTEBOOK = NOTEBOOKS / "02_naive_bpe.ipynb"

PROMPTS_JS = (
    "Array.from(document.querySelectorAll('.reveal section.present .jp-CodeCell'))"
    ".map(cell => cell.querySelector('.jp-InputPrompt').innerText.trim())"
)


@dataclass
class RiseReport:
    notebook: Path
    slides: int = 0
    ran_cell: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.slides > 1 and self.ran_cell and not self.problems


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


@contextmanager
def jupyter_server(folder: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab serving ``folder`` on the loopback address; yields its URL and token."""
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        f"--ServerApp.ip={LOOPBACK}", f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={folder}",
    ]
    if os.getuid() == 0:
        command.append("--allow-root")
    log = tempfile.TemporaryFile()
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    base = f"http://{LOOPBACK}:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    tail = log.read().decode(errors="replace")[-1500:]
                    raise ChromiumError(f"JupyterLab did not start:\n{tail}") from None
                time.sleep(0.5)
        yield base, token
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        log.close()


def _key(page: Page, key: str, code: int, modifiers: int = 0) -> None:
    for kind in ("keyDown", "keyUp"):
        page.send("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": key,
                                             "windowsVirtualKeyCode": code,
                                             "modifiers": modifiers})


def _click(page: Page, x: float, y: float) -> None:
    for kind in ("mousePressed", "mouseReleased"):
        page.send("Input.dispatchMouseEvent",
                  {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})


def check_rise(notebook: Path, screenshots: Path | None = None) -> RiseReport:
    """Present ``notebook`` with RISE in headless Chromium and report what worked."""
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
            # Walk right until a slide with a code cell, then run it with Shift+Enter.
            for _ in range(12):
                if page.evaluate(PROMPTS_JS):
                    break
                _key(page, "ArrowRight", 39)
                time.sleep(0.5)
            before = page.evaluate(PROMPTS_JS)
            if not before:
                report.problems.append("no slide with a code cell among the first 12")
            else:
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
                    page.screenshot(screenshots / f"rise-{notebook.stem}-ran-a-cell.png")
            off_machine = [url for url in page.requested_urls()
                           if not url.startswith((base, f"ws://{LOOPBACK}", "blob:", "about:"))]
            report.problems += [f"requested from the network: {url}" for url in off_machine]
            report.problems += page.errors()
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", nargs="?", type=Path, default=DEFAULT_NOTEBOOK)
    parser.add_argument("--screenshots", type=Path, metavar="DIR",
                        help="save the first slide and the slide with the cell it ran")
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        parser.error(f"{args.notebook}: no such notebook")
    try:
        report = check_rise(args.notebook, args.screenshots)
    except ChromiumError as error:
        print(f"check_rise: {error}", file=sys.stderr)
        return 2
    print(f"{report.notebook.name}: RISE showed {report.slides} slides; "
          f"Shift+Enter ran a cell: {'yes' if report.ran_cell else 'no'}")
    for problem in report.problems:
        print(f"  PROBLEM: {problem}")
    print("RISE works offline" if report.ok else "FAIL")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
