import Issuance
import Logging
import Store
import Support
import WalletProvider

/// The composition root's link between the two services (issue 20, item 8): a PID Provider
/// hosted here tells the Wallet Provider hosted here, in process, that a PID went to a key it
/// attested (the instance becomes `valid`, and the same person's PIDs on their other instances
/// become `invalid`) or was revoked or deleted (`operational` again unless another live PID
/// remains). Both share the database, so the Wallet Provider's side is `WalletInstanceValidity`.
struct WalletInstanceValidityObserver: IssuedCredentialObserver {
    let validity: WalletInstanceValidity
    let clock: Clock
    let logger: Logger

    init(database: Database, clock: Clock, logger: Logger) {
        validity = WalletInstanceValidity(database: database)
        self.clock = clock
        self.logger = logger
    }

    func credentialsIssued(_ records: [IssuedCredentialRecord]) {
        for record in records {
            guard let provider = record.keyAttestationIssuer else { continue }
            do {
                guard let issued = try validity.pidIssued(provider: provider, keyThumbprint: record.keyThumbprint,
                                                          persona: record.persona, now: clock.now()) else { continue }
                logger.info("wallet instance \(issued.instance) on \(provider) is \(issued.state): it holds credential \(record.id)")
                for credential in issued.superseded {
                    logger.notice("credential \(credential.id) of \(credential.issuer) is now invalid: its holder's wallet instance \(credential.instance) on \(provider) was superseded by \(issued.instance)")
                }
            } catch {
                logger.error("cannot mark the wallet instance of credential \(record.id) valid: \(error)")
            }
        }
    }

    func credentialWithdrawn(_ record: IssuedCredentialRecord) {
        guard let provider = record.keyAttestationIssuer else { return }
        do {
            if let instance = try validity.pidWithdrawn(provider: provider, keyThumbprint: record.keyThumbprint, now: clock.now()) {
                logger.info("wallet instance \(instance) on \(provider) is operational again: credential \(record.id) withdrawn")
            }
        } catch {
            logger.error("cannot move the wallet instance of credential \(record.id) back to operational: \(error)")
        }
    }
}
