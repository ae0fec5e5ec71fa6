"""Triton helpers: run a kernel under Triton's interpreter (``TRITON_INTERPRET=1``) on numpy
arrays, without torch.

The interpreter takes tensor arguments through a small part of torch's tensor interface
(``data_ptr``, ``dtype``, ``untyped_storage``, ``new_empty``/``set_``, ``copy_``);
:class:`HostArray` provides that part over a numpy array, so a kernel's pointer arguments can be
numpy arrays that the kernel writes in place (the per-element iteration counts, for warpwatch).
On a GPU pass device tensors (torch, or any array Triton's launcher accepts) as usual.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class HostArray:
    """A numpy array dressed as the tensor the Triton interpreter expects (host memory only).

    Example: ``counts = np.zeros(n, np.int32); kernel[grid](HostArray(counts), ...)`` writes into ``counts``.
    """

    def __init__(self, array: np.ndarray) -> None:
        if not array.flags.c_contiguous:
            raise ValueError("WW_ERR_PYTHON_ARRAY: HostArray needs a C-contiguous array")
        self.array = array
        self.dtype = array.dtype

    # The parts of torch.Tensor the interpreter uses.
    def data_ptr(self) -> int:
        return int(self.array.ctypes.data)

    def untyped_storage(self) -> "HostArray":
        return self

    def cpu(self) -> "HostArray":
        return self

    def new_empty(self, *_: Any, **__: Any) -> "HostArray":
        return HostArray(self.array)

    def set_(self, storage: "HostArray", *_: Any) -> "HostArray":
        self.array = storage.array
        self.dtype = storage.array.dtype
        return self

    def storage_offset(self) -> int:
        return 0

    def size(self) -> tuple[int, ...]:
        return tuple(self.array.shape)

    def stride(self) -> tuple[int, ...]:
        return tuple(s // self.array.itemsize for s in self.array.strides)

    def copy_(self, other: "HostArray") -> "HostArray":
        if other.array is not self.array:
            np.copyto(self.array, other.array)
        return self
