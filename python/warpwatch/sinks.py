"""Where encoded frames go: the collector's unix socket, a file, or stdout (the C++ recorder's
sinks, kernels/include/warpwatch/sink.hpp, with the same rules).

A sink is used by one writer thread. ``send`` writes one whole frame or drops it and never
blocks for long: the socket is non-blocking (a missing or refusing collector, EAGAIN, or a peer
that went away drops the frame, and the sink reconnects at most once a second). A frame the
socket took only in part within ``send_timeout`` is counted as dropped and the connection is
closed, so the next frame starts a clean stream (the collector reports the cut frame as one
truncated stretch; the C++ sink finishes it instead). Python ignores SIGPIPE, so a reader
that goes away shows up as ``BrokenPipeError``: a dropped frame, never a dead job.
"""

from __future__ import annotations

import os
import select
import socket
import sys
import time
from typing import BinaryIO, Callable


class Sink:
    """Base class: ``send`` returns True when the frame was written whole, False when dropped."""

    def send(self, frame: bytes) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def flush(self, deadline: float) -> None:
        """Finish buffered bytes until ``deadline`` (time.monotonic()); called once, at close."""

    def close(self) -> None:
        """Release the target (the writer thread calls it last)."""

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError


class UnixSocketSink(Sink):
    """The collector's unix stream socket (``warpwatch collect --socket PATH``).

    Non-blocking: each ``send`` tries for at most ``send_timeout`` seconds to finish a frame the
    kernel buffer could not take at once, then drops the rest of the connection's partial frame
    by reconnecting (the collector's splitter discards the cut frame as one bad stretch).
    """

    def __init__(self, path: str, send_timeout: float = 0.2, reconnect_interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.send_timeout = send_timeout
        self.reconnect_interval = reconnect_interval
        self._clock = clock
        self._socket: socket.socket | None = None
        self._last_attempt = float("-inf")
        self.connects = 0

    def _connect(self) -> socket.socket | None:
        if self._socket is not None:
            return self._socket
        now = self._clock()
        if now - self._last_attempt < self.reconnect_interval:
            return None
        self._last_attempt = now
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(self.path)
        except OSError:
            s.close()
            return None
        self._socket = s
        self.connects += 1
        return s

    def _drop_connection(self) -> None:
        if self._socket is not None:
            try:
                self._socket.close()
            except OSError:
                pass
            self._socket = None

    def send(self, frame: bytes) -> bool:
        s = self._connect()
        if s is None:
            return False
        view = memoryview(frame)
        sent = 0
        deadline = self._clock() + self.send_timeout
        while sent < len(view):
            try:
                sent += s.send(view[sent:])
            except BlockingIOError:
                remaining = deadline - self._clock()
                if remaining <= 0:
                    break
                select.select([], [s], [], min(remaining, 0.05))
            except OSError:
                self._drop_connection()
                return False
        if sent == len(view):
            return True
        if sent == 0:
            return False  # nothing of it left: the stream is still at a frame boundary
        # Part of the frame is on the wire: reconnecting starts the next frame on a clean stream.
        self._drop_connection()
        return False

    def close(self) -> None:
        self._drop_connection()

    def describe(self) -> str:
        return f"unix:{self.path}"


class FileSink(Sink):
    """Appends frames to a file (``warpwatch analyze FILE`` reads it)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: BinaryIO | None = None
        try:
            self._file = open(path, "ab")  # noqa: SIM115 - kept open for the writer's lifetime
        except OSError as error:
            self.error = str(error)

    def send(self, frame: bytes) -> bool:
        if self._file is None:
            return False
        try:
            self._file.write(frame)
            return True
        except OSError:
            return False

    def flush(self, deadline: float) -> None:
        del deadline
        if self._file is not None:
            try:
                self._file.flush()
            except OSError:
                pass

    def close(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None

    def describe(self) -> str:
        return f"file:{self.path}"


class StdoutSink(Sink):
    """Writes frames to file descriptor 1 (pipe into ``warpwatch collect --stdin``).

    Writes whole frames with ``os.write`` loops; a reader that went away (EPIPE) drops the frame.
    """

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdout.fileno() if fd is None else fd

    def send(self, frame: bytes) -> bool:
        view = memoryview(frame)
        sent = 0
        try:
            while sent < len(view):
                sent += os.write(self.fd, view[sent:])
        except OSError:
            return False  # EPIPE (reader gone), EAGAIN, EBADF: dropped, counted by the writer
        return True

    def describe(self) -> str:
        return "stdout"


def open_sink(target: str) -> Sink:
    """The sink a target names: ``unix:PATH`` (collector socket), ``-`` or ``stdout``, else a file path.

    Example: ``open_sink("unix:/run/warpwatch.sock")``
    """
    if target in ("-", "stdout"):
        return StdoutSink()
    if target.startswith("unix:"):
        return UnixSocketSink(target[5:])
    if target.startswith("file:"):
        return FileSink(target[5:])
    return FileSink(target)
