import Foundation
import JSON
import Pages
import Support

/// What a person filled in on `/offers/new`, kept so a refused form comes back as it was sent.
public struct OfferForm: Sendable, Equatable {
    public var personaID: String?
    public var credentialConfigurationIDs: [String]
    public var grant: OfferGrant
    public var txCode: Bool

    public init(personaID: String? = nil, credentialConfigurationIDs: [String] = [], grant: OfferGrant = .preAuthorizedCode,
                txCode: Bool = false) {
        self.personaID = personaID
        self.credentialConfigurationIDs = credentialConfigurationIDs
        self.grant = grant
        self.txCode = txCode
    }
}

extension PIDProvider {
    /// Whether `/offers/new` asks for the admin token. An issuer whose public URL is a loopback
    /// address can only be reached from this machine, so the form is open (the laptop demo);
    /// any other base URL (a staging VM, a tunnel for a phone) is reachable by anyone, and
    /// creating offers there takes the admin token, as the admin API does. The request's own
    /// peer address cannot decide this: behind the TLS front end every request comes from
    /// 127.0.0.1.
    public var offerFormNeedsAdminToken: Bool { !Self.isLoopback(urlHost: urls.issuer) }

    /// The form: persona, credential configurations, grant, tx_code (and the admin token when
    /// `offerFormNeedsAdminToken`). `form` pre-selects; by default the first persona and every
    /// configuration.
    public func newOfferPage(form: OfferForm = OfferForm(), error: String? = nil) -> String {
        let chosenPersona = form.personaID ?? configuration.personas.first?.id
        let chosenConfigurations = form.credentialConfigurationIDs.isEmpty
            ? configuration.credentialConfigurations.map(\.id) : form.credentialConfigurationIDs
        let personas: [[String: Any]] = configuration.personas.map { persona in
            ["id": persona.id, "name": persona.displayName, "checked": persona.id == chosenPersona]
        }
        let configurations: [[String: Any]] = configuration.credentialConfigurations.map { c in
            ["id": c.id, "name": Self.displayName(c) ?? c.id, "format": c.format.rawValue,
             "checked": chosenConfigurations.contains(c.id)]
        }
        // A relative action: the post goes to the origin the page was loaded from (`localhost`
        // or `127.0.0.1`), so it is same-origin, as `openPageRefusal` requires.
        var context: [String: Any] = [
            "action": "new", "personas": personas, "configurations": configurations,
            "preAuthorized": form.grant == .preAuthorizedCode, "authorizationCode": form.grant == .authorizationCode,
            "txCode": form.txCode, "needsToken": offerFormNeedsAdminToken,
        ]
        if let error { context["error"] = error }
        return Self.newOfferTemplate.render(title: "New credential offer", context: context)
    }

    /// An existing offer as a person needs it to scan: the QR code (inline, so the page shows
    /// it whatever host name the browser used), the deep link, the tx_code, who and what.
    public func offerPage(_ offer: Offer) throws(IssuanceError) -> String {
        let link = offerURL(offer)
        let png: [UInt8]
        do { png = try QRCode(encoding: link).png(scale: 8) } catch { throw .serverError("the offer link does not fit in a QR code") }
        let persona = configuration.persona(id: offer.personaID)
        let context: [String: Any] = [
            "qrData": "data:image/png;base64," + Data(png).base64EncodedString(),
            "qrPNG": urls.offerQRPNG(offer.id), "qrSVG": urls.offerQRSVG(offer.id),
            "link": link, "offerURI": urls.credentialOffer(offer.id),
            "txCode": offer.txCode ?? false, "personaName": persona?.displayName ?? offer.personaID,
            "personaID": offer.personaID,
            "configurations": offer.credentialConfigurationIDs.map { id -> [String: Any] in
                let name = configuration.configuration(id: id).flatMap(Self.displayName)
                return ["id": id, "name": name ?? id, "named": name != nil]
            },
            "grant": offer.grant == .preAuthorizedCode ? "Pre-authorized code" : "Authorization code (log in as the persona)",
            "expires": Self.utc(offer.expiresAt), "newOffer": urls.newOffer,
        ]
        return Self.offerTemplate.render(title: "Credential offer", context: context)
    }

    /// A person-facing 404 for an unknown or expired offer.
    public func offerNotFoundPage() -> String {
        Self.notFoundTemplate.render(title: "Offer not found", context: ["newOffer": urls.newOffer])
    }

    /// The English (or first) `name` of a configuration's display.
    static func displayName(_ c: CredentialConfiguration) -> String? {
        guard let entries = c.display?.arrayValue else { return nil }
        let english = entries.first { $0["locale"]?.stringValue?.hasPrefix("en") == true } ?? entries.first
        return english?["name"]?.stringValue
    }

