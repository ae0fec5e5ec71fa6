"""The Python frame codec against SPEC.md, the repository's golden vectors and the C++ functions."""

from __future__ import annotations

import random
from dataclasses import replace
import shutil
import subprocess
from pathlib import Path

import pytest

from warpwatch.frame import (
    HISTOGRAM_BIN_COUNT,
    Device,
    FrameError,
    GroupSample,
    GroupSamples,
    LaunchSummary,
    SelectionName,
    crc32c,
    decode_frame,
    decode_frames,
    encode_frame,
    histogram_bin_of,
    histogram_bin_range,
    histogram_bin_representative,
    is_group_sampled,
    splitmix64,
)

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "protocol" / "vectors"


def test_crc32c_check_values() -> None:
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0
    data = bytes(range(256)) * 5 + b"tail"
    # A running checksum over chunks equals the one-shot value (the 8-byte path and the tail path).
    assert crc32c(data[700:], crc32c(data[:700])) == crc32c(data)


def test_worked_example_of_spec_decodes_to_its_fields() -> None:
    frame = decode_frame((VECTORS / "cpp-launch-summary.bin").read_bytes())
    assert isinstance(frame, LaunchSummary)
    assert (frame.launch_id, frame.frame_sequence, frame.source, frame.group_size, frame.sync) == (0x0123456789ABCDEF, 7, "cpu", 4, True)
    assert (frame.start_unix_nanos, frame.end_unix_nanos) == (1700000000000000000, 1700000000123456789)
    assert frame.device == Device(name="cpu-lockstep", uuid=bytes(range(16)), compute_capability=(0, 0), clock_hz=1_000_000_000)
    assert frame.device.uuid_text == "00010203-0405-0607-0809-0a0b0c0d0e0f"
    assert (frame.job, frame.kernel) == ("golden-job", "matpow")
    assert (frame.group_count, frame.groups_counted, frame.sum_simt_clocks, frame.sum_mimd_clocks) == (3, 3, 123456, 100000)
    assert frame.sum_measured_loss == 3.75
    assert frame.sum_counts_loss == 1.6 + 1 + 8000 / 3040
    assert (frame.sum_max_counts, frame.sum_counts, frame.dropped_samples) == (2004, 3050, 1)
    assert frame.histogram == [(0, 4), (1, 1), (2, 1), (3, 1), (4, 1), (5, 2), (1024, 1), (1085, 1)]


@pytest.mark.parametrize("name", sorted(p.name for p in VECTORS.glob("*.bin") if not p.name.startswith("invalid-")))
def test_valid_vectors_reencode_byte_for_byte(name: str) -> None:
    data = (VECTORS / name).read_bytes()
    frames = decode_frames(data)
    assert frames
    assert b"".join(encode_frame(f) for f in frames) == data


@pytest.mark.parametrize("name", sorted(p.name for p in VECTORS.glob("invalid-*.bin")))
def test_invalid_vectors_are_rejected_with_their_code(name: str) -> None:
    code = "WW_ERR_FRAME_" + name.split("WW_ERR_FRAME_")[1].split("-")[0]
    with pytest.raises(FrameError) as error:
        decode_frame((VECTORS / name).read_bytes())
    assert error.value.code == code, str(error.value)


def _summary() -> LaunchSummary:
    """A valid one-group summary; ``replace(_summary(), field=...)`` for a variant."""
    return LaunchSummary(job="job", kernel="kernel", group_size=2, group_count=1, groups_counted=1, sum_counts_loss=1.0, sum_measured_loss=1.0,
                         sum_max_counts=3, sum_counts=6, histogram=[(3, 2)])


@pytest.mark.parametrize("field", ["job", "kernel", "device"])
@pytest.mark.parametrize("char", ["\x00", "\n", "\x1f", "\x7f", "\x80", "\x9f"])
def test_identity_strings_reject_control_characters(field: str, char: str) -> None:
    frame = _summary()
    if field == "device":
        frame.device = Device(name=f"gpu{char}x")
    else:
        setattr(frame, field, f"a{char}b")
    with pytest.raises(FrameError) as error:
        encode_frame(frame)
    assert error.value.code == "WW_ERR_FRAME_INVALID"
    assert "control characters" in str(error.value)


def test_decoder_rejects_control_characters_written_by_another_producer() -> None:
    good = encode_frame(replace(_summary(), kernel="kernel"))
    # Same length: patch the kernel's bytes to "ker\x07el" and fix the CRC.
    payload = bytearray(good[16:])
    at = payload.index(b"kernel")
    payload[at + 3] = 0x07
    patched = good[:12] + crc32c(payload).to_bytes(4, "little") + bytes(payload)
    with pytest.raises(FrameError) as error:
        decode_frame(patched)
    assert error.value.code == "WW_ERR_FRAME_INVALID"


def test_unicode_beyond_controls_is_fine() -> None:
    frame = replace(_summary(), job="trän-ü\u00a0日本", kernel="k😀", device=Device(name="\u00a0NVIDIA"))
    assert decode_frame(encode_frame(frame)) == frame


