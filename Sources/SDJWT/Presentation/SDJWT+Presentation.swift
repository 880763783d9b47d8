import JSON

extension SDJWT {
    /// A presentation (RFC 9901 §5.2) keeping the disclosures whose claim path `keep` accepts,
    /// plus every disclosure on the way to them: a nested claim cannot be shown without the
    /// disclosure that carries its digest, or the verifier would find it unreferenced.
    /// The KB-JWT, if any, is dropped: it would no longer match `sd_hash`.
    public func presentation(disclosing keep: (JSONPath) -> Bool) throws(SDJWTError) -> SDJWT {
        let all = try disclosedClaims()
        let kept = all.filter { keep($0.path) }.map(\.path)
        let selected = all.filter { claim in
            kept.contains { Self.isPrefix(claim.path.components, of: $0.components) }
        }
        return SDJWT(issuerJWT: issuerJWT, disclosures: selected.map(\.disclosure), keyBindingJWT: nil)
    }

    /// Keeps the disclosures for these paths, written as JSONPath prints them: `given_name`,
    /// `address.locality`, `nationalities[1]`.
    public func presentation(disclosing paths: Set<String>) throws(SDJWTError) -> SDJWT {
        try presentation { paths.contains($0.description) }
    }

    private static func isPrefix(_ prefix: [JSONPath.Component], of path: [JSONPath.Component]) -> Bool {
        prefix.count <= path.count && zip(prefix, path).allSatisfy { $0 == $1 }
    }
}
