"""Apple's identity envelope (Verify with Wallet, `APPLE-HPKE-v1`) written from Apple's guide
"Verifying Wallet identity requests", RFC 9180 and ISO/IEC 18013-5 with independent PyPI
libraries (pyhpke, cbor2, pycose, cryptography), to check what `trustbed` makes and to make
envelopes `trustbed` must accept.

    HPKEEnvelope = {"algorithm": "APPLE-HPKE-v1", "params": {"mode": 0, "pkEm", "pkRHash", "infoHash"}, "data"}
    SessionTranscript = [null, null, ["AppleIdentityPresentment_1.0", nonce, merchantID, teamID, pkRHash]]
    plaintext = {"identity": DeviceResponse}
"""
from __future__ import annotations

import hashlib
from typing import Any

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from pycose.algorithms import Es256
from pycose.headers import Algorithm
from pycose.keys import EC2Key
from pycose.keys.curves import P256
from pycose.messages import Sign1Message
from pyhpke import AEADId, CipherSuite, KDFId, KEMId

SUITE = CipherSuite.new(KEMId.DHKEM_P256_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)
PID = "eu.europa.ec.eudi.pid.1"


def uncompressed_point(public_key: ec.EllipticCurvePublicKey) -> bytes:
    return public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def session_transcript(nonce: bytes, merchant_id: str, team_id: str, pk_r_hash: bytes) -> bytes:
    return cbor2.dumps([None, None, ["AppleIdentityPresentment_1.0", nonce, merchant_id, team_id, pk_r_hash]])


def device_authentication_bytes(transcript: bytes, doc_type: str, device_namespaces_bytes: bytes) -> bytes:
    """ISO 18013-5 §9.1.3.4: #6.24(bstr .cbor ["DeviceAuthentication", SessionTranscript, DocType,
    DeviceNameSpacesBytes]), the transcript as the sender encoded it."""
    inner = cbor2.dumps(["DeviceAuthentication", cbor2.loads(transcript), doc_type,
                         cbor2.CBORTag(24, device_namespaces_bytes)])
    return cbor2.dumps(cbor2.CBORTag(24, inner))


def cose_key(jwk_or_cose: Any) -> EC2Key:
    """An EC2Key from a COSE_Key map (the MSO's deviceKey) or a private JWK (the wallet file)."""
    if isinstance(jwk_or_cose, dict) and "kty" in jwk_or_cose:
        from fedlib import b64url_decode
        jwk = jwk_or_cose
        return EC2Key(crv=P256, x=b64url_decode(jwk["x"]), y=b64url_decode(jwk["y"]),
                      d=b64url_decode(jwk["d"]) if "d" in jwk else b"")
    return EC2Key(crv=P256, x=jwk_or_cose[-2], y=jwk_or_cose[-3])


def make_envelope(issuer_signed: dict, holder_jwk: dict, elements: set[str], *, recipient: ec.EllipticCurvePublicKey,
                  nonce: bytes, merchant_id: str, team_id: str) -> bytes:
    """What an iPhone sends: the stored mdoc's selected items, a pycose device signature over
    DeviceAuthentication, {"identity": DeviceResponse} sealed with pyhpke."""
    pk_r_hash = hashlib.sha256(uncompressed_point(recipient)).digest()
    transcript = session_transcript(nonce, merchant_id, team_id, pk_r_hash)
    mso = cbor2.loads(cbor2.loads(issuer_signed["issuerAuth"][2]).value)
    doc_type = mso["docType"]
    name_spaces = {ns: [item for item in items if cbor2.loads(item.value)["elementIdentifier"] in elements]
                   for ns, items in issuer_signed["nameSpaces"].items()}
    name_spaces = {ns: items for ns, items in name_spaces.items() if items}  # §8.3.2.1.2.2: [+ IssuerSignedItemBytes]
    device_namespaces = cbor2.dumps({})
    message = Sign1Message(phdr={Algorithm: Es256}, payload=device_authentication_bytes(transcript, doc_type, device_namespaces))
    message.key = cose_key(holder_jwk)
    signed = cbor2.loads(message.encode(tag=False))
    signed[2] = None  # §9.1.3.6: the DeviceAuthentication payload is detached
    response = {"version": "1.0", "documents": [{
        "docType": doc_type,
        "issuerSigned": {"nameSpaces": name_spaces, "issuerAuth": issuer_signed["issuerAuth"]},
        "deviceSigned": {"nameSpaces": cbor2.CBORTag(24, device_namespaces), "deviceAuth": {"deviceSignature": signed}},
    }], "status": 0}
    enc, sender = SUITE.create_sender_context(SUITE.kem.deserialize_public_key(uncompressed_point(recipient)), info=transcript)
    data = sender.seal(cbor2.dumps({"identity": response}))
    return cbor2.dumps({"algorithm": "APPLE-HPKE-v1",
                        "params": {"mode": 0, "pkEm": enc, "pkRHash": pk_r_hash, "infoHash": hashlib.sha256(transcript).digest()},
                        "data": data})


