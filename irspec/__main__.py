"""``python -m irspec`` runs the command line."""

from irspec.cli import run

run()
