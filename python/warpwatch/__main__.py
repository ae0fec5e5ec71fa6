"""`warpwatch-py` (and `python -m warpwatch`): the Python package's commands in one place.

    warpwatch-py nvrtc-check              compile the probe header with NVRTC (python -m warpwatch.nvrtc_check)
    warpwatch-py example <name> [args]    run an example (python -m warpwatch.examples.<name>)
    warpwatch-py --version | --help

The recorder itself is a library (docs/python.md); these are its checks and examples.
"""

from __future__ import annotations

import importlib
import sys
from typing import Callable, Sequence

from warpwatch import __version__

#: The examples `warpwatch-py example` runs, each a module of warpwatch.examples with a main(argv).
EXAMPLES: tuple[str, ...] = ("numba_escape", "triton_escape", "cupy_escape", "torch_escape")

USAGE = (
    "usage: warpwatch-py <command> [args]\n"
    "\n"
    "commands:\n"
    "  nvrtc-check             compile the probe header with NVRTC for the CUDA architectures (needs the [nvrtc] extra)\n"
    f"  example <name> [args]   run an example: {', '.join(EXAMPLES)} (add --help for its flags)\n"
    "  --version               print the package version\n"
    "\n"
    "The recorder is a library: docs/python.md. Exit: 0 success, 1 failure, 2 bad arguments.\n"
)


def _load_main(module: str) -> Callable[[Sequence[str] | None], int]:
    """The main(argv) of a warpwatch module, imported only when its command runs (frameworks are heavy)."""
    loaded = importlib.import_module(module)
    entry: Callable[[Sequence[str] | None], int] = getattr(loaded, "main")
    return entry


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one `warpwatch-py` command.

    Args:
        argv: the arguments after the program name (default: sys.argv[1:]).
    Returns:
        The exit status: the command's own, 2 for an unknown command or example (one line on stderr).
    Example:
        >>> main(["--version"])  # prints "warpwatch-py 0.1.0"
        0
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command == "--version":
        sys.stdout.write(f"warpwatch-py {__version__}\n")
        return 0
    if command == "nvrtc-check":
        return _load_main("warpwatch.nvrtc_check")(rest)
    if command == "example":
        if not rest or rest[0] not in EXAMPLES:
            got = f' "{rest[0]}"' if rest else " none"
            sys.stderr.write(f"WW_ERR_PYTHON_USAGE: warpwatch-py example needs one of {', '.join(EXAMPLES)}; got{got}\n")
            return 2
        return _load_main(f"warpwatch.examples.{rest[0]}")(rest[1:])
    sys.stderr.write(f'WW_ERR_PYTHON_USAGE: unknown command "{command}"; commands: nvrtc-check, example, --version, --help\n')
    return 2


if __name__ == "__main__":
    sys.exit(main())
