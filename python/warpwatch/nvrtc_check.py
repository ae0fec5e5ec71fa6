"""Compile the NVRTC-safe device header (``warpwatch/probe-device.cuh``) with NVRTC.

``python -m warpwatch.nvrtc_check`` compiles a translation unit that instantiates the probe
(``GroupProbe<N>`` for power-of-two and other group sizes, ``NullGroupProbe``) to PTX
(``compute_XX``) and to a cubin (``sm_XX``) for sm_70, sm_80 and sm_90, and exits 0 when every
compile succeeds (1 otherwise, with NVRTC's log on stderr). No GPU is needed: NVRTC is a
compiler library. It needs NVRTC and the CUDA headers, found by :func:`cuda_layouts`: the
``[nvrtc]`` extra (``nvidia-cuda-nvrtc-cu12``, ``nvidia-cuda-runtime-cu12`` for
``cooperative_groups.h``, ``nvidia-cuda-cccl-cu12`` for ``<cuda/std/cstdint>`` and ``<nv/target>``),
NVIDIA's CUDA 13 wheels (``nvidia/cu13``), or a CUDA toolkit (``$CUDA_HOME``, ``$CUDA_PATH``,
``/usr/local/cuda``). NVRTC 13 dropped compute_70, so with it the check compiles for sm_75
instead of sm_70.

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


@dataclass(frozen=True)
class CudaLayout:
    """One place where NVRTC, the CUDA runtime library and the CUDA headers may be installed.

    ``nvrtc_dir`` and ``runtime_dir`` hold ``libnvrtc.so.N`` and ``libcudart.so.N``; ``include``
    holds ``cooperative_groups.h``; ``cccl`` lists the directories that may hold CCCL's
    ``cuda/std/cstdint`` (CUDA 13 moved CCCL to ``include/cccl``).
    """

    name: str
    nvrtc_dir: Path
    runtime_dir: Path
    include: Path
    cccl: tuple[Path, ...]

    def headers_complete(self) -> bool:
        """Whether both the runtime headers and CCCL are here."""
        return (self.include / "cooperative_groups.h").exists() and self.cccl_dir() is not None

    def cccl_dir(self) -> Path | None:
        """The first of ``cccl`` that holds ``cuda/std/cstdint``, or None."""
        return next((d for d in self.cccl if (d / "cuda" / "std" / "cstdint").exists()), None)


def cuda_layouts() -> list[CudaLayout]:
    """Where this module looks for NVRTC and the CUDA headers, in order of preference:

    1. NVIDIA's CUDA 12 wheels (``nvidia/cuda_nvrtc``, ``nvidia/cuda_runtime``, ``nvidia/cuda_cccl``:
       the ``[nvrtc]`` extra);
    2. NVIDIA's CUDA 13 wheels (everything under ``nvidia/cu13``);
    3. a CUDA toolkit: ``$CUDA_HOME``, ``$CUDA_PATH``, then ``/usr/local/cuda``.

    Example: ``[l.name for l in cuda_layouts() if l.headers_complete()]``
    """
    layouts: list[CudaLayout] = []
    for root in _nvidia_roots():
        layouts.append(CudaLayout(f"CUDA 12 wheels under {root}", root / "cuda_nvrtc" / "lib", root / "cuda_runtime" / "lib",
                                  root / "cuda_runtime" / "include", (root / "cuda_cccl" / "include",)))
        cu13 = root / "cu13"
        layouts.append(CudaLayout(f"CUDA 13 wheels under {cu13}", cu13 / "lib", cu13 / "lib", cu13 / "include",
                                  (cu13 / "include" / "cccl", cu13 / "include")))
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    seen: set[str] = set()
    for home in homes:
        if not home or home in seen:
            continue
        seen.add(home)
        base = Path(home)
        for lib in ("lib64", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
            include = base / "include"
            layouts.append(CudaLayout(f"CUDA toolkit {base} ({lib})", base / lib, base / lib, include, (include / "cccl", include)))
    return layouts


def _so_version(path: Path, stem: str) -> tuple[int, ...] | None:
    """(13, 0, 88) for ``libnvrtc.so.13.0.88``; None for other names (``libnvrtc.alt.so.13``, ``libnvrtc.so``)."""
    parts = path.name.removeprefix(f"{stem}.so.").split(".")
    return tuple(int(x) for x in parts) if path.name.startswith(f"{stem}.so.") and all(x.isdigit() for x in parts) else None


def _library_in(directory: Path, stem: str) -> Path | None:
    """``stem.so.N`` in ``directory`` with the highest version (``stem.so`` when there is no versioned one)."""
    if not directory.is_dir():
        return None
    versioned = [(v, p) for p in directory.glob(f"{stem}.so.*") if (v := _so_version(p, stem)) is not None]
    if versioned:
        return max(versioned)[1]
    plain = directory / f"{stem}.so"
    return plain if plain.exists() else None


def _searched(layouts: list[CudaLayout]) -> str:
    return "; ".join(layout.name for layout in layouts) or "no nvidia wheels and no CUDA toolkit"


def _header_layout(layouts: list[CudaLayout]) -> CudaLayout:
    for layout in layouts:
        if layout.headers_complete():
            return layout
    raise NvrtcUnavailable(
        "WW_ERR_PYTHON_NVRTC: the CUDA headers (cooperative_groups.h and CCCL's cuda/std/cstdint) were not found; "
        f"searched: {_searched(layouts)}; install the [nvrtc] extra (nvidia-cuda-nvrtc-cu12, nvidia-cuda-runtime-cu12, "
        "nvidia-cuda-cccl-cu12) or set CUDA_HOME to a CUDA toolkit"
    )


def find_cuda_library(stem: str) -> Path:
    """The CUDA library ``stem`` (``"libnvrtc"`` or ``"libcudart"``) of the first layout of
    :func:`cuda_layouts` that has it, preferring the layout the headers come from.

    :raises NvrtcUnavailable: no layout has it (one ``WW_ERR_PYTHON_NVRTC`` line naming the places searched)

    Example: ``ctypes.CDLL(str(find_cuda_library("libnvrtc")))``
    """
    layouts = cuda_layouts()
    try:
        headers = _header_layout(layouts).include
        preferred = [layout for layout in layouts if layout.include == headers]
    except NvrtcUnavailable:
        preferred = []
    for layout in preferred + layouts:
        found = _library_in(layout.nvrtc_dir if stem == "libnvrtc" else layout.runtime_dir, stem)
        if found is not None:
            return found
    raise NvrtcUnavailable(
        f"WW_ERR_PYTHON_NVRTC: {stem}.so was not found; searched: {_searched(layouts)}; install the [nvrtc] extra "
        "(nvidia-cuda-nvrtc-cu12, nvidia-cuda-runtime-cu12, nvidia-cuda-cccl-cu12) or set CUDA_HOME to a CUDA toolkit"
    )


def cuda_include_dirs() -> list[Path]:
    """The CUDA runtime and CCCL include directories, from the first complete layout of :func:`cuda_layouts`.

    :raises NvrtcUnavailable: no layout has both

    Example: ``[f"-I{d}" for d in cuda_include_dirs()]``
    """
    layout = _header_layout(cuda_layouts())
    cccl = layout.cccl_dir()
    assert cccl is not None  # headers_complete() checked it
    return [layout.include] if cccl == layout.include else [layout.include, cccl]


def check_architectures(nvrtc_major: int) -> tuple[int, ...]:
    """The architectures the check compiles for: :data:`CHECK_ARCHITECTURES`, with sm_75 in place
    of sm_70 for NVRTC 13 and newer (which no longer targets compute_70).

    Example: ``check_architectures(13) == (75, 80, 90)``
    """
    return CHECK_ARCHITECTURES if nvrtc_major < 13 else tuple(75 if cc == 70 else cc for cc in CHECK_ARCHITECTURES)


def probe_compile_options(cuda_headers: bool = True) -> tuple[str, ...]:
    """The NVRTC options a source that includes ``warpwatch/probe-device.cuh`` needs (no architecture):
    C++17 and the include path: this package's header directory, and with ``cuda_headers`` the CUDA
    runtime and CCCL include directories (:func:`cuda_include_dirs`; leave them out where the
    compiler's caller supplies its own CUDA headers).

    :raises NvrtcUnavailable: ``cuda_headers`` and no CUDA headers were found

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
        library = find_cuda_library("libnvrtc")
        try:
            # NVRTC dlopens libnvrtc-builtins.so.X.Y by name at its first compile; the CUDA 13
            # wheels carry no search path to it, so it is loaded first from beside libnvrtc
            # (a library already loaded under that name is the one dlopen returns).
            for builtins in sorted(library.parent.glob("libnvrtc-builtins.so.*")):
                ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
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
    for cc in check_architectures(major):
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
