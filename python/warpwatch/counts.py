"""Frames of one launch from per-lane iteration counts (and clocks, where the target has them).

The host side of every Python target: a kernel stores each lane's (element's) iteration count
w_i into an array; :func:`launch_frames` groups the lanes (n consecutive units form a group, the
probe's numbering, launch-shape.hpp) and builds the LaunchSummary and GroupSamples frames the
C++ recorder would write for the same counts: the same per-group H, histogram bins, and hash
selection of sampled groups for the same launchId (device-common.hpp ``isGroupSampled``).

**Counts only** (no clock on the target: Numba's CUDA simulator, Triton's interpreter): the
frames follow SPEC.md "Counts-only frames": sumSimtClocks = sumMimdClocks = 0,
sumMeasuredLoss = 0, and every sample's clocks 0, so that no reader reports a measured loss that
was not measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .frame import (
    MAX_COUNT,
    MAX_GROUP_SAMPLES,
    U32_MAX,
    Device,
    Frame,
    GroupSample,
    GroupSamples,
    IdentityFields,
    LaunchSummary,
    SelectionName,
    Source,
    splitmix64,
)

_POWERS_OF_TWO = np.array([1 << k for k in range(33)], dtype=np.uint64)


def histogram_bins_of(values: np.ndarray) -> np.ndarray:
    """Histogram bins (SPEC.md) of an array of u32 counts, vectorised; equals histogram_bin_of per value."""
    v = np.asarray(values, dtype=np.uint64)
    e = np.searchsorted(_POWERS_OF_TWO, v, side="right").astype(np.int64) - 1  # floor(log2 v) for v >= 1
    e = np.maximum(e, 10)
    sub = (v >> (e - 6).astype(np.uint64)) & np.uint64(63)
    log_bins = 1024 + (e - 10) * 64 + sub.astype(np.int64)
    return np.where(v < 1024, v.astype(np.int64), log_bins)


def fit_sampling_stride(selection: SelectionName, stride: int, group_count: int, capacity: int, groups_per_block: int = 0) -> int:
    """The stride a launch uses so its sampled groups fit ``capacity`` slots (launch-totals.hpp ``fitSamplingStride``)."""
    if stride == 0 or group_count == 0 or capacity == 0:
        return stride
    block = selection == "block" and groups_per_block > 0
    units = math.ceil(group_count / groups_per_block) if block else float(group_count)
    slots = math.floor(capacity / groups_per_block) if block else float(capacity)
    if slots < 1:
        return U32_MAX
    fits = float(slots)
    if selection == "hash" or block:
        root = (-8.0 + math.sqrt(64.0 + 4.0 * slots)) / 2.0
        fits = root * root
    needed = math.ceil(units / fits)
    if needed <= stride:
        return stride
    return U32_MAX if needed >= U32_MAX else int(needed)


def sampled_group_indices(selection: SelectionName, launch_id: int, group_count: int, stride: int, groups_per_block: int = 0) -> np.ndarray:
    """Indices of the groups the C++ recorder samples for this launch (ascending)."""
    if stride == 0 or group_count == 0:
        return np.zeros(0, dtype=np.int64)
    if selection == "stride":
        return np.arange(0, group_count, stride, dtype=np.int64)
    units = group_count if selection == "hash" else math.ceil(group_count / groups_per_block)
    picked = [u for u in range(units) if splitmix64(launch_id ^ u) % stride == 0]
    if selection == "hash":
        return np.array(picked, dtype=np.int64)
    out = [g for u in picked for g in range(u * groups_per_block, min((u + 1) * groups_per_block, group_count))]
    return np.array(out, dtype=np.int64)


@dataclass
class LaunchClocks:
    """Per-group clocks of a launch, where the target has a clock: c0 and c_end per group, c_i per lane (ticks)."""

    start: np.ndarray  # shape (groups,)
    end: np.ndarray  # shape (groups,)
    lane_finish: np.ndarray  # shape (groups, n)
    clock_hz: int


@dataclass
class LaunchInfo:
    """Who and what a launch's frames describe."""

    job: str
    kernel: str
    launch_id: int
    group_size: int
    source: Source = "cuda"
    sync: bool = False
    device: Optional[Device] = None
    start_unix_nanos: int = 0
    end_unix_nanos: int = 0
    selection: SelectionName = "hash"
    sampling_stride: int = 16
    groups_per_block: int = 0
    sample_capacity: int = MAX_GROUP_SAMPLES
    #: Groups launched, for frames built from probe buffers (probe_buffers.probe_frames); 0 = groups counted.
    #: launch_frames takes it from the counts instead.
    group_count: int = 0


