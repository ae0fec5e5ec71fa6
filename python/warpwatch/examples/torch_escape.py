"""Escape-time kernel with the device probe as a PyTorch custom op (``torch.utils.cpp_extension.load_inline``,
built by nvcc), its probe buffers read back by ProbeReadback through torch (pinned tensors, events,
a side stream) without synchronising the job's stream. Needs a GPU, PyTorch's CUDA build and nvcc
(the build takes about 1.5 minutes the first time):

    python -m warpwatch.examples.torch_escape --out frames.bin --n 32
    warpwatch analyze frames.bin

Without torch or a CUDA device it prints ``skipped: ...`` and exits 0. With them it checks the
stored counts against the host's reference (python/warpwatch/examples/_common.py) and that every launch was
recorded (exit 1 otherwise).
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Sequence

import numpy as np

from warpwatch.examples._common import cuda_escape_args, escape_reference, finish, open_recorder, run_main, skipped, device_uuid_bytes
from warpwatch.examples.escape_source import ESCAPE_SOURCE, EXACT_OPTIONS, launch_shape
from warpwatch.frame import Device

PROG = "python -m warpwatch.examples.torch_escape"

#: The op: launches ww_escape_n<N> on torch's current stream with the 40-byte ProbeBuffers value.
OP_SOURCE = r"""
#include <cstring>
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

