import Foundation
import Pages
import Store
import Support

/// `<wp>/instances` (issue 20, item 8): the provider's wallet instances with their states and a
/// revoke button each, for a person testing a wallet. The offer pages' conventions: open on a
/// loopback base URL (guarded by `OpenPageAccess` against DNS rebinding and cross-site posts),
/// the admin token otherwise; a plain form post, no script (the layout's CSP allows none).
extension WalletProvider {
    static let pageLayout = PageLayout(service: "Wallet Provider")

    /// The instances page can be opened here without the admin token: the base URL is on
    /// this machine only.
    public var instancesPageIsOpen: Bool { !devEndpointNeedsAdminToken }

    /// Why the open instances page refuses this request (another host, a cross-site post), or
    /// nil; always nil off loopback, where the admin token decides instead.
    public func instancesPageRefusal(_ source: PageRequestSource) -> String? {
        guard instancesPageIsOpen else { return nil }
        return OpenPageAccess(baseURL: entityID).refusal(source, action: "revoke wallet instances")
    }

    /// The page itself; `notice` (a revocation just made) and `error` show above the table.
    public func instancesPage(notice: String? = nil, error: String? = nil) throws(WalletProviderError) -> String {
        let instanceList = try instances(account: nil)
        let accounts = try accountStates()
        let rows: [[String: Any]] = instanceList.map { instance in
            var row: [String: Any] = [
                "id": instance.id, "account": instance.account, "state": instance.state, "format": instance.format,
                "updated": Self.timestamp(instance.updatedAt),
            ]
            if let reason = instance.reason { row["reason"] = reason }
            if instance.revokedAt != nil { row["keyRevoked"] = true }
            // Issue 21: an NL account's state (active, blocked, recovering_pin, ...).
            if let account = accounts[instance.account], account.pinPublicKey != nil { row["accountState"] = account.state }
            // Revocation takes any state but the final `uninstalled`; a revoked key stays revoked.
            if instance.state != "uninstalled" && instance.revokedAt == nil { row["revocable"] = true }
            return row
        }
        var context: [String: Any] = ["action": urls.instancesPage, "needsToken": !instancesPageIsOpen, "count": rows.count]
        if !rows.isEmpty { context["instances"] = rows }
        if let notice { context["notice"] = notice }
        if let error { context["error"] = error }
        return Self.pageLayout.render(title: "Wallet instances", body: Self.instancesBody, context: context)
    }

    /// A refusal (another host, a cross-site post, a wrong or missing admin token) as a page.
    public func instancesForbiddenPage(reason: String) -> String {
        Self.pageLayout.render(title: "Forbidden", body: Self.forbiddenBody, context: ["reason": reason, "page": urls.instancesPage])
    }

    private static func timestamp(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private static let instancesBody = PageLayout.Body("""
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <p class="muted">The wallet instances registered here ({{count}}). Revoking one makes its hardware key unusable: \
        its next wallet attestation request is refused (403 invalid_request). Test instances only.</p>
        {{^instances}}<p>No wallet instance is registered yet.</p>{{/instances}}
        {{#instances}}<section class="instance" id="instance-{{id}}">
        <h2><code>{{id}}</code></h2>
        <dl>
        <dt>State</dt><dd class="state">{{state}}</dd>
        {{#keyRevoked}}<dt>Hardware key</dt><dd class="key">revoked</dd>{{/keyRevoked}}
        {{#reason}}<dt>Reason</dt><dd class="reason">{{reason}}</dd>{{/reason}}
        <dt>Account</dt><dd><code>{{account}}</code></dd>
        {{#accountState}}<dt>Account state</dt><dd class="account-state">{{accountState}}</dd>{{/accountState}}
        <dt>Format</dt><dd>{{format}}</dd>
        <dt>Changed</dt><dd>{{updated}}</dd>
        </dl>
        {{#revocable}}<form method="post" action="{{action}}">
        <input type="hidden" name="id" value="{{id}}">
        <p><input type="text" name="reason" maxlength="1000" aria-label="Reason" placeholder="Reason (optional)"></p>
        {{#needsToken}}<p><input type="password" name="admin_token" aria-label="Admin token" placeholder="Admin token" required></p>\
        {{/needsToken}}
        <button type="submit" name="revoke" value="{{id}}">Revoke</button>
        </form>{{/revocable}}
        </section>
        {{/instances}}
        """)

    private static let forbiddenBody = PageLayout.Body("""
        <p class="error" role="alert">{{reason}}</p>
        <p class="muted">Open <a href="{{page}}">{{page}}</a> on this machine, or send the admin token.</p>
        """)
}
