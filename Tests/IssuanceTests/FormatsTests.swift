import CBOR
import Cryptography
import Foundation
import Issuance
import JOSE
import JSON
import Logging
import MDoc
import SDJWT
import StatusList
import Store
import Support
import TestSupport
import XCTest

/// A PID Provider whose keys live in a temporary folder (made once per process) and whose
/// personas are the shipped demo file, on an in-memory database and a manual clock at the real
/// time (the Python verifiers check certificates against the real clock).
enum FormatsTestProvider {
    static let issuer = "https://issuer.example/pid-provider"
    static let keysDirectory = NSTemporaryDirectory() + "trustbed-formats-tests-\(getpid())"
    static let start = Int64(Date().timeIntervalSince1970)

    static func keys() throws -> IssuerKeys {
        try IssuerKeys.loadOrCreate(directory: keysDirectory, issuer: issuer, country: "NL", authority: "Trustbed Test", now: start)
    }

    static let sdJWT = CredentialConfiguration(id: "urn:eudi:pid:1", format: .sdJWT, type: "urn:eudi:pid:1", scope: "pid")
    static let nl = CredentialConfiguration(id: "urn:eudi:pid:nl:1", format: .sdJWT, type: "urn:eudi:pid:nl:1", scope: "nl",
                                            profile: .nl)
    static let mdoc = CredentialConfiguration(id: "eu.europa.ec.eudi.pid.1", format: .mdoc, type: "eu.europa.ec.eudi.pid.1",
                                              scope: "mdoc")

    static func make() throws -> PIDProvider {
        var configuration = IssuerConfiguration(credentialConfigurations: [sdJWT, nl, mdoc], personas: try PersonaFile.personas())
        configuration.issuingAuthority = "Trustbed Test PID Provider"
        configuration.issuingCountry = "NL"
        return PIDProvider(
            issuer: issuer, entityName: "pid-provider", configuration: configuration, keys: try keys(),
            database: try Database(path: ":memory:"), clock: ManualClock(start), logger: Logger(label: "formats-tests"),
            trustAnchors: [], attestationRoots: [], walletProviderTrust: nil, adminToken: "admin")
    }

    static func persona(_ id: String, in provider: PIDProvider) throws -> Persona {
        try XCTUnwrap(provider.configuration.persona(id: id), "no persona \(id) in Entities/personas/pid.json")
    }
}

final class FormatsTests: XCTestCase {
    let status = StatusReference(index: 4711, uri: "https://issuer.example/pid-provider/status/1")

    override class func tearDown() {
        try? FileManager.default.removeItem(atPath: FormatsTestProvider.keysDirectory)
        super.tearDown()
    }

    // MARK: SD-JWT VC

