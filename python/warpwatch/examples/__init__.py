"""Runnable examples: ``python -m warpwatch.examples.numba_escape`` and ``triton_escape`` (CPU: the Numba
simulator, the Triton interpreter), ``cupy_escape`` and ``torch_escape`` (GPU only; ``skipped: ...``, exit 0,
elsewhere). Shared scaffolding in ``_common``, the probed CUDA source in ``escape_source``."""
