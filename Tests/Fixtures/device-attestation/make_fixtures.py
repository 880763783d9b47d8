#!/usr/bin/env python3
"""Makes the device key attestation fixtures of the WalletProvider unit tests
(Tests/WalletProviderTests/DeviceAttestation*Tests.swift), in the real shapes, under TEST roots:

- android-key-attestation.json: Android Keystore certificate chains (leaf first, base64 DER, the
  root included as devices send it). The leaf is what KeyMint writes (serial 1, valid 1970 to
  9999, no key identifiers) and carries the KeyDescription extension 1.3.6.1.4.1.11129.2.1.17,
  encoded with asn1crypto from the schema on source.android.com ("Key attestation extension data
  schema", KeyMint 300), with fields this verifier skips and one tag from the future.
- apple-app-attest.json: App Attest attestation objects (base64url CBOR with cbor2) as Apple's
  "Validating apps that connect to your server" describes them: x5c [credCert, intermediate],
  the nonce extension 1.2.840.113635.100.8.2 = SEQUENCE { [1] EXPLICIT OCTET STRING }, authData
  with rpIdHash, counter, aaguid, credentialId and a COSE key.

Independent of the Swift code: cryptography builds and signs the certificates, asn1crypto writes
the DER, cbor2 the CBOR. Run once with the interop venv (Tests/interop/requirements.txt):
    Tests/interop/.venv/bin/python Tests/Fixtures/device-attestation/make_fixtures.py
and commit the outputs. Keys are generated afresh on each run; nothing here is secret.
"""
import base64
import datetime
import hashlib
import json
import os

import cbor2
from asn1crypto import core, parser
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = "Tests/Fixtures/device-attestation/make_fixtures.py"
# The tests verify at this instant (2026-06-01T00:00:00Z): every certificate is valid then.
CHECK_TIME = 1780272000
UTC = datetime.timezone.utc


def b64(data):
    return base64.b64encode(data).decode()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def name(common_name, organization="Trustbed test"):
    return x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
    ])


def ca_certificate(subject, key, issuer=None, issuer_key=None, not_before=None, not_after=None):
    issuer = issuer or subject
    issuer_key = issuer_key or key
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject).issuer_name(issuer).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before or datetime.datetime(2025, 1, 1, tzinfo=UTC))
        .not_valid_after(not_after or datetime.datetime(2045, 1, 1, tzinfo=UTC))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )
    if issuer_key is not key:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    return builder.sign(issuer_key, hashes.SHA256() if isinstance(issuer_key.curve, ec.SECP256R1) else hashes.SHA384())


def der(certificate):
    return certificate.public_bytes(serialization.Encoding.DER)


def pem(certificate):
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


