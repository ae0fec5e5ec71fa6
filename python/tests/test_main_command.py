"""warpwatch-py (python -m warpwatch): the package's commands, and one coded line for a bad one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from warpwatch import __version__
from warpwatch.__main__ import EXAMPLES, main


def test_help_lists_the_commands_and_every_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: warpwatch-py <command>")
    for name in ("nvrtc-check", "example", *EXAMPLES):
        assert name in out


def test_no_arguments_prints_the_usage_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: warpwatch-py" in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"warpwatch-py {__version__}\n"


@pytest.mark.parametrize("argv", [["frobnicate"], ["example"], ["example", "no_such_example"]])
def test_a_bad_command_is_one_coded_line_and_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("WW_ERR_PYTHON_USAGE: ")


def test_the_example_command_runs_the_example_module_with_the_rest_of_the_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    # --help of the example itself: argparse exits 0 after printing that example's flags.
    with pytest.raises(SystemExit) as exited:
        main(["example", "numba_escape", "--help"])
    assert exited.value.code == 0
    assert "--out" in capsys.readouterr().out


def test_python_dash_m_warpwatch_is_the_same_command() -> None:
    done = subprocess.run([sys.executable, "-m", "warpwatch", "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout == f"warpwatch-py {__version__}\n"


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_example_help_says_whole_sentences_and_every_flag(example: str, capsys: pytest.CaptureFixture[str]) -> None:
    # The description is the docstring's first paragraph, whole (not its first line cut mid-sentence).
    with pytest.raises(SystemExit) as exited:
        main(["example", example, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]
    assert description.rstrip().endswith((".", ":")), description
    for flag in ("--out", "--width", "--height", "--max-iter", "--launches", "--job", "--kernel", "--sampling-stride"):
        assert flag in out
    assert "(default 64)" in out and "(default 100)" in out
