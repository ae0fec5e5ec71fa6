"""Compile the NVRTC-safe device header (``warpwatch/probe-device.cuh``) with NVRTC.

``python -m warpwatch.nvrtc_check`` compiles a translation unit that instantiates the probe
(``GroupProbe<N>`` for power-of-two and other group sizes, ``NullGroupProbe``) to PTX
(``compute_XX``) and to a cubin (``sm_XX``) for sm_70, sm_80 and sm_90, and exits 0 when every
compile succeeds (1 otherwise, with NVRTC's log on stderr). No GPU is needed: NVRTC is a
compiler library. It needs the ``[nvrtc]`` extra: ``nvidia-cuda-nvrtc-cu12`` (NVRTC 12.x; NVRTC
13 dropped compute_70), ``nvidia-cuda-runtime-cu12`` (``cooperative_groups.h``) and
``nvidia-cuda-cccl-cu12`` (``<cuda/std/cstdint>``, ``<nv/target>``).

The same module is the host side's compiler for CuPy/NVRTC users: :func:`compile_with_probe`
returns PTX or cubin bytes for a user's kernel source with the header on the include path.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

#: The architectures the check compiles for (the probe needs sm_70+).
CHECK_ARCHITECTURES: tuple[int, ...] = (70, 80, 90)

#: A kernel that uses every part of the probe, for the check.
CHECK_SOURCE = r"""
#include <warpwatch/probe-device.cuh>

template <unsigned N>
__device__ void probedLoop(const unsigned* work, warpwatch::ProbeBuffers buffers, bool sync, unsigned long long groups) {
  warpwatch::GroupProbe<N> probe(buffers, sync);
  if (!probe.active(groups)) return;
  const unsigned w = work[probe.unitIndex()];
  probe.begin();
  for (unsigned k = 0; k < w; ++k) probe.iteration();
  probe.finish();
  probe.end();
}

extern "C" __global__ void ww_check_n32(const unsigned* work, warpwatch::ProbeBuffers b, bool sync, unsigned long long groups) { probedLoop<32>(work, b, sync, groups); }
extern "C" __global__ void ww_check_n8(const unsigned* work, warpwatch::ProbeBuffers b, bool sync, unsigned long long groups) { probedLoop<8>(work, b, sync, groups); }
extern "C" __global__ void ww_check_n5(const unsigned* work, warpwatch::ProbeBuffers b, bool sync, unsigned long long groups) { probedLoop<5>(work, b, sync, groups); }
extern "C" __global__ void ww_check_null(unsigned* out, warpwatch::ProbeBuffers b) {
  warpwatch::NullGroupProbe<4> probe(b, false);
  if (probe.active(1000)) out[probe.unitIndex()] = warpwatch::histogramBinOf(probe.rank() + 2000u) + (warpwatch::isGroupSampled(warpwatch::Selection::Hash, 7, probe.groupIndex(), 3) ? 1u : 0u);
}
"""


class NvrtcUnavailable(RuntimeError):
    """NVRTC or the CUDA headers are not installed (the ``[nvrtc]`` extra)."""


class NvrtcCompileError(RuntimeError):
    """NVRTC rejected a source; ``log`` holds its program log."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