void escape(torch::Tensor counts, torch::Tensor probe, int64_t width, int64_t height, int64_t max_iter, int64_t n,
            int64_t blocks, int64_t threads) {
  TORCH_CHECK(counts.is_cuda() && counts.scalar_type() == torch::kInt32 && counts.is_contiguous(), "counts: contiguous int32 CUDA tensor");
  TORCH_CHECK(probe.device().is_cpu() && probe.numel() == static_cast<int64_t>(sizeof(warpwatch::ProbeBuffers)), "probe: the 40-byte ProbeBuffers value");
  warpwatch::ProbeBuffers b;
  std::memcpy(&b, probe.data_ptr(), sizeof b);
  const unsigned long long groups = static_cast<unsigned long long>(counts.numel() / n);
  unsigned* out = reinterpret_cast<unsigned*>(counts.data_ptr<int32_t>());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (n == 8) ww_escape_n8<<<blocks, threads, 0, stream>>>(out, b, width, height, max_iter, groups);
  else if (n == 32) ww_escape_n32<<<blocks, threads, 0, stream>>>(out, b, width, height, max_iter, groups);
  else TORCH_CHECK(false, "n must be 8 or 32");
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""


#: The op's declaration, for the bindings load_inline generates.
OP_DECLARATION = ("void escape(torch::Tensor counts, torch::Tensor probe, int64_t width, int64_t height, int64_t max_iter, int64_t n, "
                  "int64_t blocks, int64_t threads);")


class TorchOps:
    """:class:`warpwatch.probe_readback.DeviceOps` with torch: device tensors, pinned host tensors,
    ``torch.cuda.Event`` and a side stream for the sample copies. Streams are ``torch.cuda.Stream``."""

    def __init__(self, torch: Any, index: int = 0) -> None:
        self.torch = torch
        self.index = index
        self.cuda = torch.device("cuda", index)
        self._private = torch.cuda.Stream(device=self.cuda)

    def device(self) -> Device:
        props = self.torch.cuda.get_device_properties(self.index)
        return Device(name=props.name, uuid=device_uuid_bytes(props), compute_capability=(props.major, props.minor), clock_hz=_sm_clock_hz(self.index))

    def alloc_device(self, nbytes: int) -> Any:
        return self.torch.zeros(nbytes, dtype=self.torch.uint8, device=self.cuda)

    def device_pointer(self, buffer: Any) -> int:
        return int(buffer.data_ptr())

    def alloc_pinned(self, nbytes: int) -> Any:
        return self.torch.zeros(nbytes, dtype=self.torch.uint8, pin_memory=True)

    def host_bytes(self, buffer: Any) -> np.ndarray:
        return np.asarray(buffer.numpy(), dtype=np.uint8)

    def clear_async(self, buffer: Any, nbytes: int, stream: Any) -> None:
        with self.torch.cuda.stream(stream):
            buffer[:nbytes].zero_()

    def copy_to_host_async(self, host: Any, device: Any, nbytes: int, stream: Any) -> None:
        with self.torch.cuda.stream(stream):
            host[:nbytes].copy_(device[:nbytes], non_blocking=True)

    def record_event(self, stream: Any) -> Any:
        event = self.torch.cuda.Event()
        event.record(stream)
        return event

    def event_done(self, event: Any) -> bool:
        return bool(event.query())

    def copy_to_host_private(self, host: Any, device: Any, nbytes: int) -> None:
        with self.torch.cuda.stream(self._private):
            host[:nbytes].copy_(device[:nbytes], non_blocking=True)
        self._private.synchronize()


def _sm_clock_hz(index: int) -> int:
    """cudaDevAttrClockRate (kHz) × 1000, through the CUDA runtime library (the nvidia wheels torch depends on, or a toolkit)."""
    from warpwatch.nvrtc_check import find_cuda_library

    lib = ctypes.CDLL(str(find_cuda_library("libcudart")))
    value = ctypes.c_int()
    if lib.cudaDeviceGetAttribute(ctypes.byref(value), 13, index) != 0:
        raise RuntimeError("cudaDeviceGetAttribute(cudaDevAttrClockRate) failed")
    return value.value * 1000


def _torch_or_reason() -> tuple[Any, str]:
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - not installed, or a CUDA library it cannot load
        return None, f"no torch ({type(error).__name__}: {error})"
    if not torch.cuda.is_available():
        return None, "no CUDA device (torch.cuda.is_available() is False)"
    return torch, ""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: 0 on success or when skipped, 1 when a check fails, 2 on bad arguments."""
    args = cuda_escape_args(PROG, __doc__, "torch-escape", argv)
    if args is None:
        return 2
    torch, reason = _torch_or_reason()
    if torch is None:
        return skipped(PROG, reason)

    from torch.utils.cpp_extension import load_inline

    from warpwatch.nvrtc_check import include_dir
    from warpwatch.probe_readback import ProbeReadback

    module = load_inline(name="warpwatch_escape", cpp_sources=OP_DECLARATION, cuda_sources=ESCAPE_SOURCE + OP_SOURCE, functions=["escape"],
                         extra_include_paths=[str(include_dir())], extra_cuda_cflags=["-std=c++17", *EXACT_OPTIONS], verbose=False)
    ops = TorchOps(torch)
    recorder = open_recorder(args, Device(), "cuda")
    readback = ProbeReadback(recorder, ops, sample_capacity=1024)
    units = args.width * args.height
    groups = units // args.group
    blocks, threads = launch_shape(groups, args.group)
    counts = torch.zeros(units, dtype=torch.int32, device=ops.cuda)
    stream = torch.cuda.current_stream(ops.cuda)
    launch_ids = []
    for _ in range(args.launches):
        ticket = readback.begin_launch(args.kernel, group_size=args.group, group_count=groups, stream=stream)
        probe = torch.from_numpy(np.frombuffer(ticket.buffers.tobytes(), dtype=np.uint8).copy())
        module.escape(counts, probe, args.width, args.height, args.max_iter, args.group, blocks, threads)
        readback.end_launch(ticket)  # returns at once: the read-back follows the stream
        launch_ids.append(ticket.launch_id)
    closed = readback.close(timeout=30)
    stored = counts.cpu().numpy().astype(np.uint32)  # the example's own check, after the job's work
    expected = escape_reference(args.width, args.height, args.max_iter)
    same = bool(np.array_equal(stored, expected))
    if not same:
        print(f"WW_ERR_PYTHON_EXAMPLE: the kernel's counts differ from the host's reference at {int((stored != expected).sum())} pixels", file=sys.stderr)
    stats = readback.stats()
    report = [{"launchId": str(lid), "sumCounts": int(expected.astype(np.int64).sum())} for lid in launch_ids]
    return finish(recorder, args, report, ok=same and closed.complete and stats.launches_recorded == args.launches)


if __name__ == "__main__":
    run_main(main)
