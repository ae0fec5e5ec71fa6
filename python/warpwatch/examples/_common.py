"""What every escape-time example shares: the command line, the pixel grid and its reference
counts, the recorder, the exit report, and the clean skip of the GPU-only examples.

The pixel rule (all examples): pixel (x, y) of a width x height grid is unit y·width + x,
c = (-2 + 2.5·x/width) + i·(-1.25 + 2.5·y/height), iterations z <- z² + c from z = 0 while
|z|² <= 4, at most --max-iter, written out in reals (zr² − zi² + cr, 2·zr·zi + ci) so that every
implementation reproduces the counts exactly (CUDA C++ compiled with ``--fmad=false``: no fused
multiply-adds).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from typing import Any, Callable, Sequence

import numpy as np

from warpwatch.examples.escape_source import GROUP_SIZES
from warpwatch.frame import Device, Source
from warpwatch.recorder import Recorder

#: Exit code of a GPU example where its GPU or its framework is absent (after one ``skipped: ...`` line).
SKIPPED = 0


def escape_parser(prog: str, doc: str | None, job: str, group_flag: str = "--n", group_help: str = "lanes per group (divides 32)",
                  group_default: int = 8) -> argparse.ArgumentParser:
    """The examples' common arguments: --out, the grid, --max-iter, the group size flag, --launches, --job,
    --kernel, --sampling-stride (the group size lands in ``args.group`` whatever its flag's name)."""
    description, epilog = help_texts(doc)
    parser = argparse.ArgumentParser(prog=prog, description=description, epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="where the frames go: a file, unix:PATH (collector socket) or - (stdout)")
    parser.add_argument("--width", type=int, default=64, help="grid width in pixels (default 64)")
    parser.add_argument("--height", type=int, default=64, help="grid height in pixels (default 64)")
    parser.add_argument("--max-iter", type=int, default=100, help="iteration cap per pixel (default 100)")
    parser.add_argument(group_flag, dest="group", type=int, default=group_default, help=f"{group_help} (default {group_default})")
    parser.add_argument("--launches", type=int, default=1, help="kernel launches to record (default 1)")
    parser.add_argument("--job", default=job, help=f"job name in the frames (default {job})")
    parser.add_argument("--kernel", default="escape", help="kernel name in the frames (default escape)")
    parser.add_argument("--sampling-stride", type=int, default=4, help="about one group in k is sampled: its lanes go into a GroupSamples frame (default 4; selection hash, thinned to fit the sample capacity)")
    return parser


def help_texts(doc: str | None) -> tuple[str | None, str | None]:
    r"""``--help``'s description (the docstring's first paragraph, as one sentence) and epilog (the rest, as written).

    >>> help_texts("Counts per lane and the\ngroup reduction.\n\n    python -m x --out f\n")
    ('Counts per lane and the group reduction.', '    python -m x --out f')
    """
    if not doc:
        return None, None
    paragraphs = doc.strip("\n").split("\n\n")
    description = " ".join(paragraphs[0].split())
    epilog = "\n\n".join(paragraphs[1:]).rstrip() or None
    return description, epilog


def grid_error(width: int, height: int, multiple: int, what: str) -> str | None:
    """One ``WW_ERR_PYTHON_EXAMPLE`` line when width·height is not a positive multiple of ``multiple``, else None."""
    if width < 1 or height < 1 or width * height % multiple != 0:
        return f"WW_ERR_PYTHON_EXAMPLE: width·height must be a positive multiple of {what}, got {width}x{height}"
    return None


def cuda_escape_args(prog: str, doc: str | None, job: str, argv: Sequence[str] | None) -> argparse.Namespace | None:
    """The arguments of an example that runs the CUDA C++ kernels of escape_source.py (``--n`` one of
    :data:`~warpwatch.examples.escape_source.GROUP_SIZES`, default 32, the grid a multiple of it), or
    None after one ``WW_ERR_PYTHON_EXAMPLE`` line on stderr (the caller exits 2)."""
    args = escape_parser(prog, doc, job=job, group_help=f"lanes per group, one of {GROUP_SIZES}", group_default=32).parse_args(argv)
    if args.group not in GROUP_SIZES:
        print(f"WW_ERR_PYTHON_EXAMPLE: --n must be one of {GROUP_SIZES}, got {args.group}", file=sys.stderr)
        return None
    error = grid_error(args.width, args.height, args.group, "--n")
    if error:
        print(error, file=sys.stderr)
        return None
    return args


def escape_reference(width: int, height: int, max_iter: int) -> np.ndarray:
    """The escape counts of every pixel (uint32, unit order), computed on the host with numpy: the
    check on what a GPU example's kernel stored."""
    unit = np.arange(width * height)
    cr = -2.0 + 2.5 * (unit % width) / width
    ci = -1.25 + 2.5 * (unit // width) / height
    zr, zi = np.zeros_like(cr), np.zeros_like(ci)
    w = np.zeros(unit.size, dtype=np.uint32)
    active = np.ones(unit.size, dtype=bool)
    for _ in range(max_iter):
        active &= zr * zr + zi * zi <= 4.0
        if not active.any():
            break
        t = zr * zr - zi * zi + cr
        zi = np.where(active, 2.0 * zr * zi + ci, zi)
        zr = np.where(active, t, zr)
        w += active
    return w


def device_uuid_bytes(props: Any) -> bytes:
    """The 16 raw UUID bytes of an object's ``uuid`` text: ``torch.cuda.get_device_properties(i)``
    (torch >= 2.1; its text form has varied: ``GPU-…`` or bare hex with dashes) or numba-cuda's
    current device (``GPU-…``); zeros when unknown, as SPEC.md allows.

    Example: ``device_uuid_bytes(torch.cuda.get_device_properties(0))``
    """
    try:
        return bytes.fromhex(str(props.uuid).removeprefix("GPU-").replace("-", ""))[:16].ljust(16, b"\0")
    except Exception:  # noqa: BLE001 - no uuid attribute, or an unexpected text form
        return bytes(16)


def open_recorder(args: argparse.Namespace, device: Device, source: Source) -> Recorder:
    """The example's recorder: frames to ``--out``, the job name, the sampling stride."""
    return Recorder(args.out, job=args.job, device=device, source=source, sampling_stride=args.sampling_stride)


def finish(recorder: Recorder, args: argparse.Namespace, report: Sequence[dict[str, Any]], ok: bool = True) -> int:
    """Close the recorder, print the JSON summary (stdout, or stderr when the frames go to stdout) and
    return the exit code: 0 when every frame was written and ``ok``."""
    result = recorder.close(timeout=10)
    stats = recorder.stats()
    summary = {"launches": list(report), "written": stats.written, "dropped": stats.dropped, "complete": result.complete}
    print(json.dumps(summary), file=sys.stderr if args.out in ("-", "stdout") else sys.stdout)
    return 0 if ok and result.complete and stats.dropped == 0 else 1


def skipped(prog: str, reason: str) -> int:
    """Print ``skipped: <reason>`` (stdout) for a GPU example that cannot run here; returns :data:`SKIPPED`."""
    print(f"{prog}: skipped: {reason}")
    return SKIPPED


def run_main(main: Callable[[Sequence[str] | None], int]) -> None:
    """``sys.exit(main(None))`` for ``python -m warpwatch.examples.X``.

    An exception from the framework underneath (a compile error, a CUDA error, a library that
    cannot import: numba-cuda 0.30.4 with numpy 2.5 on the H100 of docs/validation.md) ends the
    example with one ``WW_ERR_PYTHON_EXAMPLE`` line on stderr and exit status 1; with
    ``WARPWATCH_TRACEBACK=1`` the traceback follows it.
    """
    try:
        status = main(None)
    except Exception as error:  # noqa: BLE001 - any failure of the framework is reported, not raised
        detail = " ".join(f"{type(error).__name__}: {error}".split())
        print(f"WW_ERR_PYTHON_EXAMPLE: {sys.argv[0] or 'example'} failed: {detail}", file=sys.stderr)
        if os.environ.get("WARPWATCH_TRACEBACK") == "1":
            traceback.print_exc()
        status = 1
    sys.exit(status)
