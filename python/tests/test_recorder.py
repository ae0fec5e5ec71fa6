"""The recorder never harms the job, and accounts for every frame: submitted = written + dropped + queued."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from warpwatch.counts import LaunchInfo, launch_frames, sampled_group_indices
from warpwatch.frame import GroupSamples, LaunchSummary, decode_frames, is_group_sampled
from warpwatch.recorder import Recorder, RecorderStats
from warpwatch.sinks import Sink, UnixSocketSink


def _frame(kernel: str = "k") -> LaunchSummary:
    frames = launch_frames(LaunchInfo("job", kernel, 1, 4, sampling_stride=0), [1, 2, 3, 4, 0, 0, 0, 9])
    assert isinstance(frames[0], LaunchSummary)
    return frames[0]


def _balanced(s: RecorderStats) -> bool:
    return s.submitted == s.written + s.dropped + s.queued


def test_file_sink_writes_every_frame_numbered_in_order(tmp_path: Path) -> None:
    out = tmp_path / "frames.bin"
    rec = Recorder(str(out), job="job")
    for i in range(20):
        assert rec.submit(_frame(f"k{i}"))
    result = rec.close(timeout=5)
    stats = rec.stats()
    assert result.complete and stats.written == 20 and stats.dropped == 0 and _balanced(stats)
    frames = decode_frames(out.read_bytes())
    assert [f.kernel for f in frames] == [f"k{i}" for i in range(20)]
    assert [f.frame_sequence for f in frames] == list(range(20))


class _SlowSink(Sink):
    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.frames: list[bytes] = []

    def send(self, frame: bytes) -> bool:
        time.sleep(self.delay)
        self.frames.append(frame)
        return True

    def describe(self) -> str:
        return "slow"


def test_full_queue_drops_without_blocking_and_gaps_show_the_drops() -> None:
    sink = _SlowSink(0.05)
    rec = Recorder(sink, job="job", queue_frames=4)
    started = time.monotonic()
    accepted = sum(rec.submit(_frame()) for _ in range(100))
    assert time.monotonic() - started < 1.0  # 100 submits against a sink that needs 5 s: never blocked
    rec.close(timeout=5)
    stats = rec.stats()
    assert stats.submitted == 100 and stats.written == accepted == len(sink.frames)
    assert stats.dropped_queue_full == 100 - accepted > 50 and _balanced(stats)
    sequences = [f.frame_sequence for f in decode_frames(b"".join(sink.frames))]
    assert sequences == sorted(sequences) and len(set(sequences)) == accepted and sequences[-1] <= 99


class _RaisingSink(Sink):
    def send(self, frame: bytes) -> bool:
        raise RuntimeError("sink exploded")

    def describe(self) -> str:
        return "raising"


def test_no_exception_escapes_bad_frames_bad_counts_and_failing_sinks() -> None:
    rec = Recorder(_RaisingSink(), job="job")
    bad = _frame()
    bad.job = "a/b"  # invalid job: encode fails
    assert rec.submit(bad) is False
    assert rec.submit(_frame()) is True
    assert rec.record_counts("k", [1, 2, 3], group_size=2) is None  # not a whole number of groups
    assert rec.record_counts("k", [-1, 2], group_size=2) is None
    rec.close(timeout=5)
    stats = rec.stats()
    assert (stats.dropped_invalid, stats.dropped_sink, stats.written, stats.launches_failed) == (1, 1, 0, 2)
    assert _balanced(stats)


class _BlockingSink(Sink):
    def __init__(self) -> None:
        self.release = threading.Event()

    def send(self, frame: bytes) -> bool:
        self.release.wait(30)
        return True

    def describe(self) -> str:
        return "blocking"


def test_close_returns_in_bounded_time_with_a_blocked_sink_and_counts_what_it_left() -> None:
    sink = _BlockingSink()
    rec = Recorder(sink, job="job", queue_frames=10)
    for _ in range(5):
        rec.submit(_frame())
    time.sleep(0.1)  # the writer takes the first frame and blocks in the sink
    started = time.monotonic()
    result = rec.close(timeout=0.3)
    assert time.monotonic() - started < 1.0
    assert not result.complete and result.frames_not_written == 5
    stats = rec.stats()
    assert stats.dropped_at_close == 4 and stats.queued == 1 and _balanced(stats)
    sink.release.set()
    time.sleep(0.2)
    stats = rec.stats()
    assert stats.written == 1 and stats.queued == 0 and _balanced(stats)
    assert rec.submit(_frame()) is False  # closed: counted as refused
    assert _balanced(rec.stats())


def test_job_exit_is_not_blocked_by_a_hung_sink() -> None:
    code = (
        "import threading, time\n"
        "from warpwatch.recorder import Recorder\nfrom warpwatch.sinks import Sink\n"
        "from warpwatch.counts import LaunchInfo, launch_frames\n"
        "class Hung(Sink):\n    def send(self, f):\n        threading.Event().wait(60); return True\n    def describe(self): return 'hung'\n"
        "rec = Recorder(Hung(), job='j', exit_timeout=0.5)\n"
        "for _ in range(3): rec.submit(launch_frames(LaunchInfo('j','k',1,2,sampling_stride=0), [1,2])[0])\n"
        "print('job done', flush=True)\n"
    )
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "job done" in result.stdout
    assert time.monotonic() - started < 10  # exit waited at most exit_timeout for the writer, not 60 s


def test_unix_socket_sink_reaches_a_collector_and_drops_while_none_listens() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "c.sock")
        sink = UnixSocketSink(path, reconnect_interval=0.0)
        rec = Recorder(sink, job="job")
        assert rec.submit(_frame("before"))  # queued; the sink drops it: nobody listens
        deadline = time.monotonic() + 5
        while rec.stats().dropped_sink < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)
        received = bytearray()

        def accept() -> None:
            conn, _ = server.accept()
            with conn:
                while chunk := conn.recv(65536):
                    received.extend(chunk)

        reader = threading.Thread(target=accept)
        reader.start()
        for i in range(10):
            rec.submit(_frame(f"after{i}"))
        rec.close(timeout=5)
        reader.join(5)
        server.close()
        stats = rec.stats()
        assert stats.dropped_sink == 1 and stats.written == 10 and _balanced(stats)
        frames = decode_frames(bytes(received))
        assert [f.kernel for f in frames] == [f"after{i}" for i in range(10)]
        assert [f.frame_sequence for f in frames] == list(range(1, 11))  # frame 0 was the dropped one: a gap


def test_launch_frames_sample_the_groups_the_cpp_rule_selects_and_mark_counts_only() -> None:
    rng = np.random.default_rng(3)
    n, groups = 8, 3000
    counts = rng.poisson(20, size=groups * n)
    launch_id = 0xDEADBEEF12345678
    frames = launch_frames(LaunchInfo("job", "k", launch_id, n, selection="hash", sampling_stride=16), counts)
    summary, samples = frames[0], frames[1]
    assert isinstance(summary, LaunchSummary) and isinstance(samples, GroupSamples)
    expected = [g for g in range(groups) if is_group_sampled("hash", launch_id, g, 16)]
    assert [s.group_index for s in samples.groups] == expected == sampled_group_indices("hash", launch_id, groups, 16).tolist()
    w = counts.reshape(groups, n)
    for s in samples.groups:
        assert s.lane_counts == w[s.group_index].tolist()
        assert s.start_clock == s.end_clock == 0 and s.lane_finish_clocks == [0] * n
    # Counts only: no clock sums, no measured loss (SPEC.md "Counts-only frames").
    assert (summary.sum_simt_clocks, summary.sum_mimd_clocks, summary.sum_measured_loss) == (0, 0, 0.0)
    h = n * w.max(axis=1) / w.sum(axis=1)
    assert abs(summary.sum_counts_loss - h.sum()) <= 1e-9 * h.sum()
    assert summary.sum_counts == int(w.sum()) and summary.sum_max_counts == int(w.max(axis=1).sum())
    assert sum(c for _, c in summary.histogram) == groups * n