def open_envelope(envelope: bytes, *, recipient_key: ec.EllipticCurvePrivateKey, nonce: bytes, merchant_id: str,
                  team_id: str, iaca: x509.Certificate) -> dict:
    """Opens and checks an envelope independently: pkRHash and infoHash, pyhpke open, the MSO
    signature (pycose, document signer issued by the IACA), every digest, and the device signature
    (pycose, the MSO's deviceKey). Returns {docType: {element: value}}."""
    outer = cbor2.loads(envelope)
    assert outer["algorithm"] == "APPLE-HPKE-v1" and outer["params"]["mode"] == 0, outer
    params = outer["params"]
    pk_r_hash = hashlib.sha256(uncompressed_point(recipient_key.public_key())).digest()
    assert params["pkRHash"] == pk_r_hash, "pkRHash is the SHA-256 of the uncompressed recipient point"
    transcript = session_transcript(nonce, merchant_id, team_id, pk_r_hash)
    assert params["infoHash"] == hashlib.sha256(transcript).digest()
    skR = SUITE.kem.deserialize_private_key(recipient_key.private_numbers().private_value.to_bytes(32, "big"))
    plaintext = SUITE.create_recipient_context(params["pkEm"], skR, info=transcript).open(outer["data"])
    identity = cbor2.loads(plaintext)["identity"]
    if isinstance(identity, bytes):
        identity = cbor2.loads(identity)
    assert identity["version"] == "1.0" and identity["status"] == 0 and len(identity["documents"]) == 1, identity.keys()
    document = identity["documents"][0]
    issuer_auth = document["issuerSigned"]["issuerAuth"]
    x5chain = issuer_auth[1][33]
    ds = x509.load_der_x509_certificate(x5chain if isinstance(x5chain, bytes) else x5chain[0])
    ds.verify_directly_issued_by(iaca)
    numbers = ds.public_key().public_numbers()
    message = Sign1Message.from_cose_obj(list(issuer_auth), True)
    message.key = EC2Key(crv=P256, x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big"))
    assert message.verify_signature(), "MSO signature"
    mso = cbor2.loads(cbor2.loads(issuer_auth[2]).value)
    assert mso["docType"] == document["docType"]
    elements = {}
    for ns, items in document["issuerSigned"]["nameSpaces"].items():
        for tagged in items:
            item = cbor2.loads(tagged.value)
            digest = hashlib.sha256(cbor2.dumps(tagged)).digest()
            assert mso["valueDigests"][ns][item["digestID"]] == digest, f"digest of {item['elementIdentifier']}"
            elements[item["elementIdentifier"]] = item["elementValue"]
    device_namespaces = document["deviceSigned"]["nameSpaces"].value
    signature = list(document["deviceSigned"]["deviceAuth"]["deviceSignature"])
    assert signature[2] is None, "detached DeviceAuthentication"
    signature[2] = device_authentication_bytes(transcript, document["docType"], device_namespaces)
    device = Sign1Message.from_cose_obj(signature, True)
    device.key = cose_key(mso["deviceKeyInfo"]["deviceKey"])
    assert device.verify_signature(), "device signature over the Apple SessionTranscript"
    return {document["docType"]: elements}


def recipient_files(directory) -> tuple[ec.EllipticCurvePrivateKey, Any, Any]:
    """A merchant encryption key (PKCS#8 PEM) and a self-signed certificate for it (PEM)."""
    import datetime
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "Merchant Identity Encryption")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=30)).sign(key, hashes.SHA256()))
    key_path = directory / "merchant.key.pem"
    cert_path = directory / "merchant.pem"
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key, key_path, cert_path
