"""Cross-codec helper for python/python.test.ts: the Python side of the property test against the
TypeScript codec (protocol/).

    python interop.py decode FILE.json   # FILE: [{"hex": ...}] -> stdout [{"ok", "fields", "reencoded"} | {"ok": false, "code"}]
    python interop.py random SEED COUNT  # stdout: [{"hex", "fields"}] of COUNT random valid frames

``fields`` is the canonical JSON form both sides build independently from their decoded frames
(u64 values as decimal strings, everything else as JSON numbers, strings and booleans).
"""

from __future__ import annotations

import json
import random
import re
import sys
from typing import Any

from warpwatch.frame import (
    HISTOGRAM_BIN_COUNT,
    MAX_COUNT,
    U64_MAX,
    Device,
    Frame,
    FrameError,
    GroupSample,
    GroupSamples,
    IdentityFields,
    LaunchSummary,
    SelectionName,
    Source,
    decode_frame,
    encode_frame,
)


def canonical(frame: Frame) -> dict[str, Any]:
    """The canonical JSON form of a frame (the same keys python.test.ts builds from a TS frame)."""
    d = frame.device
    out: dict[str, Any] = {
        "type": "launch-summary" if isinstance(frame, LaunchSummary) else "group-samples",
        "job": frame.job,
        "kernel": frame.kernel,
        "launchId": str(frame.launch_id),
        "frameSequence": frame.frame_sequence,
        "source": frame.source,
        "groupSize": frame.group_size,
        "sync": frame.sync,
        "device": {"name": d.name, "uuid": d.uuid_text, "major": d.compute_capability[0], "minor": d.compute_capability[1], "clockHz": d.clock_hz},
        "startUnixNanos": str(frame.start_unix_nanos),
        "endUnixNanos": str(frame.end_unix_nanos),
        "groupCount": frame.group_count,
    }
    if isinstance(frame, LaunchSummary):
        out.update(
            groupsCounted=frame.groups_counted,
            sumSimtClocks=str(frame.sum_simt_clocks),
            sumMimdClocks=str(frame.sum_mimd_clocks),
            sumMeasuredLoss=frame.sum_measured_loss,
            sumCountsLoss=frame.sum_counts_loss,
            sumMaxCounts=frame.sum_max_counts,
            sumCounts=frame.sum_counts,
            droppedSamples=frame.dropped_samples,
            histogram=[[b, c] for b, c in frame.histogram],
        )
    else:
        out.update(
            selection=frame.selection,
            samplingStride=frame.sampling_stride,
            groupsPerBlock=frame.groups_per_block,
            groups=[
                {
                    "groupIndex": g.group_index,
                    "startClock": str(g.start_clock),
                    "endClock": str(g.end_clock),
                    "laneCounts": list(g.lane_counts),
                    "laneFinishClocks": [str(c) for c in g.lane_finish_clocks],
                }
                for g in frame.groups
            ],
        )
    return out


_ALPHABETS = ["abcdefghijklmnopqrstuvwxyz0123456789-_.", "äöüßéñçøå", "日本語カーネル", "😀🚀", " :|=\\\"'", "\u00a0\u200b\ufeff"]


def _text(rng: random.Random, min_bytes: int, forbid_slash: bool) -> str:
    while True:
        length = rng.choice([0, 1, 2, 5, 20, 60, 120])
        chars = [rng.choice(rng.choice(_ALPHABETS)) for _ in range(length)]
        if not forbid_slash and rng.random() < 0.2:
            chars.append("/")
        text = "".join(chars)
        if re.search(r"\\(?=[,= ]|$)", text):
            continue  # a backslash InfluxDB cannot store: outside the identity rules
        size = len(text.encode())
        if min_bytes <= size <= 255:
            return text


def _u64(rng: random.Random) -> int:
    return rng.choice([0, 1, rng.randrange(1 << 32), rng.randrange(U64_MAX + 1), U64_MAX])


