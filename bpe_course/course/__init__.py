"""What the notebooks use beside the tokenizer itself: corpora, pictures and the plot style.

- :mod:`.data`: corpora that need no internet (the course's texts, Python's own docs and source)
- :mod:`.viz`: token boundaries in colour (HTML and terminal), and a few plots
- :data:`COURSE_STYLE` and :func:`use_course_style`: how the notebooks' plots look. Importing
  anything from ``bpe_course.course`` inside a Jupyter kernel applies them, so every
  notebook's plots share the style without a call (the command line never loads matplotlib).
"""

from __future__ import annotations

import sys
from typing import Any

#: The course's matplotlib settings: labels readable from the back of a room once a slide
#: stretches a 7-inch figure across 1280 px (about 2 px per point), vector plots whose text
#: stays text, and SVG ids that do not change from run to run (no diff without a change).
COURSE_STYLE: dict[str, Any] = {
    "font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12, "xtick.labelsize": 11,
    "ytick.labelsize": 11, "legend.fontsize": 11, "figure.titlesize": 13,
    "svg.fonttype": "none", "svg.hashsalt": "bpe-course",
}


def use_course_style() -> None:
    """Apply :data:`COURSE_STYLE`; in IPython, also draw inline plots as SVG with no date.

    >>> import matplotlib
    >>> use_course_style()
    >>> matplotlib.rcParams["xtick.labelsize"]
    11.0
    """
    import matplotlib

    matplotlib.rcParams.update(COURSE_STYLE)
    ipython = sys.modules.get("IPython")
    if ipython is None or ipython.get_ipython() is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats
    from matplotlib_inline.config import InlineBackend

    # The inline backend re-reads its settings when pyplot is imported after this module.
    inline = InlineBackend.instance()
    inline.rc = {**inline.rc, **COURSE_STYLE}
    inline.print_figure_kwargs = {**inline.print_figure_kwargs, "metadata": {"Date": None}}
    inline.figure_formats = {"svg"}
    set_matplotlib_formats("svg", **inline.print_figure_kwargs)


if "ipykernel" in sys.modules:  # inside a notebook: its plots follow the course's style
    use_course_style()
