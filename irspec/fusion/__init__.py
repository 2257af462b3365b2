"""Fusion: several runs made one (``irspec fuse``, :func:`irspec.fuse`); :mod:`irspec.fusion.engine`."""
