import CBOR
import Cryptography
import Foundation
import JOSE
import JSON
import MDoc
import SDJWT
import StatusList
import Support

/// A credential the wallet checked: what to print about it.
public struct VerifiedCredential {
    public let format: String
    /// One line per check that passed.
    public let checks: [String]
    /// The disclosed claims (SD-JWT VC, processed payload) or the elements by namespace (mdoc).
    public let claims: JSONValue
    /// Paths of the selectively disclosed claims (SD-JWT VC only).
    public let disclosedPaths: [String]
    public let status: (uri: String, index: Int)?
    public let signer: String
}

/// Verifies received credentials as a holder does before storing them, then their status.
public struct CredentialVerifier {
    public let http: WalletHTTP
    /// IACA roots (`--trust`): the signer chain must lead to one of them; nil skips the chain check.
    public let trustAnchors: [Certificate]?
    public var now: Int64 { Int64(Date().timeIntervalSince1970) }
    public static let algorithms: Set<SignatureAlgorithm> = [.ES256, .ES384, .ES512, .EdDSA]

    public init(http: WalletHTTP, trustAnchors: [Certificate]?) {
        self.http = http
        self.trustAnchors = trustAnchors
    }

    public func verify(_ credential: JSONValue, configuration: IssuerMetadata.Configuration, holders: [HolderKey]) throws -> VerifiedCredential {
        guard let text = credential.stringValue else {
            throw WalletError.malformed("the \(configuration.format) credential is not a string")
        }
        switch configuration.format {
        case "dc+sd-jwt", "vc+sd-jwt": return try verifySDJWT(text, configuration: configuration, holders: holders)
        case "mso_mdoc": return try verifyMDoc(text, configuration: configuration, holders: holders)
        default: throw WalletError.usage("cannot verify format \(configuration.format)")
        }
    }

    // MARK: - SD-JWT VC

    /// RFC 9901 §7.1 and SD-JWT VC: the issuer signature (key from the `x5c` leaf, else from the
    /// issuer's JWT VC Issuer Metadata), typ, exp/nbf, every disclosure referenced exactly once,
    /// `vct` as the configuration says, and `cnf.jwk` = one of the proof keys.
    private func verifySDJWT(_ text: String, configuration: IssuerMetadata.Configuration, holders: [HolderKey]) throws -> VerifiedCredential {
        let sdjwt: SDJWT
        let jws: JWS
        do {
            sdjwt = try SDJWT.parse(text)
            jws = try sdjwt.parsedIssuerJWT()
        } catch { throw WalletError.verification("SD-JWT: \(error)") }
        var checks: [String] = []
        let (keys, signer) = try issuerKeys(header: jws.header, claims: try? jws.payload(), what: "SD-JWT VC", checks: &checks)
        let verified: VerifiedSDJWT
        do {
            verified = try sdjwt.verify(issuerKeys: keys, policy: SDJWTVerificationPolicy(
                now: now, allowList: Self.algorithms, expectedType: jws.type == "vc+sd-jwt" ? "vc+sd-jwt" : SDJWTIssuer.mediaType))
        } catch { throw WalletError.verification("SD-JWT VC: \(error)") }
        checks.append("issuer signature (\(jws.algorithm ?? "?"), typ \(jws.type ?? "?")) and \(sdjwt.disclosures.count) disclosures")
        let claims = verified.claims
        if let expected = configuration.vct {
            guard claims["vct"]?.stringValue == expected else {
                throw WalletError.verification("vct is \(claims["vct"]?.stringValue ?? "absent"), expected \(expected)")
            }
            checks.append("vct \(expected)")
        }
        guard let cnf = claims["cnf"]?["jwk"]?.objectValue, let bound = try? JWK(json: cnf).publicKey(),
              holders.contains(where: { $0.privateKey.publicKey == bound }) else {
            throw WalletError.verification("cnf.jwk is not the proof key")
        }
        checks.append("cnf.jwk = proof key")
        var status: (String, Int)?
        if let claim = claims["status"] {
            do {
                let reference = try StatusReference(claim: claim)
                status = (reference.uri, reference.index)
            } catch { throw WalletError.verification("status claim: \(error)") }
        }
        return VerifiedCredential(format: configuration.format, checks: checks, claims: .object(claims),
                                  disclosedPaths: verified.disclosed.map { $0.path.description }, status: status, signer: signer)
    }

