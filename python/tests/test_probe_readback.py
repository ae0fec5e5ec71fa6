"""ProbeReadback (the host side of NVRTC-compiled probed kernels) against a fake GPU: device memory
as bytearrays, streams whose queued operations run only when the test says so, events that
complete then. A fake kernel writes what the device probe writes (probe-device.cuh: totals by
atomics, sample slots in claim order); the frames that come out are checked against a computation
from the per-lane counts made here, and against warpwatch.counts.launch_frames (the other frame
builder). And the job is never harmed: nothing waits on its stream, a hung or failing GPU call is
counted, close(timeout) returns."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from warpwatch.counts import LaunchClocks, LaunchInfo, launch_frames
from warpwatch.frame import Device, GroupSamples, LaunchSummary, SelectionName, decode_frames, histogram_bin_of, is_group_sampled
from warpwatch.probe_buffers import GROUP_SAMPLE_SLOT_DTYPE, LAUNCH_TOTALS_DTYPE, probe_buffers_value
from warpwatch.probe_readback import ProbeReadback
from warpwatch.recorder import Recorder

DEVICE = Device("Fake GPU", bytes(range(16)), (8, 0), 1_410_000_000)
SELECTIONS: dict[int, SelectionName] = {0: "stride", 1: "hash", 2: "block"}


class FakeBuffer:
    def __init__(self, ptr: int, nbytes: int) -> None:
        self.ptr = ptr
        self.data = bytearray(nbytes)


class FakeEvent:
    def __init__(self) -> None:
        self.done = False


class FakeGpu:
    """DeviceOps over host memory. Operations enqueued on a stream run when run(stream) is called."""

    def __init__(self, fail: frozenset[str] = frozenset(), hang: frozenset[str] = frozenset()) -> None:
        self.fail = fail
        self.hang = hang
        self.release = threading.Event()
        self.buffers: dict[int, FakeBuffer] = {}
        self.queues: dict[Any, list[tuple[str, Callable[[], None]]]] = {}
        self.log: list[tuple[Any, str]] = []  # (stream, operation) in the order the GPU ran them
        self._ptr = itertools.count(0x10000, 0x100000)

    def _maybe_fail(self, op: str) -> None:
        if op in self.hang:
            self.release.wait()
        if op in self.fail:
            raise RuntimeError(f"fake {op} failure")

    def enqueue(self, stream: Any, name: str, op: Callable[[], None]) -> None:
        self.queues.setdefault(stream, []).append((name, op))

    def run(self, stream: Any) -> None:
        for name, op in self.queues.pop(stream, []):
            op()
            self.log.append((stream, name))

    def at(self, ptr: int) -> FakeBuffer:
        return self.buffers[ptr]

    # -- DeviceOps --
    def device(self) -> Device:
        return DEVICE

    def alloc_device(self, nbytes: int) -> FakeBuffer:
        self._maybe_fail("alloc_device")
        buffer = FakeBuffer(next(self._ptr), nbytes)
        buffer.data[:] = b"\xab" * nbytes  # device memory is not zeroed: the clear must be
        self.buffers[buffer.ptr] = buffer
        return buffer

    def device_pointer(self, buffer: FakeBuffer) -> int:
        return buffer.ptr

    def alloc_pinned(self, nbytes: int) -> FakeBuffer:
        return FakeBuffer(0, nbytes)

    def host_bytes(self, buffer: FakeBuffer) -> np.ndarray:
        return np.frombuffer(buffer.data, dtype=np.uint8)

    def clear_async(self, buffer: FakeBuffer, nbytes: int, stream: Any) -> None:
        self._maybe_fail("clear_async")
        self.enqueue(stream, "clear", lambda: buffer.data.__setitem__(slice(0, nbytes), bytes(nbytes)))

    def copy_to_host_async(self, host: FakeBuffer, device: FakeBuffer, nbytes: int, stream: Any) -> None:
        self._maybe_fail("copy_to_host_async")
        self.enqueue(stream, "copy", lambda: host.data.__setitem__(slice(0, nbytes), device.data[:nbytes]))

    def record_event(self, stream: Any) -> FakeEvent:
        self._maybe_fail("record_event")
        event = FakeEvent()
        self.enqueue(stream, "event", lambda: setattr(event, "done", True))
        return event

    def event_done(self, event: FakeEvent) -> bool:
        self._maybe_fail("event_done")
        return event.done

    def copy_to_host_private(self, host: FakeBuffer, device: FakeBuffer, nbytes: int) -> None:
        self._maybe_fail("copy_to_host_private")
        host.data[:nbytes] = device.data[:nbytes]
        self.log.append(("private", "copy"))


def clocks_of(counts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Synthetic clocks of the fake kernel: c0 = 1000 g, lane i finishes at c0 + 3 w_i + i, c_end = max + 11."""
    w = counts.reshape(-1, n).astype(np.uint64)
    start = (np.arange(w.shape[0], dtype=np.uint64) * 1000)
    finish = start[:, None] + 3 * w + np.arange(n, dtype=np.uint64)[None, :]
    end = finish.max(axis=1) + 11
    return start, end, finish


