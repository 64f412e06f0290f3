"""Check that every slide of every deck fits: ``make check-slides``.

Each deck is opened from a ``file://`` URL in headless Chromium with no network (see
:mod:`tools.chromium`), in a 1280 x 720 window, the deck's own size. The checker then walks
every slide and every fragment with reveal.js's own API and measures:

- **height**: the slide's content height against the deck's 720 px. reveal.js centres a
  slide that fits; a taller one runs off the bottom, where nobody in the room can see it.
- **width**: how far code or output reaches past its box (a scroll bar on a slide hides
  the end of the line) or past the slide's right edge.

It also checks that the deck really became slides (reveal.js ready, the page no taller than
the window), that nothing was requested from the network, and that no script failed.
It prints one table per deck and exits with 1 when any slide overflows.

Usage: ``python -m tools.check_slides [DECK ...] [--screenshots DIR]``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tools.build_slides import DEFAULT_OUT, SLIDE_HEIGHT, SLIDE_WIDTH
from tools.chromium import ChromiumError, Page, launch

#: JavaScript run in the deck: walk every slide and fragment, measure, return a list.
MEASURE_JS = r"""
(async () => {
  const modules = Object.entries(require.s.contexts._.defined);
  const Reveal = modules.find(([name]) => name.endsWith('/dist/reveal.js'))[1];
  Reveal.configure({transition: 'none', backgroundTransition: 'none'});
  const {width, height} = Reveal.getConfig();
  const frame = () => new Promise(ok => requestAnimationFrame(() => setTimeout(ok, 0)));
  const slidesBox = document.querySelector('.reveal .slides');
  const rows = [];
  const stacks = Reveal.getHorizontalSlides();
  for (let h = 0; h < stacks.length; h++) {
    const count = stacks[h].querySelectorAll(':scope > section').length || 1;
    for (let v = 0; v < count; v++) {
      Reveal.slide(h, v, -1);
      await frame();
      const slide = Reveal.getCurrentSlide();
      const fragments = slide.querySelectorAll('.fragment').length;
      let tallest = 0, wide = 0, reached = 0;
      for (let f = -1; f < fragments; f++) {
        Reveal.slide(h, v, f);
        await frame();
        const at = Reveal.getIndices();
        if (f >= 0 && at.f === f) reached += 1;
        tallest = Math.max(tallest, slide.scrollHeight);
        const scale = slidesBox.getBoundingClientRect().width / width;
        const right = slide.getBoundingClientRect().right;
        for (const el of slide.querySelectorAll('pre, table, img, svg, .jp-OutputArea-output')) {
          if (el.closest('.fragment:not(.visible)')) continue;
          const rect = el.getBoundingClientRect();
          wide = Math.max(wide, el.scrollWidth - el.clientWidth, (rect.right - right) / scale);
        }
      }
      const heading = slide.querySelector('h1, h2, h3, h4');
      const text = (heading ? heading.textContent : slide.innerText).trim().split('\n')[0];
      rows.push({h, v, fragments, reached, height: tallest, wide: Math.round(wide),
                 label: text.replace(/\u00b6$/, '').slice(0, 60)});
    }
  }
  Reveal.slide(0, 0, -1);
  await frame();
  return {width, height, rows,
          pageHeight: document.documentElement.scrollHeight,
          windowHeight: window.innerHeight};
})()
"""

READY_JS = "document.querySelector('.reveal.ready')"


@dataclass
class SlideFit:
    """One slide's measurements, in the deck's CSS pixels."""

    h: int
    v: int
    fragments: int
    fragments_reached: int
    height: int
    overflow_x: int
    label: str
    limit: int

    @property
    def where(self) -> str:
        """The slide's address in the deck's URL (open ``deck.html#/h/v``)."""
        return f"#/{self.h}/{self.v}"

    @property
    def overflow_y(self) -> int:
        return max(0, self.height - self.limit)

    @property
    def fits(self) -> bool:
        return self.overflow_y == 0 and self.overflow_x <= 0


@dataclass
class DeckReport:
    """Everything the checker found in one deck."""

    deck: Path
    slides: list[SlideFit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def overflowing(self) -> list[SlideFit]:
        return [slide for slide in self.slides if not slide.fits]

    @property
    def ok(self) -> bool:
        return not self.problems and not self.overflowing

    def table(self) -> str:
        """The per-slide table and a summary line."""
        header = f"{'slide':<9} {'frags':>5} {'height':>6} {'over_y':>6} {'over_x':>6}"
        lines = [f"{self.deck.name}: {len(self.slides)} slides, "
                 f"{sum(s.fragments for s in self.slides)} fragments",
                 f"  {header}  first line"]
        for slide in self.slides:
            mark = "" if slide.fits else "  <-- overflows"
            lines.append(
                f"  {slide.where:<9} {slide.fragments:>5} {slide.height:>6} "
                f"{slide.overflow_y or '.':>6} {max(slide.overflow_x, 0) or '.':>6}  "
                f"{slide.label}{mark}"
            )
        if self.slides:
            tallest = max(self.slides, key=lambda s: s.height)
            lines.append(
                f"  tallest {tallest.height} px of {tallest.limit} ({tallest.where}); "
                f"{len(self.overflowing)} of {len(self.slides)} slides overflow"
                + (f"; worst +{max(s.overflow_y for s in self.overflowing)} px down, "
                   f"+{max(s.overflow_x for s in self.overflowing)} px across"
                   if self.overflowing else "")
            )
        lines += [f"  PROBLEM: {problem}" for problem in self.problems]
        return "\n".join(lines)


def check_deck(page: Page, deck: Path, screenshots: Path | None = None) -> DeckReport:
    """Open ``deck`` in ``page``, measure every slide, and optionally screenshot each."""
    report = DeckReport(deck)
    url = deck.resolve().as_uri()
    try:
        page.goto(url, ready=READY_JS, timeout=60)
    except ChromiumError as error:
        report.problems.append(f"reveal.js never started ({error}); the deck is a long page")
        report.problems += page.errors()
        return report
    result = page.evaluate(MEASURE_JS, timeout=300)
    for row in result["rows"]:
        slide = SlideFit(row["h"], row["v"], row["fragments"], row["reached"], row["height"],
                         row["wide"], row["label"], result["height"])
        report.slides.append(slide)
        if slide.fragments_reached != slide.fragments:
            report.problems.append(f"{slide.where}: reached {slide.fragments_reached} of "
                                   f"{slide.fragments} fragments")
    if (result["width"], result["height"]) != (SLIDE_WIDTH, SLIDE_HEIGHT):
        report.problems.append(f"deck is {result['width']}x{result['height']}, "
                               f"expected {SLIDE_WIDTH}x{SLIDE_HEIGHT}")
    if result["pageHeight"] > result["windowHeight"] + 1:
        report.problems.append(f"the page is {result['pageHeight']} px tall in a "
                               f"{result['windowHeight']} px window: not laid out as slides")
    report.problems += [f"requested from the network: {url}" for url in page.remote_urls()]
    report.problems += page.errors()
    if screenshots is not None:
        for slide in report.slides:
            page.evaluate(
                "(() => { const R = Object.entries(require.s.contexts._.defined).find("
                "([n]) => n.endsWith('/dist/reveal.js'))[1]; "
                f"R.slide({slide.h}, {slide.v}, {slide.fragments - 1}); "
                # let the fragments' fade-in finish before the picture
                "return new Promise(ok => setTimeout(() => ok(true), 400)); })()"
            )
            name = f"{deck.name.split('.')[0]}-{slide.h:02d}-{slide.v:02d}.png"
            page.screenshot(screenshots / name)
    return report


def check_decks(decks: Sequence[Path], screenshots: Path | None = None) -> list[DeckReport]:
    """Check each deck in a fresh tab of one headless browser."""
    reports = []
    with launch() as browser:
        for deck in decks:
            page = browser.new_page(SLIDE_WIDTH, SLIDE_HEIGHT)
            reports.append(check_deck(page, deck, screenshots))
    return reports


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("decks", nargs="*", type=Path, metavar="DECK",
                        help="default: every build/slides/*.slides.html")
    parser.add_argument("--screenshots", type=Path, metavar="DIR",
                        help="also save a PNG of every slide (all fragments shown) here")
    args = parser.parse_args(argv)
    decks = args.decks or sorted(DEFAULT_OUT.glob("*.slides.html"))
    if not decks:
        parser.error(f"no decks in {DEFAULT_OUT}: run `make slides` first")
    for deck in decks:
        if not deck.is_file():
            parser.error(f"{deck}: no such deck")
    try:
        reports = check_decks(decks, args.screenshots)
    except ChromiumError as error:
        print(f"check_slides: {error}", file=sys.stderr)
        return 2
    for report in reports:
        print(report.table())
        print()
    bad = [report.deck.name for report in reports if not report.ok]
    total = sum(len(report.slides) for report in reports)
    print(f"{len(reports)} decks, {total} slides: "
          + (f"FAIL in {', '.join(bad)}" if bad else "every slide fits"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
