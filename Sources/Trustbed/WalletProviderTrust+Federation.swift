import Federation
import Issuance
import JOSE
import JSON
import OAuth
import Support

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
    /// What the federation said about each wallet provider, until the `exp` of that answer
    /// (the resolve response's, itself no later than the chain's earliest statement `exp`,
    /// OpenID Federation 1.0 §10.2): every client attestation and key attestation names its
    /// provider, and resolving, then reading the 10–15 KB signed answer again per request only
    /// repeats the same result. Only successes of one host are kept: a reloaded federation (a
    /// new host) starts afresh. Bounded (`WalletProviderAnswers.limit` providers × anchor sets).
    let answers = WalletProviderAnswers()

    public init(host: @escaping @Sendable () -> FederationHost, remoteBudget: Double = 3) {
        self.host = host
        self.remoteBudget = remoteBudget
    }

    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    public func walletProviderMetadata(entityID: String, trustAnchors: [String]) throws -> [String: JSONValue] {
        guard !trustAnchors.isEmpty else { throw Refusal(description: "no Trust Anchors are configured for client attestations") }
        return try Self.walletProvider(resolvedMetadata(entityID: entityID, trustAnchors: trustAnchors).metadata, entityID)
    }

    /// What the federation says of `entityID`: its metadata after its chain's policies and the
    /// Trust Anchor that chain reached (one of `trustAnchors`), kept in `answers` until it
    /// expires. The verifier asks the same of credential issuers.
    func resolvedMetadata(entityID: String, trustAnchors: [String]) throws -> (metadata: [String: JSONValue], trustAnchor: String) {
        let host = self.host()
        let key = ([entityID] + trustAnchors).joined(separator: "\n")
        let now = host.clock.now()
        if let answer = answers.answer(key, owner: host, now: now) { return (answer.metadata, answer.trustAnchor) }
        let (metadata, anchor, until) = try resolve(entityID: entityID, trustAnchors: trustAnchors, host: host, now: now)
        answers.store(key, metadata, until: until, owner: host, trustAnchor: anchor)
        return (metadata, anchor)
    }

    /// The entity's resolved metadata, the Trust Anchor reached, and until when it holds.
    private func resolve(entityID: String, trustAnchors: [String], host: FederationHost,
                         now: Int64) throws -> ([String: JSONValue], String, Int64) {
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
                return (claims["metadata"]?.objectValue ?? [:], anchor, claims["exp"]?.intValue ?? now)
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
        return (chain.resolvedMetadata, chain.trustAnchor.issuer, chain.expiresAt)
    }

    private static func walletProvider(_ metadata: [String: JSONValue], _ entityID: String) throws -> [String: JSONValue] {
        guard metadata["wallet_provider"]?.objectValue != nil else {
            throw Refusal(description: "\(entityID) has no wallet_provider metadata")
        }
        return metadata
    }
}

/// The answers `FederationWalletProviderTrust` keeps (see there): resolved metadata (and the
/// Trust Anchor reached) by entity and Trust Anchors, each until its `until`, all belonging to one `owner` (the
/// federation host that gave them; another owner's lookup misses and its first store drops
/// them). At most `limit` entries; when full, one is dropped per insertion.
final class WalletProviderAnswers: Sendable {
    struct Answer { let metadata: [String: JSONValue]; let trustAnchor: String; let until: Int64 }
    let limit: Int
    private let table = Locked<(owner: AnyObject?, entries: [String: Answer])>((nil, [:]))

    init(limit: Int = 1_024) { self.limit = max(1, limit) }

    var count: Int { table.read { $0.entries.count } }

    func answer(_ key: String, owner: AnyObject, now: Int64) -> Answer? {
        table.read { state in
            guard state.owner === owner, let answer = state.entries[key], now < answer.until else { return nil }
            return answer
        }
    }

    func lookup(_ key: String, owner: AnyObject, now: Int64) -> [String: JSONValue]? {
        answer(key, owner: owner, now: now)?.metadata
    }

    func store(_ key: String, _ metadata: [String: JSONValue], until: Int64, owner: AnyObject, trustAnchor: String = "") {
        table.withLock { state in
            if state.owner !== owner { state = (owner, [:]) }
            if state.entries[key] == nil, state.entries.count >= limit { state.entries.remove(at: state.entries.startIndex) }
            state.entries[key] = Answer(metadata: metadata, trustAnchor: trustAnchor, until: until)
        }
    }
}