def fake_probe_kernel(gpu: FakeGpu, buffers: np.ndarray, counts: np.ndarray, n: int) -> Callable[[], None]:
    """What GroupProbe<n> writes for these per-lane counts (groups in reverse order: slots in claim order)."""
    b = buffers[0]
    selection, launch_id, stride = SELECTIONS[int(b["selection"])], int(b["launchId"]), int(b["samplingStride"])
    capacity, per_block = int(b["sampleCapacity"]), int(b["groupsPerBlock"])

    def run() -> None:
        t = np.frombuffer(gpu.at(int(b["totals"])).data, dtype=LAUNCH_TOTALS_DTYPE, count=1)[0]
        start, end, finish = clocks_of(counts, n)
        for g in reversed(range(len(counts) // n)):
            w = [int(x) for x in counts[g * n:(g + 1) * n]]
            simt = n * int(end[g] - start[g])
            mimd = sum(int(f - start[g]) for f in finish[g])
            t["groupsCounted"] += 1
            t["sumSimtClocks"] += simt
            t["sumMimdClocks"] += mimd
            t["sumMaxCounts"] += max(w)
            t["sumCounts"] += sum(w)
            t["sumMeasuredLoss"] += simt / mimd if mimd else 1.0
            t["sumCountsLoss"] += n * max(w) / sum(w) if sum(w) else 1.0
            for x in w:
                t["histogram"][histogram_bin_of(x)] += 1
            if stride and is_group_sampled(selection, launch_id, g, stride, per_block):
                slot = int(t["sampleSlotsClaimed"])
                t["sampleSlotsClaimed"] += 1
                if slot >= capacity:
                    t["droppedSamples"] += 1
                    continue
                s = np.frombuffer(gpu.at(int(b["samples"])).data, dtype=GROUP_SAMPLE_SLOT_DTYPE)[slot]
                s["groupIndex"], s["startClock"], s["endClock"] = g, start[g], end[g]
                s["laneCounts"][:n] = w
                s["laneFinishClocks"][:n] = finish[g]

    return run


def wait_for(predicate: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def launch(readback: ProbeReadback, gpu: FakeGpu, stream: Any, counts: np.ndarray, n: int) -> int:
    ticket = readback.begin_launch("escape", group_size=n, group_count=len(counts) // n, stream=stream, sync=True)
    gpu.enqueue(stream, "kernel", fake_probe_kernel(gpu, ticket.buffers, counts, n))
    readback.end_launch(ticket)
    return ticket.launch_id


@pytest.mark.parametrize("capacity", [256, 12])
def test_frames_from_the_probe_buffers_equal_a_computation_from_the_per_lane_counts(tmp_path: Path, capacity: int) -> None:
    rng = np.random.default_rng(20261127)
    n, groups = 8, 300
    counts = rng.geometric(0.05, size=n * groups).astype(np.uint32)
    counts[:n] = 0  # an all-zero group: H = 1 by convention
    out = tmp_path / "frames.bin"
    recorder = Recorder(str(out), job="cupy-job", sampling_stride=4)
    # A fixed launch id: thinned to fit 12 slots, the hash rule keeps ~1.7 of the 300 groups, and none
    # at all for about 17 % of random ids, which would leave the private copy untested.
    recorder._launch_base = 0x5EED0000
    gpu = FakeGpu()
    readback = ProbeReadback(recorder, gpu, staging_slots=2, sample_capacity=capacity)
    stream = "job-stream"
    launch_id = launch(readback, gpu, stream, counts, n)
    assert launch_id == 0x5EED0000

    time.sleep(0.05)
    assert readback.stats().frames_submitted == 0 and readback.stats().in_flight == 1  # the GPU has not got there
    assert gpu.log == []  # end_launch ran nothing and waited for nothing
    gpu.run(stream)
    assert wait_for(lambda: readback.stats().launches_recorded == 1)
    # The job's stream saw only the clear (before the kernel), the totals copy and the event; the
    # samples came over the private stream afterwards.
    assert gpu.log[:4] == [(stream, "clear"), (stream, "kernel"), (stream, "copy"), (stream, "event")]
    assert gpu.log[4:] == [("private", "copy")]  # this launch id has sampled groups (asserted below)
    assert readback.close(timeout=2).complete
    assert recorder.close(timeout=2).complete

    frames = decode_frames(out.read_bytes())
    summary = frames[0]
    samples = [f for f in frames[1:] if isinstance(f, GroupSamples)]
    assert isinstance(summary, LaunchSummary) and len(samples) == len(frames) - 1
    # Independent: sums, maxima, H, histogram from the counts.
    w = counts.reshape(-1, n).astype(np.int64)
    assert (summary.launch_id, summary.group_size, summary.group_count, summary.groups_counted) == (launch_id, n, groups, groups)
    assert summary.sum_counts == int(w.sum()) and summary.sum_max_counts == int(w.max(axis=1).sum())
    h = [n * int(g.max()) / int(g.sum()) if g.sum() else 1.0 for g in w]
    assert summary.sum_counts_loss == pytest.approx(sum(h), rel=1e-12)
    histogram: dict[int, int] = {}
    for x in counts.tolist():
        histogram[histogram_bin_of(x)] = histogram.get(histogram_bin_of(x), 0) + 1
    assert dict(summary.histogram) == histogram
    assert summary.device == DEVICE and summary.sync and summary.source == "cuda" and summary.job == "cupy-job"
    # Samples: the groups the hash rule picks at the stride the frames carry, with their lane counts.
    strides = {f.sampling_stride for f in samples}
    assert len(strides) == 1
    stride = strides.pop()
    assert stride == 4 if capacity == 256 else stride > 4  # thinned to fit 12 slots
    selected = [g for g in range(groups) if is_group_sampled("hash", launch_id, g, stride)]
    assert len(selected) >= 1
    got = {s.group_index: s for f in samples for s in f.groups}
    assert len(got) + summary.dropped_samples == len(selected) and set(got) <= set(selected) and len(got) == min(len(selected), capacity)
    for g, sample in got.items():
        assert sample.lane_counts == counts[g * n:(g + 1) * n].tolist()
    # The other frame builder, from the same counts and clocks, agrees on the summary.
    start, end, finish = clocks_of(counts, n)
    info = LaunchInfo("cupy-job", "escape", launch_id, n, sync=True, device=DEVICE, selection="hash", sampling_stride=stride, sample_capacity=10**6)
    reference = launch_frames(info, counts, LaunchClocks(start, end, finish, DEVICE.clock_hz))[0]
    assert isinstance(reference, LaunchSummary)
    for field in ("sum_simt_clocks", "sum_mimd_clocks", "sum_max_counts", "sum_counts", "histogram", "groups_counted"):
        assert getattr(summary, field) == getattr(reference, field), field
    assert summary.sum_measured_loss == pytest.approx(reference.sum_measured_loss, rel=1e-12)
    stats = readback.stats()
    assert stats.launches_begun == stats.launches_recorded == 1 and stats.balanced and stats.frames_submitted == len(frames)


def test_slots_are_reused_and_a_launch_without_a_free_slot_is_skipped_not_delayed(tmp_path: Path) -> None:
    out = tmp_path / "frames.bin"
    recorder = Recorder(str(out), job="job", sampling_stride=2)
    gpu = FakeGpu()
    readback = ProbeReadback(recorder, gpu, staging_slots=1, sample_capacity=64)
    counts = np.arange(64, dtype=np.uint32)
    first = launch(readback, gpu, "s", counts, 4)
    second = readback.begin_launch("escape", group_size=4, group_count=16, stream="s")  # the only slot is in flight
    assert not second.recording and int(second.buffers[0]["sampleCapacity"]) == 0 and int(second.buffers[0]["samplingStride"]) == 0
    readback.end_launch(second)
    gpu.run("s")
    assert wait_for(lambda: readback.stats().launches_recorded == 1)
    third = launch(readback, gpu, "s", counts[::-1].copy(), 4)  # the slot is free again
    gpu.run("s")
    assert wait_for(lambda: readback.stats().launches_recorded == 2)
    assert readback.close(timeout=2).complete and recorder.close(timeout=2).complete
    stats = readback.stats()
    assert (stats.launches_begun, stats.launches_recorded, stats.launches_skipped) == (3, 2, 1) and stats.balanced
    summaries = [f for f in decode_frames(out.read_bytes()) if isinstance(f, LaunchSummary)]
    assert [s.launch_id for s in summaries] == [first, third]
    assert [s.sum_counts for s in summaries] == [int(counts.sum())] * 2  # the second launch's clear zeroed the reused totals


def test_an_event_that_never_completes_does_not_block_close(tmp_path: Path) -> None:
    recorder = Recorder(str(tmp_path / "f.bin"), job="job")
    gpu = FakeGpu()
    readback = ProbeReadback(recorder, gpu)
    launch(readback, gpu, "s", np.ones(64, dtype=np.uint32), 8)  # the fake GPU never runs the stream
    started = time.monotonic()
    result = readback.close(timeout=0.3)
    assert time.monotonic() - started < 1.5
    assert not result.complete and result.launches_not_recorded == 1
    stats = readback.stats()
    assert stats.launches_not_recorded_at_close == 1 and stats.in_flight == 0 and stats.balanced
    after = readback.begin_launch("escape", group_size=8, group_count=8, stream="s")  # after close: scratch buffers
    readback.end_launch(after)
    assert not after.recording and readback.stats().launches_after_close == 1 and readback.stats().balanced
    recorder.close(timeout=1)


@pytest.mark.parametrize("op", ["clear_async", "copy_to_host_async", "record_event", "event_done", "copy_to_host_private"])
def test_a_failing_gpu_call_is_counted_never_raised(tmp_path: Path, op: str) -> None:
    recorder = Recorder(str(tmp_path / "f.bin"), job="job", sampling_stride=1)
    gpu = FakeGpu()
    readback = ProbeReadback(recorder, gpu, staging_slots=2)
    gpu.fail = frozenset({op})
    launch(readback, gpu, "s", np.arange(1, 65, dtype=np.uint32), 8)  # must not raise
    gpu.run("s")
    assert wait_for(lambda: readback.stats().launches_failed == 1)
    assert readback.close(timeout=2).complete
    stats = readback.stats()
    assert (stats.launches_begun, stats.launches_failed, stats.launches_recorded, stats.frames_submitted) == (1, 1, 0, 0) and stats.balanced
    # A slot the GPU may still use after the failure is never handed out again; one whose call
    # failed before anything was enqueued is.
    assert stats.slots_retired == (0 if op == "clear_async" else 1)
    recorder.close(timeout=1)


def test_a_hung_gpu_call_in_the_reader_does_not_block_the_job_or_close(tmp_path: Path) -> None:
    recorder = Recorder(str(tmp_path / "f.bin"), job="job", sampling_stride=1)
    gpu = FakeGpu(hang=frozenset({"copy_to_host_private"}))
    readback = ProbeReadback(recorder, gpu, staging_slots=1)
    launch(readback, gpu, "s", np.arange(1, 65, dtype=np.uint32), 8)
    gpu.run("s")
    assert wait_for(lambda: readback.stats().in_flight == 1 and readback.stats().launches_begun == 1)
    started = time.monotonic()
    nxt = readback.begin_launch("escape", group_size=8, group_count=8, stream="s")  # the slot is held by the hung copy
    assert time.monotonic() - started < 0.1 and not nxt.recording
    result = readback.close(timeout=0.3)
    assert time.monotonic() - started < 1.5 and not result.complete and result.launches_not_recorded == 1
    gpu.release.set()  # the copy returns after close: the reader counts the launch, the balance holds
    assert wait_for(lambda: readback.stats().in_flight == 0)
    assert readback.stats().balanced
    recorder.close(timeout=1)


@pytest.mark.parametrize(("options", "message"), [
    ({"staging_slots": 0}, "staging_slots must be an integer >= 1, got 0"),
    ({"staging_slots": 1.5}, "staging_slots must be an integer >= 1, got 1.5"),
    ({"sample_capacity": 0}, "sample_capacity must be an integer 1..2^31, got 0"),
    ({"sample_capacity": (1 << 31) + 1}, "sample_capacity must be an integer 1..2^31, got 2147483649"),
    ({"poll_interval": 0.0}, "poll_interval must be a finite number of seconds > 0, got 0.0"),
    ({"poll_interval": float("nan")}, "poll_interval must be a finite number of seconds > 0, got nan"),
    ({"exit_timeout": -1.0}, "exit_timeout must be a finite number of seconds >= 0, got -1.0"),
])
def test_bad_options_are_one_coded_line(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    recorder = Recorder(str(tmp_path / "f.bin"), job="job")
    gpu = FakeGpu()
    with pytest.raises(ValueError) as error:
        ProbeReadback(recorder, gpu, **options)
    assert str(error.value) == f"WW_ERR_PYTHON_READBACK: ProbeReadback {message}"
    assert gpu.buffers == {}  # rejected before any allocation
    recorder.close(timeout=1)


def test_a_launch_with_a_bad_selection_is_counted_failed_not_raised_and_loses_no_slot(tmp_path: Path) -> None:
    out = tmp_path / "frames.bin"
    recorder = Recorder(str(out), job="job", sampling_stride=2)
    gpu = FakeGpu()
    readback = ProbeReadback(recorder, gpu, staging_slots=1, sample_capacity=64)
    for bad in ({"selection": "bogus"}, {"groups_per_block": -1}, {"groups_per_block": 1 << 32}):
        ticket = readback.begin_launch("escape", group_size=4, group_count=16, stream="s", **bad)  # must not raise
        readback.end_launch(ticket)
        assert not ticket.recording and int(ticket.buffers[0]["samplingStride"]) == 0
    stats = readback.stats()
    assert (stats.launches_begun, stats.launches_failed, stats.slots_retired) == (3, 3, 0) and stats.balanced
    launch(readback, gpu, "s", np.arange(64, dtype=np.uint32), 4)  # the one slot is still there
    gpu.run("s")
    assert wait_for(lambda: readback.stats().launches_recorded == 1)
    assert readback.close(timeout=2).complete and recorder.close(timeout=2).complete
    assert [f.sum_counts for f in decode_frames(out.read_bytes()) if isinstance(f, LaunchSummary)] == [sum(range(64))]


def test_probe_buffers_value_rejects_an_unknown_selection_with_its_code() -> None:
    with pytest.raises(ValueError) as error:
        probe_buffers_value(0x1000, 0x2000, 16, 1, 7, "bogus")
    assert str(error.value) == "WW_ERR_PYTHON_READBACK: selection must be stride, hash or block, got 'bogus'"


def test_construction_reports_allocation_failures(tmp_path: Path) -> None:
    recorder = Recorder(str(tmp_path / "f.bin"), job="job")
    with pytest.raises(RuntimeError, match="alloc_device"):
        ProbeReadback(recorder, FakeGpu(fail=frozenset({"alloc_device"})))
    recorder.close(timeout=1)


EXIT_SCRIPT = r"""
import sys, time
import numpy as np
from warpwatch.probe_buffers import LAUNCH_TOTALS_DTYPE
from warpwatch.probe_readback import ProbeReadback
from warpwatch.recorder import Recorder

class Buf:
    def __init__(self, n): self.data = bytearray(n); self.ptr = id(self)

class SlowGpu:  # every event completes 0.3 s after it was recorded; the totals hold one group of counts 1..4
    def device(self): raise RuntimeError("no device description")
    def alloc_device(self, n): return Buf(n)
    def device_pointer(self, b): return b.ptr
    def alloc_pinned(self, n): return Buf(n)
    def host_bytes(self, b): return np.frombuffer(b.data, dtype=np.uint8)
    def clear_async(self, b, n, s): pass
    def copy_to_host_async(self, h, d, n, s):
        t = np.frombuffer(h.data, dtype=LAUNCH_TOTALS_DTYPE, count=1)
        t["histogram"][0][1:5] = 1
        t["groupsCounted"], t["sumMaxCounts"], t["sumCounts"], t["sumCountsLoss"] = 1, 4, 10, 1.6
    def record_event(self, s): return time.monotonic() + 0.3
    def event_done(self, e): return time.monotonic() >= e
    def copy_to_host_private(self, h, d, n): pass

rec = Recorder(sys.argv[1], job="exit-job", sampling_stride=0)
readback = ProbeReadback(rec, SlowGpu(), exit_timeout=5.0)
ticket = readback.begin_launch("k", group_size=4, group_count=1)
readback.end_launch(ticket)
print(ticket.launch_id)
"""


def test_the_interpreters_exit_waits_for_launches_in_flight(tmp_path: Path) -> None:
    import subprocess
    import sys

    out = tmp_path / "frames.bin"
    script = tmp_path / "job.py"
    script.write_text(EXIT_SCRIPT)
    import warpwatch

    package = Path(warpwatch.__file__).resolve().parents[1]
    env = {"PYTHONPATH": str(package), "PYTHONSAFEPATH": "1", "PATH": "/usr/bin:/bin"}
    started = time.monotonic()
    result = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 30
    frames = decode_frames(out.read_bytes())  # the job exited 0.3 s before its launch's event completed
    assert len(frames) == 1 and isinstance(frames[0], LaunchSummary)
    assert (frames[0].launch_id, frames[0].groups_counted, frames[0].sum_max_counts, frames[0].sum_counts) == (int(result.stdout), 1, 4, 10)