    /// The `sd-jwt` reference implementation verifies the issued PID with the key of the `x5c`
    /// certificate (itself checked against the IACA by `cryptography`) and reconstructs every
    /// claim; a walk over the disclosures gives the path of each, so we see exactly what is
    /// selectively disclosable. It then verifies a key-binding presentation of two nested parts.
    func testSDJWTVCVerifiedByReferenceImplementation() throws {
        let provider = try FormatsTestProvider.make()
        let persona = try FormatsTestProvider.persona("juergen", in: provider)
        let holderKey = try PrivateKey(generatingFor: .ES256)
        let holder = JWK(publicKey: holderKey.publicKey, algorithm: .ES256)
        let now = FormatsTestProvider.start
        let issued = try provider.issueCredential(persona: persona, configuration: FormatsTestProvider.sdJWT, holderKey: holder,
                                                  status: status, issuedAt: now, expiresAt: now + 86_400)
        let presentation = try SDJWT.parse(issued).presentation(disclosing: ["address.locality", "nationalities[1]"])
            .addingKeyBinding(key: holderKey, algorithm: .ES256, audience: "https://verifier.example", nonce: "n-1", issuedAt: now)
        let input: JSONValue = [
            "issued": .string(issued), "presentation": .string(presentation.serialized),
            "iaca": .string(Hex.encode(provider.keys.iaca.der)),
        ]
        let report = try JSONValue.parse(PythonRunner.run(Self.sdJWTScript, input: input.serialized()))

        let header = try XCTUnwrap(report["header"]?.objectValue)
        XCTAssertEqual(header["typ"], "dc+sd-jwt")
        XCTAssertEqual(header["alg"], "ES256")
        XCTAssertEqual(header["x5c"]?.arrayValue?.count, 1, "HAIP: the credential signer only, no IACA root")
        XCTAssertEqual(report["x5c_issued_by_iaca"], true)
        XCTAssertEqual(report["x5c_is_document_signer"], .string(Hex.encode(provider.keys.credentialSigner.der)),
                       "SD-JWT VCs are signed under the credential signer, not the mdoc document signer")

        let payload = try XCTUnwrap(report["payload"]?.objectValue)
        XCTAssertEqual(payload["iss"], .string(FormatsTestProvider.issuer))
        XCTAssertEqual(payload["iat"], .int(now))
        XCTAssertEqual(payload["nbf"], .int(now))
        XCTAssertEqual(payload["exp"], .int(now + 86_400))
        XCTAssertEqual(payload["vct"], "urn:eudi:pid:1")
        XCTAssertEqual(payload["cnf"], ["jwk": holder.jsonValue])
        XCTAssertEqual(payload["status"], ["status_list": ["idx": 4711, "uri": .string(status.uri)]])
        XCTAssertEqual(payload["_sd_alg"], "sha-256")
        XCTAssertEqual(report["visible"]?.stringArray?.sorted(), ["_sd", "_sd_alg", "cnf", "exp", "iat", "iss", "nbf", "status", "vct"])

        let claims = try XCTUnwrap(report["verified"]?.objectValue)
        XCTAssertEqual(claims["given_name"], "Jürgen")
        XCTAssertEqual(claims["family_name"], "Weiß")
        XCTAssertEqual(claims["birthdate"], "1958-11-02")
        XCTAssertEqual(claims["nationalities"], ["DE", "AT"])
        XCTAssertEqual(claims["address"]?["locality"], "München")
        XCTAssertEqual(claims["place_of_birth"], ["country": "AT", "region": "Tirol", "locality": "Innsbruck"])
        XCTAssertEqual(claims["personal_administrative_number"], .string(persona.personalAdministrativeNumber))
        XCTAssertEqual(claims["recovery_code"], .string(provider.recoveryCode(for: persona)))
        XCTAssertEqual(claims["issuing_authority"], "Trustbed Test PID Provider")
        XCTAssertEqual(claims["issuing_country"], "NL")
        XCTAssertEqual(claims["sex"], 1)
        XCTAssertEqual(claims["age_equal_or_over"]?["18"], true)
        XCTAssertEqual(claims["age_equal_or_over"]?["65"], true)
        XCTAssertEqual(claims["age_birth_year"], 1958)
        XCTAssertEqual(claims["picture"], persona.claims["picture"])
        XCTAssertNil(claims["bsn"], "bsn belongs to the NL profile only")

        let paths = Set(try XCTUnwrap(report["disclosed_paths"]?.arrayValue).map(\.description))
        for expected in [#"["given_name"]"#, #"["family_name"]"#, #"["birthdate"]"#, #"["picture"]"#, #"["recovery_code"]"#,
                         #"["address"]"#, #"["address","locality"]"#, #"["address","street_address"]"#,
                         #"["address","house_number"]"#, #"["place_of_birth"]"#, #"["place_of_birth","country"]"#,
                         #"["nationalities"]"#, #"["nationalities",0]"#, #"["nationalities",1]"#,
                         #"["age_equal_or_over"]"#, #"["age_equal_or_over","18"]"#, #"["date_of_expiry"]"#,
                         #"["issuing_authority"]"#, #"["issuing_country"]"#, #"["personal_administrative_number"]"#] {
            XCTAssertTrue(paths.contains(expected), "\(expected) should be selectively disclosable; got \(paths.sorted())")
        }
        XCTAssertGreaterThanOrEqual(report["decoys"]?.intValue ?? 0, 4, "every _sd array carries decoys")

        let presented = try XCTUnwrap(report["presented"]?.objectValue)
        XCTAssertEqual(presented["address"], ["locality": "München"])
        XCTAssertEqual(presented["nationalities"], ["AT"])
        XCTAssertNil(presented["given_name"])
        XCTAssertNil(presented["recovery_code"])
    }

