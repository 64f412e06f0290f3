"""Check that every slide of every deck fits: ``make check-slides``.

Each deck is opened from a ``file://`` URL in headless Chromium with no network (see
:mod:`tools.chromium`), in a 1280 x 720 window, the deck's own size. The checker then walks
every slide and every fragment with reveal.js's own API and measures:

- **height**: the slide's content height against the deck's 720 px. reveal.js centres a
  slide that fits; a taller one runs off the bottom, where nobody in the room can see it.
- **width**: how far code or output reaches past its box (a scroll bar on a slide hides
  the end of the line) or past the slide's right edge.

- **readability** (``DRAWN_JS``): plots fill the slide (75% of its width or 60% of its
  height), the text of SVG plots and the hex bytes of token pictures are at least 16 px,
  a token picture's byte boxes stay in one row under their characters, a right-to-left
  word cut into tokens still runs right to left, output wraps between words, and reveal's
  navigation arrows cover no text.

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

#: The smallest readable text on a 1280 x 720 slide, in the deck's CSS pixels: plot labels
#: (measured in SVG plots, whose text is text) and the hex bytes of token pictures.
MIN_TEXT_PX = 16

#: A plot fills the slide when it is this wide (of the slide) or this tall (of the height).
MIN_PLOT_WIDTH = 0.75
MIN_PLOT_HEIGHT = 0.6

#: JavaScript that looks at what is drawn inside ``root`` (a slide) and returns what a reader
#: at the back of the room would miss. Sizes are in the deck's CSS pixels (``scale`` turns
#: window pixels into those). Shared by this checker, check_rise and the tests of the token
#: pictures; ``measureDrawn(root, scale, deckWidth, deckHeight)``.
DRAWN_JS = r"""
function svgOfImage(img) {  // an <img> showing an inline SVG (how nbconvert draws SVG plots)
  const src = img.getAttribute('src') || '';
  const m = /^data:image\/svg\+xml(;base64)?,(.*)$/s.exec(src);
  if (!m) return null;
  const text = m[1] ? new TextDecoder().decode(Uint8Array.from(atob(m[2]), c => c.charCodeAt(0)))
                    : decodeURIComponent(m[2]);
  return new DOMParser().parseFromString(text, 'image/svg+xml').querySelector('svg');
}