def test_limits_and_codes() -> None:
    with pytest.raises(FrameError, match="OVER_LIMIT"):
        encode_frame(replace(_summary(), job="j" * 256))
    with pytest.raises(FrameError, match="INVALID"):
        encode_frame(replace(_summary(), job="a/b"))
    with pytest.raises(FrameError, match="OVER_LIMIT"):
        encode_frame(replace(_summary(), group_size=33))
    with pytest.raises(FrameError, match="INVALID"):
        encode_frame(replace(_summary(), histogram=[(3, 1)]))  # total 1 != 1 group x 2 lanes
    with pytest.raises(FrameError, match="OVER_LIMIT"):
        encode_frame(replace(_summary(), groups_counted=2**53, group_count=2**53))
    with pytest.raises(FrameError, match="INVALID"):
        encode_frame(GroupSamples(job="j", kernel="k", group_size=1, group_count=4, selection="hash", groups_per_block=2))
    with pytest.raises(FrameError, match="INVALID"):
        encode_frame(GroupSamples(job="j", kernel="k", group_size=1, group_count=4, groups=[GroupSample(4, 0, 0, [1], [0])]))


def test_histogram_bins_follow_spec() -> None:
    assert [histogram_bin_of(v) for v in (0, 1023, 1024, 1039, 1040, 2000, 2**32 - 1)] == [0, 1023, 1024, 1024, 1025, 1085, HISTOGRAM_BIN_COUNT - 1]
    previous_high = -1
    for b in range(HISTOGRAM_BIN_COUNT):
        low, high = histogram_bin_range(b)
        assert low == previous_high + 1  # bins tile 0..2^32-1
        assert histogram_bin_of(low) == b and histogram_bin_of(high) == b
        if b >= 1024:
            assert (high - low) / low < 2**-6
        rep = histogram_bin_representative(b)
        assert abs(low - rep) / max(low, 1) <= 2**-7
        previous_high = high
    assert previous_high == 2**32 - 1


def _cpp_reference(lines: list[str]) -> list[str]:
    """Runs the C++ functions of kernels/include/warpwatch/device-common.hpp (what the C++ recorder
    and the device probe use) on the given queries, compiled with the host C++ compiler."""
    compiler = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    assert compiler is not None, "a C++ compiler (g++) is needed: the repository's C++ tests need it too"
    source = r"""
#include <cstdio>
#include <cinttypes>
#include "warpwatch/device-common.hpp"
int main() {
  char op[8]; unsigned long long a, b; unsigned s, per;
  while (std::scanf("%7s %llu %llu %u %u", op, &a, &b, &s, &per) == 5) {
    if (op[0] == 'm') std::printf("%llu\n", (unsigned long long)warpwatch::splitmix64(a));
    else if (op[0] == 'b') std::printf("%u\n", (unsigned)warpwatch::histogramBinOf((std::uint32_t)a));
    else std::printf("%d\n", warpwatch::isGroupSampled(static_cast<warpwatch::Selection>(op[0] - '0'), a, b, s, per) ? 1 : 0);
  }
}
"""
    build = Path(__file__).resolve().parent / ".cpp-reference"
    build.mkdir(exist_ok=True)
    (build / "ref.cpp").write_text(source)
    exe = build / "ref"
    subprocess.run([compiler, "-std=c++17", "-O1", f"-I{REPO / 'kernels' / 'include'}", str(build / "ref.cpp"), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True).stdout.split()
    shutil.rmtree(build, ignore_errors=True)
    return out


def test_hash_selection_and_bins_equal_the_cpp_recorder() -> None:
    rng = random.Random(25)
    queries: list[tuple[str, int, int, int, int]] = []
    for _ in range(300):
        queries.append(("m", rng.randrange(2**64), 0, 0, 0))
        queries.append(("b", rng.choice([rng.randrange(2048), rng.randrange(2**32)]), 0, 0, 0))
        launch = rng.choice([0, 1, rng.randrange(2**64), 2**64 - 1])
        group = rng.randrange(2**40)
        stride = rng.choice([0, 1, 2, 3, 7, 64, rng.randrange(1, 2**32)])
        per = rng.choice([0, 1, 8, rng.randrange(1, 65536)])
        for code in ("0", "1", "2"):
            queries.append((code, launch, group, stride, per))
    expected = _cpp_reference([" ".join(str(x) for x in q) for q in queries])
    got = []
    for op, a, b, s, per in queries:
        if op == "m":
            got.append(str(splitmix64(a)))
        elif op == "b":
            got.append(str(histogram_bin_of(a)))
        else:
            selections: tuple[SelectionName, ...] = ("stride", "hash", "block")
            got.append("1" if is_group_sampled(selections[int(op)], a, b, s, per) else "0")
    assert got == expected
    # The selection is not trivial: some groups are in, some out.
    assert 0 < got.count("1") < len(got)
