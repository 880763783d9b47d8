import HTTP

extension PIDProvider {
    /// The admin API's check (`AdminAccess`, shared by every service) as the PID Provider's own
    /// error, which its handlers and the offer form already render: 401 `unauthorized` with a
    /// `Bearer` challenge, or the form shown again.
    public func authorizeAdmin(authorization: String?) throws(IssuanceError) {
        do {
            try AdminAccess(tokenDigest: adminTokenDigest).check(authorization: authorization)
        } catch {
            throw IssuanceError(.unauthorized, error.errorDescription, authenticationScheme: "Bearer")
        }
    }
}
