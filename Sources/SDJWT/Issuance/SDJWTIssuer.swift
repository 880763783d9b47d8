import Cryptography
import JOSE
import JSON
import Support

/// Issues SD-JWTs (RFC 9901 §4) with the SD-JWT VC header (`typ: dc+sd-jwt`,
/// draft-ietf-oauth-sd-jwt-vc §3.2.1). Stateless and immutable: one instance per issuer key.
public struct SDJWTIssuer: Sendable {
    public let key: PrivateKey
    public let algorithm: SignatureAlgorithm
    public let keyID: String?
    /// Base64 DER certificates, leaf first (HAIP: the issuer's key comes with an `x5c` chain).
    public let x5c: [String]?
    public let type: String
    /// Decoy digests added to every `_sd` array (RFC 9901 §4.2.5).
    public private(set) var decoysPerDigestArray: Int

    public static let mediaType = "dc+sd-jwt"

    /// base64url of the protected header, `{"alg","kid"?,"typ","x5c"?}`: the same for every
    /// SD-JWT of this issuer, so encoded once here (its `x5c` certificate is a kilobyte that
    /// the JSON writer and base64url went through per credential, 15,000 instructions).
    private let encodedHeader: [UInt8]

    public init(key: PrivateKey, algorithm: SignatureAlgorithm, keyID: String? = nil, x5c: [String]? = nil,
                type: String = SDJWTIssuer.mediaType, decoysPerDigestArray: Int = 0) {
        self.key = key
        self.algorithm = algorithm
        self.keyID = keyID
        self.x5c = x5c
        self.type = type
        self.decoysPerDigestArray = max(0, decoysPerDigestArray)
        var header: [String: JSONValue] = ["typ": .string(type), "alg": .string(algorithm.rawValue)]
        if let keyID { header["kid"] = .string(keyID) }
        if let x5c { header["x5c"] = JSONValue(x5c) }
        var encoded: [UInt8] = []
        Base64URL.encode(JSONValue.object(header).bytes, appendingTo: &encoded)
        encodedHeader = encoded
    }

    /// This issuer with another number of decoys per `_sd` array, its header kept: an issuer
    /// that varies the count per credential (so the length of `_sd` says nothing) keeps one
    /// issuer and asks for a copy each time.
    public func withDecoys(_ decoysPerDigestArray: Int) -> SDJWTIssuer {
        var copy = self
        copy.decoysPerDigestArray = max(0, decoysPerDigestArray)
        return copy
    }

    /// Builds the payload (claims with the planned parts replaced by digests, plus `_sd_alg`),
    /// signs it and returns the SD-JWT with every disclosure, ready for the holder.
    public func issue(claims: [String: JSONValue], plan: DisclosurePlan) throws(SDJWTError) -> SDJWT {
        var writer = DisclosureWriter(keepDisclosures: true)
        let jwt = try signedJWT(payload(claims, plan, &writer), reserving: 0)
        return SDJWT(issuerJWT: String(decoding: jwt, as: UTF8.self), disclosures: writer.disclosures, keyBindingJWT: nil)
    }

    /// `issue(claims:plan:).serialized`, the compact `<jwt>~<d1>~…~<dn>~`, assembled in one
    /// buffer without `Disclosure` values (what an issuer hands to the holder).
    public func issueCompact(claims: [String: JSONValue], plan: DisclosurePlan) throws(SDJWTError) -> String {
        var writer = DisclosureWriter(keepDisclosures: false)
        let payload = try payload(claims, plan, &writer)
        var compact = try signedJWT(payload, reserving: 1 + writer.text.count)
        compact.append(UInt8(ascii: "~"))
        compact += writer.text
        return String(decoding: compact, as: UTF8.self)
    }

    /// The payload's JSON: the claims with the planned parts replaced by digests, plus `_sd_alg`.
    private func payload(_ claims: [String: JSONValue], _ plan: DisclosurePlan,
                         _ writer: inout DisclosureWriter) throws(SDJWTError) -> [UInt8] {
        // Each small set of names looked up in the large plan and claims, not every rule and
        // claim (~35 of each for a PID) hashed again for a set: with `isReserved` per member in
        // `apply`, 28,000 instructions per SD-JWT VC (callgrind, issuance-callgrind.sh).
        if case .object(let rules) = plan {
            for name in DisclosurePlan.alwaysVisibleClaims where rules[name]?.disclosable == true {
                throw .invalidPlan("\"\(name)\" must stay visible")
            }
        }
        for name in DisclosurePlan.reservedNames where claims[name] != nil {
            throw .invalidPlan("claim name \"\(name)\" is reserved")
        }
        guard case .object(var payload) = try apply(plan, to: .object(claims), path: { "" }, writer: &writer) else {
            throw .invalidPlan("claims must be an object")
        }
        payload["_sd_alg"] = .string(DigestAlgorithm.sha256.rawValue)
        return JSONValue.object(payload).bytes
    }

    /// The compact issuer-signed JWT as bytes, with room for `reserving` more.
    private func signedJWT(_ payload: [UInt8], reserving: Int) throws(SDJWTError) -> [UInt8] {
        do {
            return try JWS.signCompact(encodedHeader: encodedHeader, payloadBytes: payload, key: key, algorithm: algorithm,
                                       reservingCapacity: reserving)
        } catch { throw .jose(error) }
    }

    /// Applies `plan` to `value` depth first, making every disclosure in `writer`. Inner parts
    /// are processed before the outer value is hidden, so an outer disclosure carries inner
    /// digests. `path` names the value for error messages; it is made only for one (building it
    /// for every member was 12,000 instructions per SD-JWT VC, callgrind).
    private func apply(_ plan: DisclosurePlan, to value: JSONValue, path: () -> String,
                       writer: inout DisclosureWriter) throws(SDJWTError) -> JSONValue {
        switch plan {
        case .plain:
            return value
        case .object(let rules):
            guard var object = value.objectValue else { throw .invalidPlan("\(path().isEmpty ? "claims" : path()) is not an object") }
            var digests: [String] = []
            for (name, rule) in rules.sorted(by: { $0.key < $1.key }) {
                guard let member = object[name] else { continue }  // plans may name optional claims
                guard !DisclosurePlan.isReserved(name) else { throw .invalidPlan("claim name \"\(name)\" is reserved") }
                let inner = try apply(rule.content, to: member, path: { path().isEmpty ? name : "\(path()).\(name)" }, writer: &writer)
                if rule.disclosable {
                    digests.append(writer.disclose(name: name, value: inner))
                    object[name] = nil
                } else {
                    object[name] = inner
                }
            }
            if !digests.isEmpty {
                for _ in 0..<decoysPerDigestArray { digests.append(writer.decoyDigest()) }
                // Sorted so the order reveals nothing about the claims' original order (§4.2.4.1).
                object["_sd"] = JSONValue(digests.sorted())
            }
            return .object(object)
        case .array(let rule):
            guard let elements = value.arrayValue else { throw .invalidPlan("\(path()) is not an array") }
            var out: [JSONValue] = []
            out.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                let inner = try apply(rule.content, to: element, path: { "\(path())[\(index)]" }, writer: &writer)
                if rule.disclosable {
                    out.append(["...": .string(writer.disclose(name: nil, value: inner))])
                } else {
                    out.append(inner)
                }
            }
            return .array(out)
        }
    }
}
