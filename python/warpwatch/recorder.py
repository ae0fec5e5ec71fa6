"""A recorder that never harms the job: frames go through a bounded queue to a background
writer thread, and every frame is accounted for.

Rules (the C++ recorder's, docs/kernels.md): ``submit`` never blocks (a full queue drops the frame
and counts it); no exception escapes into the caller (a bad frame or a failing sink is counted);
the writer thread is a daemon, so the job's exit is never blocked, and an ``atexit`` hook drains
the queue for at most ``exit_timeout`` seconds; ``close(timeout)`` returns in bounded time.

Accounting, at any time: ``submitted = written + dropped_queue_full + dropped_invalid +
dropped_sink + dropped_at_close + queued``. Frames are numbered (frameSequence) in submission
order, dropped ones included, so a reader sees every drop as a gap (SPEC.md frameSequence).

Example::

    rec = Recorder("unix:/run/warpwatch.sock", job="train")
    rec.record_counts("escape", counts, group_size=32)   # counts only (no clocks)
    rec.close(timeout=2.0)
"""

from __future__ import annotations

import atexit
import collections
import itertools
import os
import random
import threading
import time
from dataclasses import dataclass, replace
from typing import Optional, Sequence, Union

import numpy as np

from .counts import LaunchClocks, LaunchInfo, launch_frames
from .frame import Device, Frame, SelectionName, Source, encode_frame
from .sinks import Sink, open_sink


@dataclass(frozen=True)
class RecorderStats:
    """Monotonic counters of a recorder (frames unless named otherwise)."""

    launches_recorded: int
    launches_failed: int
    submitted: int
    written: int
    dropped_queue_full: int
    dropped_invalid: int
    dropped_sink: int
    dropped_at_close: int
    queued: int
    bytes_written: int

    @property
    def dropped(self) -> int:
        """All dropped frames, whatever the reason."""
        return self.dropped_queue_full + self.dropped_invalid + self.dropped_sink + self.dropped_at_close


@dataclass(frozen=True)
class CloseResult:
    """What close(timeout) achieved: complete when every queued frame reached the sink (or was dropped by it)."""

    complete: bool
    frames_not_written: int