    /// The key that signed a JWT: the `x5c` leaf (with the chain checked against the trust
    /// anchors), else the `kid` in the JWT VC Issuer Metadata of `iss` (SD-JWT VC §4).
    private func issuerKeys(header: [String: JSONValue], claims: [String: JSONValue]?, what: String,
                            checks: inout [String]) throws -> (JWKSet, String) {
        if let x5c = header["x5c"]?.stringArray {
            let chain: [Certificate]
            let key: PublicKey
            do {
                chain = try Certificate.chain(x5c: x5c)
                key = try chain[0].publicKey()
            } catch { throw WalletError.verification("\(what) x5c: \(error)") }
            if let trustAnchors {
                do {
                    try Certificate.verifyChain(leaf: chain[0], intermediates: Array(chain.dropFirst()), roots: trustAnchors, at: now)
                } catch { throw WalletError.verification("\(what) x5c does not chain to the trusted IACA: \(error)") }
                checks.append("x5c chain to the trusted IACA")
            }
            var json = JWK(publicKey: key, use: nil).json
            json["kid"] = header["kid"]
            guard let jwk = try? JWK(json: json) else { throw WalletError.verification("\(what) x5c key is not usable as a JWK") }
            return (JWKSet(keys: [jwk]), chain[0].subjectText)
        }
        guard let iss = claims?["iss"]?.stringValue else {
            throw WalletError.verification("\(what) has neither x5c nor iss: no way to find the issuer key")
        }
        let (url, metadata) = try WellKnown.fetch(iss, "jwt-vc-issuer", http: http)
        var jwks = metadata["jwks"]
        if jwks == nil, let uri = metadata["jwks_uri"]?.stringValue {
            let reply = try http.get(uri, accept: "application/jwk-set+json, application/json")
            guard reply.status == 200 else { throw WalletError.server(step: "jwks_uri", status: reply.status, body: reply.text) }
            jwks = try? JSONValue.parse(reply.body)
        }
        guard let jwks, let set = try? JWKSet(json: jwks) else { throw WalletError.malformed("\(url) has no usable jwks") }
        if trustAnchors != nil { checks.append("(no x5c: the issuer key comes from \(url), not from the IACA)") }
        return (set, iss)
    }

    // MARK: - mdoc

    /// ISO/IEC 18013-5 §9.3.1 through the MDoc target: issuerAuth over the MSO with the x5chain
    /// leaf (chained to the IACA with --trust), value digests, validity, docType; then
    /// deviceKey = the proof key.
    private func verifyMDoc(_ text: String, configuration: IssuerMetadata.Configuration, holders: [HolderKey]) throws -> VerifiedCredential {
        let verified: VerifiedIssuerSigned
        do {
            verified = try IssuerSigned(base64URL: text).verify(at: now, trustAnchors: trustAnchors, expectedDocType: configuration.doctype)
        } catch { throw WalletError.verification("mdoc: \(error)") }
        var checks = ["issuerAuth signature, \(verified.elements.values.reduce(0) { $0 + $1.count }) value digests, validity"]
        if trustAnchors != nil { checks.append("x5chain to the trusted IACA (document signer EKU)") }
        checks.append("docType \(verified.docType)")
        guard holders.contains(where: { $0.privateKey.publicKey.components == verified.deviceKey.components }) else {
            throw WalletError.verification("MSO deviceKey is not the proof key")
        }
        checks.append("deviceKey = proof key")
        var elements: [String: JSONValue] = [:]
        for (nameSpace, values) in verified.elements {
            elements[nameSpace] = .object(values.mapValues(Self.printable))
        }
        let status = verified.status.map { ($0.uri, Int($0.index)) }
        return VerifiedCredential(format: configuration.format, checks: checks, claims: .object(elements), disclosedPaths: [],
                                  status: status, signer: verified.documentSignerChain[0].subjectText)
    }

    /// CBOR element values as JSON for printing: full-dates and tdates as their text, byte
    /// strings (a portrait) as their length.
    public static func printable(_ value: CBORValue) -> JSONValue {
        switch value {
        case .unsigned, .negative: return value.intValue.map { .int($0) } ?? .string("\(value)")
        case .text(let s): return .string(s)
        case .bytes(let b): return .string("<\(b.count) bytes>")
        case .array(let items): return .array(items.map(printable))
        case .map(let entries):
            var out: [String: JSONValue] = [:]
            for entry in entries { out[entry.key.textValue ?? "\(entry.key)"] = printable(entry.value) }
            return .object(out)
        case .tagged(_, let inner): return printable(inner)
        case .bool(let b): return .bool(b)
        case .null, .undefined: return .null
        case .float(let d): return .double(d)
        case .simple(let s): return .string("simple(\(s))")
        }
    }

    // MARK: - status

    /// Token Status List §8: fetches the token at `uri`, checks its signature (x5c leaf, chained
    /// with --trust), typ and `sub` = uri, and reads the entry.
    public func status(uri: String, index: Int) throws -> StatusType {
        let reply = try http.get(uri, accept: "application/statuslist+jwt")
        guard reply.status == 200 else { throw WalletError.server(step: "status list", status: reply.status, body: reply.text) }
        let compact = reply.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let jws: JWS
        do { jws = try JWS.parse(compact) } catch { throw WalletError.verification("status list token: \(error)") }
        var checks: [String] = []
        let (keys, _) = try issuerKeys(header: jws.header, claims: try? jws.payload(), what: "status list token", checks: &checks)
        do {
            let token = try StatusListToken.verify(compact, keys: keys, expectedSubject: uri, now: now, allowList: Self.algorithms)
            return try token.list.status(at: index)
        } catch { throw WalletError.verification("status list token at \(uri): \(error)") }
    }
}
