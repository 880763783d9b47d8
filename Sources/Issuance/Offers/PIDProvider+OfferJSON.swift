import JSON
import Support

/// The offer as JSON: the Credential Offer object (OpenID4VCI 1.0 §4.1.1), the wallet's deep
/// links (§4.1) and the admin API's 201 body.
///
/// Each exists twice: as a `JSONValue` (what tests and the pages read) and as bytes written
/// member by member in the serializer's order (sorted keys, `JSONValue.encodeString` for every
/// string), which the admin API sends. Building the dictionaries, serializing the offer twice
/// (once inside the by-value link) and then the whole body cost 99,000 instructions per admin
/// offer, half of the request (callgrind, issuance-callgrind.sh); the bytes cost 43,000. A test
/// holds the two forms byte-identical for every kind of offer.
extension PIDProvider {
    /// The Credential Offer object (OpenID4VCI 1.0 §4.1.1).
    public func credentialOfferJSON(_ offer: Offer) -> JSONValue {
        var grant: [String: JSONValue] = [:]
        if let code = offer.preAuthorizedCode {
            grant["pre-authorized_code"] = .string(code)
            if let tx = offer.txCode {
                grant["tx_code"] = [
                    "length": JSONValue(tx.count), "input_mode": "numeric",
                    "description": .string(Self.txCodeDescription(length: tx.count)),
                ]
            }
        }
        if let state = offer.issuerState { grant["issuer_state"] = .string(state) }
        return [
            "credential_issuer": .string(issuer),
            "credential_configuration_ids": JSONValue(offer.credentialConfigurationIDs),
            "grants": .object([offer.grant.grantTypeURI: .object(grant)]),
        ]
    }

    /// `credentialOfferJSON(offer).bytes`, written directly.
    public func credentialOfferBytes(_ offer: Offer) -> [UInt8] {
        var out = JSONBytes(capacity: 256 + issuer.utf8.count)
        out.open()
        out.member("credential_configuration_ids")
        out.stringArray(offer.credentialConfigurationIDs)
        out.member("credential_issuer", issuer)
        out.member("grants")
        out.open()
        out.member(offer.grant.grantTypeURI)
        out.open()
        // Sorted: issuer_state < pre-authorized_code < tx_code.
        if let state = offer.issuerState { out.member("issuer_state", state) }
        if let code = offer.preAuthorizedCode {
            out.member("pre-authorized_code", code)
            if let tx = offer.txCode {
                out.member("tx_code")
                out.open()
                out.member("description", Self.txCodeDescription(length: tx.count))
                out.member("input_mode", "numeric")
                out.member("length", Int64(tx.count))
                out.close()
            }
        }
        out.close()
        out.close()
        out.close()
        return out.bytes
    }

    private static func txCodeDescription(length: Int) -> String {
        "Enter the \(length)-digit transaction code shown with this offer"
    }

    /// The wallet's deep link (§4.1): by reference (`credential_offer_uri`, what the QR codes
    /// carry, short enough to scan) or by value (`credential_offer`, the JSON itself).
    public func offerURL(_ offer: Offer, byValue: Bool = false) -> String {
        byValue ? offerURL(byValue: credentialOfferBytes(offer)) : offerURL(uri: urls.credentialOffer(offer.id))
    }

    /// The link to `uri`: what `appendingQuery` makes of the scheme-only target (no query yet,
    /// so `?`; the parameter name needs no escape), without its searches.
    private func offerURL(uri: String) -> String {
        var out = Array(Self.byReferencePrefix.utf8)
        URLEncoding.encode(uri, appendingTo: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The link carrying `offerJSON` (the offer's serialized bytes).
    private func offerURL(byValue offerJSON: [UInt8]) -> String {
        var out = Array(Self.byValuePrefix.utf8)
        out.reserveCapacity(out.count + offerJSON.count * 2)
        URLEncoding.encode(String(decoding: offerJSON, as: UTF8.self), appendingTo: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let byReferencePrefix = "openid-credential-offer://?credential_offer_uri="
    private static let byValuePrefix = "openid-credential-offer://?credential_offer="

    /// The admin API's 201 body: the offer, its URLs and, when it has one, the tx_code (the
    /// tester must pass it to the wallet out of band, §4.1.1).
    public func offerCreatedJSON(_ offer: Offer) -> JSONValue {
        var body: [String: JSONValue] = [
            "offer_id": .string(offer.id),
            "credential_offer": credentialOfferJSON(offer),
            "credential_offer_uri": .string(urls.credentialOffer(offer.id)),
            "offer_url": .string(offerURL(offer)),
            "offer_url_by_value": .string(offerURL(offer, byValue: true)),
            "qr_png": .string(urls.offerQRPNG(offer.id)),
            "qr_svg": .string(urls.offerQRSVG(offer.id)),
            "offer_page": .string(urls.offerPage(offer.id)),
            "expires_at": .int(offer.expiresAt),
        ]
        if let tx = offer.txCode { body["tx_code"] = .string(tx) }
        return .object(body)
    }

    /// `offerCreatedJSON(offer).bytes`, written directly (the offer object made once for both
    /// its places).
    public func offerCreatedBytes(_ offer: Offer) -> [UInt8] {
        let offerJSON = credentialOfferBytes(offer)
        let uri = urls.credentialOffer(offer.id)
        var out = JSONBytes(capacity: 3 * offerJSON.count + 8 * issuer.utf8.count + 512)
        out.open()
        // Sorted by key, as the serializer writes them.
        out.member("credential_offer")
        out.raw(offerJSON)
        out.member("credential_offer_uri", uri)
        out.member("expires_at", offer.expiresAt)
        out.member("offer_id", offer.id)
        out.member("offer_page", urls.offerPage(offer.id))
        out.member("offer_url", offerURL(uri: uri))
        out.member("offer_url_by_value", offerURL(byValue: offerJSON))
        out.member("qr_png", urls.offerQRPNG(offer.id))
        out.member("qr_svg", urls.offerQRSVG(offer.id))
        if let tx = offer.txCode { out.member("tx_code", tx) }
        out.close()
        return out.bytes
    }
}
