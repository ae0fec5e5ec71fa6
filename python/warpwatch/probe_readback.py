"""Probe buffers for kernels that include ``warpwatch/probe-device.cuh`` (CuPy ``RawKernel``/
``RawModule``, PyTorch extensions), read back without ever synchronising the job's stream.

The logic is the C++ recorder's (kernels/include/warpwatch/recorder-core.hpp, docs/kernels.md
"The recorder inside a production job"), with the GPU behind a small interface,
:class:`DeviceOps`, so that it runs and is tested without a GPU (``warpwatch.cupy_support.CupyOps``
is the CuPy implementation; the PyTorch example has one for torch):

* a few *staging slots*, each a device ``LaunchTotals`` + ``sample_capacity`` ``GroupSampleSlot``\\ s
  and a pinned host copy of both, allocated once and reused;
* :meth:`ProbeReadback.begin_launch` takes a free slot and enqueues a clear of its totals on the
  job's stream (stream order: before the kernel); the ticket's ``buffers`` is the kernel's
  ``warpwatch::ProbeBuffers`` argument. With no free slot (or a failed call) the launch gets
  scratch buffers with sampling off, is not recorded, and is counted;
* :meth:`ProbeReadback.end_launch` enqueues an asynchronous copy of the totals into pinned memory
  and records an event on the job's stream, and returns: nothing waits on the job's stream;
* a background thread polls the events; once one has completed it copies the claimed sample slots
  on a stream of the adapter's own (which does not wait for the job's streams), builds the frames
  the C++ recorder builds (:func:`warpwatch.probe_buffers.probe_frames`) and submits them to the
  :class:`~warpwatch.recorder.Recorder`, then frees the slot;
* no method raises into the job after construction: a failing adapter call is counted
  (``launches_failed``); a slot whose buffers the GPU may still be using after a failure is
  retired, never reused; :meth:`ProbeReadback.close` returns within its timeout even when an
  event never completes or an adapter call hangs.

Accounting, at any time: ``launches_begun = launches_recorded + launches_skipped +
launches_failed + launches_not_recorded_at_close + launches_after_close + in_flight``.

Example (CuPy, on a GPU)::

    rec = Recorder("unix:/run/warpwatch.sock", job="train")
    readback = ProbeReadback(rec, CupyOps())
    ticket = readback.begin_launch("escape", group_size=32, group_count=groups, stream=stream.ptr)
    with stream:
        kernel((blocks,), (threads,), (work, ticket.buffers, groups))
    readback.end_launch(ticket)
    ...
    readback.close(timeout=5.0); rec.close(timeout=5.0)
"""

from __future__ import annotations

import atexit
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

import numpy as np

from .counts import LaunchInfo, fit_sampling_stride
from .frame import U32_MAX, Device, SelectionName
from .probe_buffers import GROUP_SAMPLE_SLOT_DTYPE, LAUNCH_TOTALS_DTYPE, probe_buffers_value, probe_frames
from .recorder import Recorder

TOTALS_BYTES = LAUNCH_TOTALS_DTYPE.itemsize
SLOT_BYTES = GROUP_SAMPLE_SLOT_DTYPE.itemsize


