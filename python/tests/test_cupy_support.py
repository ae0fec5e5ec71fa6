"""CuPy/NVRTC host glue without a GPU: the CuPy example's kernel source, which includes the probe
header, compiles with real NVRTC (the [nvrtc] wheels) and the options CuPy is given, to PTX and a
cubin for sm_80; the ProbeBuffers parameter NVRTC lays out is the 40 bytes the host packs. The
GPU examples (CuPy, PyTorch load_inline) exit cleanly where their framework or a GPU is absent."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from warpwatch import cupy_support
from warpwatch.examples.escape_source import ESCAPE_SOURCE, EXACT_OPTIONS, GROUP_SIZES, launch_shape
from warpwatch.nvrtc_check import compile_with_probe, include_dir, probe_compile_options
from warpwatch.probe_buffers import PROBE_BUFFERS_DTYPE

PACKAGE_PARENT = Path(cupy_support.__file__).resolve().parents[1]


def test_cupy_gets_the_options_nvrtc_check_compiles_with() -> None:
    options = cupy_support.cupy_compile_options(EXACT_OPTIONS)
    assert options == (*probe_compile_options(), *EXACT_OPTIONS)
    assert options[:2] == ("-std=c++17", f"-I{include_dir()}")
    assert any(o.endswith("cuda_runtime/include") for o in options) and any(o.endswith("cuda_cccl/include") for o in options)
    assert cupy_support.cupy_compile_options(cuda_headers=False) == ("-std=c++17", f"-I{include_dir()}")


@pytest.mark.parametrize("arch", ["compute_80", "sm_80"])
def test_the_cupy_examples_kernel_source_compiles_with_nvrtc_for_sm_80(arch: str) -> None:
    out = compile_with_probe(ESCAPE_SOURCE, arch, extra_options=EXACT_OPTIONS, name="cupy_escape.cu")
    if arch.startswith("sm_"):
        assert out[:4] == b"\x7fELF"
        for n in GROUP_SIZES:
            assert f"ww_escape_n{n}".encode() in out
        return
    ptx = out.decode()
    assert re.search(r"^\.target sm_80", ptx, re.M)
    for n in GROUP_SIZES:
        assert re.search(rf"\.entry ww_escape_n{n}\(", ptx)
        # Parameter 1 is warpwatch::ProbeBuffers by value: the bytes probe_buffers_value packs.
        param = re.search(rf"\.param \.align (\d+) \.b8 ww_escape_n{n}_param_1\[(\d+)\]", ptx)
        assert param is not None and (int(param.group(1)), int(param.group(2))) == (8, PROBE_BUFFERS_DTYPE.itemsize)
    assert "fma.rn.f64" not in ptx  # --fmad=false: the counts equal the host's reference exactly


def test_raw_kernel_and_raw_module_hand_cupy_the_probe_options(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    def raw_kernel(*a: Any, **k: Any) -> str:
        calls.append(("RawKernel", a, k))
        return "kernel"

    def raw_module(*a: Any, **k: Any) -> str:
        calls.append(("RawModule", a, k))
        return "module"

    stub = types.ModuleType("cupy")
    setattr(stub, "RawKernel", raw_kernel)
    setattr(stub, "RawModule", raw_module)
    monkeypatch.setitem(sys.modules, "cupy", stub)
    assert cupy_support.raw_kernel("src", "k", options=("-DX=1",)) == "kernel"
    assert cupy_support.raw_module("src", name_expressions=["k<8>"]) == "module"
    expected = cupy_support.cupy_compile_options()
    assert calls == [("RawKernel", ("src", "k"), {"options": (*expected, "-DX=1"), "backend": "nvrtc"}),
                     ("RawModule", (), {"code": "src", "options": expected, "backend": "nvrtc", "name_expressions": ["k<8>"]})]


def test_launch_shape_covers_every_group() -> None:
    for n in GROUP_SIZES:
        for groups in (1, 7, 64, 1000):
            blocks, threads = launch_shape(groups, n)
            assert blocks * threads // 32 * (32 // n) >= groups > (blocks - 1) * threads // 32 * (32 // n)


def _run_example(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_PARENT), "PYTHONSAFEPATH": "1"}
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("example,framework", [("torch_escape", "torch"), ("cupy_escape", "cupy")])
def test_gpu_examples_exit_cleanly_without_their_framework(tmp_path: Path, example: str, framework: str) -> None:
    # python/install.sh installs neither torch (~3 GB of CUDA wheels) nor CuPy, and there is no GPU here.
    assert importlib.util.find_spec(framework) is None, f"{framework} is installed: this test expects the CPU-only venv"
    out = tmp_path / "frames.bin"
    result = _run_example(f"warpwatch.examples.{example}", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(rf"python -m warpwatch\.examples\.{example}: skipped: no {'torch' if framework == 'torch' else 'CuPy'} \(ModuleNotFoundError: .*\)\n",
                        result.stdout), result.stdout
    assert not out.exists()  # no recorder was opened
    bad = _run_example(f"warpwatch.examples.{example}", "--out", str(out), "--n", "5")
    assert bad.returncode == 2 and bad.stderr.startswith("WW_ERR_PYTHON_EXAMPLE: --n must be one of (8, 32), got 5")
