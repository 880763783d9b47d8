import Cryptography
import JOSE
import JSON
import MDoc
import SDJWT
import StatusList
import Support

/// The verdict on a PixelPass credential (`POST <rp>/verify/pixelpass`): the report, what the
/// QR code held, and the checks that cannot apply to a credential shown offline.
public struct PixelPassVerification: Sendable {
    public var report = VerificationReport()
    /// `dc+sd-jwt` or `mso_mdoc`.
    public var format = ""
    /// Whether the PixelPass payload was CBOR (JSON inside) or text.
    public var encoding = ""
    /// (check, why it cannot run) for what a verifier does with an online presentation.
    public var notApplicable: [(name: String, detail: String)] = []

    /// The report's JSON with `format`, `pixelpass_payload` and `not_applicable` beside it.
    public var json: JSONValue {
        var object = report.json.objectValue ?? [:]
        object["format"] = .string(format)
        object["pixelpass_payload"] = .string(encoding)
        object["not_applicable"] = .array(notApplicable.map { .object(["name": .string($0.name), "detail": .string($0.detail)]) })
        return .object(object)
    }
}

extension Verifier {
    /// Longest PixelPass text read: a version 40 QR code holds 4,296 alphanumeric characters;
    /// 256 KiB leaves room for texts passed around outside a QR code, and no more.
    public static let maximumPixelPassLength = 256 * 1024

    /// Decodes a PixelPass text (base45, zlib, CBOR or text) and verifies the credential it holds
    /// as item 2 does where an offline copy allows: an SD-JWT VC (issuer trust, signature and
    /// validity, disclosures, status) or an mdoc IssuerSigned (issuer trust, issuer data
    /// authentication, status). What is not a PixelPass, or holds neither, is `invalid_request`.
    public func verifyPixelPass(_ text: String) throws(VerificationError) -> PixelPassVerification {
        guard text.utf8.count <= Self.maximumPixelPassLength else {
            throw .invalidRequest("pixelpass: longer than \(Self.maximumPixelPassLength) characters")
        }
        let payload: PixelPass.Payload
        do { payload = try PixelPass.decode(text) } catch { throw .invalidRequest("pixelpass: \(error)") }
        var result = PixelPassVerification()
        let credential: String
        switch payload {
        case .text(let string):
            result.encoding = "text"
            // JSON deflated as text (not CBOR-encoded first, as other encoders do) reads as JSON.
            if string.first == "{", let json = try? JSONValue.parse(Array(string.utf8)) {
                credential = try Self.credentialText(in: json)
            } else {
                credential = string
            }
        case .json(let json):
            result.encoding = "cbor"
            credential = try Self.credentialText(in: json)
        }
        let trimmed = credential.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.contains("~") {
            result.format = "dc+sd-jwt"
            checkOfflineSDJWT(trimmed, into: &result)
        } else if let issuerSigned = try? IssuerSigned(base64URL: trimmed) {
            result.format = "mso_mdoc"
            checkOfflineMDoc(issuerSigned, into: &result)
        } else {
            throw .invalidRequest("pixelpass: the payload is neither a compact SD-JWT VC nor a base64url mdoc IssuerSigned")
        }
        return result
    }

    /// The credential in a JSON payload: a JSON string, or an OpenID4VCI credential response
    /// (entry) `{"credential": ...}` / `{"credentials": [{"credential": ...}]}`.
    static func credentialText(in json: JSONValue) throws(VerificationError) -> String {
        guard let string = json.stringValue ?? json["credential"]?.stringValue
            ?? json["credentials"]?.arrayValue?.first?["credential"]?.stringValue else {
            throw .invalidRequest("pixelpass: the JSON inside is not an SD-JWT VC or mso_mdoc credential (W3C JSON-LD credentials, Inji's ldp_vc, are not verified here)")
        }
        return string
    }

