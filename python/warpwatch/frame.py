"""The warpwatch frame format, version 1 (protocol/SPEC.md), in pure Python.

Reads and writes the same bytes as the TypeScript codec (``protocol/``) and the C++ one
(``kernels/include/warpwatch/frame.hpp``): both frame types, CRC-32C, the histogram bins, the
sampling selection rule (``splitmix64``). Every check of SPEC.md is run by :func:`validate_frame`
before :func:`encode_frame` writes and after :func:`decode_frame` reads, so both directions
accept exactly the same frames. Identity strings (job, kernel, device name) must not contain
control characters (C0 U+0000..U+001F, DEL U+007F, C1 U+0080..U+009F).

Example::

    from warpwatch.frame import LaunchSummary, encode_frame, decode_frame
    frame = LaunchSummary(job="train", kernel="escape", group_size=32, ...)
    assert decode_frame(encode_frame(frame)) == frame
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass, field
from typing import Iterator, Literal, TypedDict, Union

# ------------------------------------------------------------------------------------------
# Constants (SPEC.md "Header", "Size bounds", "Histogram bins").

FRAME_MAGIC = b"WWFR"
FRAME_VERSION = 1
FRAME_HEADER_BYTES = 16
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024
MAX_STRING_BYTES = 255
MAX_GROUP_SIZE = 32
EXACT_BIN_COUNT = 1024
LOG_SUB_BIN_BITS = 6
HISTOGRAM_BIN_COUNT = EXACT_BIN_COUNT + (32 - 10) * (1 << LOG_SUB_BIN_BITS)  # 2432
MAX_HISTOGRAM_ENTRIES = HISTOGRAM_BIN_COUNT
MAX_GROUP_SAMPLES = 4096
MAX_COUNT = (1 << 53) - 1
U64_MAX = (1 << 64) - 1
U32_MAX = (1 << 32) - 1

TYPE_LAUNCH_SUMMARY = 1
TYPE_GROUP_SAMPLES = 2

Source = Literal["cuda", "cpu"]
SelectionName = Literal["stride", "hash", "block"]
_SOURCES: tuple[Source, ...] = ("cuda", "cpu")
_SELECTIONS: tuple[SelectionName, ...] = ("stride", "hash", "block")

ErrorCode = Literal[
    "WW_ERR_FRAME_TRUNCATED",
    "WW_ERR_FRAME_BAD_MAGIC",
    "WW_ERR_FRAME_UNKNOWN_VERSION",
    "WW_ERR_FRAME_UNKNOWN_TYPE",
    "WW_ERR_FRAME_CRC_MISMATCH",
    "WW_ERR_FRAME_OVER_LIMIT",
    "WW_ERR_FRAME_INVALID",
]


class FrameError(ValueError):
    """A frame that breaks SPEC.md; ``code`` is one of the ``WW_ERR_FRAME_*`` codes (docs/errors.md)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code: ErrorCode = code


def _invalid(message: str) -> FrameError:
    return FrameError("WW_ERR_FRAME_INVALID", message)


def _over(message: str) -> FrameError:
    return FrameError("WW_ERR_FRAME_OVER_LIMIT", message)


# ------------------------------------------------------------------------------------------
# CRC-32C, histogram bins, splitmix64.


def _crc_tables() -> list[list[int]]:
    table0 = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table0.append(c)
    tables = [table0]
    for t in range(1, 8):
        prev = tables[t - 1]
        tables.append([table0[prev[i] & 0xFF] ^ (prev[i] >> 8) for i in range(256)])
    return tables


_CRC_TABLES = _crc_tables()


