import JSON

extension JWS {
    /// Parses a JWT whose payload must be a JSON object, returning both: the common first step
    /// of every statement and mark this server reads.
    public static func parseClaims(_ compact: String,
                                   maximumLength: Int = maximumCompactLength) throws(JOSEError) -> (jws: JWS, claims: [String: JSONValue]) {
        let jws = try parse(compact, maximumLength: maximumLength)
        return (jws, try jws.payload())
    }
}