    /// An SD-JWT VC without a verifier-chosen nonce: the issuer's part in full, no key binding.
    func checkOfflineSDJWT(_ text: String, into result: inout PixelPassVerification) {
        let sdJWT: SDJWT
        let jws: JWS
        let payload: [String: JSONValue]
        do {
            sdJWT = try SDJWT.parse(text)
            jws = try sdJWT.parsedIssuerJWT()
            payload = try jws.payload()
        } catch {
            result.report.fail("format", "not an SD-JWT: \(error)")
            return
        }
        guard jws.type == SDJWTIssuer.mediaType || jws.type == "vc+sd-jwt" else {
            result.report.fail("format", "issuer JWT typ is \(jws.type ?? "absent"), not \(SDJWTIssuer.mediaType) (SD-JWT VC §3.2.1)")
            return
        }
        guard let vct = payload["vct"]?.stringValue, let issuer = payload["iss"]?.stringValue else {
            result.report.fail("format", "the SD-JWT VC lacks vct or iss (SD-JWT VC §3.2.2)")
            return
        }
        result.report.pass("format", "dc+sd-jwt with \(sdJWT.disclosures.count) disclosures, vct \(vct)")
        result.notApplicable = [
            ("key_binding", sdJWT.keyBindingJWT == nil
                ? "no KB-JWT: a QR code is a static copy, with no nonce or audience of this verifier to sign (RFC 9901 §7.3 cannot run); whoever shows it need not hold the key"
                : "a KB-JWT is attached, but it answers some other verifier's nonce and audience, so it proves nothing here"),
            ("claims", "no DCQL query: every disclosed claim is reported"),
        ]
        guard let keys = issuerKeys(issuer: issuer, header: jws.header, check: "issuer_trust", report: &result.report) else { return }
        let verified: VerifiedSDJWT
        do {
            verified = try sdJWT.verify(issuerKeys: keys, policy: SDJWTVerificationPolicy(now: clock.now(), allowList: [.ES256, .ES384, .ES512]))
        } catch {
            switch error {
            case .jose: result.report.fail("issuer_signature", "\(error)")
            case .malformed(let why) where why.hasPrefix("expired") || why.hasPrefix("not yet valid"): result.report.fail("validity", why)
            default: result.report.fail("disclosures", "\(error)")
            }
            return
        }
        result.report.pass("issuer_signature", "\(jws.algorithm ?? "") signature by \(issuer) verifies; exp/nbf hold")
        result.report.pass("disclosures", "\(verified.disclosed.count) disclosures, each referenced once by its digest")
        guard checkStatus(verified.claims["status"], keys: keys, check: "status", report: &result.report) else { return }
        var claims = verified.claims
        for technical in ["cnf", "status", "_sd_alg"] { claims[technical] = nil }
        result.report.claims = .object([vct: .object(claims)])
    }

    /// An mdoc's IssuerSigned (what `wallet receive` stores): issuer data authentication only.
    func checkOfflineMDoc(_ issuerSigned: IssuerSigned, into result: inout PixelPassVerification) {
        let signer: Certificate
        let docType: String
        do {
            signer = try issuerSigned.documentSignerChain()[0]
            docType = try issuerSigned.unverifiedMobileSecurityObject().docType
        } catch {
            result.report.fail("format", "not an mdoc IssuerSigned: \(error)")
            return
        }
        result.report.pass("format", "mso_mdoc IssuerSigned, docType \(docType)")
        result.notApplicable = [
            ("device_authentication", "an IssuerSigned has no DeviceSigned: with no SessionTranscript of this verifier there is nothing for the device key to sign (ISO/IEC 18013-5 §9.1.3 cannot run)"),
            ("claims", "no DCQL query: every element is reported"),
        ]
        guard let (roots, statusKeys) = mdocIssuerRoots(signer: signer, check: "issuer_trust", report: &result.report) else { return }
        let verified: VerifiedIssuerSigned
        do {
            verified = try issuerSigned.verify(at: clock.now(), trustAnchors: roots)
        } catch {
            result.report.fail("issuer_authentication", "\(error)")
            return
        }
        result.report.pass("issuer_authentication",
                           "document signer \(signer.subjectText) chains to a trusted IACA; MSO signature, validity and every element digest hold")
        if let status = verified.status {
            guard let statusKeys else {
                result.report.fail("status", "the status list cannot be checked: the issuer's keys come only from the federation")
                return
            }
            let claim: JSONValue = ["status_list": ["idx": .int(Int64(status.index)), "uri": .string(status.uri)]]
            guard checkStatus(claim, keys: statusKeys, check: "status", report: &result.report) else { return }
        } else {
            result.report.pass("status", "the MSO names no status list")
        }
        result.report.claims = .object([verified.docType: .object(verified.elements.mapValues { .object($0.mapValues(VerificationReport.json)) })])
    }
}
