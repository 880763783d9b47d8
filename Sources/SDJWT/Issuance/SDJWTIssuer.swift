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
    public let decoysPerDigestArray: Int

    public static let mediaType = "dc+sd-jwt"

    public init(key: PrivateKey, algorithm: SignatureAlgorithm, keyID: String? = nil, x5c: [String]? = nil,
                type: String = SDJWTIssuer.mediaType, decoysPerDigestArray: Int = 0) {
        self.key = key
        self.algorithm = algorithm
        self.keyID = keyID
        self.x5c = x5c
        self.type = type
        self.decoysPerDigestArray = max(0, decoysPerDigestArray)
    }

    /// Builds the payload (claims with the planned parts replaced by digests, plus `_sd_alg`),
    /// signs it and returns the SD-JWT with every disclosure, ready for the holder.
    public func issue(claims: [String: JSONValue], plan: DisclosurePlan) throws(SDJWTError) -> SDJWT {
        if case .object(let rules) = plan {
            for (name, rule) in rules where rule.disclosable && DisclosurePlan.alwaysVisibleClaims.contains(name) {
                throw .invalidPlan("\"\(name)\" must stay visible")
            }
        }
        for name in claims.keys where DisclosurePlan.reservedNames.contains(name) {
            throw .invalidPlan("claim name \"\(name)\" is reserved")
        }
        var disclosures: [Disclosure] = []
        var random = SecureRandom.Buffer()
        // One SHA-256 context for the ~50 digests (see Digest.SHA256Context).
        let hasher = Digest.SHA256Context()
        guard case .object(var payload) = try apply(plan, to: .object(claims), path: { "" }, disclosures: &disclosures,
                                                    random: &random, hasher: hasher) else {
            throw .invalidPlan("claims must be an object")
        }
        payload["_sd_alg"] = .string(DigestAlgorithm.sha256.rawValue)

        var header: [String: JSONValue] = ["typ": .string(type)]
        if let keyID { header["kid"] = .string(keyID) }
        if let x5c { header["x5c"] = JSONValue(x5c) }
        let jwt: String
        do {
            jwt = try JWS.sign(header: header, payloadBytes: JSONValue.object(payload).bytes, key: key, algorithm: algorithm)
        } catch { throw .jose(error) }
        return SDJWT(issuerJWT: jwt, disclosures: disclosures, keyBindingJWT: nil)
    }

    /// Applies `plan` to `value` depth first, appending every disclosure made. Inner parts are
    /// processed before the outer value is hidden, so an outer disclosure carries inner digests.
    /// Salts and decoys come from `random`: 128-bit salts (RFC 9901 §9.3), 256-bit decoy inputs.
    /// `path` names the value for error messages; it is made only for one (building it for every
    /// member was 12,000 instructions per SD-JWT VC, callgrind).
    private func apply(_ plan: DisclosurePlan, to value: JSONValue, path: () -> String, disclosures: inout [Disclosure],
                       random: inout SecureRandom.Buffer, hasher: Digest.SHA256Context) throws(SDJWTError) -> JSONValue {
        switch plan {
        case .plain:
            return value
        case .object(let rules):
            guard var object = value.objectValue else { throw .invalidPlan("\(path().isEmpty ? "claims" : path()) is not an object") }
            var digests: [String] = []
            for (name, rule) in rules.sorted(by: { $0.key < $1.key }) {
                guard let member = object[name] else { continue }  // plans may name optional claims
                guard !DisclosurePlan.reservedNames.contains(name) else { throw .invalidPlan("claim name \"\(name)\" is reserved") }
                let inner = try apply(rule.content, to: member, path: { path().isEmpty ? name : "\(path()).\(name)" }, disclosures: &disclosures,
                                      random: &random, hasher: hasher)
                if rule.disclosable {
                    let disclosure = Disclosure(salt: Base64URL.encode(random.next(16)), name: name, value: inner)
                    disclosures.append(disclosure)
                    digests.append(disclosure.sha256Digest(hasher))
                    object[name] = nil
                } else {
                    object[name] = inner
                }
            }
            if !digests.isEmpty {
                for _ in 0..<decoysPerDigestArray { digests.append(Disclosure.decoyDigest(random: random.next(32), hasher: hasher)) }
                // Sorted so the order reveals nothing about the claims' original order (§4.2.4.1).
                object["_sd"] = JSONValue(digests.sorted())
            }
            return .object(object)
        case .array(let rule):
            guard let elements = value.arrayValue else { throw .invalidPlan("\(path()) is not an array") }
            var out: [JSONValue] = []
            out.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                let inner = try apply(rule.content, to: element, path: { "\(path())[\(index)]" }, disclosures: &disclosures,
                                      random: &random, hasher: hasher)
                if rule.disclosable {
                    let disclosure = Disclosure(salt: Base64URL.encode(random.next(16)), name: nil, value: inner)
                    disclosures.append(disclosure)
                    out.append(["...": .string(disclosure.sha256Digest(hasher))])
                } else {
                    out.append(inner)
                }
            }
            return .array(out)
        }
    }
}
