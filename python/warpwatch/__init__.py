"""warpwatch for Python GPU jobs: frame codec, recorder, device helpers (docs/python.md)."""

__version__ = "0.1.0"