def launch_frames(info: LaunchInfo, counts: np.ndarray | Sequence[int], clocks: Optional[LaunchClocks] = None) -> list[Frame]:
    """The LaunchSummary and GroupSamples frames of one launch (frameSequence 0; the recorder numbers them).

    :param counts: per-lane iteration counts in unit order (unit u = group u // n, lane u % n),
        length a multiple of n; or a (groups, n) array
    :param clocks: per-group clocks, or None for a counts-only launch (SPEC.md "Counts-only frames")
    :raises ValueError: counts not a whole number of groups, negative, or above 2^32-1

    Example: ``launch_frames(LaunchInfo("job", "escape", 7, 32), counts)``
    """
    n = info.group_size
    flat = np.asarray(counts)
    if flat.size % n != 0:
        raise ValueError(f"WW_ERR_PYTHON_COUNTS: {flat.size} counts are not a whole number of groups of {n}")
    if flat.size and (flat.min() < 0 or flat.max() > U32_MAX):
        raise ValueError("WW_ERR_PYTHON_COUNTS: iteration counts must be 0..2^32-1")
    w = flat.astype(np.uint64).reshape(-1, n)
    groups = w.shape[0]
    device = info.device or Device()
    maxima = w.max(axis=1) if groups else np.zeros(0, dtype=np.uint64)
    sums = w.sum(axis=1) if groups else np.zeros(0, dtype=np.uint64)
    h = np.where(sums == 0, 1.0, n * maxima.astype(np.float64) / np.maximum(sums, 1).astype(np.float64))
    bins, bin_counts = np.unique(histogram_bins_of(w.reshape(-1)), return_counts=True)
    if clocks is None:
        simt = mimd = 0
        measured = 0.0
    else:
        start = clocks.start.astype(np.uint64)
        end = clocks.end.astype(np.uint64)
        finish = clocks.lane_finish.astype(np.uint64)
        simt_per = n * (end - start)
        mimd_per = np.where(finish > start[:, None], finish - start[:, None], 0).sum(axis=1)
        simt, mimd = int(simt_per.sum()), int(mimd_per.sum())
        measured = float(np.where(mimd_per == 0, 1.0, simt_per.astype(np.float64) / np.maximum(mimd_per, 1).astype(np.float64)).sum())
        device = Device(device.name, device.uuid, device.compute_capability, clocks.clock_hz)
    identity = IdentityFields(job=info.job, kernel=info.kernel, launch_id=info.launch_id, source=info.source, group_size=n,
                              sync=info.sync, device=device, start_unix_nanos=info.start_unix_nanos, end_unix_nanos=info.end_unix_nanos)
    stride = fit_sampling_stride(info.selection, info.sampling_stride, groups, info.sample_capacity, info.groups_per_block)
    picked = sampled_group_indices(info.selection, info.launch_id, groups, stride, info.groups_per_block)
    kept = picked[: info.sample_capacity]
    dropped = len(picked) - len(kept)
    summary = LaunchSummary(**identity, frame_sequence=0, group_count=groups, groups_counted=groups, sum_simt_clocks=simt, sum_mimd_clocks=mimd,
                            sum_measured_loss=measured, sum_counts_loss=float(h.sum()), sum_max_counts=int(maxima.sum()),
                            sum_counts=int(sums.sum()), dropped_samples=dropped,
                            histogram=[(int(b), int(c)) for b, c in zip(bins, bin_counts)])
    if summary.sum_counts > MAX_COUNT:
        raise ValueError("WW_ERR_PYTHON_COUNTS: the launch's iteration total exceeds 2^53-1")
    frames: list[Frame] = [summary]
    if stride == 0 or not kept.size:
        return frames  # as the C++ recorder: no GroupSamples frame for a launch without samples
    samples: list[GroupSample] = []
    for g in kept.tolist():
        if clocks is None:
            samples.append(GroupSample(g, 0, 0, [int(x) for x in w[g]], [0] * n))
        else:
            samples.append(GroupSample(g, int(clocks.start[g]), int(clocks.end[g]), [int(x) for x in w[g]], [int(x) for x in clocks.lane_finish[g]]))
    per_block = info.groups_per_block if info.selection == "block" else 0
    for at in range(0, len(samples), MAX_GROUP_SAMPLES):
        frames.append(GroupSamples(**identity, frame_sequence=0, group_count=groups, selection=info.selection, sampling_stride=stride,
                                   groups_per_block=per_block, groups=samples[at:at + MAX_GROUP_SAMPLES]))
    return frames
