"""Wallet attestations in request headers (issue 20, bad input): the attestation's `trust_chain`
header makes it 10–15 KB, and the wallet sends it whole in `OAuth-Client-Attestation` at the PID
Provider's PAR and token endpoints. The Wallet Provider here is configured with a long
`wallet_name` so that its real attestation (signed, with the real trust chain) is about 15 KB,
and again about 24 KB; the whole authorization code flow must work with both. A header far past any real attestation is
a clean 4xx, and the server goes on serving.
"""
from __future__ import annotations

import json
import socket
import time

import pytest
import requests

from harness import TrustbedServer
from test_wallet_provider import Instance, check_trust_chain, token
from walletlib import ClientInstance, Wallet, persona

REDIRECT = "eu.trustbed.test-wallet:/callback"


# (repetitions of a 22-byte phrase in wallet_name, smallest and largest attestation expected):
# the trust chain with one intermediate is about 12 KB, so 110 make the 15 KB the issue names,
# and 420 about 24 KB, what a chain three intermediates deep would weigh; libmicrohttpd's 32 KiB
# per-connection memory holds the whole request head (about 33 KB of attestation got 431).
SIZES = {"15KB": (110, 13_000, 17_000), "24KB": (420, 22_000, 26_000)}


@pytest.fixture(scope="module", params=sorted(SIZES))
def big_attestations(request, trustbed_bin, session_tmp):
    repetitions, low, high = SIZES[request.param]
    server = TrustbedServer(session_tmp / f"wallet-provider-large-{request.param}-{time.monotonic_ns()}",
                            label=f"wallet-provider-large-{request.param}")
    path = server.entities / "wallet-provider.json"
    doc = json.loads(path.read_text())
    doc["services"]["wallet_provider"]["wallet_name"] = "Trustbed Test Wallet " + "with a very long name " * repetitions
    path.write_text(json.dumps(doc, indent=2))
    server.start()
    yield server, low, high
    server.stop()


def test_a_large_client_attestation_at_par_and_token(big_attestations):
    server, low, high = big_attestations
    instance = Instance(server, "tag-large-" + str(time.monotonic_ns()))
    assertion, key = instance.request()
    r = token(server, assertion)
    assert r.status_code == 200, r.text
    attestation = r.text
    assert low <= len(attestation) <= high, len(attestation)
    check_trust_chain(server, attestation, max_size=high)  # the real chain, walked independently
    client = ClientInstance(client_id=key.thumbprint(), key=key, attestation=attestation)
    wallet = Wallet(server.id("pid-provider"), client=client)
    # PAR and the token endpoint both carry the attestation and its PoP (plus DPoP at the token).
    tokens, _ = wallet.authorization_code_flow(
        persona=persona(server)["id"], redirect_uri=REDIRECT,
        authorization_details=[{"type": "openid_credential", "credential_configuration_id": "urn:eudi:pid:1"}])
    assert tokens["access_token"]


def raw_request(port: int, head: bytes) -> bytes:
    """Sends `head` and reads whatever comes back until the server closes (or 10 s pass)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(head)
        except (BrokenPipeError, ConnectionResetError):
            pass
        chunks = []
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    break
                chunks.append(data)
        except (ConnectionResetError, socket.timeout):
            pass
        return b"".join(chunks)


@pytest.mark.parametrize("size", [200_000, 2_000_000])
def test_an_absurd_header_is_a_clean_4xx(big_attestations, size):
    server, _, _ = big_attestations
    path = "/" + server.id("pid-provider").split("/", 3)[3] + "/par"
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 0\r\n"
            f"OAuth-Client-Attestation: {'A' * size}\r\n\r\n").encode()
    answer = raw_request(server.port, head)
    status_line = answer.split(b"\r\n", 1)[0]
    # libmicrohttpd answers 431 itself, before any handler runs, and closes the connection.
    assert status_line.startswith(b"HTTP/1.1 431"), answer[:300]
    # The server is alive and serves the next request.
    r = requests.get(server.url("wallet-provider", "/nonce"), timeout=10)
    assert r.status_code == 200, r.text