def include_dir() -> Path:
    """The directory holding ``warpwatch/probe-device.cuh`` (to pass as ``-I``).

    ``$WARPWATCH_INCLUDE_DIR`` when set; else the copy shipped inside this package.
    """
    override = os.environ.get("WARPWATCH_INCLUDE_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent / "include"


def _nvidia_roots() -> list[Path]:
    roots: list[Path] = []
    try:
        import nvidia  # namespace package of NVIDIA's wheels
    except ImportError:
        return roots
    for entry in getattr(nvidia, "__path__", []):
        roots.append(Path(entry))
    return roots


def _find(relative: str) -> Path:
    for root in _nvidia_roots():
        candidate = root / relative
        if candidate.exists():
            return candidate
    raise NvrtcUnavailable(
        f"WW_ERR_PYTHON_NVRTC: {relative} not found under the nvidia wheels; install the [nvrtc] extra "
        "(nvidia-cuda-nvrtc-cu12, nvidia-cuda-runtime-cu12, nvidia-cuda-cccl-cu12)"
    )


def cuda_include_dirs() -> list[Path]:
    """The CUDA runtime and CCCL include directories from the ``[nvrtc]`` wheels."""
    return [_find("cuda_runtime/include"), _find("cuda_cccl/include")]


def probe_compile_options(cuda_headers: bool = True) -> tuple[str, ...]:
    """The NVRTC options a source that includes ``warpwatch/probe-device.cuh`` needs (no architecture):
    C++17 and the include path: this package's header directory, and with ``cuda_headers`` the CUDA
    runtime and CCCL include directories of the ``[nvrtc]`` wheels (leave them out where the
    compiler's caller supplies its own CUDA headers).

    :raises NvrtcUnavailable: ``cuda_headers`` and the wheels are missing

    Example: ``cupy.RawModule(code=src, options=probe_compile_options())``
    """
    options = ["-std=c++17", f"-I{include_dir()}"]
    if cuda_headers:
        options += [f"-I{d}" for d in cuda_include_dirs()]
    return tuple(options)


@dataclass(frozen=True)
class _Nvrtc:
    lib: ctypes.CDLL

    def check(self, status: int, what: str) -> None:
        if status != 0:
            self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p
            text = self.lib.nvrtcGetErrorString(status)
            raise NvrtcCompileError(f"{what}: NVRTC status {status} ({text.decode() if text else '?'})", "")


_loaded: _Nvrtc | None = None


def _nvrtc() -> _Nvrtc:
    global _loaded
    if _loaded is None:
        library = _find("cuda_nvrtc/lib/libnvrtc.so.12")
        try:
            _loaded = _Nvrtc(ctypes.CDLL(str(library)))
        except OSError as error:
            raise NvrtcUnavailable(f"WW_ERR_PYTHON_NVRTC: cannot load {library}: {error}") from error
    return _loaded


def nvrtc_version() -> tuple[int, int]:
    """NVRTC's (major, minor) version."""
    nvrtc = _nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvrtc.check(nvrtc.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return major.value, minor.value


def compile_with_probe(source: str, arch: str, extra_options: Sequence[str] = (), name: str = "kernel.cu") -> bytes:
    """Compile CUDA C++ ``source`` with the probe header on the include path.

    :param source: the translation unit (it may ``#include <warpwatch/probe-device.cuh>``)
    :param arch: ``"compute_80"`` for PTX or ``"sm_80"`` for a cubin
    :param extra_options: more NVRTC options (e.g. ``-DNAME=1``)
    :returns: PTX text (bytes, NUL stripped) for ``compute_*``, cubin bytes for ``sm_*``
    :raises NvrtcUnavailable: the ``[nvrtc]`` extra is missing
    :raises NvrtcCompileError: NVRTC rejected the source (``.log`` has its log)

    Example: ``ptx = compile_with_probe(src, "compute_80")``
    """
    nvrtc = _nvrtc()
    lib = nvrtc.lib
    program = ctypes.c_void_p()
    nvrtc.check(lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(), 0, None, None), "nvrtcCreateProgram")
    try:
        options = [f"--gpu-architecture={arch}", *probe_compile_options(), *extra_options]
        encoded = [o.encode() for o in options]
        array = (ctypes.c_char_p * len(encoded))(*encoded)
        status = lib.nvrtcCompileProgram(program, len(encoded), array)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log_buffer = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(program, log_buffer)
        log = log_buffer.value.decode(errors="replace")
        if status != 0:
            raise NvrtcCompileError(f"NVRTC could not compile {name} for {arch}", log)
        if arch.startswith("sm_"):
            nvrtc.check(lib.nvrtcGetCUBINSize(program, ctypes.byref(size)), "nvrtcGetCUBINSize")
            out = ctypes.create_string_buffer(size.value)
            nvrtc.check(lib.nvrtcGetCUBIN(program, out), "nvrtcGetCUBIN")
            return out.raw
        nvrtc.check(lib.nvrtcGetPTXSize(program, ctypes.byref(size)), "nvrtcGetPTXSize")
        out = ctypes.create_string_buffer(size.value)
        nvrtc.check(lib.nvrtcGetPTX(program, out), "nvrtcGetPTX")
        return out.raw.rstrip(b"\0")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: compile the check source for every architecture; 0 when all compile."""
    del argv
    try:
        major, minor = nvrtc_version()
    except NvrtcUnavailable as error:
        print(str(error), file=sys.stderr)
        return 1
    print(f"nvrtc {major}.{minor}; header {include_dir() / 'warpwatch' / 'probe-device.cuh'}")
    failures = 0
    for cc in CHECK_ARCHITECTURES:
        for arch in (f"compute_{cc}", f"sm_{cc}"):
            started = time.perf_counter()
            try:
                out = compile_with_probe(CHECK_SOURCE, arch, name="warpwatch_check.cu")
            except NvrtcCompileError as error:
                failures += 1
                print(f"FAIL {arch}: {error}\n{error.log}", file=sys.stderr)
                continue
            kind = "ptx" if arch.startswith("compute_") else "cubin"
            ok = (b".entry ww_check_n5" in out) if kind == "ptx" else out[:4] == b"\x7fELF"
            if not ok:
                failures += 1
                print(f"FAIL {arch}: the {kind} lacks the expected kernel entry / ELF header", file=sys.stderr)
                continue
            print(f"ok {arch}: {kind} {len(out)} bytes in {time.perf_counter() - started:.2f} s")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
