import Cryptography
import JOSE
import JSON

/// Answers whether a wallet provider is trusted: its trust chain must reach one of the
/// configured Trust Anchors, and the answer is the wallet provider's resolved metadata
/// (`wallet_provider` with `jwks`, policy applied). The composition root implements it with
/// the federation's resolver, so this module needs no federation host.
public protocol WalletProviderTrust: Sendable {
    /// Throws when `entityID` has no valid chain to any of `trustAnchors` (entity IDs).
    func walletProviderMetadata(entityID: String, trustAnchors: [String]) throws -> [String: JSONValue]
}

/// Who may sign the attestations a wallet presents: client attestations (OAuth
/// attestation-based client authentication §5.1) and key attestations (OpenID4VCI 1.0
/// Appendix D). Both are JWTs signed by a wallet provider, trusted in one of two ways:
/// - the JWT's `x5c` chains to one of `roots` (PEM files an operator names, e.g. a wallet
///   provider that publishes no federation metadata, such as the EUDI reference wallet's);
/// - or its `iss` is an entity with `wallet_provider` metadata whose federation trust chain
///   reaches one of `trustAnchors`; its `jwks` then verify the JWT.
/// A value built from configuration and a `WalletProviderTrust`, independent of any service,
/// so every authorization server (the PID Provider today, the Wallet Provider next) shares it.
public struct AttestationIssuerTrust: Sendable {
    public let roots: [Certificate]
    public let trustAnchors: [String]
    public let walletProviders: WalletProviderTrust?
    /// `x5c` chains already validated against `roots` (see `ValidatedChainCache`): a wallet
    /// provider puts the same certificate on every attestation it signs. Shared by the copies
    /// of this value, bounded by the cache's limit; the JWT each chain signs is still verified
    /// on every use.
    let chains: ValidatedChainCache
    let rootsID: [UInt8]
    /// Longest `x5c` accepted (leaf, intermediates, root): a wallet provider's chain is two or
    /// three certificates; a longer one only costs path building.
    public static let maxChainLength = 5

    public init(roots: [Certificate], trustAnchors: [String], walletProviders: WalletProviderTrust?) {
        self.roots = roots
        self.trustAnchors = trustAnchors
        self.walletProviders = walletProviders
        chains = ValidatedChainCache()
        rootsID = ValidatedChainCache.identity(of: roots)
    }

    /// The keys a trusted attestation is signed with, and the name of its issuer.
    public struct Signer: Sendable {
        public let keys: JWKSet
        /// The JWT's `iss`, or (for an `x5c` attestation without `iss`) the leaf's subject.
        public let name: String
    }

    /// Why an attestation's signer is not trusted; callers turn it into their protocol's error.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// The keys `jws` may be verified with: its `x5c` leaf when there is an `x5c` and roots are
    /// configured (the chain must then reach one of them at `now`), else the `jwks` of the
    /// wallet provider `issuer` names. The signature itself is the caller's to check, with its
    /// own `typ` and algorithm allow-list.
    public func signer(of jws: JWS, issuer: String?, now: Int64) throws(Refusal) -> Signer {
        try signer(x5c: jws.header["x5c"], keyID: jws.keyID, issuer: issuer, now: now)
    }

    /// The same from the JWT's `x5c` header value and `kid` (a caller that already holds them
    /// asks again whether that signer is still trusted at `now`).
    public func signer(x5c: JSONValue?, keyID: String?, issuer: String?, now: Int64) throws(Refusal) -> Signer {
        if let x5c, !roots.isEmpty {
            guard let entries = x5c.stringArray, !entries.isEmpty else { throw Refusal("x5c must be a non-empty array of strings") }
            guard entries.count <= Self.maxChainLength else {
                throw Refusal("x5c holds \(entries.count) certificates; at most \(Self.maxChainLength) are accepted")
            }
            let chain: ValidatedChainCache.Entry
            do throws(CertificateError) {
                chain = try chains.validate(x5c: entries, roots: roots, rootsID: rootsID, at: now)
            } catch {
                throw Refusal("the x5c does not chain to a trusted root: \(error.reason)")
            }
            var jwk = JWK(publicKey: chain.leafKey)
            if let keyID { jwk = jwk.adding(["kid": .string(keyID)]) }
            return Signer(keys: JWKSet(keys: [jwk]), name: issuer ?? chain.leafSubject)
        }
        guard let issuer, !issuer.isEmpty else {
            throw Refusal("no x5c chaining to a trusted root and no iss naming a trusted wallet provider")
        }
        guard let walletProviders, !trustAnchors.isEmpty else { throw Refusal("no trusted wallet provider can vouch for \(issuer)") }
        let metadata: [String: JSONValue]
        do {
            metadata = try walletProviders.walletProviderMetadata(entityID: issuer, trustAnchors: trustAnchors)
        } catch {
            throw Refusal("\(issuer) is not a wallet provider trusted here: \(error)")
        }
        // The whole resolved metadata (keyed by entity type) or the wallet_provider object itself.
        let walletProvider = metadata["wallet_provider"]?.objectValue ?? metadata
        guard let jwks = walletProvider["jwks"] else { throw Refusal("\(issuer) publishes no wallet_provider jwks") }
        do throws(JOSEError) {
            return Signer(keys: try JWKSet(json: jwks), name: issuer)
        } catch {
            throw Refusal("\(issuer)'s wallet_provider jwks: \(error)")
        }
    }
}
