import JSON

extension SDJWT {
    /// The claims with every disclosure of this SD-JWT applied, without checking the issuer's
    /// signature: the holder's view of what it could show, to match a verifier's query (a
    /// wallet verified the credential when it received it).
    public func holderClaims() throws(SDJWTError) -> [String: JSONValue] {
        let jws = try parsedIssuerJWT()
        let payload: [String: JSONValue]
        do { payload = try jws.payload() } catch { throw .jose(error) }
        var processor = try PayloadProcessor(disclosures: disclosures, algorithm: try Self.digestAlgorithm(of: payload))
        return try processor.processPayload(payload)
    }
}