class DeviceOps(Protocol):
    """The GPU calls a :class:`ProbeReadback` makes. Buffers, streams and events are opaque handles of
    the adapter. Any method may raise; the readback counts the failure. ``stream`` is whatever the
    adapter takes for a stream (CuPy: the ``cudaStream_t`` as an int, 0 = the default stream)."""

    def device(self) -> Device:
        """The device the frames describe (name, UUID, compute capability, SM clock rate in Hz)."""

    def alloc_device(self, nbytes: int) -> Any:
        """Device memory of ``nbytes`` bytes."""

    def device_pointer(self, buffer: Any) -> int:
        """The device address of a buffer from :meth:`alloc_device`."""

    def alloc_pinned(self, nbytes: int) -> Any:
        """Page-locked host memory of ``nbytes`` bytes."""

    def host_bytes(self, buffer: Any) -> np.ndarray:
        """A uint8 numpy view of a buffer from :meth:`alloc_pinned` (no copy)."""

    def clear_async(self, buffer: Any, nbytes: int, stream: Any) -> None:
        """Enqueue a clear (zero) of the first ``nbytes`` of a device buffer on ``stream``; do not wait."""

    def copy_to_host_async(self, host: Any, device: Any, nbytes: int, stream: Any) -> None:
        """Enqueue a copy of the first ``nbytes`` of ``device`` into pinned ``host`` on ``stream``; do not wait."""

    def record_event(self, stream: Any) -> Any:
        """Record an event on ``stream`` (after the work enqueued so far) and return it; do not wait."""

    def event_done(self, event: Any) -> bool:
        """Whether the event has completed (a query, never a wait)."""

    def copy_to_host_private(self, host: Any, device: Any, nbytes: int) -> None:
        """Copy the first ``nbytes`` of ``device`` into ``host`` on a stream of the adapter's own that does
        not wait for other streams, and wait for that copy (blocks the calling thread, the readback's)."""


@dataclass(frozen=True)
class ReadbackStats:
    """Monotonic counters of a :class:`ProbeReadback` (launches unless named otherwise)."""

    launches_begun: int
    launches_recorded: int
    launches_skipped: int
    launches_failed: int
    launches_not_recorded_at_close: int
    launches_after_close: int
    in_flight: int
    slots_retired: int
    frames_submitted: int

    @property
    def balanced(self) -> bool:
        """begun = recorded + skipped + failed + not recorded at close + after close + in flight."""
        return self.launches_begun == (self.launches_recorded + self.launches_skipped + self.launches_failed
                                       + self.launches_not_recorded_at_close + self.launches_after_close + self.in_flight)


@dataclass(frozen=True)
class ReadbackCloseResult:
    """What :meth:`ProbeReadback.close` achieved: complete when every launch ended before it was recorded."""

    complete: bool
    launches_not_recorded: int


@dataclass(eq=False)
class _Slot:
    device_totals: Any
    device_samples: Any
    host_totals: Any
    host_samples: Any
    totals_ptr: int
    samples_ptr: int


_SELECTIONS: tuple[SelectionName, ...] = ("stride", "hash", "block")


