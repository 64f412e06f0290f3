"""``python -m bpe_course ...`` runs the command line (see :mod:`bpe_course.cli`)."""

import sys

from .cli import main

sys.exit(main())
