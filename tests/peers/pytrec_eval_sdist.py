"""pytrec-eval-terrier 0.5.11's sdist (its ``examples/``), downloaded from PyPI's files and checked.

``pip download --no-binary :all:`` cannot fetch it: pip prepares an sdist's metadata, and this one's
``setup.py`` clones trec_eval from GitHub to do so. So the archive is taken from the address PyPI's index
gives and held to the digest the index publishes. ``scripts/test`` calls this file to download it once into
``.ci-peers`` (``python tests/peers/pytrec_eval_sdist.py .ci-peers``);
``tests/test_pytrec_eval_suite.py`` reads it there (``IRSPEC_PYTREC_EVAL_SDIST``).
"""

from __future__ import annotations

import hashlib
import sys
import urllib.request
from pathlib import Path

URL = (
    "https://files.pythonhosted.org/packages/2b/ea/83ddbb17763272db4322f6d2287cc0183bbf91b9dece6c321758c41136cc/"
    "pytrec_eval_terrier-0.5.11.tar.gz"
)
SHA256 = "37258242d8bc1f8ed47a819c5b176198b1b4871f3c3a5f34349e534f74811924"  # PyPI's index, 2026-11-29
NAME = URL.rsplit("/", 1)[1]


def fetch(folder: Path) -> Path:
    """The sdist in ``folder``, downloaded there (whole or not at all) unless it already is."""
    target = folder / NAME
    if target.exists():
        return target
    with urllib.request.urlopen(URL, timeout=60) as response:
        data = response.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{URL}: sha256 {digest}, not the {SHA256} PyPI publishes")
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


if __name__ == "__main__":
    try:
        print(fetch(Path(sys.argv[1])))
    except OSError as e:
        raise SystemExit(f"pytrec-eval-terrier's sdist could not be downloaded from {URL}: {e}") from None
