import Foundation
import JSON
import Pages
import Store
import Support

/// What a person filled in on `/verify/new`, kept so a refused form comes back as it was sent.
public struct VerifyForm: Sendable, Equatable {
    /// A template's name, or `custom` for the pasted DCQL.
    public var template: String
    public var dcql: String
    public var clientIDPrefix: ClientIDPrefix?
    public var responseMode: ResponseMode?
    public var sameDevice: Bool

    public init(template: String = DCQLTemplate.ageOver18.rawValue, dcql: String = "", clientIDPrefix: ClientIDPrefix? = nil,
                responseMode: ResponseMode? = nil, sameDevice: Bool = false) {
        self.template = template
        self.dcql = dcql
        self.clientIDPrefix = clientIDPrefix
        self.responseMode = responseMode
        self.sameDevice = sameDevice
    }
}

extension Verifier {
    /// Why the open pages refuse this request (another host, a cross-site post), or nil; always
    /// nil off loopback, where the admin token decides instead.
    public func openPageRefusal(_ source: PageRequestSource) -> String? {
        guard !pagesNeedAdminToken else { return nil }
        return OpenPageAccess(baseURL: entityID).refusal(source, action: "create presentation requests")
    }

    /// The request a filled-in form asks for; the reason when it cannot be made.
    public func options(from form: VerifyForm) throws(VerificationError) -> PresentationRequestOptions {
        let query: DCQLQuery
        do {
            if let template = DCQLTemplate(rawValue: form.template) {
                query = try DCQLQuery.parse(template.query)
            } else {
                guard !form.dcql.isEmpty else { throw VerificationError.invalidRequest("paste a DCQL query or pick a template") }
                query = try DCQLQuery.parse(try JSONValue.parse(Array(form.dcql.utf8)))
            }
        } catch let error as VerificationError {
            throw error
        } catch {
            throw .invalidRequest("the DCQL query is refused: \(error)")
        }
        return PresentationRequestOptions(query: query, clientIDPrefix: form.clientIDPrefix, responseMode: form.responseMode)
    }

    /// The form: a template or pasted DCQL, the client identifier prefix, the response mode,
    /// same-device, and the admin token off this machine.
    public func newRequestPage(form: VerifyForm = VerifyForm(), error: String? = nil) -> String {
        let templates: [[String: Any]] = DCQLTemplate.allCases.map {
            ["id": $0.rawValue, "name": $0.title, "checked": form.template == $0.rawValue]
        }
        let prefix = form.clientIDPrefix ?? configuration.clientIDPrefix
        let mode = form.responseMode ?? configuration.responseMode
        var context: [String: Any] = [
            "action": "new", "templates": templates, "custom": DCQLTemplate(rawValue: form.template) == nil, "dcql": form.dcql,
            "prefixes": ClientIDPrefix.allCases.map { ["id": $0.rawValue, "checked": $0 == prefix] as [String: Any] },
            "modes": ResponseMode.allCases.map { ["id": $0.rawValue, "checked": $0 == mode] as [String: Any] },
            "sameDevice": form.sameDevice, "needsToken": pagesNeedAdminToken,
        ]
        if let error { context["error"] = error }
        return Self.newTemplate.render(title: "New presentation request", context: context)
    }

