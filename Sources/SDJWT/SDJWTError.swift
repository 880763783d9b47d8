import JOSE

/// Why an SD-JWT, a disclosure or a Key Binding JWT was refused (RFC 9901 §7). Each case is one
/// kind of failure, so a verifier can map it onto its protocol's error code (OpenID4VP
/// `invalid_request`, OpenID4VCI `invalid_credential_request`, ...).
public enum SDJWTError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not `<jwt>~<disclosure>~...~[<kb-jwt>]`, or too large.
    case malformed(String)
    /// A disclosure that is not base64url of a JSON array `[salt, name, value]` or `[salt, value]`
    /// with the member types RFC 9901 §4.2 requires.
    case malformedDisclosure(String)
    /// The issuer-signed JWT or the KB-JWT failed a JOSE check (alg, typ, kid, signature).
    case jose(JOSEError)
    /// `_sd_alg` names a hash function this library does not implement (RFC 9901 §4.1.1).
    case unsupportedDigestAlgorithm(String)
    /// A digest appears more than once in the payload, or one disclosure is sent twice
    /// (RFC 9901 §7.1 step 4).
    case duplicateDigest(String)
    /// A disclosure whose digest no `_sd` array or `...` entry references (RFC 9901 §7.1 step 5).
    case unreferencedDisclosure(String)
    /// A disclosure's claim name is `_sd` or `...`, already exists in its object, or an object
    /// disclosure is referenced from an array (or the reverse) (RFC 9901 §7.1 step 3).
    case invalidDisclosedClaim(String)
    /// The issuance plan would hide a claim that must stay visible (SD-JWT VC §3.2.2.2), uses a
    /// reserved name, or expects an object or array where the claims have something else.
    case invalidPlan(String)
    /// Key binding was required and is missing, or the KB-JWT's claims are wrong
    /// (RFC 9901 §7.3: typ, aud, nonce, iat, sd_hash, signature by the `cnf` key).
    case keyBinding(String)

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed SD-JWT: \(why)"
        case .malformedDisclosure(let why): return "malformed disclosure: \(why)"
        case .jose(let error): return error.description
        case .unsupportedDigestAlgorithm(let name): return "unsupported _sd_alg \"\(name)\""
        case .duplicateDigest(let digest): return "digest \(digest) appears more than once"
        case .unreferencedDisclosure(let digest): return "disclosure \(digest) is not referenced by the payload"
        case .invalidDisclosedClaim(let why): return "invalid disclosed claim: \(why)"
        case .invalidPlan(let why): return "invalid disclosure plan: \(why)"
        case .keyBinding(let why): return "key binding: \(why)"
        }
    }
}
