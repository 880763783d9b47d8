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
    /// SD-JWT of this issuer, so encoded once here rather than per credential (its `x5c`
    /// certificate alone is a kilobyte of JSON and base64url).
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
        let payload = try payload(SDJWTPayloadTemplate(claims: claims, plan: plan), adding: [:], &writer)
        let jwt = try signedJWT(payload, reserving: 0)
        return SDJWT(issuerJWT: String(decoding: jwt, as: UTF8.self), disclosures: writer.disclosures, keyBindingJWT: nil)
    }

    /// `issue(claims:plan:).serialized`, the compact `<jwt>~<d1>~…~<dn>~`, assembled in one
    /// buffer without `Disclosure` values (what an issuer hands to the holder).
    public func issueCompact(claims: [String: JSONValue], plan: DisclosurePlan) throws(SDJWTError) -> String {
        try issueCompact(template: SDJWTPayloadTemplate(claims: claims, plan: plan), adding: [:])
    }

    /// `issueCompact(claims:plan:)` for claims compiled once (`template`) plus `added`, the
    /// visible top-level claims that differ per credential (`iss`, `iat`, `cnf`, `status`, ...).
    /// An added claim must be neither a claim of the template nor named by its plan.
    public func issueCompact(template: SDJWTPayloadTemplate, adding added: [String: JSONValue]) throws(SDJWTError) -> String {
        var writer = DisclosureWriter(keepDisclosures: false)
        let payload = try payload(template, adding: added, &writer)
        var compact = try signedJWT(payload, reserving: 1 + writer.text.count)
        compact.append(UInt8(ascii: "~"))
        compact += writer.text
        return String(decoding: compact, as: UTF8.self)
    }

    /// The payload's JSON: the template rendered with `added` and `_sd_alg` among its members.
    private func payload(_ template: SDJWTPayloadTemplate, adding added: [String: JSONValue],
                         _ writer: inout DisclosureWriter) throws(SDJWTError) -> [UInt8] {
        var members: [AddedMember] = []
        members.reserveCapacity(added.count + 1)
        for (name, value) in added where name != "_sd_alg" {
            guard !DisclosurePlan.isReserved(name) else { throw .invalidPlan("claim name \"\(name)\" is reserved") }
            guard !template.claimNames.contains(name) else { throw .invalidPlan("claim \"\(name)\" is both prepared and added") }
            members.append(AddedMember(name: name, text: value.bytes))
        }
        members.append(AddedMember(name: "_sd_alg", text: Self.sdAlgText))
        members.sort { $0.name < $1.name }
        return template.render(adding: members, decoys: decoysPerDigestArray, writer: &writer)
    }

    /// `"sha-256"`, the only `_sd_alg` this issuer uses (RFC 9901 §4.1.1).
    private static let sdAlgText = JSONValue.string(DigestAlgorithm.sha256.rawValue).bytes

    /// The compact issuer-signed JWT as bytes, with room for `reserving` more.
    private func signedJWT(_ payload: [UInt8], reserving: Int) throws(SDJWTError) -> [UInt8] {
        do {
            return try JWS.signCompact(encodedHeader: encodedHeader, payloadBytes: payload, key: key, algorithm: algorithm,
                                       reservingCapacity: reserving)
        } catch { throw .jose(error) }
    }
}
