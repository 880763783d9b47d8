"""Fixtures that run the real trustbed binary.

TRUSTBED_BIN names the binary; without it <repo>/.build/release/trustbed is used.  A missing
binary is an error in every server test (never a skip).  Each server gets its own copy of
the entities, a fresh Keys directory and database in a temporary directory, and a free port.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import TrustbedServer, _running, _stop_all, trustbed_binary  # noqa: E402

@pytest.fixture(scope="session")
def trustbed_bin() -> Path:
    return trustbed_binary()


@pytest.fixture(scope="session")
def session_tmp():
    d = Path(tempfile.mkdtemp(prefix="trustbed-interop-"))
    yield d
    _stop_all()
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def fed(trustbed_bin, session_tmp) -> TrustbedServer:
    """The demo federation, served once for the whole session; tests must not change its state."""
    server = TrustbedServer(session_tmp / "main", label="main-server").start()
    yield server
    server.stop()


@pytest.fixture
def make_server(trustbed_bin, session_tmp):
    """Factory for extra servers (stopped at the end of the test)."""
    made: list[TrustbedServer] = []
    counter = {"n": 0}

    def factory(label: str = "extra", **kw) -> TrustbedServer:
        counter["n"] += 1
        s = TrustbedServer(session_tmp / f"{label}-{len(_running)}-{counter['n']}-{time.monotonic_ns()}", label=label, **kw)
        made.append(s)
        return s

    yield factory
    for s in made:
        s.stop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Attach the tail of every running server's log to a failing test's report."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and call.when in ("setup", "call"):
        for s in [s for s in _running if s.alive()] or _running[-2:]:
            if s.log_path.exists():
                report.sections.append((f"trustbed log ({s.label}, {s.base})", s.log_tail(2000)))


def pytest_sessionfinish(session, exitstatus):
    _stop_all()
