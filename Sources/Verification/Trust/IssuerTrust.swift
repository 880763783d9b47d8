import Cryptography
import JSON

/// How the verifier learns whether an issuer is trusted through the federation, asked by the
/// domain and answered by the composition root (a Trust Anchor hosted here resolves in
/// process; `Verification` never imports `Federation`).
public protocol CredentialIssuerTrust: Sendable {
    /// The issuer's metadata after its trust chain's policies, by entity type, and the Trust
    /// Anchor the chain reached. Throws, with the reason, when no chain from `entityID` reaches
    /// one of `trustAnchors`.
    func resolvedMetadata(entityID: String, trustAnchors: [String]) throws -> (metadata: [String: JSONValue], trustAnchor: String)
}

/// Where Status List Tokens come from (Token Status List §8): the composition root answers a
/// URI under this server's own origin in process (no service sends HTTP to its own server
/// from a worker) and fetches any other.
public protocol StatusListFetcher: Sendable {
    /// The Status List Token (compact JWT) at `uri`.
    func statusListToken(uri: String) throws -> String
}

/// Where an mdoc issuer's IACA roots come from once the issuer is trusted through the
/// federation: Trustbed's convention `<issuer>/iaca.pem` (the PID Provider serves its IACA
/// there), answered in process for an issuer hosted here and fetched otherwise.
public protocol IACAFetcher: Sendable {
    func iacaCertificates(issuer: String) throws -> [Certificate]
}