def _options_problem(staging_slots: int, sample_capacity: int, poll_interval: float, exit_timeout: float) -> str | None:
    """What is wrong with :class:`ProbeReadback`'s options (the first problem), or None."""

    def is_int(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    def is_number(value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

    if not is_int(staging_slots) or staging_slots < 1:
        return f"staging_slots must be an integer >= 1, got {staging_slots!r}"
    if not is_int(sample_capacity) or not 1 <= sample_capacity <= 1 << 31:
        return f"sample_capacity must be an integer 1..2^31, got {sample_capacity!r}"
    if not is_number(poll_interval) or poll_interval <= 0:
        return f"poll_interval must be a finite number of seconds > 0, got {poll_interval!r}"
    if not is_number(exit_timeout) or exit_timeout < 0:
        return f"exit_timeout must be a finite number of seconds >= 0, got {exit_timeout!r}"
    return None


@dataclass(eq=False)
class LaunchTicket:
    """One launch's claim, from :meth:`ProbeReadback.begin_launch` to :meth:`ProbeReadback.end_launch`.

    ``buffers`` is the kernel's ``warpwatch::ProbeBuffers`` argument: a one-element numpy structured
    array (``PROBE_BUFFERS_DTYPE``, 40 bytes), which CuPy passes by value; ``buffers.tobytes()`` for
    other launchers. ``recording`` is False when the launch holds scratch buffers (not recorded).
    """

    buffers: np.ndarray
    launch_id: int
    recording: bool
    _info: Optional[LaunchInfo] = None
    _slot: Optional[_Slot] = None
    _stream: Any = None
    _ended: bool = False


@dataclass(eq=False)
class _Pending:
    ticket: LaunchTicket
    slot: _Slot
    info: LaunchInfo
    event: Any
    enqueued_at: float = field(default_factory=time.monotonic)


class ProbeReadback:
    """Staging slots, launch tickets and the background reader that turns probe buffers into frames.

    :param recorder: where the frames go (its job, source, selection and sampling stride are used)
    :param ops: the GPU adapter (:class:`DeviceOps`)
    :param staging_slots: launches in flight at once (>= 1)
    :param sample_capacity: sample slots per launch (1..2^31); the sampling stride is thinned so that
        a launch's sampled groups fit (``fit_sampling_stride``, as the C++ recorder)
    :param poll_interval: seconds between event queries while launches are in flight
    :param exit_timeout: seconds the interpreter's exit waits for launches in flight (an ``atexit``
        hook, which runs before the recorder's own when the recorder was created first)
    :raises ValueError: ``WW_ERR_PYTHON_READBACK`` (one line naming the option): staging_slots not an
        integer >= 1, sample_capacity not an integer 1..2^31, poll_interval not a finite number > 0,
        exit_timeout not a finite number >= 0
    :raises Exception: whatever the adapter raises while allocating the buffers (set-up, before any launch)
    """

    def __init__(self, recorder: Recorder, ops: DeviceOps, staging_slots: int = 4, sample_capacity: int = 256,
                 poll_interval: float = 0.0005, exit_timeout: float = 2.0) -> None:
        problem = _options_problem(staging_slots, sample_capacity, poll_interval, exit_timeout)
        if problem:
            raise ValueError(f"WW_ERR_PYTHON_READBACK: ProbeReadback {problem}")
        self.recorder = recorder
        self.ops = ops
        self.sample_capacity = sample_capacity
        self.poll_interval = poll_interval
        try:
            self.device = ops.device()
        except Exception:  # noqa: BLE001 - the recorder's description is the fallback
            self.device = recorder.device
        # Scratch: the totals of launches not recorded (written by their kernels, read by nobody).
        self._scratch = ops.alloc_device(TOTALS_BYTES)
        self._scratch_ptr = ops.device_pointer(self._scratch)
        self._free: list[_Slot] = [self._allocate_slot() for _ in range(staging_slots)]
        self._pending: list[_Pending] = []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._closing = False
        self._stop = False
        self._counts = dict(launches_begun=0, launches_recorded=0, launches_skipped=0, launches_failed=0,
                            launches_not_recorded_at_close=0, launches_after_close=0, slots_retired=0, frames_submitted=0)
        self._processing = 0
        self._thread = threading.Thread(target=self._run, name="warpwatch-probe-readback", daemon=True)
        self._thread.start()
        self._exit_timeout = exit_timeout
        atexit.register(self._at_exit)

    def _at_exit(self) -> None:
        self.close(self._exit_timeout)

    def _allocate_slot(self) -> _Slot:
        ops = self.ops
        device_totals = ops.alloc_device(TOTALS_BYTES)
        device_samples = ops.alloc_device(self.sample_capacity * SLOT_BYTES)
        return _Slot(device_totals, device_samples, ops.alloc_pinned(TOTALS_BYTES), ops.alloc_pinned(self.sample_capacity * SLOT_BYTES),
                     ops.device_pointer(device_totals), ops.device_pointer(device_samples))

    # -- job side ----------------------------------------------------------------------------

    def begin_launch(self, kernel: str, group_size: int, group_count: int, stream: Any = 0, sync: bool = False,
                     selection: Optional[SelectionName] = None, sampling_stride: Optional[int] = None,
                     groups_per_block: int = 0) -> LaunchTicket:
        """Claim probe buffers for one launch of ``kernel`` (groups of ``group_size`` lanes, ``group_count``
        groups launched) on ``stream``; pass ``ticket.buffers`` to the kernel. Never raises, never waits.
        """
        try:
            launch_id = self.recorder.next_launch_id()
        except Exception:  # noqa: BLE001
            launch_id = 0
        sel: SelectionName = selection or self.recorder.selection
        ticket = LaunchTicket(self._scratch_buffers(launch_id, sel, groups_per_block), launch_id, False)
        try:
            with self._lock:
                self._counts["launches_begun"] += 1
                if self._closing:
                    self._counts["launches_after_close"] += 1
                    return ticket
                if sel not in _SELECTIONS or not 0 <= groups_per_block <= U32_MAX:
                    self._counts["launches_failed"] += 1  # bad launch options: before a slot is taken, none is lost
                    return ticket
                if not self._free:
                    self._counts["launches_skipped"] += 1
                    return ticket
                slot = self._free.pop()
            stride = self.recorder.sampling_stride if sampling_stride is None else sampling_stride
            stride = fit_sampling_stride(sel, stride, group_count, self.sample_capacity, groups_per_block)
            info = LaunchInfo(job=self.recorder.job, kernel=kernel, launch_id=launch_id, group_size=group_size, source=self.recorder.source,
                              sync=sync, device=self.device, start_unix_nanos=time.time_ns(), selection=sel, sampling_stride=stride,
                              groups_per_block=groups_per_block, sample_capacity=self.sample_capacity, group_count=group_count)
        except Exception:  # noqa: BLE001 - nothing escapes into the job
            self._count("launches_failed")
            return ticket
        try:
            self.ops.clear_async(slot.device_totals, TOTALS_BYTES, stream)
        except Exception:  # noqa: BLE001 - nothing was enqueued: the slot is free again
            with self._lock:
                self._free.append(slot)
                self._counts["launches_failed"] += 1
            return ticket
        try:
            buffers = probe_buffers_value(slot.totals_ptr, slot.samples_ptr, self.sample_capacity, stride, launch_id, sel, groups_per_block).reshape(1)
        except Exception:  # noqa: BLE001 - the clear is enqueued: the slot stays out of use
            self._fail_and_retire()
            return ticket
        return LaunchTicket(buffers, launch_id, True, info, slot, stream)

    def end_launch(self, ticket: LaunchTicket) -> None:
        """After the kernel's launch on the ticket's stream: enqueue the read-back (a copy into pinned
        memory and an event; nothing waits). Never raises, never waits; a second call does nothing."""
        try:
            if ticket._ended:
                return
            ticket._ended = True
            slot, info = ticket._slot, ticket._info
            if slot is None or info is None:
                return
            with self._lock:
                if self._stop:  # closed: the kernel may still write the slot, which is never reused
                    self._counts["launches_not_recorded_at_close"] += 1
                    return
            try:
                self.ops.copy_to_host_async(slot.host_totals, slot.device_totals, TOTALS_BYTES, ticket._stream)
                event = self.ops.record_event(ticket._stream)
            except Exception:  # noqa: BLE001 - the GPU may still use the slot: retired
                self._fail_and_retire()
                return
            with self._lock:
                self._pending.append(_Pending(ticket, slot, info, event))
                self._wake.notify()
        except Exception:  # noqa: BLE001 - last resort: nothing escapes into the job
            return

    def stats(self) -> ReadbackStats:
        """A consistent snapshot of the counters."""
        with self._lock:
            return ReadbackStats(in_flight=self._in_flight_locked(), **self._counts)

    def close(self, timeout: float = 5.0) -> ReadbackCloseResult:
        """Stop taking launches and wait at most ``timeout`` seconds for those in flight to be recorded;
        never raises. Launches still in flight then are counted in ``launches_not_recorded_at_close``
        (their slots are never reused: the GPU may still write them). The recorder stays open."""
        try:
            deadline = time.monotonic() + max(0.0, timeout)
            with self._lock:
                self._closing = True
                self._wake.notify_all()
            self._thread.join(max(0.0, deadline - time.monotonic()))
            with self._lock:
                self._stop = True
                self._wake.notify_all()
                left = self._in_flight_locked()
                self._counts["launches_not_recorded_at_close"] += len(self._pending)
                self._pending.clear()
            try:
                atexit.unregister(self._at_exit)
            except Exception:  # noqa: BLE001
                pass
            # A launch the reader holds right now (stuck in an adapter call) is counted by the reader.
            return ReadbackCloseResult(complete=left == 0, launches_not_recorded=left)
        except Exception:  # noqa: BLE001
            return ReadbackCloseResult(complete=False, launches_not_recorded=-1)

    # -- internals ---------------------------------------------------------------------------

    def _scratch_buffers(self, launch_id: int, selection: SelectionName, groups_per_block: int) -> np.ndarray:
        # Sampling off, no sample slots: the kernel writes only the scratch totals (as the C++ recorder's scratchBuffers).
        try:
            return probe_buffers_value(self._scratch_ptr, self._scratch_ptr, 0, 0, launch_id, selection, groups_per_block).reshape(1)
        except Exception:  # noqa: BLE001 - a bad selection or groupsPerBlock, which sampling off makes irrelevant
            return probe_buffers_value(self._scratch_ptr, self._scratch_ptr, 0, 0, launch_id, "stride", 0).reshape(1)

    def _in_flight_locked(self) -> int:
        return len(self._pending) + self._processing

    def _count(self, name: str, by: int = 1) -> None:
        with self._lock:
            self._counts[name] += by

    def _fail_and_retire(self) -> None:
        with self._lock:
            self._counts["launches_failed"] += 1
            self._counts["slots_retired"] += 1

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closing and not self._stop:
                    self._wake.wait()
                if self._stop or (self._closing and not self._pending):
                    return
                items = list(self._pending)
            progressed = False
            for item in items:
                with self._lock:
                    if self._stop:
                        return
                try:
                    done = bool(self.ops.event_done(item.event))
                except Exception:  # noqa: BLE001 - the stream's state is unknown: retire the slot
                    with self._lock:
                        if item in self._pending:
                            self._pending.remove(item)
                            self._counts["launches_failed"] += 1
                            self._counts["slots_retired"] += 1
                    progressed = True
                    continue
                if done:
                    with self._lock:
                        if item not in self._pending:
                            continue
                        self._pending.remove(item)
                        self._processing += 1
                    self._finish(item)
                    progressed = True
            if not progressed:
                with self._lock:
                    if not self._stop:
                        self._wake.wait(self.poll_interval)

    def _finish(self, item: _Pending) -> None:
        """The launch's event has completed: read the samples, build and submit the frames, free the slot."""
        outcome = "launches_failed"
        free = True
        frames_submitted = 0
        try:
            end = time.time_ns()
            totals = np.frombuffer(self.ops.host_bytes(item.slot.host_totals), dtype=LAUNCH_TOTALS_DTYPE, count=1)[0]
            valid = min(int(totals["sampleSlotsClaimed"]), self.sample_capacity)
            if valid > 0:
                free = False  # a failed or hung private copy leaves the slot's state unknown
                self.ops.copy_to_host_private(item.slot.host_samples, item.slot.device_samples, valid * SLOT_BYTES)
                free = True
            slots = np.frombuffer(self.ops.host_bytes(item.slot.host_samples), dtype=GROUP_SAMPLE_SLOT_DTYPE, count=valid)
            info = item.info
            info.end_unix_nanos = max(end, info.start_unix_nanos)
            for frame in probe_frames(info, totals, slots, clock_hz=self.device.clock_hz):
                self.recorder.submit(frame)
                frames_submitted += 1
            outcome = "launches_recorded"
        except Exception:  # noqa: BLE001 - counted, never raised
            outcome = "launches_failed"
        with self._lock:
            self._processing -= 1
            self._counts[outcome] += 1
            self._counts["frames_submitted"] += frames_submitted
            if free and not self._stop:
                self._free.append(item.slot)
            elif not free:
                self._counts["slots_retired"] += 1
