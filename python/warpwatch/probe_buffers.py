"""Host side of the device probe for NVRTC-compiled kernels (CuPy ``RawKernel``/``RawModule``,
PyTorch JIT): the byte layout of what ``warpwatch/probe-device.cuh`` writes, and the frames the
C++ recorder builds from it (launch-frames.hpp ``buildLaunchSummary``/``buildGroupSamples``).

A launch hands the kernel a ``warpwatch::ProbeBuffers`` by value (:data:`PROBE_BUFFERS_DTYPE`,
filled by :func:`probe_buffers_value`) pointing at a zeroed ``LaunchTotals``
(:data:`LAUNCH_TOTALS_DTYPE`, 19 528 bytes) and ``sample_capacity`` ``GroupSampleSlot``\\ s
(:data:`GROUP_SAMPLE_SLOT_DTYPE`, 408 bytes each). After the launch, copy both back (on a
stream of your own, after an event recorded on the job's stream, so the job's stream is never
synchronised) and call :func:`probe_frames`. The layouts are fixed by
kernels/include/warpwatch/device-common.hpp; the tests compare them with the C++ compiler's.

Example (CuPy, GPU)::

    totals = cupy.zeros(1, dtype=LAUNCH_TOTALS_DTYPE); slots = cupy.zeros(256, dtype=GROUP_SAMPLE_SLOT_DTYPE)
    args = probe_buffers_value(totals.data.ptr, slots.data.ptr, 256, stride, launch_id, "hash")
    kernel((blocks,), (threads,), (work, args, groups))
    frames = probe_frames(info, totals.get()[0], slots.get())
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .counts import LaunchInfo
from .frame import (
    HISTOGRAM_BIN_COUNT,
    MAX_GROUP_SAMPLES,
    MAX_GROUP_SIZE,
    Device,
    Frame,
    GroupSample,
    GroupSamples,
    IdentityFields,
    LaunchSummary,
)

#: ``warpwatch::LaunchTotals`` (device-common.hpp), little-endian, no padding.
LAUNCH_TOTALS_DTYPE = np.dtype([
    ("histogram", "<u8", (HISTOGRAM_BIN_COUNT,)),
    ("groupsCounted", "<u8"),
    ("sumSimtClocks", "<u8"),
    ("sumMimdClocks", "<u8"),
    ("sumMaxCounts", "<u8"),
    ("sumCounts", "<u8"),
    ("droppedSamples", "<u8"),
    ("sumMeasuredLoss", "<f8"),
    ("sumCountsLoss", "<f8"),
    ("sampleSlotsClaimed", "<u4"),
    ("reserved", "<u4"),
])

#: ``warpwatch::GroupSampleSlot``.
GROUP_SAMPLE_SLOT_DTYPE = np.dtype([
    ("groupIndex", "<u8"),
    ("startClock", "<u8"),
    ("endClock", "<u8"),
    ("laneCounts", "<u4", (MAX_GROUP_SIZE,)),
    ("laneFinishClocks", "<u8", (MAX_GROUP_SIZE,)),
])

#: ``warpwatch::ProbeBuffers`` as a kernel argument (by value): pointers, capacity, stride,
#: launchId, selection (u8 enum) and groupsPerBlock, with the C++ alignment padding.
PROBE_BUFFERS_DTYPE = np.dtype({
    "names": ["totals", "samples", "sampleCapacity", "samplingStride", "launchId", "selection", "groupsPerBlock"],
    "formats": ["<u8", "<u8", "<u4", "<u4", "<u8", "u1", "<u4"],
    "offsets": [0, 8, 16, 20, 24, 32, 36],
    "itemsize": 40,
})

_SELECTION_CODES = {"stride": 0, "hash": 1, "block": 2}


def probe_buffers_value(totals_ptr: int, samples_ptr: int, sample_capacity: int, sampling_stride: int, launch_id: int,
                        selection: str = "hash", groups_per_block: int = 0) -> np.ndarray:
    """A ``ProbeBuffers`` value (a 0-d structured array; pass ``value`` or its bytes as the kernel's struct argument).

    :raises ValueError: ``WW_ERR_PYTHON_READBACK``: unknown selection
    """
    if selection not in _SELECTION_CODES:
        raise ValueError(f"WW_ERR_PYTHON_READBACK: selection must be stride, hash or block, got {selection!r}")
    value = np.zeros((), dtype=PROBE_BUFFERS_DTYPE)
    value["totals"], value["samples"] = totals_ptr, samples_ptr
    value["sampleCapacity"], value["samplingStride"] = sample_capacity, sampling_stride
    value["launchId"], value["selection"], value["groupsPerBlock"] = launch_id, _SELECTION_CODES[selection], groups_per_block
    return value


def probe_frames(info: LaunchInfo, totals: Any, slots: np.ndarray, clock_hz: int | None = None) -> list[Frame]:
    """The frames the C++ recorder writes for one probed launch (frameSequence 0, 1, …; the
    Python recorder renumbers them on submit).

    :param info: identity and sampling of the launch; ``info.group_count`` = groups launched
        (0: the groups the probe counted)
    :param totals: one ``LAUNCH_TOTALS_DTYPE`` record (or 19 528 bytes)
    :param slots: the ``GROUP_SAMPLE_SLOT_DTYPE`` array the kernel wrote; min(claimed, capacity) are valid
    :param clock_hz: the SM clock rate (``cudaDevAttrClockRate`` kHz × 1000); default ``info.device.clock_hz``
    """
    t = np.frombuffer(totals, dtype=LAUNCH_TOTALS_DTYPE)[0] if isinstance(totals, (bytes, bytearray, memoryview)) else totals
    device = info.device or Device()
    if clock_hz is not None:
        device = Device(device.name, device.uuid, device.compute_capability, clock_hz)
    group_count = info.group_count or int(t["groupsCounted"])
    identity = IdentityFields(job=info.job, kernel=info.kernel, launch_id=info.launch_id, source=info.source, group_size=info.group_size,
                              sync=info.sync, device=device, start_unix_nanos=info.start_unix_nanos, end_unix_nanos=info.end_unix_nanos)
    histogram = t["histogram"]
    bins = np.nonzero(histogram)[0]
    summary = LaunchSummary(**identity, frame_sequence=0, group_count=group_count, groups_counted=int(t["groupsCounted"]),
                            sum_simt_clocks=int(t["sumSimtClocks"]), sum_mimd_clocks=int(t["sumMimdClocks"]),
                            sum_measured_loss=float(t["sumMeasuredLoss"]), sum_counts_loss=float(t["sumCountsLoss"]),
                            sum_max_counts=int(t["sumMaxCounts"]), sum_counts=int(t["sumCounts"]), dropped_samples=int(t["droppedSamples"]),
                            histogram=[(int(b), int(histogram[b])) for b in bins])
    frames: list[Frame] = [summary]
    valid = min(int(t["sampleSlotsClaimed"]), len(slots))
    n = info.group_size
    for first in range(0, valid, MAX_GROUP_SAMPLES):
        groups = [GroupSample(int(s["groupIndex"]), int(s["startClock"]), int(s["endClock"]), [int(x) for x in s["laneCounts"][:n]],
                              [int(x) for x in s["laneFinishClocks"][:n]]) for s in slots[first:min(valid, first + MAX_GROUP_SAMPLES)]]
        frames.append(GroupSamples(**identity, frame_sequence=len(frames), group_count=group_count, selection=info.selection,
                                   sampling_stride=max(info.sampling_stride, 1),
                                   groups_per_block=info.groups_per_block if info.selection == "block" else 0, groups=groups))
    return frames