class Recorder:
    """Encodes frames and writes them from a background thread to a sink; never raises into the job.

    :param sink: a :class:`Sink` or a target for :func:`open_sink` (``unix:PATH``, ``-``, a file path)
    :param job: job name (1..255 UTF-8 bytes, no ``/``, no control characters)
    :param queue_frames: capacity of the queue (frames); a full queue drops and counts
    :param exit_timeout: seconds the interpreter's exit waits for queued frames (atexit), at most
    """

    def __init__(self, sink: Union[Sink, str], job: str, device: Optional[Device] = None, source: Source = "cuda",
                 queue_frames: int = 256, exit_timeout: float = 2.0, selection: SelectionName = "hash", sampling_stride: int = 16) -> None:
        self.job = job
        self.device = device or Device()
        self.source: Source = source
        self.selection: SelectionName = selection
        self.sampling_stride = sampling_stride
        self._sink = sink if isinstance(sink, Sink) else open_sink(sink)
        self._capacity = max(1, queue_frames)
        self._queue: collections.deque[bytes] = collections.deque()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._sequence = itertools.count()
        # Launch ids: a random 64-bit base per recorder plus a counter, unique within the job.
        self._launch_base = random.SystemRandom().getrandbits(64)
        self._launch_counter = itertools.count()
        self._busy = False
        self._counts = dict(launches_recorded=0, launches_failed=0, submitted=0, written=0, dropped_queue_full=0, dropped_invalid=0,
                            dropped_sink=0, dropped_at_close=0, bytes_written=0)
        self._thread = threading.Thread(target=self._run, name="warpwatch-writer", daemon=True)
        self._thread.start()
        self._exit_timeout = exit_timeout
        atexit.register(self._at_exit)

    # -- job side ----------------------------------------------------------------------------

    def next_launch_id(self) -> int:
        """A launch id unique within this recorder (random base + counter, mod 2^64)."""
        return (self._launch_base + next(self._launch_counter)) & ((1 << 64) - 1)

    def submit(self, frame: Frame) -> bool:
        """Number, encode and queue one frame; False when it was dropped (counted). Never raises."""
        try:
            with self._lock:
                sequence = next(self._sequence) & 0xFFFFFFFF
                self._counts["submitted"] += 1
            try:
                data = encode_frame(replace(frame, frame_sequence=sequence))
            except Exception:  # noqa: BLE001 - a bad frame must not reach the job
                with self._lock:
                    self._counts["dropped_invalid"] += 1
                return False
            with self._lock:
                if self._closed or len(self._queue) >= self._capacity:
                    self._counts["dropped_queue_full"] += 1
                    return False
                self._queue.append(data)
                self._wake.notify()
            return True
        except Exception:  # noqa: BLE001 - last resort: nothing escapes into the job
            return False

    def record_counts(self, kernel: str, counts: Union[np.ndarray, Sequence[int]], group_size: int, clocks: Optional[LaunchClocks] = None,
                      launch_id: Optional[int] = None, start_unix_nanos: Optional[int] = None, end_unix_nanos: Optional[int] = None,
                      sync: bool = False, source: Optional[Source] = None) -> Optional[int]:
        """Build one launch's frames from per-lane counts (counts-only when ``clocks`` is None) and submit them.

        :returns: the launch id, or None when the launch could not be recorded (counted in launches_failed)
        """
        try:
            now = time.time_ns()
            lid = self.next_launch_id() if launch_id is None else launch_id
            info = LaunchInfo(job=self.job, kernel=kernel, launch_id=lid, group_size=group_size, source=source or self.source, sync=sync,
                              device=self.device, start_unix_nanos=now if start_unix_nanos is None else start_unix_nanos,
                              end_unix_nanos=now if end_unix_nanos is None else end_unix_nanos, selection=self.selection,
                              sampling_stride=self.sampling_stride)
            frames = launch_frames(info, counts, clocks)
        except Exception:  # noqa: BLE001 - bad counts must not reach the job
            with self._lock:
                self._counts["launches_failed"] += 1
            return None
        for frame in frames:
            self.submit(frame)
        with self._lock:
            self._counts["launches_recorded"] += 1
        return lid

    def stats(self) -> RecorderStats:
        """A consistent snapshot of the counters (submitted = written + dropped + queued)."""
        with self._lock:
            return RecorderStats(queued=len(self._queue) + (1 if self._busy else 0), **self._counts)

    def close(self, timeout: float = 5.0) -> CloseResult:
        """Stop accepting frames and drain the queue for at most ``timeout`` seconds; never raises.

        Frames still queued when the time is up are counted in ``dropped_at_close``; a frame in the
        sink's hands at that moment is counted by the writer when its send returns.
        """
        try:
            deadline = time.monotonic() + max(0.0, timeout)
            with self._lock:
                self._closed = True
                self._wake.notify_all()
            self._thread.join(max(0.0, deadline - time.monotonic()))
            with self._lock:
                left = len(self._queue)
                self._counts["dropped_at_close"] += left
                self._queue.clear()
                busy = self._busy
            try:
                atexit.unregister(self._at_exit)
            except Exception:  # noqa: BLE001
                pass
            return CloseResult(complete=left == 0 and not busy, frames_not_written=left + (1 if busy else 0))
        except Exception:  # noqa: BLE001
            return CloseResult(complete=False, frames_not_written=-1)

    def _at_exit(self) -> None:
        self.close(self._exit_timeout)

    # -- writer thread -----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._wake.wait()
                if not self._queue:
                    break
                data = self._queue.popleft()
                self._busy = True
            try:
                ok = self._sink.send(data)
            except Exception:  # noqa: BLE001 - a failing sink drops, never kills the writer
                ok = False
            with self._lock:
                self._busy = False
                if ok:
                    self._counts["written"] += 1
                    self._counts["bytes_written"] += len(data)
                else:
                    self._counts["dropped_sink"] += 1
        try:
            self._sink.flush(time.monotonic() + 1.0)
            self._sink.close()
        except Exception:  # noqa: BLE001
            pass


def default_recorder_target() -> Optional[str]:
    """``$WARPWATCH_SINK`` (``unix:PATH``, ``-``, or a file path), or None when unset."""
    return os.environ.get("WARPWATCH_SINK") or None