    private static let sdJWTScript = #"""
import sys, json, base64, hashlib
try:
    from sd_jwt.verifier import SDJWTVerifier
    from jwcrypto.jwk import JWK
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding
except ImportError:
    sys.exit(3)

data = json.load(sys.stdin)
iaca = x509.load_der_x509_certificate(bytes.fromhex(data["iaca"]))
def b64d(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
parts = data["issued"].split("~")
jwt = parts[0]
header = json.loads(b64d(jwt.split(".")[0]))
payload = json.loads(b64d(jwt.split(".")[1]))
ds = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
ds.verify_directly_issued_by(iaca)
key = JWK.from_pyca(ds.public_key())
def get_key(iss, hdr):
    assert hdr["typ"] == "dc+sd-jwt", hdr
    return key
verified = SDJWTVerifier(data["issued"], get_key).get_verified_payload()
presented = SDJWTVerifier(data["presentation"], get_key, "https://verifier.example", "n-1").get_verified_payload()

# Where each disclosure sits: digest -> disclosure, then a walk through payload and values.
disclosures = {}
for d in parts[1:-1]:
    disclosures[base64.urlsafe_b64encode(hashlib.sha256(d.encode()).digest()).rstrip(b"=").decode()] = json.loads(b64d(d))
paths, decoys = [], 0
def walk(value, path):
    global decoys
    if isinstance(value, dict):
        for digest in value.get("_sd", []):
            if digest in disclosures:
                _, name, inner = disclosures[digest]
                paths.append(path + [name]); walk(inner, path + [name])
            else:
                decoys += 1
        for k, v in value.items():
            if k != "_sd": walk(v, path + [k])
    elif isinstance(value, list):
        for i, e in enumerate(value):
            if isinstance(e, dict) and list(e) == ["..."]:
                _, inner = disclosures[e["..."]]
                paths.append(path + [i]); walk(inner, path + [i])
            else:
                walk(e, path + [i])
walk(payload, [])
print(json.dumps({"header": header, "payload": payload, "visible": sorted(payload), "verified": verified,
                  "presented": presented, "disclosed_paths": paths, "decoys": decoys,
                  "x5c_issued_by_iaca": True, "x5c_is_document_signer": ds.public_bytes(Encoding.DER).hex()},
                 separators=(",", ":")))
"""#

    // MARK: mdoc

    /// `cbor2` recomputes every value digest, `pycose` checks issuerAuth with the x5chain key,
    /// `pymdoccbor` verifies the whole document against the IACA, and the element types are
    /// the Rulebook's (tag 1004 dates, bstr portrait, map place_of_birth, array nationality).
    func testMDocVerifiedByPythonLibraries() throws {
        let provider = try FormatsTestProvider.make()
        let persona = try FormatsTestProvider.persona("zoe", in: provider)
        let holderKey = try PrivateKey(generatingFor: .ES256)
        let now = FormatsTestProvider.start
        let issued = try provider.issueCredential(persona: persona, configuration: FormatsTestProvider.mdoc,
                                                  holderKey: JWK(publicKey: holderKey.publicKey), status: status,
                                                  issuedAt: now, expiresAt: now + 86_400)
        let bytes = try XCTUnwrap(Base64URL.decode(issued), "base64url without padding")
        let input = [Hex.encode(bytes), Hex.encode(provider.keys.iaca.der), EUDIPID.docType].joined(separator: "\n")
        let report = try JSONValue.parse(PythonRunner.run(Self.mdocScript, input: input))

        XCTAssertEqual(report["pymdoccbor"], true)
        XCTAssertEqual(report["pycose_signature"], true)
        XCTAssertEqual(report["version"], "1.0")
        XCTAssertEqual(report["digestAlgorithm"], "SHA-256")
        XCTAssertEqual(report["docType"], "eu.europa.ec.eudi.pid.1")
        XCTAssertEqual(report["x5chain"], .string(Hex.encode(provider.keys.documentSigner.der)))
        XCTAssertEqual(report["status"], ["status_list": ["idx": 4711, "uri": .string(status.uri)]])
        XCTAssertEqual(report["validity"]?["validFrom"], report["validity"]?["signed"])
        guard case .ec(_, let x, let y) = holderKey.publicKey.components else { return XCTFail("EC key expected") }
        XCTAssertEqual(report["device_key"], ["kty": 2, "crv": 1, "x": .string(Hex.encode(x)), "y": .string(Hex.encode(y))])

        let elements = try XCTUnwrap(report["elements"]?.objectValue)
        XCTAssertEqual(elements["birth_date"], ["date", "2012-03-09"])
        XCTAssertEqual(elements["given_name"], ["str", "Zoë"])
        XCTAssertEqual(elements["nationality"], ["list", ["NL"]])
        XCTAssertEqual(elements["place_of_birth"], ["dict", ["country": "NL", "locality": "Rotterdam"]])
        XCTAssertEqual(elements["resident_city"], ["str", "Rotterdam"])
        XCTAssertEqual(elements["resident_house_number"], ["str", "12A"])
        XCTAssertEqual(elements["age_over_18"], ["bool", false], "Zoë is a minor")
        XCTAssertEqual(elements["age_over_12"], ["bool", true])
        XCTAssertEqual(elements["sex"], ["int", 2])
        XCTAssertEqual(elements["expiry_date"]?.arrayValue?.first, "date")
        XCTAssertEqual(elements["issuance_date"]?.arrayValue?.first, "date")
        XCTAssertEqual(elements["portrait"]?.arrayValue?.first, "bytes")
        XCTAssertEqual(elements["portrait"]?.arrayValue?.last?.stringValue?.hasPrefix("ffd8"), true, "a JPEG")
        XCTAssertEqual(elements["recovery_code"], ["str", .string(provider.recoveryCode(for: persona))])
        XCTAssertNil(elements["bsn"])
        // ARF Annex 2 PID_06: the recovery code is ours, so it sits in the domestic nameSpace
        // (default eu.europa.ec.eudi.pid.<issuing country>.1); the Rulebook's stay in the EU one.
        let namespaces = try XCTUnwrap(report["namespaces"]?.objectValue)
        XCTAssertEqual(namespaces["recovery_code"], "eu.europa.ec.eudi.pid.nl.1")
        XCTAssertEqual(Set(namespaces.filter { $0.key != "recovery_code" }.values), ["eu.europa.ec.eudi.pid.1"])
        XCTAssertEqual(report["digests_checked"]?.intValue, Int64(elements.count))
        XCTAssertGreaterThanOrEqual(report["min_random"]?.intValue ?? 0, 16)

        // The tag itself, not only what cbor2 maps to a date (tag 100 would decode to a date too).
        let items = try XCTUnwrap(IssuerSigned(decoding: bytes).nameSpaces[EUDIPID.nameSpace])
        let birth = try XCTUnwrap(items.first { $0.item.elementIdentifier == "birth_date" })
        XCTAssertEqual(birth.item.elementValue.taggedValue?.tag, 1004)
    }

    private static let mdocScript = #"""
import sys, json, hashlib
try:
    import cbor2
    from cryptography import x509
    from pycose.messages import Sign1Message
    from pycose.keys import EC2Key
    from pycose.keys.curves import P256
    from pymdoccbor.mdoc.verifier import MobileDocument
except ImportError:
    sys.exit(3)

issuer_signed_hex, iaca_hex, doc_type = sys.stdin.read().split()
iaca = x509.load_der_x509_certificate(bytes.fromhex(iaca_hex))
issuer_signed = cbor2.loads(bytes.fromhex(issuer_signed_hex))
issuer_auth = issuer_signed["issuerAuth"]
mso = cbor2.loads(cbor2.loads(issuer_auth[2]).value)
report = {"version": mso["version"], "digestAlgorithm": mso["digestAlgorithm"], "docType": mso["docType"],
          "status": mso.get("status"), "validity": {k: v.isoformat() for k, v in mso["validityInfo"].items()}}
def describe(v):
    if isinstance(v, bytes): return ["bytes", v.hex()]
    if isinstance(v, (list, tuple)): return ["list", list(v)]
    if hasattr(v, "isoformat"): return [type(v).__name__, v.isoformat()]
    return [type(v).__name__, v]
elements, checked, min_random, where = {}, 0, 999, {}
for ns, items in issuer_signed["nameSpaces"].items():
    for tagged in items:
        assert tagged.tag == 24
        item = cbor2.loads(tagged.value)
        assert hashlib.sha256(cbor2.dumps(tagged)).digest() == mso["valueDigests"][ns][item["digestID"]]
        elements[item["elementIdentifier"]] = describe(item["elementValue"])
        where[item["elementIdentifier"]] = ns
        min_random = min(min_random, len(item["random"]))
        checked += 1
report.update(elements=elements, digests_checked=checked, min_random=min_random, namespaces=where)
x5chain = issuer_auth[1][33]
assert isinstance(x5chain, bytes), "a single certificate is a bstr"
report["x5chain"] = x5chain.hex()
numbers = x509.load_der_x509_certificate(x5chain).public_key().public_numbers()
message = Sign1Message.from_cose_obj(list(issuer_auth), True)
message.key = EC2Key(crv=P256, x=numbers.x.to_bytes(32, "big"), y=numbers.y.to_bytes(32, "big"))
report["pycose_signature"] = message.verify_signature()
dk = mso["deviceKeyInfo"]["deviceKey"]
report["device_key"] = {"kty": dk[1], "crv": dk[-1], "x": dk[-2].hex(), "y": dk[-3].hex()}
document = MobileDocument(docType=doc_type, issuerSigned=issuer_signed)
report["pymdoccbor"] = document.verify(trusted_root_certs=[iaca], verify_hashes=True)
print(json.dumps(report, default=str))
"""#

    // MARK: Recovery codes and the NL profile

    /// Same person: same code across issuances, formats and a restart (keys read again from
    /// disk); different persons: different codes; and the value is HMAC-SHA256 as Python's
    /// `hmac` computes it from the secret file.
    func testRecoveryCodeIsStableAndPersonal() throws {
        let provider = try FormatsTestProvider.make()
        let restarted = try FormatsTestProvider.make()
        let personas = provider.configuration.personas
        let codes = personas.map(provider.recoveryCode(for:))
        XCTAssertEqual(Set(codes).count, personas.count, "different persons, different codes")
        XCTAssertEqual(personas.map(restarted.recoveryCode(for:)), codes, "stable across restarts")
        for code in codes {
            XCTAssertEqual(code.count, 64)
            XCTAssertTrue(code.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }, "lowercase hex")
        }

        let erika = try FormatsTestProvider.persona("erika", in: provider)
        let holder = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey)
        let now = FormatsTestProvider.start
        var seen: Set<String> = []
        for (issuedAt, configuration) in [(now, FormatsTestProvider.sdJWT), (now + 60, FormatsTestProvider.sdJWT),
                                          (now + 120, FormatsTestProvider.nl)] {
            let sdJWT = try SDJWT.parse(provider.issueCredential(persona: erika, configuration: configuration, holderKey: holder,
                                                                 status: status, issuedAt: issuedAt, expiresAt: issuedAt + 600))
            let disclosure = try XCTUnwrap(sdJWT.disclosures.first { $0.name == "recovery_code" })
            seen.insert(try XCTUnwrap(disclosure.value.stringValue))
        }
        let mdoc = try IssuerSigned(base64URL: provider.issueCredential(
            persona: erika, configuration: FormatsTestProvider.mdoc, holderKey: holder, status: status, issuedAt: now,
            expiresAt: now + 600))
        XCTAssertNil(mdoc.nameSpaces[EUDIPID.nameSpace]?.first { $0.item.elementIdentifier == "recovery_code" })
        let element = try XCTUnwrap(mdoc.nameSpaces["eu.europa.ec.eudi.pid.nl.1"]?.first { $0.item.elementIdentifier == "recovery_code" })
        seen.insert(try XCTUnwrap(element.item.elementValue.textValue))
        XCTAssertEqual(seen, [provider.recoveryCode(for: erika)])

        let script = """
        import sys, hmac, hashlib, json
        d = json.load(sys.stdin)
        print(hmac.new(bytes.fromhex(open(d["dir"] + "/recovery-secret").read().strip()), d["pan"].encode(), hashlib.sha256).hexdigest())
        """
        let input: JSONValue = ["dir": .string(FormatsTestProvider.keysDirectory), "pan": .string(erika.personalAdministrativeNumber)]
        let python = try PythonRunner.run(script, input: input.serialized()).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(python, provider.recoveryCode(for: erika))
    }

    /// The NL profile adds the persona's `bsn` as a selectively disclosable claim, and none for a
    /// persona without one (never its personal administrative number instead); the EUDI
    /// configurations never carry it.
    func testNLProfileCarriesBSN() throws {
        let provider = try FormatsTestProvider.make()
        let sanne = try FormatsTestProvider.persona("sanne", in: provider)
        let erika = try FormatsTestProvider.persona("erika", in: provider)
        let now = FormatsTestProvider.start
        let holder = JWK(publicKey: try PrivateKey(generatingFor: .ES256).publicKey)

        let issued = try SDJWT.parse(provider.issueCredential(persona: sanne, configuration: FormatsTestProvider.nl, holderKey: holder,
                                                              status: status, issuedAt: now, expiresAt: now + 600))
        XCTAssertEqual(issued.disclosures.first { $0.name == "bsn" }?.value, "999990019")
        XCTAssertNil(try issued.parsedIssuerJWT().payload()["bsn"], "bsn is selectively disclosable")
        XCTAssertEqual(try issued.parsedIssuerJWT().payload()["vct"], "urn:eudi:pid:nl:1")

        let preview = provider.credentialClaims(for: erika, configuration: FormatsTestProvider.nl, issuedAt: now, expiresAt: now + 600)
        XCTAssertNil(preview["bsn"], "no bsn for a persona without one")
        let erikaNL = try SDJWT.parse(provider.issueCredential(persona: erika, configuration: FormatsTestProvider.nl,
                                                               holderKey: holder, status: status, issuedAt: now, expiresAt: now + 600))
        XCTAssertNil(erikaNL.disclosures.first { $0.name == "bsn" })
        XCTAssertNil(try erikaNL.parsedIssuerJWT().payload()["bsn"])
        XCTAssertNotNil(erikaNL.disclosures.first { $0.name == "recovery_code" })
        let eudi = provider.credentialClaims(for: sanne, configuration: FormatsTestProvider.sdJWT, issuedAt: now, expiresAt: now + 600)
        XCTAssertNil(eudi["bsn"])
    }

    // MARK: Claims and previews

    /// `credential_previews`: SD-JWT VC names for dc+sd-jwt, {namespace: {element: JSON}} for
    /// mdoc; never the technical claims.
    func testCredentialClaimsPreviews() throws {
        let provider = try FormatsTestProvider.make()
        let jose = try FormatsTestProvider.persona("jose", in: provider)
        let now = FormatsTestProvider.start
        let sd = provider.credentialClaims(for: jose, configuration: FormatsTestProvider.sdJWT, issuedAt: now, expiresAt: now + 600)
        XCTAssertEqual(sd["given_name"], "José María")
        XCTAssertEqual(sd["vct"], "urn:eudi:pid:1")
        XCTAssertEqual(sd["recovery_code"], .string(provider.recoveryCode(for: jose)))
        XCTAssertEqual(sd["address"]?["house_number"], "48")
        for technical in ["iss", "iat", "nbf", "exp", "cnf", "status", "_sd", "_sd_alg"] { XCTAssertNil(sd[technical], technical) }

        let md = provider.credentialClaims(for: jose, configuration: FormatsTestProvider.mdoc, issuedAt: now, expiresAt: now + 600)
        XCTAssertEqual(md.objectValue?.keys.sorted(), ["eu.europa.ec.eudi.pid.1", "eu.europa.ec.eudi.pid.nl.1"])
        let elements = try XCTUnwrap(md["eu.europa.ec.eudi.pid.1"]?.objectValue)
        XCTAssertNil(elements["recovery_code"], "the recovery code is in the domestic nameSpace")
        XCTAssertEqual(md["eu.europa.ec.eudi.pid.nl.1"], ["recovery_code": sd["recovery_code"]!])
        XCTAssertEqual(elements["birth_date"], "1988-02-29")
        XCTAssertEqual(elements["resident_street"], "Calle de Alcalá")
        XCTAssertEqual(elements["nationality"], ["ES"])
        XCTAssertEqual(elements["portrait"]?.stringValue.flatMap(Base64URL.decode)?.prefix(2), [0xFF, 0xD8])
        XCTAssertNil(elements["given_name_birth"], "absent claims stay absent")
    }

    /// Ages are computed from `birthdate` on the day of issuance: José, born 29 February 1988,
    /// is 17 on 28 February 2006 and 18 on 1 March 2006; the administrative dates default to
    /// the issuance and expiry days.
    func testAgeClaimsFollowIssuanceDate() throws {
        let provider = try FormatsTestProvider.make()
        let jose = try FormatsTestProvider.persona("jose", in: provider)
        let feb28: Int64 = 1_141_084_800 + 43_200  // 2006-02-28T12:00:00Z
        let before = provider.credentialClaims(for: jose, configuration: FormatsTestProvider.sdJWT, issuedAt: feb28,
                                               expiresAt: feb28 + 86_400 * 30)
        XCTAssertEqual(before["age_in_years"], 17)
        XCTAssertEqual(before["age_equal_or_over"]?["18"], false)
        XCTAssertEqual(before["age_equal_or_over"]?["16"], true)
        XCTAssertEqual(before["age_birth_year"], 1988)
        XCTAssertEqual(before["date_of_issuance"], "2006-02-28")
        XCTAssertEqual(before["date_of_expiry"], "2006-03-30")
        let after = provider.credentialClaims(for: jose, configuration: FormatsTestProvider.mdoc, issuedAt: feb28 + 86_400,
                                              expiresAt: feb28 + 86_400 * 2)
        XCTAssertEqual(after["eu.europa.ec.eudi.pid.1"]?["age_over_18"], true)
        XCTAssertEqual(after["eu.europa.ec.eudi.pid.1"]?["age_in_years"], 18)
        // The claims are prepared once per persona, configuration and day: the same
        // configuration on the next day, or with another expiry day, is prepared anew.
        let nextDay = provider.credentialClaims(for: jose, configuration: FormatsTestProvider.sdJWT, issuedAt: feb28 + 43_200,
                                                expiresAt: feb28 + 86_400 * 30)
        XCTAssertEqual(nextDay["age_in_years"], 18)
        XCTAssertEqual(nextDay["date_of_issuance"], "2006-03-01")
        let sameDay = provider.credentialClaims(for: jose, configuration: FormatsTestProvider.sdJWT, issuedAt: feb28 + 43_199,
                                                expiresAt: feb28 + 86_400 * 31)
        XCTAssertEqual(sameDay["age_in_years"], 17)
        XCTAssertEqual(sameDay["date_of_expiry"], "2006-03-31")
    }

    /// An mdoc needs a COSE_Key for the device: a proof key without one is the wallet's error.
    func testMDocRefusesHolderKeyWithoutCOSEForm() throws {
        let provider = try FormatsTestProvider.make()
        let erika = try FormatsTestProvider.persona("erika", in: provider)
        let rsa = JWK(publicKey: try PrivateKey(generatingFor: .RS256).publicKey)
        let now = FormatsTestProvider.start
        XCTAssertThrowsError(try provider.issueCredential(persona: erika, configuration: FormatsTestProvider.mdoc, holderKey: rsa,
                                                          status: status, issuedAt: now, expiresAt: now + 60)) { error in
            XCTAssertEqual((error as? IssuanceError)?.codeValue, .invalidProof)
        }
    }
}
