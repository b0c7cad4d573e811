"""Without Chromium the browser tests skip and say how to install it; in CI they fail."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.ui.seed import ROOT

ONE_TEST = "tests/ui/test_keys_and_docs.py::test_open_mode_needs_no_key"


def _run(**env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "SGAM_REQUIRE_BROWSER"}
    environ.update(SGAM_CHROMIUM="/nonexistent/chromium", **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", ONE_TEST, "-q", "-rs", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_a_missing_browser_skips_with_the_install_command() -> None:
    run = _run()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout
    assert "apt-get install -y chromium chromium-driver" in run.stdout


def test_a_missing_browser_fails_when_required() -> None:
    run = _run(SGAM_REQUIRE_BROWSER="1")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "a browser is required (SGAM_REQUIRE_BROWSER=1)" in run.stdout
    assert "chromium not found" in run.stdout
