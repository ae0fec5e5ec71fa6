"""The device headers the package ships (for NVRTC users) are the repository's, unchanged."""

from __future__ import annotations

from pathlib import Path

from warpwatch.nvrtc_check import include_dir

REPO = Path(__file__).resolve().parents[2]


def test_shipped_device_headers_equal_the_repository_headers() -> None:
    for name in ("probe-device.cuh", "device-common.hpp"):
        shipped = include_dir() / "warpwatch" / name
        assert shipped.is_file(), shipped
        assert shipped.read_bytes() == (REPO / "kernels" / "include" / "warpwatch" / name).read_bytes(), name


def test_probe_device_header_includes_no_host_only_header() -> None:
    # NVRTC has no C++ standard library: only <cooperative_groups.h>, <cuda/std/...> and our own headers.
    for name in ("probe-device.cuh", "device-common.hpp"):
        text = (REPO / "kernels" / "include" / "warpwatch" / name).read_text()
        includes = [line.split()[1] for line in text.splitlines() if line.startswith("#include")]
        for header in includes:
            allowed = header in ('"device-common.hpp"', "<cooperative_groups.h>", "<cuda/std/cstdint>", "<cstdint>")
            assert allowed, f"{name} includes {header}"