def jwk(public_key):
    numbers = public_key.public_numbers()
    return {"kty": "EC", "crv": "P-256",
            "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}


# ---------------------------------------------------------------- Android KeyDescription schema

class SecurityLevel(core.Enumerated):
    _map = {0: "software", 1: "trusted_environment", 2: "strongbox"}


class VerifiedBootState(core.Enumerated):
    _map = {0: "verified", 1: "self_signed", 2: "unverified", 3: "failed"}


class RootOfTrust(core.Sequence):
    _fields = [
        ("verifiedBootKey", core.OctetString),
        ("deviceLocked", core.Boolean),
        ("verifiedBootState", VerifiedBootState),
        ("verifiedBootHash", core.OctetString),
    ]


class IntegerSet(core.SetOf):
    _child_spec = core.Integer


def tagged(number, spec):
    return (f"tag{number}", spec, {"explicit": number, "optional": True})


class AuthorizationList(core.Sequence):
    _fields = [
        tagged(1, IntegerSet),          # purpose
        tagged(2, core.Integer),        # algorithm
        tagged(3, core.Integer),        # keySize
        tagged(5, IntegerSet),          # digest
        tagged(10, core.Integer),       # ecCurve
        tagged(503, core.Null),         # noAuthRequired
        tagged(701, core.Integer),      # creationDateTime
        tagged(702, core.Integer),      # origin
        tagged(704, RootOfTrust),       # rootOfTrust
        tagged(705, core.Integer),      # osVersion
        tagged(706, core.Integer),      # osPatchLevel
        tagged(709, core.OctetString),  # attestationApplicationId (DER AttestationApplicationId)
        tagged(717, core.OctetString),  # attestationIdModel
        tagged(718, core.Integer),      # vendorPatchLevel
        tagged(719, core.Integer),      # bootPatchLevel
        tagged(899, core.Integer),      # a tag from a future Android: must be skipped
    ]


class KeyDescription(core.Sequence):
    _fields = [
        ("attestationVersion", core.Integer),
        ("attestationSecurityLevel", SecurityLevel),
        ("keyMintVersion", core.Integer),
        ("keyMintSecurityLevel", SecurityLevel),
        ("attestationChallenge", core.OctetString),
        ("uniqueId", core.OctetString),
        ("softwareEnforced", AuthorizationList),
        ("hardwareEnforced", AuthorizationList),
    ]


def key_description(challenge, level="trusted_environment", boot_state="verified", locked=True, model=b"Pixel 9",
                    keymint_level=None):
    software = AuthorizationList({
        "tag701": 1780000000000,
        "tag709": b"\x30\x0b\x31\x00\x31\x07\x04\x05\x00\x01\x02\x03\x04",  # opaque here: never parsed
    })
    hardware = AuthorizationList({
        "tag1": [2, 3], "tag2": 3, "tag3": 256, "tag5": [4], "tag10": 1, "tag503": core.Null(),
        "tag702": 0,
        "tag704": RootOfTrust({
            "verifiedBootKey": bytes(32), "deviceLocked": locked, "verifiedBootState": boot_state,
            "verifiedBootHash": bytes(32),
        }),
        "tag705": 140000, "tag706": 202605, "tag717": model, "tag718": 20260501, "tag719": 20260501,
        "tag899": 7,
    })
    return KeyDescription({
        "attestationVersion": 300, "attestationSecurityLevel": level, "keyMintVersion": 300,
        "keyMintSecurityLevel": keymint_level or level, "attestationChallenge": challenge, "uniqueId": b"",
        "softwareEnforced": software, "hardwareEnforced": hardware,
    }).dump(force=True)


def der_elements(contents):
    """The encodings of the elements one after another in `contents` (asn1crypto's raw parser)."""
    elements, offset = [], 0
    while offset < len(contents):
        _, _, _, header, body, trailer = parser.parse(contents[offset:], strict=False)
        length = len(header) + len(body) + len(trailer)
        elements.append(contents[offset:offset + length])
        offset += length
    return elements


def reshaped_hardware_list(description, transform):
    """`description` with its hardwareEnforced fields passed through `transform` (a list of
    field encodings in, a list out): shapes the schema classes above cannot write."""
    fields = der_elements(parser.parse(description)[4])
    hardware = der_elements(parser.parse(fields[7])[4])
    fields[7] = parser.emit(0, 1, 16, b"".join(transform(hardware)))
    return parser.emit(0, 1, 16, b"".join(fields))


KEY_DESCRIPTION_OID = x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.1.17")


def android_leaf(hardware_key, issuer_cert, issuer_key, extension_value):
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Android Keystore Key")]))
        .issuer_name(issuer_cert.subject).public_key(hardware_key.public_key()).serial_number(1)
        .not_valid_before(datetime.datetime(1970, 1, 1, tzinfo=UTC))
        .not_valid_after(datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC))
        .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
    )
    if extension_value is not None:
        builder = builder.add_extension(x509.UnrecognizedExtension(KEY_DESCRIPTION_OID, extension_value), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def make_android():
    root_key = ec.generate_private_key(ec.SECP384R1())
    root = ca_certificate(name("Trustbed Test Android Attestation Root"), root_key)
    other_root_key = ec.generate_private_key(ec.SECP384R1())
    other_root = ca_certificate(name("Someone Else's Attestation Root"), other_root_key)

    def hierarchy(top, top_key, with_extension=False):
        intermediate_key = ec.generate_private_key(ec.SECP256R1())
        intermediate = ca_certificate(name("Test Droid CA2", "Trustbed test TEE"), intermediate_key, top.subject, top_key)
        batch_key = ec.generate_private_key(ec.SECP256R1())
        batch = ca_certificate(name("Test Droid CA3", "Trustbed test TEE"), batch_key, intermediate.subject, intermediate_key)
        if with_extension:
            batch = (x509.CertificateBuilder()
                     .subject_name(batch.subject).issuer_name(batch.issuer).public_key(batch_key.public_key())
                     .serial_number(x509.random_serial_number())
                     .not_valid_before(datetime.datetime(2025, 1, 1, tzinfo=UTC))
                     .not_valid_after(datetime.datetime(2045, 1, 1, tzinfo=UTC))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
                     .add_extension(x509.UnrecognizedExtension(KEY_DESCRIPTION_OID, key_description(CHALLENGE)), critical=False)
                     .sign(intermediate_key, hashes.SHA256()))
        return batch, batch_key, [der(batch), der(intermediate), der(top)]

    hardware_key = ec.generate_private_key(ec.SECP256R1())
    other_key = ec.generate_private_key(ec.SECP256R1())
    batch, batch_key, upper = hierarchy(root, root_key)

    def chain(extension_value, key=hardware_key, signer=(batch, batch_key), rest=None):
        leaf = android_leaf(key, signer[0], signer[1], extension_value)
        return [b64(der(leaf))] + [b64(c) for c in (rest or upper)]

    cases = {
        "good_tee": chain(key_description(CHALLENGE)),
        "good_strongbox": chain(key_description(CHALLENGE, level="strongbox")),
        "wrong_challenge": chain(key_description(hashlib.sha256(b"another nonce").digest())),
        "software_level": chain(key_description(CHALLENGE, level="software")),
        "software_keymint": chain(key_description(CHALLENGE, keymint_level="software")),
        "tee_key_attested_by_strongbox": chain(key_description(CHALLENGE, level="strongbox", keymint_level="trusted_environment")),
        "unverified_boot": chain(key_description(CHALLENGE, boot_state="unverified", locked=False)),
        "unordered_fields": chain(reshaped_hardware_list(key_description(CHALLENGE), lambda f: list(reversed(f)))),
        "repeated_field": chain(reshaped_hardware_list(key_description(CHALLENGE), lambda f: f + [f[-1]])),
        "no_extension": chain(None),
        "malformed_extension": chain(b"\x30\x03\x02\x01"),  # truncated DER
        "extension_not_schema": chain(b"\x30\x03\x02\x01\x03"),  # DER, not the schema
    }
    other_batch, other_batch_key, other_upper = hierarchy(other_root, other_root_key)
    cases["wrong_root"] = chain(key_description(CHALLENGE), signer=(other_batch, other_batch_key), rest=other_upper)
    extended_batch, extended_batch_key, extended_upper = hierarchy(root, root_key, with_extension=True)
    cases["extension_above_leaf"] = chain(key_description(CHALLENGE), signer=(extended_batch, extended_batch_key),
                                          rest=extended_upper)
    good = cases["good_tee"]
    cases["chain_too_long"] = good + [good[1]] * 6  # 10 entries
    cases["malformed_der"] = [good[0][:40]] + good[1:]
    cases["not_base64"] = ["%%% not base64 %%%"] + good[1:]

    return {
        "source": SOURCE,
        "check_time": CHECK_TIME,
        "challenge_hex": CHALLENGE.hex(),
        "hardware_jwk": jwk(hardware_key.public_key()),
        "other_jwk": jwk(other_key.public_key()),
        "root_pem": pem(root),
        "other_root_pem": pem(other_root),
        "cases": cases,
    }


# ---------------------------------------------------------------- Apple App Attest

APP_ID = "TEAMID1234.eu.trustbed.wallet"
NONCE_OID = x509.ObjectIdentifier("1.2.840.113635.100.8.2")
PRODUCTION = b"appattest" + bytes(7)
DEVELOPMENT = b"appattestdevelop"


class NonceExtension(core.Sequence):
    _fields = [("nonce", core.OctetString, {"explicit": 1})]


def point(public_key):
    return public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def make_apple():
    root_key = ec.generate_private_key(ec.SECP384R1())
    root = ca_certificate(name("Trustbed Test App Attestation Root CA"), root_key)
    other_root_key = ec.generate_private_key(ec.SECP384R1())
    other_root = ca_certificate(name("Someone Else's App Attestation Root"), other_root_key)

    def intermediate_under(top, top_key):
        key = ec.generate_private_key(ec.SECP384R1())
        return ca_certificate(name("Trustbed Test App Attestation CA 1"), key, top.subject, top_key), key

    intermediate, intermediate_key = intermediate_under(root, root_key)
    credential_key = ec.generate_private_key(ec.SECP256R1())
    key_id = hashlib.sha256(point(credential_key.public_key())).digest()

    def attestation(client_data_hash=CLIENT_DATA_HASH, app_id=APP_ID, counter=0, aaguid=PRODUCTION,
                    credential_id=None, issuer=(intermediate, intermediate_key), extra_x5c=(), fmt="apple-appattest",
                    nonce_override=None):
        numbers = credential_key.public_key().public_numbers()
        cose_key = cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        credential_id = key_id if credential_id is None else credential_id
        auth_data = (hashlib.sha256(app_id.encode()).digest() + bytes([0x40]) + counter.to_bytes(4, "big")
                     + aaguid + len(credential_id).to_bytes(2, "big") + credential_id + cose_key)
        nonce = nonce_override or hashlib.sha256(auth_data + client_data_hash).digest()
        credential_cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, key_id.hex())]))
            .issuer_name(issuer[0].subject).public_key(credential_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(datetime.datetime(2026, 5, 30, tzinfo=UTC))
            .not_valid_after(datetime.datetime(2026, 6, 2, tzinfo=UTC))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            .add_extension(x509.UnrecognizedExtension(NONCE_OID, NonceExtension({"nonce": nonce}).dump()), critical=False)
            .sign(issuer[1], hashes.SHA256())
        )
        obj = {"fmt": fmt,
               "attStmt": {"x5c": [der(credential_cert), der(issuer[0])] + list(extra_x5c), "receipt": b"test receipt"},
               "authData": auth_data}
        return b64url(cbor2.dumps(obj))

    other_intermediate, other_intermediate_key = intermediate_under(other_root, other_root_key)
    cases = {
        "good": attestation(),
        "good_development": attestation(aaguid=DEVELOPMENT),
        "wrong_nonce": attestation(client_data_hash=hashlib.sha256(b"another registration").digest()),
        "wrong_rp_id": attestation(app_id="OTHERTEAM1.com.example.other"),
        "counter_not_zero": attestation(counter=1),
        "wrong_aaguid": attestation(aaguid=b"notappattest\0\0\0\0"),
        "wrong_credential_id": attestation(credential_id=hashlib.sha256(b"other key").digest()),
        "wrong_root": attestation(issuer=(other_intermediate, other_intermediate_key)),
        "chain_too_long": attestation(extra_x5c=[der(root), der(root)]),
        "wrong_fmt": attestation(fmt="packed"),
        "malformed_cbor": b64url(b"\xa3\x63fmt\x6fapple-appattest\x67attStmt"),
        "malformed_der": b64url(cbor2.dumps({"fmt": "apple-appattest",
                                             "attStmt": {"x5c": [b"\x30\x82\x01", der(intermediate)], "receipt": b""},
                                             "authData": bytes(100)})),
        "not_base64url": "*** not base64url ***",
    }
    return {
        "source": SOURCE,
        "check_time": CHECK_TIME,
        "app_id": APP_ID,
        "client_data_hash_hex": CLIENT_DATA_HASH.hex(),
        "key_id": b64(key_id),
        "hardware_jwk": jwk(credential_key.public_key()),
        "root_pem": pem(root),
        "other_root_pem": pem(other_root),
        "cases": cases,
    }


# The bytes a registration expects; the Swift tests pass them in as the acceptable challenge.
CHALLENGE = hashlib.sha256(b"trustbed device attestation fixture").digest()
CLIENT_DATA_HASH = CHALLENGE


def main():
    for file_name, content in (("android-key-attestation.json", make_android()),
                               ("apple-app-attest.json", make_apple())):
        with open(os.path.join(HERE, file_name), "w") as out:
            json.dump(content, out, indent=2, sort_keys=True)
            out.write("\n")


if __name__ == "__main__":
    main()