def _count(rng: random.Random) -> int:
    return rng.choice([0, rng.randrange(1001), rng.randrange(MAX_COUNT + 1), MAX_COUNT])


def random_frame(rng: random.Random) -> Frame:
    """A random valid frame of either type (both selections' rules, extreme values included)."""
    n = rng.randint(1, 32)
    # The draws in the order they have always had (seeded runs give the same frames).
    job, kernel, launch_id, frame_sequence = _text(rng, 1, True), _text(rng, 1, False), _u64(rng), rng.randrange(1 << 32)
    sources: list[Source] = ["cuda", "cpu"]
    identity = IdentityFields(
        job=job, kernel=kernel, launch_id=launch_id,
        source=rng.choice(sources), group_size=n, sync=rng.random() < 0.5,
        device=Device(name=_text(rng, 0, False), uuid=bytes(rng.randrange(256) for _ in range(16)),
                      compute_capability=(rng.randrange(256), rng.randrange(256)), clock_hz=rng.choice([1, 10**9, rng.randint(1, MAX_COUNT)])),
        start_unix_nanos=_u64(rng), end_unix_nanos=_u64(rng),
    )
    if rng.random() < 0.5:
        bins = sorted(rng.sample(range(HISTOGRAM_BIN_COUNT), rng.randint(0, 40)))
        groups_counted = rng.choice([len(bins), len(bins) + rng.randrange(1000), rng.randrange(1 << 40)]) if bins else 0
        lanes = groups_counted * n
        # Split `lanes` over the bins, each >= 1 (groups_counted >= len(bins) makes it possible).
        counts = [1] * len(bins)
        rest = lanes - len(bins)
        for i in range(len(bins)):
            share = rest if i == len(bins) - 1 else rng.randint(0, rest)
            counts[i] += share
            rest -= share

        def loss() -> float:
            return rng.choice([0.0, rng.uniform(0, 1e12), float(rng.randint(0, 10**6)) / 7])

        return LaunchSummary(**identity, frame_sequence=frame_sequence, group_count=groups_counted + rng.choice([0, rng.randrange(1000)]), groups_counted=groups_counted,
                             sum_simt_clocks=_u64(rng), sum_mimd_clocks=_u64(rng), sum_measured_loss=loss(), sum_counts_loss=loss(),
                             sum_max_counts=_count(rng), sum_counts=_count(rng), dropped_samples=_count(rng),
                             histogram=list(zip(bins, counts)))
    group_count = rng.choice([1, rng.randint(1, 1 << 20), rng.randint(1, MAX_COUNT)])
    selections: list[SelectionName] = ["stride", "hash", "block"]
    selection = rng.choice(selections)
    groups = [
        GroupSample(rng.randrange(group_count), _u64(rng), _u64(rng), [rng.randrange(1 << 32) for _ in range(n)], [_u64(rng) for _ in range(n)])
        for _ in range(rng.randint(0, 6))
    ]
    return GroupSamples(**identity, frame_sequence=frame_sequence, group_count=group_count, selection=selection, sampling_stride=rng.randint(1, (1 << 32) - 1),
                        groups_per_block=rng.randint(1, 0xFFFF) if selection == "block" else 0, groups=groups)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "decode":
        with open(argv[1], encoding="utf-8") as handle:
            items = json.load(handle)
        results: list[dict[str, Any]] = []
        for item in items:
            raw = bytes.fromhex(item["hex"])
            try:
                frame = decode_frame(raw)
            except FrameError as error:
                results.append({"ok": False, "code": error.code, "message": str(error)})
                continue
            results.append({"ok": True, "fields": canonical(frame), "reencoded": encode_frame(frame) == raw})
        json.dump(results, sys.stdout)
        return 0
    if len(argv) == 3 and argv[0] == "random":
        rng = random.Random(int(argv[1]))
        out = []
        for _ in range(int(argv[2])):
            frame = random_frame(rng)
            out.append({"hex": encode_frame(frame).hex(), "fields": canonical(frame)})
        json.dump(out, sys.stdout)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
