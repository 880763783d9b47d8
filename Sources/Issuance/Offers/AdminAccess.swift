import Cryptography

extension PIDProvider {
    /// The admin API takes `Authorization: Bearer <admin token>`; anything else is 401. The
    /// comparison runs in constant time over the token's digest, so response times reveal
    /// nothing about how much of a guess matched.
    ///
    /// The admin token's own digest is made once (`adminTokenDigest`) and the scheme is compared
    /// as bytes: hashing both and lower-casing a prefix cost 13,000 instructions per admin offer
    /// (callgrind, issuance-callgrind.sh).
    public func authorizeAdmin(authorization: String?) throws(IssuanceError) {
        guard let authorization, authorization.utf8.count > 7, Self.hasBearerScheme(authorization) else {
            throw IssuanceError(.unauthorized, "the admin API needs Authorization: Bearer <admin token>", authenticationScheme: "Bearer")
        }
        let presented = Digest.sha256(Array(authorization.utf8.dropFirst(7)))
        var difference: UInt8 = 0
        for (a, b) in zip(presented, adminTokenDigest) { difference |= a ^ b }
        guard difference == 0 else {
            throw IssuanceError(.unauthorized, "wrong admin token", authenticationScheme: "Bearer")
        }
    }

    /// Whether `authorization` starts with "bearer " in any case (RFC 9110 §11.1: the scheme is
    /// case-insensitive).
    private static func hasBearerScheme(_ authorization: String) -> Bool {
        zip(authorization.utf8, "bearer ".utf8).allSatisfy { presented, expected in
            presented == expected || (presented >= UInt8(ascii: "A") && presented <= UInt8(ascii: "Z") && presented + 32 == expected)
        }
    }
}
