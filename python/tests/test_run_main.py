"""run_main: an example whose framework raises ends with one WW_ERR_PYTHON_EXAMPLE line and exit
status 1 (the traceback only with WARPWATCH_TRACEBACK=1); a normal return is the exit status."""

from __future__ import annotations

from typing import Sequence

import pytest

from warpwatch.examples._common import run_main


def _raises(argv: Sequence[str] | None) -> int:
    raise AttributeError("module 'numpy' has no attribute 'row_stack'\n(second line)")


def test_a_framework_exception_is_one_coded_line_and_exit_1(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WARPWATCH_TRACEBACK", raising=False)
    with pytest.raises(SystemExit) as exited:
        run_main(_raises)
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("WW_ERR_PYTHON_EXAMPLE: ")
    assert "failed: AttributeError: module 'numpy' has no attribute 'row_stack' (second line)" in err


def test_the_traceback_follows_with_warpwatch_traceback_1(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WARPWATCH_TRACEBACK", "1")
    with pytest.raises(SystemExit):
        run_main(_raises)
    err = capsys.readouterr().err
    assert err.startswith("WW_ERR_PYTHON_EXAMPLE: ") and "Traceback (most recent call last)" in err


def test_a_normal_return_is_the_exit_status() -> None:
    with pytest.raises(SystemExit) as exited:
        run_main(lambda argv: 3)
    assert exited.value.code == 3
