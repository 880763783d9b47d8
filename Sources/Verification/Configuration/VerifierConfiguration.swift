import JSON

/// `services.verifier` of an entity file (issue 22, item 1). Every member is optional, so
/// `"verifier": {}` runs a working verifier; unknown members are refused, as in every other
/// declaration, so a misspelt one is not silently ignored.
public struct VerifierConfiguration: Sendable, Equatable {
    /// Trust Anchors (entity names or IDs) an issuer's trust chain must reach; empty: those the
    /// verifier's own authority hints reach. Names are turned into IDs by the composition root.
    public var trustAnchors: [String] = []
    /// PEM files (relative to `Entities/`) with roots an issuer's `x5c` may chain to instead
    /// (IACA roots of issuers outside the federation).
    public var issuerRootFiles: [String] = []
    /// The client identifier prefix of a request that names none (OpenID4VP 1.0 §5.9.3).
    public var clientIDPrefix: ClientIDPrefix = .x509Hash
    /// The response mode of a request that names none; HAIP asks for `direct_post.jwt`.
    public var responseMode: ResponseMode = .directPostJWT
    /// Seconds a presentation request stays answerable.
    public var requestLifetime: Int64 = 600
    /// How old a key binding JWT's `iat` may be, in seconds.
    public var keyBindingMaxAge: Int64 = 300
    public var clientName = "Trustbed Demo Verifier"
    /// Apple's identity envelope (`apple`, see Apple/AppleIdentityConfiguration.swift); nil: off.
    public var apple: AppleIdentityConfiguration?

    public init() {}

    public static let knownFields: Set<String> = [
        "trust_anchors", "issuer_roots", "client_id_prefix", "response_mode", "request_lifetime", "key_binding_max_age",
        "client_name", "apple",
    ]

    public static func parse(_ reader: JSONReader) throws(JSONReadError) -> VerifierConfiguration {
        try reader.rejectUnknown(allowed: knownFields)
        var c = VerifierConfiguration()
        if let v = try reader.optionalStringArray("trust_anchors") { c.trustAnchors = v }
        if let v = try reader.optionalStringArray("issuer_roots") { c.issuerRootFiles = v }
        if let v = try reader.optionalString("client_id_prefix") {
            guard let prefix = ClientIDPrefix(rawValue: v) else {
                throw reader.invalid("client_id_prefix", "expected one of \(ClientIDPrefix.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            c.clientIDPrefix = prefix
        }
        if let v = try reader.optionalString("response_mode") {
            guard let mode = ResponseMode(rawValue: v) else {
                throw reader.invalid("response_mode", "expected one of \(ResponseMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            c.responseMode = mode
        }
        if let v = try reader.optionalInt("request_lifetime") {
            guard v >= 10, v <= 86_400 else { throw reader.invalid("request_lifetime", "expected 10 to 86400 seconds") }
            c.requestLifetime = v
        }
        if let v = try reader.optionalInt("key_binding_max_age") {
            guard v >= 1, v <= 86_400 else { throw reader.invalid("key_binding_max_age", "expected 1 to 86400 seconds") }
            c.keyBindingMaxAge = v
        }
        if let v = try reader.optionalField("client_name")?.nonEmptyString() { c.clientName = v }
        if let v = try reader.optionalObject("apple") { c.apple = try AppleIdentityConfiguration.parse(v) }
        return c
    }
}

/// Client identifier prefixes this verifier speaks (OpenID4VP 1.0 §5.9.3).
public enum ClientIDPrefix: String, Sendable, CaseIterable {
    /// `x509_hash:<base64url SHA-256 of the leaf certificate>`, the request signed by that
    /// certificate's key with `x5c` (HAIP's choice).
    case x509Hash = "x509_hash"
    /// `x509_san_dns:<host>`: the leaf certificate's dNSName SAN is the host.
    case x509SANDNS = "x509_san_dns"
    /// `openid_federation:<entity ID>`: the key comes from the federation metadata and the
    /// request carries its `trust_chain`.
    case openidFederation = "openid_federation"
}

/// Response modes (OpenID4VP 1.0 §8.2, §8.3).
public enum ResponseMode: String, Sendable, CaseIterable {
    case directPost = "direct_post"
    /// The response encrypted to the verifier's key (JWE, ECDH-ES), as HAIP requires.
    case directPostJWT = "direct_post.jwt"
}
