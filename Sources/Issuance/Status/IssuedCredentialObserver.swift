import Store

/// Told when a credential issued to an attested key starts or stops counting (issue 20, item 8):
/// the composition root gives the PID Provider one that moves the Wallet Provider hosted on the
/// same server between `operational` and `valid`, in process. Called after the change is stored;
/// what it does is its own concern (an error there never undoes an issuance or a revocation).
public protocol IssuedCredentialObserver: Sendable {
    /// Credentials whose key was attested by `keyAttestationIssuer` were issued.
    func credentialsIssued(_ records: [IssuedCredentialRecord])
    /// A credential's status changed (revoked, suspended, or valid again) or its holder
    /// reported `credential_deleted`: whether it counts is to be read again.
    func credentialWithdrawn(_ record: IssuedCredentialRecord)
}

extension PIDProvider {
    /// Passes attested records on (nothing without an observer or an attestation).
    func reportIssued(_ records: [IssuedCredentialRecord]) {
        guard let credentialObserver else { return }
        let attested = records.filter { $0.keyAttestationIssuer != nil }
        if !attested.isEmpty { credentialObserver.credentialsIssued(attested) }
    }

    func reportWithdrawn(_ records: [IssuedCredentialRecord]) {
        guard let credentialObserver else { return }
        for record in records where record.keyAttestationIssuer != nil { credentialObserver.credentialWithdrawn(record) }
    }
}
