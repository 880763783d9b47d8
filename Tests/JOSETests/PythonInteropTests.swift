import Cryptography
import Foundation
import JOSE
import JSON
import XCTest
import TestSupport

/// Cross-checks against an independent implementation (pyca/cryptography): Python verifies
/// tokens we sign, and we verify tokens Python signs. Skipped when python3 or the package is
/// missing, so the unit suite still runs anywhere.
final class PythonInteropTests: XCTestCase {
    func testSignaturesInteroperateWithPythonCryptography() throws {
        var ours: [JSONValue] = []
        for algorithm in SignatureAlgorithm.allCases {
            let key = try PrivateKey(generatingFor: algorithm)
            let jwk = JWK(publicKey: key.publicKey, algorithm: algorithm)
            let compact = try JWS.sign(payload: ["iss": "https://ta.example", "n": 1], key: key, algorithm: algorithm,
                                       keyID: jwk.kid!, type: "entity-statement+jwt")
            ours.append(["alg": .string(algorithm.rawValue), "jwk": jwk.jsonValue, "jws": .string(compact)])
        }
        let output = try PythonRunner.run(Self.script, input: JSONValue.array(ours).serialized())
        let result = try JSONValue.parse(output)
        XCTAssertEqual(result["verified"]?.stringArray?.sorted(), SignatureAlgorithm.allCases.map(\.rawValue).sorted(),
                       "Python rejected: \(result["errors"] ?? "-")")

        let theirs = try XCTUnwrap(result["tokens"]?.arrayValue)
        XCTAssertEqual(theirs.count, SignatureAlgorithm.allCases.count)
        for token in theirs {
            let jwk = try JWK(json: XCTUnwrap(token["jwk"]?.objectValue))
            let jws = try JWS.parse(XCTUnwrap(token["jws"]?.stringValue))
            XCTAssertNoThrow(try jws.verify(keys: JWKSet(keys: [jwk]), allowList: AlgorithmPolicy.federationDefault,
                                            expectedType: "JWT"), "\(token["alg"] ?? "?")")
            XCTAssertEqual(jwk.thumbprint(), token["thumbprint"]?.stringValue, "\(token["alg"] ?? "?")")
        }
    }

    private static let script = #"""
import sys, json, base64, hashlib
try:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa, padding, utils
except ImportError:
    sys.exit(3)

def b64d(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
def b64e(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def i2b(i, n=None): return i.to_bytes(n or (i.bit_length() + 7) // 8, "big")
CURVES = {"P-256": (ec.SECP256R1(), 32), "P-384": (ec.SECP384R1(), 48), "P-521": (ec.SECP521R1(), 66)}
HASH = {"ES256": hashes.SHA256(), "ES384": hashes.SHA384(), "ES512": hashes.SHA512(), "RS256": hashes.SHA256(), "PS256": hashes.SHA256()}

def verify(alg, jwk, token):
    h, p, s = token.split(".")
    data, sig = (h + "." + p).encode(), b64d(s)
    header = json.loads(b64d(h))
    assert header["alg"] == alg and header["kid"] == jwk["kid"] and header["typ"] == "entity-statement+jwt"
    assert json.loads(b64d(p)) == {"iss": "https://ta.example", "n": 1}
    if jwk["kty"] == "EC":
        curve, size = CURVES[jwk["crv"]]
        key = ec.EllipticCurvePublicNumbers(int.from_bytes(b64d(jwk["x"]), "big"), int.from_bytes(b64d(jwk["y"]), "big"), curve).public_key()
        assert len(sig) == 2 * size
        der = utils.encode_dss_signature(int.from_bytes(sig[:size], "big"), int.from_bytes(sig[size:], "big"))
        key.verify(der, data, ec.ECDSA(HASH[alg]))
    elif jwk["kty"] == "OKP":
        ed25519.Ed25519PublicKey.from_public_bytes(b64d(jwk["x"])).verify(sig, data)
    else:
        key = rsa.RSAPublicNumbers(int.from_bytes(b64d(jwk["e"]), "big"), int.from_bytes(b64d(jwk["n"]), "big")).public_key()
        pad = padding.PKCS1v15() if alg == "RS256" else padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        key.verify(sig, data, pad, hashes.SHA256())
    required = {"EC": ["crv", "kty", "x", "y"], "OKP": ["crv", "kty", "x"], "RSA": ["e", "kty", "n"]}[jwk["kty"]]
    thumb = json.dumps({k: jwk[k] for k in required}, separators=(",", ":"), sort_keys=True)
    assert b64e(hashlib.sha256(thumb.encode()).digest()) == jwk["kid"]

def sign(alg):
    if alg.startswith("ES"):
        crv = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}[alg]
        curve, size = CURVES[crv]
        priv = ec.generate_private_key(curve)
        n = priv.public_key().public_numbers()
        jwk = {"kty": "EC", "crv": crv, "x": b64e(i2b(n.x, size)), "y": b64e(i2b(n.y, size))}
        signer = lambda d: (lambda rs: i2b(rs[0], size) + i2b(rs[1], size))(utils.decode_dss_signature(priv.sign(d, ec.ECDSA(HASH[alg]))))
    elif alg == "EdDSA":
        priv = ed25519.Ed25519PrivateKey.generate()
        from cryptography.hazmat.primitives import serialization as ser
        jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64e(priv.public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw))}
        signer = priv.sign
    else:
        priv = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        n = priv.public_key().public_numbers()
        jwk = {"kty": "RSA", "n": b64e(i2b(n.n)), "e": b64e(i2b(n.e))}
        pad = padding.PKCS1v15() if alg == "RS256" else padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        signer = lambda d: priv.sign(d, pad, hashes.SHA256())
    required = {"EC": ["crv", "kty", "x", "y"], "OKP": ["crv", "kty", "x"], "RSA": ["e", "kty", "n"]}[jwk["kty"]]
    thumb = b64e(hashlib.sha256(json.dumps({k: jwk[k] for k in required}, separators=(",", ":"), sort_keys=True).encode()).digest())
    jwk["kid"] = "py-" + alg
    h = b64e(json.dumps({"alg": alg, "kid": jwk["kid"], "typ": "JWT"}).encode())
    p = b64e(json.dumps({"iss": "python"}).encode())
    token = h + "." + p + "." + b64e(signer((h + "." + p).encode()))
    return {"alg": alg, "jwk": jwk, "jws": token, "thumbprint": thumb}

verified, errors = [], []
for item in json.load(sys.stdin):
    try:
        verify(item["alg"], item["jwk"], item["jws"]); verified.append(item["alg"])
    except Exception as e:
        errors.append("%s: %r" % (item["alg"], e))
tokens = [sign(a) for a in ["ES256", "ES384", "ES512", "EdDSA", "RS256", "PS256"]]
print(json.dumps({"verified": verified, "errors": errors, "tokens": tokens}))
"""#
}
