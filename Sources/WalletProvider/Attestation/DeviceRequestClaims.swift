import JSON

/// The claims of a JWT a wallet instance signs for this provider (wallet attestation requests,
/// key attestation requests, NL instructions), read alike: each shape error is 400
/// `bad_request`, this provider's code for a malformed request.
struct DeviceRequestClaims {
    let claims: [String: JSONValue]

    /// A member that must be a non-empty string.
    func string(_ name: String) throws(WalletProviderError) -> String {
        guard let text = claims[name]?.stringValue, !text.isEmpty else { throw .badRequest("\(name) must be a non-empty string") }
        return text
    }

    /// `iat`, a number.
    func issuedAt() throws(WalletProviderError) -> Int64 {
        guard let iat = claims["iat"]?.intValue else { throw .badRequest("iat must be a number") }
        return iat
    }

    /// `aud`: one string or a non-empty array of them (RFC 7519 §4.1.3).
    func audience() throws(WalletProviderError) -> [String] {
        if let single = claims["aud"]?.stringValue { return [single] }
        guard let list = claims["aud"]?.stringArray, !list.isEmpty else { throw .badRequest("aud must be a string or an array of strings") }
        return list
    }
}
