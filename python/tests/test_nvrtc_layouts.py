"""Where warpwatch.nvrtc_check finds NVRTC and the CUDA headers: NVIDIA's CUDA 12 wheels, the
CUDA 13 wheels (everything under nvidia/cu13, CCCL under include/cccl) and a CUDA toolkit
($CUDA_HOME). The trees are built here file by file, the way each installs (the CUDA 13 layout
as seen on an H100 machine with cupy-cuda13x and torch cu130); the real CUDA 12 wheels are
compiled with in test_cupy_support.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from warpwatch import nvrtc_check


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def _cu13_wheels(root: Path, cccl: bool) -> None:
    _touch(root / "cu13" / "lib" / "libnvrtc.so.13")
    _touch(root / "cu13" / "lib" / "libnvrtc.alt.so.13")
    _touch(root / "cu13" / "lib" / "libnvrtc-builtins.so.13.0")
    _touch(root / "cu13" / "lib" / "libcudart.so.13")
    _touch(root / "cu13" / "include" / "cooperative_groups.h")
    if cccl:
        _touch(root / "cu13" / "include" / "cccl" / "cuda" / "std" / "cstdint")


def _toolkit(home: Path) -> None:
    lib = home / "targets" / "x86_64-linux" / "lib"
    _touch(lib / "libnvrtc.so")
    _touch(lib / "libnvrtc.so.13")
    _touch(lib / "libnvrtc.so.13.0.88")
    _touch(lib / "libcudart.so.13")
    _touch(home / "include" / "cooperative_groups.h")
    _touch(home / "include" / "cccl" / "cuda" / "std" / "cstdint")


@pytest.fixture
def roots(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """The nvidia namespace roots nvrtc_check sees (empty until a test adds one); no toolkit."""
    found: list[Path] = []
    monkeypatch.setattr(nvrtc_check, "_nvidia_roots", lambda: list(found))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "no-toolkit"))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    return found


def test_cuda13_wheels_give_nvrtc_13_the_cudart_beside_it_and_cccl_under_include(roots: list[Path], tmp_path: Path) -> None:
    wheels = tmp_path / "site" / "nvidia"
    _cu13_wheels(wheels, cccl=True)
    roots.append(wheels)
    assert nvrtc_check.find_cuda_library("libnvrtc") == wheels / "cu13" / "lib" / "libnvrtc.so.13"
    assert nvrtc_check.find_cuda_library("libcudart") == wheels / "cu13" / "lib" / "libcudart.so.13"
    assert nvrtc_check.cuda_include_dirs() == [wheels / "cu13" / "include", wheels / "cu13" / "include" / "cccl"]


def test_headers_come_from_the_toolkit_when_the_wheels_lack_cccl_and_nvrtc_from_the_same_place(roots: list[Path], tmp_path: Path,
                                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = tmp_path / "site" / "nvidia"
    _cu13_wheels(wheels, cccl=False)
    roots.append(wheels)
    home = tmp_path / "cuda-13.0"
    _toolkit(home)
    monkeypatch.setenv("CUDA_HOME", str(home))
    assert nvrtc_check.cuda_include_dirs() == [home / "include", home / "include" / "cccl"]
    # The highest versioned name wins over the unversioned link.
    assert nvrtc_check.find_cuda_library("libnvrtc") == home / "targets" / "x86_64-linux" / "lib" / "libnvrtc.so.13.0.88"


def test_cuda12_wheels_are_preferred_and_keep_their_split_directories(roots: list[Path], tmp_path: Path) -> None:
    wheels = tmp_path / "site" / "nvidia"
    _touch(wheels / "cuda_nvrtc" / "lib" / "libnvrtc.so.12")
    _touch(wheels / "cuda_runtime" / "lib" / "libcudart.so.12")
    _touch(wheels / "cuda_runtime" / "include" / "cooperative_groups.h")
    _touch(wheels / "cuda_cccl" / "include" / "cuda" / "std" / "cstdint")
    _cu13_wheels(wheels, cccl=True)
    roots.append(wheels)
    assert nvrtc_check.find_cuda_library("libnvrtc") == wheels / "cuda_nvrtc" / "lib" / "libnvrtc.so.12"
    assert nvrtc_check.find_cuda_library("libcudart") == wheels / "cuda_runtime" / "lib" / "libcudart.so.12"
    assert nvrtc_check.cuda_include_dirs() == [wheels / "cuda_runtime" / "include", wheels / "cuda_cccl" / "include"]


def test_nothing_installed_is_one_coded_line_naming_every_place_searched(roots: list[Path], tmp_path: Path) -> None:
    with pytest.raises(nvrtc_check.NvrtcUnavailable) as raised:
        nvrtc_check.find_cuda_library("libnvrtc")
    message = str(raised.value)
    assert message.startswith("WW_ERR_PYTHON_NVRTC: libnvrtc.so was not found; searched: ")
    assert str(tmp_path / "no-toolkit") in message and "\n" not in message
    with pytest.raises(nvrtc_check.NvrtcUnavailable, match=r"^WW_ERR_PYTHON_NVRTC: the CUDA headers"):
        nvrtc_check.cuda_include_dirs()


def test_nvrtc_13_checks_sm_75_instead_of_sm_70() -> None:
    assert nvrtc_check.check_architectures(12) == (70, 80, 90)
    assert nvrtc_check.check_architectures(13) == (75, 80, 90)
