#!/usr/bin/env python3
"""Writes the Entities directory of the scale benchmark (standard library only).

    gen_entities.py DIR LEAVES [--intermediates 100] [--remote-base URL --remote-count 32]

One Trust Anchor `ta`, intermediates `int-N` under `ta`, leaves `leaf-N` under
`int-(N mod intermediates)` with small, realistic `openid_relying_party` metadata.  With
--remote-base, `ta` also lists remote subordinates `<URL>/slow-K` (the slow-host scenario: their
origin is then one trustbed may fetch from); their jwks is the public P-256 example key of
RFC 7515 appendix A.3, which only has to parse, since the slow host never gets to answer.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
from pathlib import Path

# RFC 7515 appendix A.3: the public part of the example ES256 key.
EXAMPLE_JWK = {"kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
               "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}


def thumbprint(jwk: dict) -> str:
    """RFC 7638: SHA-256 of the required members in lexicographic order, no whitespace."""
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


def write(path: Path, obj: dict) -> None:
    path.write_text(json.dumps(obj, separators=(",", ":")))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("leaves", type=int)
    ap.add_argument("--intermediates", type=int, default=100)
    ap.add_argument("--remote-base")
    ap.add_argument("--remote-count", type=int, default=32)
    a = ap.parse_args()

    out = Path(a.dir)
    out.mkdir(parents=True, exist_ok=True)
    ta = {
        "trust_anchor": True,
        "metadata": {"federation_entity": {"organization_name": "Bench Trust Anchor", "contacts": ["ops@bench.example"]}},
        "subordinate_statement": {"metadata_policy": {"openid_relying_party": {
            "response_types": {"subset_of": ["code"]},
            "id_token_signed_response_alg": {"one_of": ["ES256", "ES384"], "default": "ES256"}}}},
    }
    if a.remote_base:
        jwk = dict(EXAMPLE_JWK, kid=thumbprint(EXAMPLE_JWK))
        ta["subordinates"] = {f"{a.remote_base.rstrip('/')}/slow-{k}": {"jwks": {"keys": [jwk]}} for k in range(a.remote_count)}
    write(out / "ta.json", ta)
    for n in range(a.intermediates):
        write(out / f"int-{n}.json", {"authority_hints": ["ta"],
                                      "metadata": {"federation_entity": {"organization_name": f"Bench Intermediate {n}"}}})
    for n in range(a.leaves):
        write(out / f"leaf-{n}.json", {
            "authority_hints": [f"int-{n % a.intermediates}"],
            "metadata": {"openid_relying_party": {
                "client_name": f"Bench RP {n}",
                "redirect_uris": [f"https://rp{n}.bench.example/callback"],
                "response_types": ["code"],
                "grant_types": ["authorization_code"],
                "token_endpoint_auth_method": "private_key_jwt",
                "contacts": [f"admin@rp{n}.bench.example"],
            }},
        })
    # fsync-free: the directory only has to exist before trustbed starts.
    os.sync()


if __name__ == "__main__":
    main()
