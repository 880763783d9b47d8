import Cryptography

extension PIDProvider {
    /// The admin API takes `Authorization: Bearer <admin token>`; anything else is 401. The
    /// comparison runs in constant time over the token's digest, so response times reveal
    /// nothing about how much of a guess matched.
    public func authorizeAdmin(authorization: String?) throws(IssuanceError) {
        guard let authorization, authorization.count > 7, authorization.prefix(7).lowercased() == "bearer " else {
            throw IssuanceError(.unauthorized, "the admin API needs Authorization: Bearer <admin token>", authenticationScheme: "Bearer")
        }
        let presented = Digest.sha256(Array(authorization.dropFirst(7).utf8))
        let expected = Digest.sha256(Array(adminToken.utf8))
        var difference: UInt8 = 0
        for (a, b) in zip(presented, expected) { difference |= a ^ b }
        guard difference == 0 else {
            throw IssuanceError(.unauthorized, "wrong admin token", authenticationScheme: "Bearer")
        }
    }
}
