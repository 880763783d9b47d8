import JOSE
import JSON

/// A validated trust chain (section 4): the subject's entity configuration, the subordinate
/// statements upwards, and the Trust Anchor's entity configuration.
public struct TrustChain: Sendable {
    public let statements: [EntityStatement]
    /// Metadata of the subject after the superiors' `metadata` and merged policies (section 6.1).
    public let resolvedMetadata: [String: JSONValue]
    /// The earliest `exp` of any statement in the chain (section 4.3).
    public let expiresAt: Int64

    public var subject: EntityStatement { statements[0] }
    public var trustAnchor: EntityStatement { statements[statements.count - 1] }
    public var compactStatements: [String] { statements.map(\.compact) }
}

/// What the caller trusts a Trust Anchor with: known keys, or (for a client pointed at a
/// federation it has never seen) the keys in the anchor's own entity configuration.
public enum TrustAnchorKeys: Sendable {
    case known(JWKSet)
    case selfPublished
}