def crc32c(data: bytes | bytearray | memoryview, previous: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data``; pass a previous result to continue a running checksum.

    Example: ``crc32c(b"123456789") == 0xE3069283``
    """
    t0, t1, t2, t3, t4, t5, t6, t7 = _CRC_TABLES
    c = previous ^ 0xFFFFFFFF
    view = memoryview(data).cast("B")
    n = len(view)
    whole = n - n % 8
    if whole:
        words = struct.unpack_from(f"<{whole // 4}I", view, 0)
        for k in range(0, len(words), 2):
            lo = words[k] ^ c
            hi = words[k + 1]
            c = (
                t7[lo & 0xFF] ^ t6[(lo >> 8) & 0xFF] ^ t5[(lo >> 16) & 0xFF] ^ t4[lo >> 24]
                ^ t3[hi & 0xFF] ^ t2[(hi >> 8) & 0xFF] ^ t1[(hi >> 16) & 0xFF] ^ t0[hi >> 24]
            )
    for i in range(whole, n):
        c = t0[(c ^ view[i]) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def histogram_bin_of(value: int) -> int:
    """Histogram bin of a per-lane iteration count 0..2^32-1 (SPEC.md "Histogram bins").

    Example: ``histogram_bin_of(2000) == 1085``
    """
    if value < 0 or value > U32_MAX:
        raise ValueError(f"iteration count must be 0..2^32-1, got {value}")
    if value < EXACT_BIN_COUNT:
        return value
    e = value.bit_length() - 1
    sub = (value >> (e - LOG_SUB_BIN_BITS)) & ((1 << LOG_SUB_BIN_BITS) - 1)
    return EXACT_BIN_COUNT + (e - 10) * (1 << LOG_SUB_BIN_BITS) + sub


def histogram_bin_range(bin_index: int) -> tuple[int, int]:
    """Smallest and largest value of a bin 0..2431."""
    if bin_index < 0 or bin_index >= HISTOGRAM_BIN_COUNT:
        raise ValueError(f"histogram bin must be 0..{HISTOGRAM_BIN_COUNT - 1}, got {bin_index}")
    if bin_index < EXACT_BIN_COUNT:
        return bin_index, bin_index
    k = bin_index - EXACT_BIN_COUNT
    e = 10 + k // (1 << LOG_SUB_BIN_BITS)
    sub = k % (1 << LOG_SUB_BIN_BITS)
    low = (1 << e) + (sub << (e - LOG_SUB_BIN_BITS))
    return low, low + (1 << (e - LOG_SUB_BIN_BITS)) - 1


def histogram_bin_representative(bin_index: int) -> int:
    """floor((low + high) / 2) of a bin: what readers use for the counts of the bin."""
    low, high = histogram_bin_range(bin_index)
    return (low + high) // 2


def splitmix64(z: int) -> int:
    """The splitmix64 finaliser (SPEC.md GroupSamples ``selection``), on u64 values."""
    z = (z + 0x9E3779B97F4A7C15) & U64_MAX
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64_MAX
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64_MAX
    return z ^ (z >> 31)


def is_group_sampled(selection: SelectionName, launch_id: int, group_index: int, stride: int, groups_per_block: int = 0) -> bool:
    """Whether group ``group_index`` of launch ``launch_id`` is sampled: the C++ recorder's rule
    (device-common.hpp ``isGroupSampled``); stride 0 = sampling off.

    Example: ``is_group_sampled("stride", 0, 8, 4) is True``
    """
    if stride == 0:
        return False
    if selection == "stride":
        return group_index % stride == 0
    if selection == "block":
        return groups_per_block != 0 and splitmix64(launch_id ^ (group_index // groups_per_block)) % stride == 0
    return splitmix64(launch_id ^ group_index) % stride == 0


# ------------------------------------------------------------------------------------------
# Frame objects.


@dataclass
class Device:
    """The device that ran the launch (SPEC.md common identity)."""

    name: str = ""
    #: 16 raw bytes (CUDA ``cudaUUID_t``); zeros when unknown.
    uuid: bytes = bytes(16)
    compute_capability: tuple[int, int] = (0, 0)
    #: Tick rate of every clock field, Hz (1..2^53-1).
    clock_hz: int = 1_000_000_000

    @property
    def uuid_text(self) -> str:
        """The uuid as lowercase 8-4-4-4-12 hex (the TypeScript form)."""
        h = bytes(self.uuid).hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@dataclass
class _Identity:
    job: str = ""
    kernel: str = ""
    launch_id: int = 0
    frame_sequence: int = 0
    source: Source = "cuda"
    group_size: int = 32
    sync: bool = False
    device: Device = field(default_factory=Device)
    start_unix_nanos: int = 0
    end_unix_nanos: int = 0


class IdentityFields(TypedDict):
    """The identity a launch's frames share (every ``_Identity`` field but ``frame_sequence``), as
    keyword arguments: ``LaunchSummary(**identity, frame_sequence=0, ...)``."""

    job: str
    kernel: str
    launch_id: int
    source: Source
    group_size: int
    sync: bool
    device: Device
    start_unix_nanos: int
    end_unix_nanos: int


@dataclass
class LaunchSummary(_Identity):
    """Frame type 1: the always-on per-launch aggregate. ``histogram`` is a list of (bin, count)."""

    group_count: int = 0
    groups_counted: int = 0
    sum_simt_clocks: int = 0
    sum_mimd_clocks: int = 0
    sum_measured_loss: float = 0.0
    sum_counts_loss: float = 0.0
    sum_max_counts: int = 0
    sum_counts: int = 0
    dropped_samples: int = 0
    histogram: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class GroupSample:
    """One sampled group: per-lane counts w_i and finish clocks c_i, start c0 and end c_end."""

    group_index: int = 0
    start_clock: int = 0
    end_clock: int = 0
    lane_counts: list[int] = field(default_factory=list)
    lane_finish_clocks: list[int] = field(default_factory=list)


@dataclass
class GroupSamples(_Identity):
    """Frame type 2: a sampled subset of a launch's groups. ``groups_per_block`` is 0 unless selection is block."""

    group_count: int = 0
    selection: SelectionName = "hash"
    sampling_stride: int = 1
    groups_per_block: int = 0
    groups: list[GroupSample] = field(default_factory=list)


Frame = Union[LaunchSummary, GroupSamples]

# ------------------------------------------------------------------------------------------
# Validation (the same rules, order and codes as protocol/validate-frame.ts).


def _is_control(code_point: int) -> bool:
    return code_point < 0x20 or 0x7F <= code_point <= 0x9F


# A backslash InfluxDB cannot store in a tag value: right before ',', '=', a space, or at the end
# (contracts/stream-identity.ts INFLUX_UNSAFE_BACKSLASH_PATTERN; protocol/SPEC.md "Identity strings").
_UNSAFE_BACKSLASH = re.compile(r"\\(?=[,= ]|$)")


def _string_bytes(value: object, name: str, min_bytes: int) -> bytes:
    if not isinstance(value, str):
        raise _invalid(f"{name} must be a string, got {type(value).__name__}")
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise _invalid(f"{name} must be well-formed Unicode (it has a lone surrogate)") from error
    if len(data) > MAX_STRING_BYTES:
        raise _over(f"{name} must be at most {MAX_STRING_BYTES} UTF-8 bytes, got {len(data)}")
    if len(data) < min_bytes:
        raise _invalid(f"{name} must not be empty")
    for ch in value:
        if _is_control(ord(ch)):
            raise _invalid(f"{name} must not contain control characters (C0, DEL, C1), got U+{ord(ch):04X}")
    unsafe = _UNSAFE_BACKSLASH.search(value)
    if unsafe is not None:
        raise _invalid(f"{name} must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at character {unsafe.start() + 1}")
    return data


def _check_uint(value: object, name: str, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _invalid(f"{name} must be an integer >= 0, got {value!r}")
    if value > maximum:
        raise (_over if maximum == MAX_COUNT else _invalid)(f"{name} must be at most {maximum}, got {value}")


def _check_u64(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > U64_MAX:
        raise _invalid(f"{name} must be an integer 0..2^64-1, got {value!r}")


def _check_loss_sum(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise _invalid(f"{name} must be a finite number >= 0, got {value!r}")


def _check_identity(frame: _Identity) -> tuple[bytes, bytes, bytes]:
    job = _string_bytes(frame.job, "job", 1)
    if b"/" in job:
        raise _invalid(f"job must not contain '/', got '{frame.job}'")
    kernel = _string_bytes(frame.kernel, "kernel", 1)
    _check_u64(frame.launch_id, "launchId")
    _check_uint(frame.frame_sequence, "frameSequence", U32_MAX)
    if frame.source not in _SOURCES:
        raise _invalid(f"source must be 'cuda' or 'cpu', got '{frame.source}'")
    n = frame.group_size
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise _invalid(f"groupSize must be 1..{MAX_GROUP_SIZE}, got {n!r}")
    if n > MAX_GROUP_SIZE:
        raise _over(f"groupSize must be 1..{MAX_GROUP_SIZE}, got {n}")
    if not isinstance(frame.sync, bool):
        raise _invalid(f"sync must be a boolean, got {frame.sync!r}")
    _check_u64(frame.start_unix_nanos, "startUnixNanos")
    _check_u64(frame.end_unix_nanos, "endUnixNanos")
    device = frame.device
    name = _string_bytes(device.name, "device name", 0)
    if not isinstance(device.uuid, (bytes, bytearray)) or len(device.uuid) != 16:
        raise _invalid("device uuid must be 16 bytes")
    major, minor = device.compute_capability
    _check_uint(major, "computeCapability major", 255)
    _check_uint(minor, "computeCapability minor", 255)
    if device.clock_hz == 0:
        raise _invalid("clockHz must be >= 1, got 0")
    _check_uint(device.clock_hz, "clockHz", MAX_COUNT)
    return job, kernel, name


def _check_launch_summary(f: LaunchSummary) -> None:
    _check_uint(f.group_count, "groupCount", MAX_COUNT)
    _check_uint(f.groups_counted, "groupsCounted", MAX_COUNT)
    if f.groups_counted > f.group_count:
        raise _invalid(f"groupsCounted ({f.groups_counted}) must be <= groupCount ({f.group_count})")
    _check_u64(f.sum_simt_clocks, "sumSimtClocks")
    _check_u64(f.sum_mimd_clocks, "sumMimdClocks")
    _check_loss_sum(f.sum_measured_loss, "sumMeasuredLoss")
    _check_loss_sum(f.sum_counts_loss, "sumCountsLoss")
    _check_uint(f.sum_max_counts, "sumMaxCounts", MAX_COUNT)
    _check_uint(f.sum_counts, "sumCounts", MAX_COUNT)
    _check_uint(f.dropped_samples, "droppedSamples", MAX_COUNT)
    if len(f.histogram) > MAX_HISTOGRAM_ENTRIES:
        raise _over(f"histogram entries must be at most {MAX_HISTOGRAM_ENTRIES}, got {len(f.histogram)}")
    previous = -1
    total = 0
    for entry in f.histogram:
        bin_index, count = entry
        if isinstance(bin_index, bool) or not isinstance(bin_index, int) or bin_index < 0 or bin_index >= HISTOGRAM_BIN_COUNT:
            raise _invalid(f"histogram bin must be < {HISTOGRAM_BIN_COUNT}, got {bin_index!r}")
        if bin_index <= previous:
            raise _invalid(f"histogram bins must be strictly increasing, got {bin_index} after {previous}")
        if count == 0:
            raise _invalid(f"histogram counts must be >= 1, got 0 for bin {bin_index}")
        _check_uint(count, "histogram count", MAX_COUNT)
        total += count
        if total > MAX_COUNT:
            raise _over(f"histogram total must be at most {MAX_COUNT}, got {total}")
        previous = bin_index
    if total != f.groups_counted * f.group_size:
        raise _invalid(f"histogram counts must sum to groupsCounted*groupSize ({f.groups_counted * f.group_size}), got {total}")


def _check_group_samples(f: GroupSamples) -> None:
    _check_uint(f.group_count, "groupCount", MAX_COUNT)
    if f.selection not in _SELECTIONS:
        raise _invalid(f"selection must be 'stride', 'hash' or 'block', got '{f.selection}'")
    if f.selection == "block":
        _check_uint(f.groups_per_block, "groupsPerBlock", 0xFFFF)
        if f.groups_per_block == 0:
            raise _invalid("groupsPerBlock must be 1..65535 with selection block, got 0")
    elif f.groups_per_block != 0:
        raise _invalid(f"groupsPerBlock is for selection block only, got {f.groups_per_block} with '{f.selection}'")
    if f.sampling_stride == 0:
        raise _invalid("samplingStride must be >= 1, got 0")
    _check_uint(f.sampling_stride, "samplingStride", U32_MAX)
    if len(f.groups) > MAX_GROUP_SAMPLES:
        raise _over(f"sampled groups per frame must be at most {MAX_GROUP_SAMPLES}, got {len(f.groups)}")
    n = f.group_size
    for g in f.groups:
        index = g.group_index
        if isinstance(index, bool) or not isinstance(index, int) or index < 0 or index >= f.group_count:
            raise _invalid(f"groupIndex must be an integer < groupCount ({f.group_count}), got {index!r}")
        _check_u64(g.start_clock, "startClock")
        _check_u64(g.end_clock, "endClock")
        if len(g.lane_counts) != n or len(g.lane_finish_clocks) != n:
            raise _invalid(f"each sample needs groupSize ({n}) laneCounts and laneFinishClocks (group {index})")
        for c in g.lane_counts:
            _check_uint(c, "laneCounts", U32_MAX)
        for clock in g.lane_finish_clocks:
            _check_u64(clock, "laneFinishClocks")


def validate_frame(frame: Frame) -> None:
    """Check every rule of SPEC.md; raises :class:`FrameError` (OVER_LIMIT or INVALID) on the first problem."""
    if not isinstance(frame, (LaunchSummary, GroupSamples)):
        raise _invalid(f"frame must be a LaunchSummary or GroupSamples, got {type(frame).__name__}")
    _check_identity(frame)
    if isinstance(frame, LaunchSummary):
        _check_launch_summary(frame)
    else:
        _check_group_samples(frame)


# ------------------------------------------------------------------------------------------
# Encoding.

_IDENTITY = struct.Struct("<QIBBBBQQQ16sBB")
_SUMMARY = struct.Struct("<QQQQddQQQI")
_SAMPLES = struct.Struct("<QBBHII")
_SAMPLE_HEAD = struct.Struct("<QQQ")


def encode_frame(frame: Frame) -> bytes:
    """The bytes of one frame (header + payload) after :func:`validate_frame`.

    :raises FrameError: the frame breaks a SPEC.md rule
    """
    validate_frame(frame)
    job, kernel, name = _check_identity(frame)
    d = frame.device
    parts: list[bytes] = [
        _IDENTITY.pack(frame.launch_id, frame.frame_sequence, _SOURCES.index(frame.source), frame.group_size, 1 if frame.sync else 0, 0,
                       frame.start_unix_nanos, frame.end_unix_nanos, d.clock_hz, bytes(d.uuid), d.compute_capability[0], d.compute_capability[1]),
        bytes([len(job)]), job, bytes([len(kernel)]), kernel, bytes([len(name)]), name,
    ]
    if isinstance(frame, LaunchSummary):
        kind = TYPE_LAUNCH_SUMMARY
        parts.append(_SUMMARY.pack(frame.group_count, frame.groups_counted, frame.sum_simt_clocks, frame.sum_mimd_clocks,
                                   float(frame.sum_measured_loss), float(frame.sum_counts_loss), frame.sum_max_counts,
                                   frame.sum_counts, frame.dropped_samples, len(frame.histogram)))
        parts.extend(struct.pack("<IQ", b, c) for b, c in frame.histogram)
    else:
        kind = TYPE_GROUP_SAMPLES
        parts.append(_SAMPLES.pack(frame.group_count, _SELECTIONS.index(frame.selection), 0, frame.groups_per_block,
                                   frame.sampling_stride, len(frame.groups)))
        n = frame.group_size
        lanes = struct.Struct(f"<{n}I{n}Q")
        for g in frame.groups:
            parts.append(_SAMPLE_HEAD.pack(g.group_index, g.start_clock, g.end_clock))
            parts.append(lanes.pack(*g.lane_counts, *g.lane_finish_clocks))
    payload = b"".join(parts)
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise _over(f"payload must be at most {MAX_PAYLOAD_BYTES} bytes, got {len(payload)}")
    return FRAME_MAGIC + struct.pack("<HHII", FRAME_VERSION, kind, len(payload), crc32c(payload)) + payload


# ------------------------------------------------------------------------------------------
# Decoding.


class _Reader:
    def __init__(self, payload: memoryview) -> None:
        self.payload = payload
        self.at = 0

    def take(self, size: int, name: str) -> memoryview:
        remaining = len(self.payload) - self.at
        if remaining < size:
            raise _invalid(f"{name} ({size} bytes) runs past the payload end ({remaining} bytes left)")
        out = self.payload[self.at:self.at + size]
        self.at += size
        return out

    def string(self, name: str) -> str:
        length = self.take(1, name)[0]
        raw = bytes(self.take(length, name))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise _invalid(f"{name} is not valid UTF-8") from error


def _header(data: bytes | bytearray | memoryview, at: int = 0) -> tuple[int, int, int]:
    """(type, payloadLength, crc) of the header at ``at``; header checks in SPEC.md's order."""
    if len(data) - at < FRAME_HEADER_BYTES:
        raise FrameError("WW_ERR_FRAME_TRUNCATED", f"a frame header needs {FRAME_HEADER_BYTES} bytes, got {len(data) - at}")
    if bytes(data[at:at + 4]) != FRAME_MAGIC:
        raise FrameError("WW_ERR_FRAME_BAD_MAGIC", f"frame must start with WWFR, got {bytes(data[at:at + 4]).hex()}")
    version, kind, length, crc = struct.unpack_from("<HHII", data, at + 4)
    if version != FRAME_VERSION:
        raise FrameError("WW_ERR_FRAME_UNKNOWN_VERSION", f"frame version must be {FRAME_VERSION}, got {version}")
    if kind not in (TYPE_LAUNCH_SUMMARY, TYPE_GROUP_SAMPLES):
        raise FrameError("WW_ERR_FRAME_UNKNOWN_TYPE", f"frame type must be 1 or 2, got {kind}")
    if length > MAX_PAYLOAD_BYTES:
        raise _over(f"payloadLength must be at most {MAX_PAYLOAD_BYTES}, got {length}")
    return kind, length, crc


def decode_frame(data: bytes | bytearray | memoryview) -> Frame:
    """Decode exactly one frame that occupies all of ``data``.

    :raises FrameError: with the code SPEC.md assigns (header checks in its order, then CRC, then fields)
    """
    kind, length, crc = _header(data)
    total = FRAME_HEADER_BYTES + length
    if len(data) < total:
        raise FrameError("WW_ERR_FRAME_TRUNCATED", f"frame declares {total} bytes, got {len(data)}")
    if len(data) > total:
        raise _invalid(f"expected exactly one frame of {total} bytes, got {len(data)} (trailing bytes)")
    payload = memoryview(bytes(data[FRAME_HEADER_BYTES:total]))
    computed = crc32c(payload)
    if computed != crc:
        raise FrameError("WW_ERR_FRAME_CRC_MISMATCH", f"payload CRC-32C must match the header's 0x{crc:08x}, computed 0x{computed:08x}")
    r = _Reader(payload)
    head = r.take(_IDENTITY.size, "identity")
    launch_id, sequence, source, n, flags, reserved, start, end, clock_hz, uuid, major, minor = _IDENTITY.unpack(head)
    if source > 1:
        raise _invalid(f"source must be 0 (cuda) or 1 (cpu), got {source}")
    if flags > 1:
        raise _invalid(f"flags bits 1..7 must be 0, got {flags}")
    if reserved != 0:
        raise _invalid(f"reserved byte must be 0, got {reserved}")
    job = r.string("job")
    kernel = r.string("kernel")
    name = r.string("device name")
    identity = IdentityFields(job=job, kernel=kernel, launch_id=launch_id, source=_SOURCES[source], group_size=n, sync=flags == 1,
                              device=Device(name=name, uuid=uuid, compute_capability=(major, minor), clock_hz=clock_hz),
                              start_unix_nanos=start, end_unix_nanos=end)
    # The identity checks come before the body is read, as in the TypeScript decoder.
    _check_identity(_Identity(**identity, frame_sequence=sequence))
    frame: Frame
    if kind == TYPE_LAUNCH_SUMMARY:
        fixed = _SUMMARY.unpack(r.take(_SUMMARY.size, "launch summary fields"))
        entries = fixed[9]
        if entries > MAX_HISTOGRAM_ENTRIES:
            raise _over(f"histogram entries must be at most {MAX_HISTOGRAM_ENTRIES}, got {entries}")
        raw = r.take(12 * entries, "histogram entries")
        histogram = [struct.unpack_from("<IQ", raw, 12 * i) for i in range(entries)]
        frame = LaunchSummary(**identity, frame_sequence=sequence, group_count=fixed[0], groups_counted=fixed[1], sum_simt_clocks=fixed[2], sum_mimd_clocks=fixed[3],
                              sum_measured_loss=fixed[4], sum_counts_loss=fixed[5], sum_max_counts=fixed[6], sum_counts=fixed[7],
                              dropped_samples=fixed[8], histogram=[(b, c) for b, c in histogram])
    else:
        group_count, selection, reserved2, per_block, stride, count = _SAMPLES.unpack(r.take(_SAMPLES.size, "group samples fields"))
        if selection > 2:
            raise _invalid(f"selection must be 0 (stride), 1 (hash) or 2 (block), got {selection}")
        if reserved2 != 0:
            raise _invalid("reserved byte after selection must be 0")
        if (selection == 2) != (per_block != 0):
            raise _invalid(f"groupsPerBlock must be 1..65535 with selection block and 0 otherwise, got {per_block}")
        if count > MAX_GROUP_SAMPLES:
            raise _over(f"sampled groups per frame must be at most {MAX_GROUP_SAMPLES}, got {count}")
        lanes = struct.Struct(f"<{n}I{n}Q")
        raw = r.take(count * (24 + lanes.size), "samples")
        groups = []
        at = 0
        for _ in range(count):
            index, c0, cend = _SAMPLE_HEAD.unpack_from(raw, at)
            values = lanes.unpack_from(raw, at + 24)
            at += 24 + lanes.size
            groups.append(GroupSample(index, c0, cend, list(values[:n]), list(values[n:])))
        frame = GroupSamples(**identity, frame_sequence=sequence, group_count=group_count, selection=_SELECTIONS[selection], sampling_stride=stride,
                             groups_per_block=per_block, groups=groups)
    if r.at != len(payload):
        raise _invalid(f"{len(payload) - r.at} bytes left over after the last payload field")
    validate_frame(frame)
    return frame


def split_frames(data: bytes | bytearray | memoryview) -> Iterator[bytes]:
    """The whole frames of a concatenation ``frame frame ...`` (a file, a socket capture), in order.

    Strict: raises :class:`FrameError` at the first byte that does not start a valid frame (the
    TypeScript splitter resynchronises instead; this reader is for the producer's own tests).
    """
    at = 0
    while at < len(data):
        _, length, _ = _header(data, at)
        end = at + FRAME_HEADER_BYTES + length
        if end > len(data):
            raise FrameError("WW_ERR_FRAME_TRUNCATED", f"frame at byte {at} declares {end - at} bytes, {len(data) - at} left")
        yield bytes(data[at:end])
        at = end


def decode_frames(data: bytes | bytearray | memoryview) -> list[Frame]:
    """Decode a concatenation of frames (strict, see :func:`split_frames`)."""
    return [decode_frame(raw) for raw in split_frames(data)]
