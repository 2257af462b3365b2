"""``python -m irspec`` runs the command line."""

import sys

from irspec.cli import main

sys.exit(main())
