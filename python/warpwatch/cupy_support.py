"""CuPy host glue (the ``[cupy]`` extra): compile a ``RawKernel``/``RawModule`` with the warpwatch
device header on NVRTC's include path, and :class:`CupyOps`, the CuPy implementation of
:class:`warpwatch.probe_readback.DeviceOps`, so that :class:`~warpwatch.probe_readback.ProbeReadback`
allocates the probe buffers as CuPy device memory and reads them back without synchronising the
job's stream (docs/python.md "CuPy and NVRTC").

CuPy is imported only when a function here needs it: this module imports without CuPy, and the
compile options are the ones ``python -m warpwatch.nvrtc_check`` compiles with
(:func:`warpwatch.nvrtc_check.probe_compile_options`).

Example (GPU)::

    import cupy
    from warpwatch.cupy_support import CupyOps, raw_kernel
    from warpwatch.probe_readback import ProbeReadback

    kernel = raw_kernel(SOURCE, "escape")            # SOURCE includes <warpwatch/probe-device.cuh>
    readback = ProbeReadback(recorder, CupyOps())
    stream = cupy.cuda.Stream(non_blocking=True)
    ticket = readback.begin_launch("escape", group_size=32, group_count=groups, stream=stream)
    with stream:                                     # CuPy launches on the current stream
        kernel((blocks,), (256,), (counts, ticket.buffers, cupy.uint64(groups)))
    readback.end_launch(ticket)                      # returns at once; frames follow when the stream gets there
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .frame import Device
from .nvrtc_check import probe_compile_options

#: ``cudaEventDisableTiming`` and ``cudaDevAttrClockRate`` (CUDA runtime API values).
_EVENT_DISABLE_TIMING = 2
_DEV_ATTR_CLOCK_RATE = 13
_MEMCPY_DEVICE_TO_HOST = 2


def _cupy() -> Any:
    import cupy  # the [cupy] extra

    return cupy


def cupy_compile_options(extra_options: Sequence[str] = (), cuda_headers: bool = True) -> tuple[str, ...]:
    """The ``options`` for ``cupy.RawKernel``/``cupy.RawModule`` (NVRTC backend) of a source that includes
    ``warpwatch/probe-device.cuh``: :func:`~warpwatch.nvrtc_check.probe_compile_options` then ``extra_options``.
    CuPy picks the architecture of the current device itself.

    :raises warpwatch.nvrtc_check.NvrtcUnavailable: ``cuda_headers`` and the ``[nvrtc]`` wheels are missing
    """
    return (*probe_compile_options(cuda_headers), *extra_options)


def raw_kernel(source: str, name: str, options: Sequence[str] = (), **kwargs: Any) -> Any:
    """``cupy.RawKernel(source, name)`` compiled by NVRTC with the probe header on the include path.

    Example: ``k = raw_kernel(src, "escape"); k((blocks,), (256,), (out, ticket.buffers, n))``
    """
    return _cupy().RawKernel(source, name, options=cupy_compile_options(options), backend="nvrtc", **kwargs)


def raw_module(source: str, options: Sequence[str] = (), **kwargs: Any) -> Any:
    """``cupy.RawModule(code=source)`` compiled by NVRTC with the probe header on the include path
    (``name_expressions=[...]`` for template kernels such as ``escape<32>``)."""
    return _cupy().RawModule(code=source, options=cupy_compile_options(options), backend="nvrtc", **kwargs)


class CupyOps:
    """:class:`~warpwatch.probe_readback.DeviceOps` with CuPy, on one device (the current one by default).

    Streams are ``cupy.cuda.Stream`` objects or ``cudaStream_t`` values (int; 0 = the legacy default
    stream). Device memory comes from ``cupy.cuda.alloc`` (CuPy's pool), pinned memory from
    ``cupy.cuda.alloc_pinned_memory``; the private copies run on a non-blocking stream of its own.
    """

    def __init__(self, device_id: int | None = None) -> None:
        cupy = _cupy()
        self._cupy = cupy
        self.device_id = cupy.cuda.runtime.getDevice() if device_id is None else device_id
        with cupy.cuda.Device(self.device_id):
            self._private = cupy.cuda.Stream(non_blocking=True)

    def device(self) -> Device:
        runtime = self._cupy.cuda.runtime
        props = runtime.getDeviceProperties(self.device_id)
        name = props.get("name", b"")
        uuid = props.get("uuid", b"")
        clock_khz = runtime.deviceGetAttribute(_DEV_ATTR_CLOCK_RATE, self.device_id)
        return Device(name=name.decode(errors="replace") if isinstance(name, bytes) else str(name),
                      uuid=bytes(uuid)[:16].ljust(16, b"\0") if isinstance(uuid, (bytes, bytearray)) else bytes(16),
                      compute_capability=(int(props.get("major", 0)), int(props.get("minor", 0))), clock_hz=int(clock_khz) * 1000)

    def alloc_device(self, nbytes: int) -> Any:
        with self._cupy.cuda.Device(self.device_id):
            return self._cupy.cuda.alloc(nbytes)

    def device_pointer(self, buffer: Any) -> int:
        return int(buffer.ptr)

    def alloc_pinned(self, nbytes: int) -> Any:
        return self._cupy.cuda.alloc_pinned_memory(nbytes)

    def host_bytes(self, buffer: Any) -> np.ndarray:
        return np.frombuffer(buffer, dtype=np.uint8)  # the whole (possibly rounded-up) allocation; readers take the head

    @staticmethod
    def _stream_ptr(stream: Any) -> int:
        return int(stream) if isinstance(stream, int) else int(stream.ptr)

    def clear_async(self, buffer: Any, nbytes: int, stream: Any) -> None:
        with self._cupy.cuda.Device(self.device_id):
            self._cupy.cuda.runtime.memsetAsync(buffer.ptr, 0, nbytes, self._stream_ptr(stream))

    def copy_to_host_async(self, host: Any, device: Any, nbytes: int, stream: Any) -> None:
        with self._cupy.cuda.Device(self.device_id):
            self._cupy.cuda.runtime.memcpyAsync(host.ptr, device.ptr, nbytes, _MEMCPY_DEVICE_TO_HOST, self._stream_ptr(stream))

    def record_event(self, stream: Any) -> Any:
        runtime = self._cupy.cuda.runtime
        with self._cupy.cuda.Device(self.device_id):
            event = runtime.eventCreateWithFlags(_EVENT_DISABLE_TIMING)
            try:
                runtime.eventRecord(event, self._stream_ptr(stream))
            except Exception:
                runtime.eventDestroy(event)
                raise
        return _RawEvent(runtime, event)

    def event_done(self, event: Any) -> bool:
        with self._cupy.cuda.Device(self.device_id):
            return bool(event.query())

    def copy_to_host_private(self, host: Any, device: Any, nbytes: int) -> None:
        with self._cupy.cuda.Device(self.device_id):
            self._cupy.cuda.runtime.memcpyAsync(host.ptr, device.ptr, nbytes, _MEMCPY_DEVICE_TO_HOST, self._private.ptr)
            self._private.synchronize()


class _RawEvent:
    """A ``cudaEvent_t`` from CuPy's runtime module, destroyed with this object."""

    _NOT_READY = 600  # cudaErrorNotReady

    def __init__(self, runtime: Any, handle: int) -> None:
        self._runtime = runtime
        self.handle = handle

    def query(self) -> bool:
        """True when completed, False when not yet; raises on any other status (CuPy's ``eventQuery``
        returns the ``cudaError_t`` instead of raising)."""
        status = int(self._runtime.eventQuery(self.handle))
        if status == 0:
            return True
        if status == self._NOT_READY:
            return False
        raise RuntimeError(f"cudaEventQuery failed with status {status}")

    def __del__(self) -> None:
        try:
            self._runtime.eventDestroy(self.handle)
        except Exception:  # noqa: BLE001 - interpreter shutdown or a dead context
            pass
