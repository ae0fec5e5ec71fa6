"""Runnable examples: ``python -m warpwatch.examples.numba_escape``, ``python -m warpwatch.examples.triton_escape``."""
