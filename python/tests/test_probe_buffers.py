"""The probe-buffer layouts and frames against the C++ recorder: the same LaunchTotals and
GroupSampleSlot bytes (filled by the C++ LaunchAccumulator, the CPU twin of the device probe)
give byte-identical frames from the C++ frame builder and from warpwatch.probe_buffers."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np

from warpwatch.counts import LaunchInfo
from warpwatch.frame import Device, LaunchSummary, decode_frames, encode_frame
from warpwatch.probe_buffers import GROUP_SAMPLE_SLOT_DTYPE, LAUNCH_TOTALS_DTYPE, PROBE_BUFFERS_DTYPE, probe_buffers_value, probe_frames

REPO = Path(__file__).resolve().parents[2]

SOURCE = r"""
#include <cstddef>
#include <cstdio>
#include <fstream>
#include "warpwatch/launch-accumulator.hpp"
#include "warpwatch/launch-frames.hpp"
using namespace warpwatch;
int main(int argc, char** argv) {
  std::printf("%zu %zu %zu\n", sizeof(LaunchTotals), sizeof(GroupSampleSlot), sizeof(ProbeBuffers));
  std::printf("%zu %zu %zu %zu %zu %zu %zu\n", offsetof(ProbeBuffers, totals), offsetof(ProbeBuffers, samples), offsetof(ProbeBuffers, sampleCapacity),
              offsetof(ProbeBuffers, samplingStride), offsetof(ProbeBuffers, launchId), offsetof(ProbeBuffers, selection), offsetof(ProbeBuffers, groupsPerBlock));
  std::printf("%zu %zu %zu %zu\n", offsetof(LaunchTotals, groupsCounted), offsetof(LaunchTotals, sumMeasuredLoss), offsetof(LaunchTotals, sampleSlotsClaimed),
              offsetof(GroupSampleSlot, laneFinishClocks));
  const unsigned n = 6;
  const std::uint64_t launchId = 0x1234567890ABCDEFull, groups = 700;
  LaunchAccumulator acc(n, launchId, {Selection::Hash, 5, 0}, 100);  // ~140 selected, 100 fit: drops counted
  std::uint64_t state = 7;
  for (std::uint64_t g = 0; g < groups; ++g) {
    GroupMeasurement m;
    m.groupIndex = g;
    m.startClock = 1000 * g;
    std::uint64_t last = m.startClock;
    for (unsigned l = 0; l < n; ++l) {
      state = splitmix64(state);
      m.laneCounts[l] = static_cast<std::uint32_t>(state % 3000);
      m.laneFinishClocks[l] = m.startClock + 3 * m.laneCounts[l] + l;
      if (m.laneFinishClocks[l] > last) last = m.laneFinishClocks[l];
    }
    m.endClock = last + 11;
    acc.addGroup(m);
  }
  LaunchTotals totals = acc.totals();
  totals.sampleSlotsClaimed = static_cast<unsigned>(acc.samples().size());
  std::ofstream(argv[1], std::ios::binary).write(reinterpret_cast<const char*>(&totals), sizeof totals);
  std::ofstream(argv[2], std::ios::binary).write(reinterpret_cast<const char*>(acc.samples().data()), acc.samples().size() * sizeof(GroupSampleSlot));
  LaunchInfo info;
  info.job = "probe-job"; info.kernel = "probe-kernel"; info.source = Source::Cuda; info.groupSize = n; info.sync = true;
  info.device.name = "NVIDIA H100"; info.device.clockHz = 1755000000; info.device.computeCapabilityMajor = 9;
  for (int i = 0; i < 16; ++i) info.device.uuid[i] = static_cast<std::uint8_t>(i * 7);
  info.launchId = launchId; info.groupCount = groups; info.startUnixNanos = 1700000000000000000ull; info.endUnixNanos = 1700000000000500000ull;
  info.selection = Selection::Hash; info.samplingStride = 5;
  std::uint32_t sequence = 0;
  std::ofstream out(argv[3], std::ios::binary);
  auto summary = encodeFrame(buildLaunchSummary(info, totals, sequence++));
  out.write(reinterpret_cast<const char*>(summary.data()), summary.size());
  for (const auto& f : buildGroupSamples(info, acc.samples().data(), acc.samples().size(), sequence)) {
    auto bytes = encodeFrame(f);
    out.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
}
"""


def _offset(dtype: np.dtype[np.void], name: str) -> int:
    """The byte offset of field ``name`` in a structured dtype."""
    assert dtype.fields is not None
    return int(dtype.fields[name][1])


def test_probe_buffers_give_the_cpp_recorders_frames_byte_for_byte(tmp_path: Path) -> None:
    compiler = shutil.which("g++") or shutil.which("c++")
    assert compiler is not None, "a C++ compiler (g++) is needed: the repository's C++ tests need it too"
    (tmp_path / "ref.cpp").write_text(SOURCE)
    exe = tmp_path / "ref"
    subprocess.run([compiler, "-std=c++17", "-O1", f"-I{REPO / 'kernels' / 'include'}", str(tmp_path / "ref.cpp"), "-o", str(exe), "-pthread"], check=True)
    out = subprocess.run([str(exe), str(tmp_path / "totals.bin"), str(tmp_path / "slots.bin"), str(tmp_path / "frames.bin")],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    sizes, offsets, inner = ([int(x) for x in line.split()] for line in out[:3])
    assert sizes == [LAUNCH_TOTALS_DTYPE.itemsize, GROUP_SAMPLE_SLOT_DTYPE.itemsize, PROBE_BUFFERS_DTYPE.itemsize] == [19528, 408, 40]
    assert offsets == [_offset(PROBE_BUFFERS_DTYPE, k) for k in PROBE_BUFFERS_DTYPE.names or ()]
    assert inner == [_offset(LAUNCH_TOTALS_DTYPE, "groupsCounted"), _offset(LAUNCH_TOTALS_DTYPE, "sumMeasuredLoss"),
                     _offset(LAUNCH_TOTALS_DTYPE, "sampleSlotsClaimed"), _offset(GROUP_SAMPLE_SLOT_DTYPE, "laneFinishClocks")]

    totals = (tmp_path / "totals.bin").read_bytes()
    slots = np.frombuffer((tmp_path / "slots.bin").read_bytes(), dtype=GROUP_SAMPLE_SLOT_DTYPE)
    info = LaunchInfo(job="probe-job", kernel="probe-kernel", launch_id=0x1234567890ABCDEF, group_size=6, source="cuda", sync=True,
                      device=Device("NVIDIA H100", bytes(i * 7 for i in range(16)), (9, 0), 1755000000),
                      start_unix_nanos=1700000000000000000, end_unix_nanos=1700000000000500000, selection="hash", sampling_stride=5,
                      group_count=700)
    frames = probe_frames(info, totals, slots)
    expected = (tmp_path / "frames.bin").read_bytes()
    assert b"".join(encode_frame(f) for f in frames) == expected
    summary = decode_frames(expected)[0]
    assert isinstance(summary, LaunchSummary)
    assert summary.dropped_samples > 0 and len(slots) == 100  # the capacity overflow is carried, not hidden


def test_probe_buffers_value_layout() -> None:
    value = probe_buffers_value(0x1000, 0x2000, 256, 16, 2**64 - 1, "block", 24)
    raw = value.tobytes()
    assert len(raw) == 40
    assert int.from_bytes(raw[0:8], "little") == 0x1000 and int.from_bytes(raw[8:16], "little") == 0x2000
    assert int.from_bytes(raw[16:20], "little") == 256 and int.from_bytes(raw[20:24], "little") == 16
    assert int.from_bytes(raw[24:32], "little") == 2**64 - 1 and raw[32] == 2 and int.from_bytes(raw[36:40], "little") == 24