    /// A request as a person follows it: while pending, the QR code and the link, refreshed
    /// every few seconds (by the `Refresh` header the route adds and a meta refresh, no
    /// JavaScript); once answered, the verdict check by check and the disclosed claims.
    public func resultPage(_ record: PresentationRequestRecord) throws(VerificationError) -> String {
        let result = requestResult(record)
        let state = result["state"]?.stringValue ?? "pending"
        var context: [String: Any] = ["state": state, "newRequest": urls.newPage, "clientID": record.clientID,
                                      "responseMode": record.responseMode, "id": record.id]
        if state == "pending" {
            let link = requestLink(record)
            let png: [UInt8]
            do { png = try QRCode(encoding: link).png(scale: 8) } catch { throw .init(.serverError, "the request link does not fit in a QR code") }
            context["pending"] = true
            context["link"] = link
            context["qrData"] = "data:image/png;base64," + Data(png).base64EncodedString()
            context["expires"] = Self.utc(record.expiresAt)
        } else {
            context["verified"] = state == "verified"
            context["checks"] = (result["checks"]?.arrayValue ?? []).map { check -> [String: Any] in
                ["name": check["name"]?.stringValue ?? "", "ok": check["ok"] == .bool(true), "detail": check["detail"]?.stringValue ?? ""]
            }
            context["claims"] = (result["claims"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { id, value -> [String: Any] in
                ["id": id, "json": value.serialized(pretty: true)]
            }
        }
        return Self.resultTemplate.render(title: state == "pending" ? "Waiting for the wallet" : "Presentation \(state)", context: context)
    }

    public func notFoundPage() -> String {
        Self.notFoundTemplate.render(title: "Request not found", context: ["newRequest": urls.newPage])
    }

    public func forbiddenPage(reason: String) -> String {
        Self.forbiddenTemplate.render(title: "Forbidden", context: ["reason": reason, "newRequest": urls.newPage])
    }

    static func utc(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private static let layout = PageLayout(service: "Verifier")

    private static let newTemplate = VerifierPage(layout, """
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <p class="muted">Asks a wallet for a presentation (OpenID4VP). Test data only.</p>
        <form method="post" action="{{action}}">
        <fieldset><legend>What to ask for</legend>
        {{#templates}}<label><input type="radio" name="template" value="{{id}}"{{#checked}} checked{{/checked}}>\
        <span>{{name}} <span class="muted">({{id}})</span></span></label>
        {{/templates}}<label><input type="radio" name="template" value="custom"{{#custom}} checked{{/custom}}>\
        <span>My own DCQL query</span></label>
        <textarea id="dcql" name="dcql" rows="6" style="width:100%;font:inherit" \
        placeholder='{"credentials": [{"id": "pid", "format": "dc+sd-jwt", "meta": {"vct_values": ["urn:eudi:pid:1"]}}]}'>{{dcql}}</textarea>
        </fieldset>
        <fieldset><legend>Client identifier</legend>
        {{#prefixes}}<label><input type="radio" name="client_id_prefix" value="{{id}}"{{#checked}} checked{{/checked}}><span>{{id}}</span></label>
        {{/prefixes}}</fieldset>
        <fieldset><legend>Response mode</legend>
        {{#modes}}<label><input type="radio" name="response_mode" value="{{id}}"{{#checked}} checked{{/checked}}><span>{{id}}</span></label>
        {{/modes}}<label><input type="checkbox" name="same_device" value="yes"{{#sameDevice}} checked{{/sameDevice}}>\
        <span>Same device: the wallet sends me back to the result page</span></label>
        </fieldset>
        {{#needsToken}}<fieldset><legend>Admin token</legend>
        <label for="admin_token" class="muted">This server is public: creating requests takes the admin token (Keys/admin-token).</label>
        <input type="password" id="admin_token" name="admin_token" autocomplete="current-password" required>
        </fieldset>{{/needsToken}}
        <p><button type="submit">Create request</button></p>
        </form>
        """)

    private static let resultTemplate = VerifierPage(layout, """
        {{#pending}}<meta http-equiv="refresh" content="3">
        <p id="state" data-state="pending">Scan with a wallet, or open the link on the phone that holds the wallet. \
        This page refreshes until the answer arrives.</p>
        <img class="qr" id="qr" src="{{qrData}}" width="320" height="320" alt="QR code of the presentation request link">
        <p><a class="button" id="open_wallet" href="{{link}}">Open in wallet</a></p>
        <dl><dt>Link</dt><dd><code id="request_link">{{link}}</code></dd>
        <dt>Client id</dt><dd><code>{{clientID}}</code></dd><dt>Response mode</dt><dd>{{responseMode}}</dd>
        <dt>Expires</dt><dd>{{expires}}</dd></dl>{{/pending}}
        {{^pending}}<p id="state" data-state="{{state}}" class="{{^verified}}error{{/verified}}">\
        {{#verified}}Verified: every check passed.{{/verified}}{{^verified}}Refused: see the failed check below.{{/verified}}</p>
        <h2>Checks</h2>
        <ul id="checks">{{#checks}}<li class="check" data-ok="{{ok}}">{{#ok}}✓{{/ok}}{{^ok}}✗{{/ok}} <strong>{{name}}</strong>: {{detail}}</li>{{/checks}}</ul>
        {{#verified}}<h2>Disclosed claims</h2>
        {{#claims}}<h3>{{id}}</h3><pre class="wrap" id="claims-{{id}}">{{json}}</pre>{{/claims}}{{/verified}}{{/pending}}
        <p><a href="{{newRequest}}">Create another request</a></p>
        """)

    private static let forbiddenTemplate = VerifierPage(layout, """
        <p class="error" role="alert">{{reason}}</p>
        <p class="muted">The request form is open without the admin token only on this machine, at the server's base URL.</p>
        <p><a class="button" href="{{newRequest}}">Open the request form</a></p>
        """)

    private static let notFoundTemplate = VerifierPage(layout, """
        <p>This presentation request does not exist, or it expired more than a day ago.</p>
        <p><a class="button" href="{{newRequest}}">Create a request</a></p>
        """)
}

/// A verifier page: a body template in the shared layout, signed "Trustbed test Verifier".
struct VerifierPage: Sendable {
    let layout: PageLayout
    private let body: PageLayout.Body

    init(_ layout: PageLayout, _ template: String) {
        self.layout = layout
        body = PageLayout.Body(template)
    }

    func render(title: String, context: [String: Any]) -> String {
        layout.render(title: title, body: body, context: context)
    }
}
