"""Runs the real trustbed binary: servers with their own state, and the CLI."""
from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEMO_ENTITIES = REPO / "Entities"
START_TIMEOUT = 30.0

_running: list["TrustbedServer"] = []


def trustbed_binary() -> Path:
    env = os.environ.get("TRUSTBED_BIN")
    path = Path(env) if env else REPO / ".build" / "release" / "trustbed"
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(
            f"trustbed binary not found or not executable at {path} "
            f"({'from TRUSTBED_BIN' if env else 'TRUSTBED_BIN unset; default path'}); build it with `swift build -c release`",
            pytrace=False,
        )
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 60, check: bool = False) -> subprocess.CompletedProcess:
    """Runs `trustbed ARGS...` and returns the completed process (text mode)."""
    cmd = [str(trustbed_binary()), *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"`{' '.join(cmd)}` exited {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    return proc


class TrustbedServer:
    """One `trustbed serve` process with its own state directory."""

    def __init__(self, workdir: Path, *, entities: Path | dict | None = None, port: int | None = None, label: str = "server",
                 extra_args: list[str] | None = None, public_base: str | None = None):
        self.dir = Path(workdir)
        self.extra_args = list(extra_args or [])
        self.dir.mkdir(parents=True, exist_ok=True)
        self.entities = self.dir / "Entities"
        self.keys = self.dir / "Keys"
        self.database = self.dir / "trustbed.sqlite"
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # The URL the server is told is its public one (`--base-url`), e.g. https behind a proxy;
        # requests still go to `base`.
        self.public_base = public_base or self.base
        self.label = label
        self.proc: subprocess.Popen | None = None
        self.log_path = self.dir / f"{label}.log"
        self._log = None
        if not self.entities.exists():
            if entities is None:
                shutil.copytree(DEMO_ENTITIES, self.entities)
            elif isinstance(entities, dict):
                self.write_entities(entities)
            else:
                shutil.copytree(entities, self.entities)

    # -- configuration

    def write_entities(self, files: dict[str, dict]) -> None:
        self.entities.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            (self.entities / f"{name}.json").write_text(json.dumps(content, indent=2))

    def id(self, name: str) -> str:
        return f"{self.public_base}/{name}"

    def local(self, url: str) -> str:
        """A public URL of this server turned into one the test can reach."""
        return self.base + url[len(self.public_base):] if url.startswith(self.public_base) else url

    def url(self, name: str, path: str = "") -> str:
        return f"{self.base}/{name}{path}"

    @property
    def admin_token(self) -> str:
        """The issuers' admin token, which the server creates in Keys/admin-token on first start."""
        return (self.keys / "admin-token").read_text().strip()

    @property
    def state_args(self) -> list[str]:
        return ["--entities", str(self.entities), "--keys", str(self.keys), "--database", str(self.database)]

    def serve_command(self) -> list[str]:
        return [str(trustbed_binary()), "serve", *self.state_args, "--host", "127.0.0.1", "--port", str(self.port), "--base-url", self.public_base,
                *self.extra_args]

    # -- lifecycle

    def start(self, timeout: float = START_TIMEOUT) -> "TrustbedServer":
        assert self.proc is None or self.proc.poll() is not None, f"{self.label} already running"
        self._log = open(self.log_path, "ab")
        deadline = time.monotonic() + timeout
        last = None
        while True:  # a port just freed by a killed server can take a moment to bind again
            self.proc = subprocess.Popen(self.serve_command(), cwd=self.dir, stdout=self._log, stderr=self._log,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
            if self not in _running:
                _running.append(self)
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                try:
                    r = requests.get(self.base + "/health", timeout=2)
                    if r.status_code == 200:
                        body = r.json()
                        assert body.get("status") == "ok", f"{self.label}: /health body {body!r} (expected status ok)"
                        return self
                    last = f"/health answered {r.status_code}"
                except requests.RequestException as e:
                    last = repr(e)
                time.sleep(0.05)
            if self.proc.poll() is not None and time.monotonic() < deadline and b"ddress already in use" in self.log_tail().encode():
                time.sleep(0.5)
                continue
            break
        code = self.proc.poll()
        self.stop()
        raise AssertionError(
            f"{self.label} did not become healthy within {timeout}s (exit code {code}, last: {last})\n"
            f"command: {' '.join(self.serve_command())}\nlog tail:\n{self.log_tail()}"
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._close_log()

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=5)
        self._close_log()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no log)"

    # -- CLI with this server's state

    def cli(self, *args: str, timeout: float = 60, check: bool = False) -> subprocess.CompletedProcess:
        return run_cli(*args, cwd=self.dir, timeout=timeout, check=check)


def _stop_all() -> None:
    for s in _running:
        try:
            s.stop()
        except Exception:  # noqa: BLE001
            pass




atexit.register(_stop_all)
