import Support

/// Certificate chains (JOSE `x5c`, leaf first) that already passed `Certificate.verifyChain`
/// against a set of roots, so that a chain presented again is not parsed and validated again.
///
/// Why: every wallet attestation and key attestation a wallet provider signs carries the same
/// `x5c` (the provider's certificate), and every development key attestation the same
/// device-maker root; an attestation-checking endpoint would otherwise decode those
/// certificates (OpenSSL 3's `d2i_X509` and its key decoders, slow and lock-heavy) and run
/// path validation on every request for an answer that only time changes.
///
/// What is cached is only the outcome of path validation, which depends on nothing but the
/// certificates, the roots and the time: the key is SHA-256 over the `x5c` entries (their text
/// determines their DER) and over the roots' DER; the value is the leaf's public key and
/// subject and the intersection of the validity periods of the validated path, checked against
/// `now` on every hit (outside it the chain is validated afresh, and so refused). Anything
/// request-specific (the JWT signed by the leaf, its claims) is still the caller's to verify
/// every time. Failures are not cached. The cache is bounded (`limit` entries; when full, one
/// entry is dropped per insertion), so a client sending ever new chains cannot grow it.
public final class ValidatedChainCache: Sendable {
    /// What a validated chain gives its user.
    public struct Entry: Sendable {
        /// The leaf's public key, decoded once with its certificate.
        public let leafKey: PublicKey
        /// RFC 2253 text of the leaf's subject.
        public let leafSubject: String
        /// The validated path's common validity window (Unix seconds, inclusive).
        public let notBefore: Int64
        public let notAfter: Int64
        /// The chain as given, decoded (leaf first), for what else a caller reads from it (the
        /// leaf's own validity, names); nothing here is request-specific.
        public let chain: [Certificate]
        /// RFC 2253 text of the trust anchor the path ended at (nil: `rootItself`).
        public let anchorSubject: String?
    }

    public let limit: Int
    private let entries: Locked<[[UInt8]: Entry]>

    public init(limit: Int = 4_096) {
        self.limit = max(1, limit)
        entries = Locked([:])
    }

    /// The number of chains held (tests).
    public var count: Int { entries.read { $0.count } }

    /// The identity of a root set in cache keys: SHA-256 over the roots' DER, computed once by
    /// the owner of the roots (a changed set is another key, so never a stale hit).
    public static func identity(of roots: [Certificate]) -> [UInt8] {
        var input: [UInt8] = []
        for root in roots { append(root.der, to: &input) }
        return Digest.sha256(input)
    }

    /// The validated chain `x5c` (standard base64 DER certificates, leaf first) to one of
    /// `roots` (whose `identity(of:)` is `rootsID`) at `now`: from the cache when it holds this
    /// chain for these roots and `now` lies in its validity window, else parsed and validated
    /// (`Certificate.verifyChain`, strict) and remembered. With `rootItself`, a chain of one
    /// certificate that is itself one of `roots` is accepted as that root without path
    /// validation (a root signing directly, as the development device maker's; a trust anchor's
    /// own validity period is not checked, RFC 5280 §6.1.1 (d)).
    public func validate(x5c: [String], roots: [Certificate], rootsID: [UInt8], at now: Int64, rootItself: Bool = false)
        throws(CertificateError) -> Entry {
        try validate(key: Self.key(x5c.map(\.utf8), rootsID: rootsID, mode: rootItself ? 1 : 0), roots: roots, at: now,
                     rootItself: rootItself, requiredExtendedKeyUsage: nil) { () throws(CertificateError) in try Certificate.chain(x5c: x5c) }
    }

    /// The same for a chain of DER certificates, leaf first (COSE `x5chain`, RFC 9360), with
    /// `requiredExtendedKeyUsage` checked on the leaf during path validation (part of the key,
    /// so a chain validated for another purpose is not a hit): an mdoc's document signer
    /// (ISO 18013-5 Annex B).
    public func validate(der chain: [[UInt8]], roots: [Certificate], rootsID: [UInt8], at now: Int64,
                         requiredExtendedKeyUsage: String? = nil) throws(CertificateError) -> Entry {
        guard !chain.isEmpty else { throw CertificateError(.invalidEncoding, "empty certificate chain", depth: 0) }
        let key = Self.key(chain + [Array((requiredExtendedKeyUsage ?? "").utf8)], rootsID: rootsID, mode: 2)
        return try validate(key: key, roots: roots, at: now, rootItself: false, requiredExtendedKeyUsage: requiredExtendedKeyUsage) {
            () throws(CertificateError) in try chain.map { der throws(CertificateError) in try Certificate(der: der) }
        }
    }

    private func validate(key: [UInt8], roots: [Certificate], at now: Int64, rootItself: Bool, requiredExtendedKeyUsage: String?,
                          decode: () throws(CertificateError) -> [Certificate]) throws(CertificateError) -> Entry {
        if let hit = entries.read({ $0[key] }), hit.notBefore <= now, now <= hit.notAfter { return hit }
        let chain = try decode()
        let path: [Certificate]
        if rootItself, chain.count == 1, roots.contains(chain[0]) {
            path = []
        } else {
            path = try Certificate.verifyChain(leaf: chain[0], intermediates: Array(chain.dropFirst()), roots: roots, at: now,
                                               requiredExtendedKeyUsage: requiredExtendedKeyUsage)
        }
        let leafKey: PublicKey
        do throws(CryptoError) {
            leafKey = try chain[0].publicKey()
        } catch {
            throw CertificateError(.invalidEncoding, "the leaf's key is not usable: \(error)", depth: 0)
        }
        let entry = Entry(leafKey: leafKey, leafSubject: chain[0].subjectText,
                          notBefore: path.map(\.notBefore).max() ?? Int64.min, notAfter: path.map(\.notAfter).min() ?? Int64.max,
                          chain: chain, anchorSubject: path.last?.subjectText)
        entries.withLock { table in
            if table[key] == nil, table.count >= limit { table.remove(at: table.startIndex) }
            table[key] = entry
        }
        return entry
    }

    /// SHA-256 over the mode (0, 1: x5c without and with `rootItself`; 2: DER with an EKU), the
    /// entries (each length-prefixed) and the roots' identity.
    static func key<Entries: Collection>(_ entries: [Entries], rootsID: [UInt8], mode: UInt8) -> [UInt8] where Entries.Element == UInt8 {
        var input: [UInt8] = [mode]
        input.reserveCapacity(entries.reduce(64) { $0 + $1.count + 4 })
        append([UInt8(truncatingIfNeeded: entries.count)], to: &input)
        for entry in entries { append(entry, to: &input) }
        append(rootsID, to: &input)
        return Digest.sha256(input)
    }

    private static func append(_ bytes: some Collection<UInt8>, to input: inout [UInt8]) {
        let n = UInt32(bytes.count)
        input += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
        input += bytes
    }
}
