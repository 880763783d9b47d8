"""docs/teaching-recovery.md (issue 21, item 7): the NL recovery lab, run as the page tells a student.

The page's ```sh recovery-...``` blocks are run in page order in ONE bash session (the setup block
defines `BASE` and `offer` for the others), with the server's folder as the working directory (the
CLI reads `Keys/admin-token` and `trustbed.sqlite` there), `trustbed` on the PATH, and the page's
http://127.0.0.1:8080 replaced by the test server's address. Each block's output must show its
`# ⇒ text` lines, in order; a command that fails without `|| true` fails the test."""
from __future__ import annotations

import re
import subprocess
import time

import pytest

from harness import REPO, trustbed_binary
from walletlib import start_pid_server

DOC = REPO / "docs" / "teaching-recovery.md"
DOC_BASE = "http://127.0.0.1:8080"
FENCE = re.compile(r"^```sh[ \t]+(recovery-[\w-]+)\n(.*?)^```[ \t]*$", re.M | re.S)
EXPECT = re.compile(r"^\s*# ⇒ (.+?)\s*$", re.M)


def page_blocks() -> list[tuple[str, str]]:
    blocks = FENCE.findall(DOC.read_text())
    assert [tag for tag, _ in blocks][:1] == ["recovery-setup"], "the page starts with its setup block"
    assert {"recovery-1", "recovery-2", "recovery-3"} <= {tag for tag, _ in blocks}, "one block per exercise at least"
    return blocks


@pytest.fixture(scope="module")
def server(session_tmp):
    s = start_pid_server(session_tmp / f"teaching-recovery-{time.monotonic_ns()}", label="teaching-recovery")
    yield s
    s.stop()


def test_the_page_runs_end_to_end(server, tmp_path):
    blocks = page_blocks()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "trustbed").symlink_to(trustbed_binary())
    outputs = [tmp_path / f"block-{i}.txt" for i in range(len(blocks))]
    script = ["set -eo pipefail", f'export PATH="{bin_dir}:$PATH"']
    for (tag, body), out in zip(blocks, outputs):
        script += [f'exec > "{out}" 2>&1', f"echo '>>> {tag}'", body.replace(DOC_BASE, server.base)]
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=server.dir, capture_output=True, text=True, timeout=600)
    ran = [out.read_text() if out.exists() else "" for out in outputs]
    assert proc.returncode == 0, f"the page's commands stopped (exit {proc.returncode}):\n" + "\n".join(t[-3000:] for t in ran if t)

    for (tag, body), text in zip(blocks, ran):
        position = 0
        for expected in EXPECT.findall(body):
            found = text.find(expected, position)
            assert found >= 0, f"{tag}: the page says the output shows {expected!r} (after what came before); it was:\n{text[-4000:]}"
            position = found + len(expected)


def test_every_command_of_the_page_is_a_cli_command():
    """The page's `trustbed` commands exist (a renamed subcommand fails here with its name)."""
    seen = set()
    for _, body in page_blocks():
        for match in re.finditer(r"\btrustbed ((?:wallet (?:transfer )?)?[a-z-]+)", body):
            seen.add(match.group(1))
    for command in sorted(seen):
        p = subprocess.run([str(trustbed_binary()), *command.split(), "--help"], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, f"`trustbed {command} --help` exited {p.returncode}: {p.stderr[-500:]}"