function measureDrawn(root, scale, deckWidth, deckHeight) {
  const out = {plots: [], svgTextPx: null, hexPx: null, stacked: 0, groups: 0,
               rtlSwapped: [], midWord: [], covered: []};
  const visible = el => !el.closest('.fragment:not(.visible)') && el.getClientRects().length > 0;
  // Plots: how much of the slide they fill, and the smallest text in an SVG plot.
  for (const el of root.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output svg')) {
    if (!visible(el) || el.parentElement.closest('svg')) continue;
    const r = el.getBoundingClientRect();
    const plot = {width: r.width / scale / deckWidth, height: r.height / scale / deckHeight};
    if (el.tagName.toLowerCase() === 'svg' && el.viewBox && el.viewBox.baseVal.width) {
      const unit = r.width / el.viewBox.baseVal.width / scale;
      for (const t of el.querySelectorAll('text, tspan')) {
        const px = parseFloat(getComputedStyle(t).fontSize) * unit;
        plot.textPx = Math.min(plot.textPx || 1e9, px);
      }
      if (plot.textPx) out.svgTextPx = Math.min(out.svgTextPx || 1e9, plot.textPx);
    } else if (el.naturalWidth) {
      plot.enlarged = r.width / scale / el.naturalWidth;
      const svg = svgOfImage(el);
      if (svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width) {
        const unit = r.width / svg.viewBox.baseVal.width / scale;
        for (const t of svg.querySelectorAll('text, tspan')) {
          const size = /font(?:-size)?:\s*([\d.]+)px/.exec(t.getAttribute('style') || '');
          const px = parseFloat(size ? size[1] : t.getAttribute('font-size')) * unit;
          if (px) plot.textPx = Math.min(plot.textPx || 1e9, px);
        }
        if (plot.textPx) out.svgTextPx = Math.min(out.svgTextPx || 1e9, plot.textPx);
      }
    }
    out.plots.push(plot);
  }
  // Token pictures: hex size, boxes that left their row, right-to-left words in order.
  for (const group of root.querySelectorAll('.bpe-shared')) {
    if (!visible(group)) continue;
    out.groups += 1;
    const boxes = Array.from(group.querySelectorAll('.bpe-bytes'), b => b.getBoundingClientRect());
    const chars = Array.from(group.querySelectorAll('.bpe-char'), c => c.getBoundingClientRect());
    const charsBottom = Math.max(...chars.map(c => c.bottom));
    const tops = boxes.map(b => b.top);
    const lefts = boxes.map(b => b.left).sort((a, b) => a - b);
    const apart = lefts.every((x, i) => i === 0 || x > lefts[i - 1] + 1);
    if (Math.max(...tops) - Math.min(...tops) > 2 || Math.min(...tops) < charsBottom - 2
        || !apart) out.stacked += 1;
    const hex = group.querySelector('.bpe-bytes');
    const px = parseFloat(getComputedStyle(hex).fontSize) * hex.getBoundingClientRect().width
               / hex.offsetWidth / scale;
    out.hexPx = Math.min(out.hexPx || 1e9, px);
  }
  const rtl = /^[\s\u00b7]*[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]+$/;  // a mark may lead
  const letter = (el, last) => {  // the box of an element's first or last right-to-left letter
    const range = document.createRange();
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const found = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode())
      for (let i = 0; i < node.length; i++)
        if (/[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]/.test(node.data[i])) found.push([node, i]);
    const [node, i] = found[last ? found.length - 1 : 0];
    range.setStart(node, i); range.setEnd(node, i + 1);
    return range.getBoundingClientRect();
  };
  for (const picture of root.querySelectorAll('.bpe-tokens')) {
    if (!visible(picture)) continue;
    const tokens = Array.from(picture.children).filter(t => t.classList.contains('bpe-token'));
    for (let i = 1; i < tokens.length; i++) {
      const [a, b] = [tokens[i - 1], tokens[i]];
      if (a.nextElementSibling !== b || !rtl.test(a.textContent) || !rtl.test(b.textContent))
        continue;
      // Read right to left, a's last letter comes just before b's first: it is on the right.
      const [ra, rb] = [letter(a, true), letter(b, false)];
      if (Math.abs(ra.top - rb.top) < 2 && ra.left < rb.left)
        out.rtlSwapped.push(a.textContent + b.textContent);
    }
  }
  // Output text wrapped inside a word (a line break between two letters of one word).
  for (const pre of root.querySelectorAll('.jp-OutputArea-output pre')) {
    if (!visible(pre) || pre.textContent.length > 20000) continue;
    const lineHeight = parseFloat(getComputedStyle(pre).lineHeight) || 20;
    if (pre.getBoundingClientRect().height / scale < 1.5 * lineHeight) continue;
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    let previous = null;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.length; i++) {
        const char = node.data[i];
        if (char === '\n') { previous = null; continue; }
        range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getBoundingClientRect();
        if (!rect.height) continue;
        if (previous && rect.top > previous.top + 2 && /\w/.test(previous.char) && /\w/.test(char))
          out.midWord.push(previous.word + char);
        const letter = /\w/.test(char);
        const word = (previous && letter ? previous.word : '') + (letter ? char : '');
        previous = {top: rect.top, char, word: word.slice(-30)};
      }
    }
  }
  // Navigation arrows drawn over text (code, output or prose) of the slide.
  const arrows = Array.from(document.querySelectorAll('.reveal .controls button.enabled'))
    .map(b => b.getBoundingClientRect()).filter(r => r.width > 0);
  if (arrows.length) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.data.trim() || !visible(node.parentElement)) continue;
      range.selectNodeContents(node);
      for (const line of range.getClientRects()) {
        if (arrows.some(a => line.right > a.left && line.left < a.right
                             && line.bottom > a.top && line.top < a.bottom)) {
          out.covered.push(node.data.trim().slice(0, 40));
          break;
        }
      }
    }
  }
  return out;
}
"""

#: JavaScript run in the deck: walk every slide and fragment, measure, return a list.
MEASURE_JS = DRAWN_JS + r"""
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
      const scale = slidesBox.getBoundingClientRect().width / width;
      const drawn = measureDrawn(slide, scale, width, height);
      const heading = slide.querySelector('h1, h2, h3, h4');
      const text = (heading ? heading.textContent : slide.innerText).trim().split('\n')[0];
      rows.push({h, v, fragments, reached, height: tallest, wide: Math.round(wide), drawn,
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
    drawn: dict = field(default_factory=dict)

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

    @property
    def issues(self) -> list[str]:
        """What is drawn but not readable: see :func:`drawn_issues`."""
        return drawn_issues(self.drawn)

    @property
    def smallest_text(self) -> float | None:
        """The smallest measured text (SVG plot labels, hex bytes) in slide pixels."""
        sizes = [size for size in (self.drawn.get("svgTextPx"), self.drawn.get("hexPx")) if size]
        return min(sizes) if sizes else None


def drawn_issues(drawn: dict, min_text_px: float = MIN_TEXT_PX) -> list[str]:
    """Problems in what ``DRAWN_JS`` measured on one slide (an empty list when readable).

    >>> drawn_issues({"hexPx": 12.3, "rtlSwapped": ["رم"]})
    ['hex bytes of 12.3 px (< 15)', "right-to-left words drawn in the wrong order: ['رم']"]
    """
    issues = []
    for plot in drawn.get("plots", []):
        if plot["width"] < MIN_PLOT_WIDTH and plot["height"] < MIN_PLOT_HEIGHT:
            issues.append(f"a plot fills {plot['width']:.0%} of the width and "
                          f"{plot['height']:.0%} of the height")
    if drawn.get("svgTextPx") and drawn["svgTextPx"] < min_text_px:
        issues.append(f"plot text of {drawn['svgTextPx']:.1f} px (< {min_text_px:g})")
    if drawn.get("hexPx") and drawn["hexPx"] < min_text_px - 1:
        issues.append(f"hex bytes of {drawn['hexPx']:.1f} px (< {min_text_px - 1:g})")
    if drawn.get("stacked"):
        issues.append(f"{drawn['stacked']} of {drawn['groups']} token groups fell apart "
                      "(byte boxes not in one row under their characters)")
    if drawn.get("rtlSwapped"):
        issues.append(f"right-to-left words drawn in the wrong order: {drawn['rtlSwapped'][:3]}")
    if drawn.get("midWord"):
        issues.append(f"output wrapped inside a word: {drawn['midWord'][:3]}")
    if drawn.get("covered"):
        issues.append(f"navigation arrows cover text: {drawn['covered'][:2]}")
    return issues


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
    def unreadable(self) -> list[SlideFit]:
        return [slide for slide in self.slides if slide.issues]

    @property
    def ok(self) -> bool:
        return not self.problems and not self.overflowing and not self.unreadable

    def table(self) -> str:
        """The per-slide table and a summary line."""
        header = (f"{'slide':<9} {'frags':>5} {'height':>6} {'over_y':>6} {'over_x':>6} "
                  f"{'text':>5}")
        lines = [f"{self.deck.name}: {len(self.slides)} slides, "
                 f"{sum(s.fragments for s in self.slides)} fragments",
                 f"  {header}  first line"]
        for slide in self.slides:
            mark = "" if slide.fits else "  <-- overflows"
            mark += "".join(f"  <-- {issue}" for issue in slide.issues)
            text = f"{slide.smallest_text:.0f}" if slide.smallest_text else "."
            lines.append(
                f"  {slide.where:<9} {slide.fragments:>5} {slide.height:>6} "
                f"{slide.overflow_y or '.':>6} {max(slide.overflow_x, 0) or '.':>6} {text:>5}  "
                f"{slide.label}{mark}"
            )
        if self.slides:
            tallest = max(self.slides, key=lambda s: s.height)
            lines.append(
                f"  tallest {tallest.height} px of {tallest.limit} ({tallest.where}); "
                f"{len(self.overflowing)} of {len(self.slides)} slides overflow, "
                f"{len(self.unreadable)} unreadable"
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
                         row["wide"], row["label"], result["height"], row["drawn"])
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
          + (f"FAIL in {', '.join(bad)}" if bad else "every slide fits and is readable"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