    static func utc(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// True when the URL's host is `localhost` or a name under it (RFC 6761 §6.3), an address
    /// in 127.0.0.0/8, or `[::1]`: a base URL only this machine can reach. Parsed per RFC 3986,
    /// so `http://127.evil.example` or `http://localhost.evil.example` is not loopback.
    static func isLoopback(urlHost url: String) -> Bool {
        guard let uri = try? URIReference(parsing: url), uri.userinfo == nil, let host = uri.normalizedHost else { return false }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy { $0.isASCII && $0.isNumber } && Int($0)! <= 255 }
    }

    /// The 403 of the open offer pages (see `openPageRefusal`), in the page layout.
    public func forbiddenPage(reason: String) -> String {
        Self.forbiddenTemplate.render(title: "Forbidden", context: ["reason": reason, "newOffer": urls.newOffer])
    }

    private static let newOfferTemplate = Page("""
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <p class="muted">Creates a credential offer a wallet can scan. Test personas only.</p>
        <form method="post" action="{{action}}">
        <fieldset><legend>Persona</legend>
        {{#personas}}<label><input type="radio" name="persona" value="{{id}}"{{#checked}} checked{{/checked}} required>\
        <span>{{name}} <span class="muted">({{id}})</span></span></label>
        {{/personas}}</fieldset>
        <fieldset><legend>Credentials</legend>
        {{#configurations}}<label><input type="checkbox" name="credential_configuration_id" value="{{id}}"\
        {{#checked}} checked{{/checked}}><span>{{name}} <span class="muted">({{format}})</span></span></label>
        {{/configurations}}</fieldset>
        <fieldset><legend>Grant</legend>
        <label><input type="radio" name="grant" value="pre-authorized_code"{{#preAuthorized}} checked{{/preAuthorized}}>\
        <span>Pre-authorized code (scan and receive)</span></label>
        <label><input type="radio" name="grant" value="authorization_code"{{#authorizationCode}} checked{{/authorizationCode}}>\
        <span>Authorization code (log in as the persona)</span></label>
        <label><input type="checkbox" name="tx_code" value="yes"{{#txCode}} checked{{/txCode}}>\
        <span>Require a transaction code (pre-authorized only)</span></label>
        </fieldset>
        {{#needsToken}}<fieldset><legend>Admin token</legend>
        <label for="admin_token" class="muted">This server is public: creating offers takes the admin token \
        (Keys/admin-token).</label>
        <input type="password" id="admin_token" name="admin_token" autocomplete="current-password" required>
        </fieldset>{{/needsToken}}
        <p><button type="submit">Create offer</button></p>
        </form>
        """)

    private static let offerTemplate = Page("""
        <p>Scan with a wallet, or open the link on the phone that holds the wallet.</p>
        <img class="qr" src="{{qrData}}" width="320" height="320" alt="QR code of the credential offer link">
        <p><a class="button" href="{{link}}">Open in wallet</a></p>
        {{#txCode}}<h2>Transaction code</h2><p class="code" id="tx_code">{{txCode}}</p>
        <p class="muted">The wallet asks for it after scanning.</p>{{/txCode}}
        <h2>Offer</h2>
        <dl>
        <dt>Persona</dt><dd>{{personaName}} <span class="muted">({{personaID}})</span></dd>
        <dt>Credentials</dt><dd><ul>{{#configurations}}<li>{{name}}{{#named}} <span class="muted">({{id}})</span>{{/named}}</li>{{/configurations}}</ul></dd>
        <dt>Grant</dt><dd>{{grant}}</dd>
        <dt>Expires</dt><dd>{{expires}}</dd>
        <dt>Link</dt><dd><code id="offer_url">{{link}}</code></dd>
        <dt>Offer JSON</dt><dd><a class="wrap" href="{{offerURI}}">{{offerURI}}</a></dd>
        <dt>QR code</dt><dd><a href="{{qrPNG}}">PNG</a> · <a href="{{qrSVG}}">SVG</a></dd>
        </dl>
        <p><a href="{{newOffer}}">Create another offer</a></p>
        """)

    private static let forbiddenTemplate = Page("""
        <p class="error" role="alert">{{reason}}</p>
        <p class="muted">The offer form is open without the admin token only on this machine, at the server's base URL.</p>
        <p><a class="button" href="{{newOffer}}">Open the offer form</a></p>
        """)

    private static let notFoundTemplate = Page("""
        <p>This offer does not exist or has expired.</p>
        <p><a class="button" href="{{newOffer}}">Create an offer</a></p>
        """)
}
