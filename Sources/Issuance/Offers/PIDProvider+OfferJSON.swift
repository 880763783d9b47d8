import JSON
import Support

/// The offer as JSON: the Credential Offer object (OpenID4VCI 1.0 §4.1.1), the wallet's deep
/// links (§4.1) and the admin API's 201 body.
///
/// Each body is written once, through the JSON writer, with members in sorted order (the bytes a
/// `JSONValue` would give). An admin offer is made for every issuance a tester scripts, and the
/// offer object goes into its body twice (as itself and inside the by-value link), so it is
/// written once and copied, with no dictionaries built around it.
extension PIDProvider {
    /// The Credential Offer object (OpenID4VCI 1.0 §4.1.1), as sent.
    public func credentialOfferBody(_ offer: Offer) -> [UInt8] { credentialOfferFragment(offer).text }

    private func credentialOfferFragment(_ offer: Offer) -> JSONFragment {
        var out = JSONWriter(capacity: 256 + issuer.utf8.count)
        out.openObject()
        out.member("credential_configuration_ids", strings: offer.credentialConfigurationIDs)
        out.member("credential_issuer", issuer)
        out.name("grants")
        out.openObject()
        out.name(offer.grant.grantTypeURI)
        out.openObject()
        // Sorted: issuer_state < pre-authorized_code < tx_code.
        if let state = offer.issuerState { out.member("issuer_state", state) }
        if let code = offer.preAuthorizedCode {
            out.member("pre-authorized_code", code)
            if let tx = offer.txCode {
                out.name("tx_code")
                out.openObject()
                out.member("description", Self.txCodeDescription(length: tx.count))
                out.member("input_mode", "numeric")
                out.member("length", tx.count)
                out.closeObject()
            }
        }
        out.closeObject()
        out.closeObject()
        out.closeObject()
        return JSONFragment(out)
    }

    private static func txCodeDescription(length: Int) -> String {
        "Enter the \(length)-digit transaction code shown with this offer"
    }

    /// The wallet's deep link (§4.1): by reference (`credential_offer_uri`, what the QR codes
    /// carry, short enough to scan) or by value (`credential_offer`, the JSON itself).
    public func offerURL(_ offer: Offer, byValue: Bool = false) -> String {
        byValue ? offerURL(byValue: credentialOfferBody(offer)) : offerURL(uri: urls.credentialOffer(offer.id))
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
    public func offerCreatedBody(_ offer: Offer) -> [UInt8] {
        let offerJSON = credentialOfferFragment(offer)
        let uri = urls.credentialOffer(offer.id)
        var out = JSONWriter(capacity: 3 * offerJSON.text.count + 8 * issuer.utf8.count + 512)
        out.openObject()
        // Sorted by key.
        out.member("credential_offer", offerJSON)
        out.member("credential_offer_uri", uri)
        out.member("expires_at", offer.expiresAt)
        out.member("offer_id", offer.id)
        out.member("offer_page", urls.offerPage(offer.id))
        out.member("offer_url", offerURL(uri: uri))
        out.member("offer_url_by_value", offerURL(byValue: offerJSON.text))
        out.member("qr_png", urls.offerQRPNG(offer.id))
        out.member("qr_svg", urls.offerQRSVG(offer.id))
        if let tx = offer.txCode { out.member("tx_code", tx) }
        out.closeObject()
        return out.bytes
    }
}
