import JSON
import Store
import Support

extension PIDProvider {
    /// Wrong tx_codes a pre-authorized code survives; the next attempt finds it dead, so a
    /// 6-digit code gives an attacker 5 guesses in a million.
    public static let maxTxCodeFailures: Int64 = 5
    /// Digits of a generated tx_code (`tx_code.length` in the offer, §4.1.1).
    public static let txCodeLength = 6

    /// Creates and stores an offer. Unknown persona or configuration ids, an empty or repeated
    /// id list, or a tx_code on an authorization-code offer (§4.1.1 defines `tx_code` only for
    /// the pre-authorized grant) are `invalid_request`.
    public func createOffer(personaID: String, credentialConfigurationIDs: [String], grant: OfferGrant,
                            txCode: Bool) throws(IssuanceError) -> Offer {
        guard configuration.persona(id: personaID) != nil else { throw .invalidRequest("unknown persona \(personaID)") }
        guard !credentialConfigurationIDs.isEmpty else { throw .invalidRequest("credential_configuration_ids is empty") }
        guard Set(credentialConfigurationIDs).count == credentialConfigurationIDs.count else {
            throw .invalidRequest("credential_configuration_ids repeats an id")
        }
        for id in credentialConfigurationIDs where configuration.configuration(id: id) == nil {
            throw .invalidRequest("unknown credential configuration \(id)")
        }
        if txCode && grant != .preAuthorizedCode { throw .invalidRequest("tx_code applies to the pre-authorized_code grant only") }
        let now = clock.now()
        let offer = Offer(
            id: Self.orderedToken(bytes: 16), personaID: personaID, credentialConfigurationIDs: credentialConfigurationIDs,
            grant: grant, preAuthorizedCode: grant == .preAuthorizedCode ? Self.orderedToken() : nil,
            txCode: txCode ? String(decoding: Offer.randomTxCode(length: Self.txCodeLength), as: UTF8.self) : nil,
            issuerState: grant == .authorizationCode ? Self.orderedToken() : nil,
            createdAt: now, expiresAt: now + configuration.offerLifetime)
        try withOfferStore { () throws(StoreError) in
            try offerRepository.insert(OfferRecord(
                id: offer.id, issuer: issuer, persona: offer.personaID, configurationIDs: offer.credentialConfigurationIDs,
                grantType: offer.grant.rawValue, preAuthorizedCode: offer.preAuthorizedCode, txCode: offer.txCode,
                issuerState: offer.issuerState, createdAt: offer.createdAt, expiresAt: offer.expiresAt))
        }
        return offer
    }

    /// `createOffer` with the request's defaults filled in (every configuration when none named).
    public func createOffer(_ request: OfferRequest) throws(IssuanceError) -> Offer {
        try createOffer(personaID: request.personaID,
                        credentialConfigurationIDs: request.credentialConfigurationIDs ?? configuration.credentialConfigurations.map(\.id),
                        grant: request.grant, txCode: request.txCode)
    }

    /// The offer with this id; nil when unknown or expired.
    public func offer(id: String) throws(IssuanceError) -> Offer? {
        try withOfferStore { () throws(StoreError) in try offerRepository.find(issuer: issuer, id: id, now: clock.now()).map(Offer.init(record:)) }
    }

    /// The authorization-code offer that handed out `issuerState` (for `/authorize`); nil when
    /// unknown or expired. It stays valid until the offer expires: a wallet may retry a login.
    public func offer(issuerState: String) throws(IssuanceError) -> Offer? {
        try withOfferStore { () throws(StoreError) in try offerRepository.find(issuer: issuer, issuerState: issuerState, now: clock.now()).map(Offer.init(record:)) }
    }

    /// The token endpoint's pre-authorized code grant (OpenID4VCI §6.1, errors §6.3): the code
    /// must be known, unexpired, unredeemed and alive; a tx_code is required exactly when the
    /// offer carries one. Each wrong tx_code counts; after `maxTxCodeFailures` the code is dead.
    /// Of N concurrent redemptions exactly one wins.
    public func redeemPreAuthorizedCode(_ code: String, txCode: String?) throws(IssuanceError) -> Offer {
        try redeemPreAuthorizedCode(code, txCode: txCode) { _, _ throws(StoreError) in () }.offer
    }

    /// `redeemPreAuthorizedCode`, with `then` run in the same database transaction right after
    /// a successful redemption (the token endpoint stores its access token there). `then`
    /// reports a refusal through its value, never by throwing: a throw rolls the redemption back
    /// too, which only a storage failure may do. A refused attempt (a wrong tx_code counted) is
    /// committed before its error is thrown.
    func redeemPreAuthorizedCode<T>(_ code: String, txCode: String?,
                                    then: (Offer, Database) throws(StoreError) -> T) throws(IssuanceError) -> (offer: Offer, value: T) {
        let outcome: (PreAuthorizedRedemption, T?)
        do throws(StoreError) {
            outcome = try offerRepository.redeem(
                issuer: issuer, preAuthorizedCode: code, txCode: txCode, now: clock.now(), maxFailures: Self.maxTxCodeFailures
            ) { record, db throws(StoreError) in try then(Offer(record: record), db) }
        } catch {
            logger.error("offer store failure: \(error)")
            throw .serverError("the offer store failed")
        }
        switch outcome {
        case (.redeemed(let record), .some(let value)): return (Offer(record: record), value)
        case (.redeemed, nil): throw .serverError("the offer store failed")
        case (.unknown, _): throw .invalidGrant("unknown pre-authorized code")
        case (.expired, _): throw .invalidGrant("the pre-authorized code has expired")
        case (.alreadyRedeemed, _): throw .invalidGrant("the pre-authorized code was already used")
        case (.exhausted, _): throw .invalidGrant("too many wrong tx_code attempts: the pre-authorized code is no longer valid")
        case (.txCodeMissing, _): throw .invalidRequest("this pre-authorized code requires a tx_code")
        case (.txCodeUnexpected, _): throw .invalidRequest("this pre-authorized code takes no tx_code")
        case (.txCodeWrong(let remaining), _): throw .invalidGrant("wrong tx_code (\(remaining) attempts left)")
        }
    }

    fileprivate var offerRepository: OfferRepository { OfferRepository(database: database) }

    /// Runs a store call; a storage failure is ours (500), logged, without the SQL detail.
    fileprivate func withOfferStore<T>(_ body: () throws(StoreError) -> T) throws(IssuanceError) -> T {
        do throws(StoreError) {
            return try body()
        } catch {
            logger.error("offer store failure: \(error)")
            throw .serverError("the offer store failed")
        }
    }
}
