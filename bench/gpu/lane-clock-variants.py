#!/usr/bin/env python3
"""Writes copies of kernels/ with other ways of reading the lane clock c_i (docs/validation.md §5),
for bench/gpu/lane-clock-experiment.sh. Each copy differs from kernels/ only in
include/warpwatch/probe-device.cuh (and, for `exit`, the matpow loop):

  now      kernels/ as it is: clock64() in every iteration()
  none     no clock in the loop; finish() reads it after the loop (the old probe: wrong
           measurements on a SIMT GPU, kept as the lower bound of the cost)
  sampled  clock64() in iteration() only in groups chosen for sampling (a flag set in begin());
           other groups read it after the loop (their measured H is then meaningless)
  exit     clock64() once, when the lane's loop condition fails: matpow's loop becomes
           `for (k = 0; probe.more(k < exponent); ++k)`, and more() reads the clock on the
           lane's exit path before the warp reconverges

Usage: lane-clock-variants.py KERNELS_DIR OUT_DIR   (writes OUT_DIR/<variant>/kernels)
"""
import shutil
import sys
from pathlib import Path

ITERATION = """  __device__ void iteration() {
    ++count_;
    finish_ = detail::clockTicks();
  }"""
FINISH = """  __device__ void finish() {
    if (count_ == 0) finish_ = start_;
  }"""
BEGIN = """    start_ = detail::clockTicks();
  }"""
LOOP = "  for (unsigned k = 0; k < exponent; ++k) {"
LOOP_END = """    probe.iteration();
  }
  probe.finish();"""


def replace_once(text: str, old: str, new: str, where: str) -> str:
    if text.count(old) != 1:
        raise SystemExit(f"lane-clock-variants: expected one '{old.strip()[:40]}' in {where}, found {text.count(old)}")
    return text.replace(old, new)


def main(kernels: Path, out: Path) -> None:
    probe_path = Path("include/warpwatch/probe-device.cuh")
    matpow_path = Path("cuda/matpow.cu")
    for variant in ("now", "none", "sampled", "exit"):
        target = out / variant / "kernels"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(kernels, target)
        probe = (target / probe_path).read_text()
        matpow = (target / matpow_path).read_text()
        if variant == "none":
            probe = replace_once(probe, ITERATION, "  __device__ void iteration() { ++count_; }", "probe")
            probe = replace_once(probe, FINISH, "  __device__ void finish() { finish_ = count_ == 0 ? start_ : detail::clockTicks(); }", "probe")
        elif variant == "sampled":
            probe = replace_once(probe, BEGIN, "    start_ = detail::clockTicks();\n    timed_ = isGroupSampled(buffers_.selection, buffers_.launchId, groupIndex_, buffers_.samplingStride, buffers_.groupsPerBlock);\n  }", "probe")
            probe = replace_once(probe, ITERATION, "  __device__ void iteration() {\n    ++count_;\n    if (timed_) finish_ = detail::clockTicks();\n  }", "probe")
            probe = replace_once(probe, FINISH, "  __device__ void finish() {\n    if (count_ == 0) finish_ = start_;\n    else if (!timed_) finish_ = detail::clockTicks();\n  }", "probe")
            probe = replace_once(probe, "  unsigned count_ = 0;\n", "  unsigned count_ = 0;\n  bool timed_ = false;\n", "probe")
        elif variant == "exit":
            probe = replace_once(probe, FINISH, FINISH + "\n  /// The loop condition of this lane: counts an iteration while true, reads c_i when false.\n  __device__ bool more(bool condition) {\n    if (condition) ++count_;\n    else finish_ = detail::clockTicks();\n    return condition;\n  }", "probe")
            matpow = replace_once(matpow, LOOP, "  for (unsigned k = 0; probe.more(k < exponent); ++k) {", "matpow")
            matpow = replace_once(matpow, LOOP_END, "  }\n  probe.finish();", "matpow")
            # NullGroupProbe (probe compiled out) needs more() too.
            null_at = probe.index("class NullGroupProbe")
            public_at = probe.index(" public:\n", null_at) + len(" public:\n")
            probe = probe[:public_at] + "  __device__ bool more(bool condition) { return condition; }\n" + probe[public_at:]
        (target / probe_path).write_text(probe)
        (target / matpow_path).write_text(matpow)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
