import Federation
import Issuance
import JOSE
import JSON
import OAuth

/// The PID Provider's question "is this attestation issuer a wallet provider we trust?"
/// answered by the federation: the entity's trust chain must reach one of the configured Trust
/// Anchors, and it must have `wallet_provider` metadata after the chain's policies. The answer
/// is the whole resolved metadata (keyed by entity type); the issuer reads
/// `wallet_provider.jwks` from it.
///
/// It runs on the HTTP worker that handles PAR or the token request, so it must not wait long:
/// a Trust Anchor hosted here resolves from hosted and cached statements without any network
/// (`localResolveResponse`, the same path the resolve endpoint answers on the worker). Only a
/// chain that needs another host is fetched, synchronously but within `remoteBudget` seconds
/// (the resolver's per-origin limits, fetch timeout and 10 s memory of failed fetches still
/// apply), so a slow wallet provider costs one worker at most that long.
public struct FederationWalletProviderTrust: WalletProviderTrust {
    let host: @Sendable () -> FederationHost
    private let remoteBudget: Double

    /// `host` returns the current federation host (it is replaced when entity files change).
    public init(host: @escaping @Sendable () -> FederationHost, remoteBudget: Double = 3) {
        self.host = host
        self.remoteBudget = remoteBudget
    }

    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    public func walletProviderMetadata(entityID: String, trustAnchors: [String]) throws -> [String: JSONValue] {
        let host = self.host()
        guard !trustAnchors.isEmpty else { throw Refusal(description: "no Trust Anchors are configured for client attestations") }
        var needsNetwork = false
        var problems: [String] = []
        for anchor in trustAnchors {
            guard host.entity(anchor) != nil, host.isSuperior(anchor) else { needsNetwork = true; continue }
            do {
                guard let response = try host.localResolveResponse(resolver: anchor, subject: entityID, trustAnchors: [anchor],
                                                                   entityTypes: []) else {
                    needsNetwork = true
                    continue
                }
                // Our own resolve response, signed in this process: its payload needs no check.
                let (_, claims) = try JWS.parseClaims(response)
                return try Self.walletProvider(claims["metadata"]?.objectValue ?? [:], entityID)
            } catch let refusal as Refusal {
                throw refusal
            } catch {
                problems.append("\(anchor): \(error)")
            }
        }
        guard needsNetwork else {
            throw Refusal(description: "no valid trust chain from \(entityID): " + problems.joined(separator: "; "))
        }
        var anchors: [String: TrustAnchorKeys] = [:]
        for anchor in trustAnchors {
            // A Trust Anchor hosted here is trusted with its own keys; a remote one as it
            // publishes itself (it was named in the issuer's configuration).
            anchors[anchor] = host.entity(anchor) != nil ? .known(try host.keys.publicKeys(for: anchor)) : .selfPublished
        }
        let chain = try host.resolveChain(subject: entityID, anchors: anchors, deadline: .after(seconds: remoteBudget))
        return try Self.walletProvider(chain.resolvedMetadata, entityID)
    }

    private static func walletProvider(_ metadata: [String: JSONValue], _ entityID: String) throws -> [String: JSONValue] {
        guard metadata["wallet_provider"]?.objectValue != nil else {
            throw Refusal(description: "\(entityID) has no wallet_provider metadata")
        }
        return metadata
    }
}
