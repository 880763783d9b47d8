import Foundation
import Store

/// The open device transfer sessions on `<wp>/instances` (issue 21, item 8), each with a Cancel
/// button for a person rehearsing a support case (a transfer stuck half-way). The instances
/// page's conventions: the same form post, the same admin token off loopback.
extension WalletProvider {
    /// The rows of the page's transfer section (open sessions, oldest first; expired ones are
    /// settled first, so they no longer show).
    func transferSessionRows() throws(WalletProviderError) -> [[String: Any]] {
        try transfers.openSessions(now: clock.now()).map { session in
            var row: [String: Any] = [
                "id": session.id, "state": session.state, "destination": session.destination,
                "created": Self.transferTimestamp(session.createdAt), "expires": Self.transferTimestamp(session.expiresAt),
            ]
            if let source = session.source { row["source"] = source }
            return row
        }
    }

    /// Cancels a session as the admin: any open state; the source account is `active` again.
    public func cancelTransferAsAdmin(_ id: String) throws(WalletProviderError) -> TransferSessionRecord {
        let session = try transfers.cancelAsAdmin(id: id, now: clock.now())
        logger.notice("transfer session \(id) on \(entityID) cancelled by the admin")
        return session
    }

    static func transferTimestamp(_ seconds: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    /// Appended to the instances page's body; `transfers` holds `transferSessionRows()`.
    static let transferSessionsTemplate = """
        <h2 id="transfers">Open transfer sessions</h2>
        {{^transfers}}<p class="muted">No device transfer is in progress.</p>{{/transfers}}
        {{#transfers}}<section class="transfer" id="transfer-{{id}}">
        <h3><code>{{id}}</code></h3>
        <dl>
        <dt>State</dt><dd class="transfer-state">{{state}}</dd>
        <dt>Destination account</dt><dd><code>{{destination}}</code></dd>
        {{#source}}<dt>Source account</dt><dd><code>{{source}}</code></dd>{{/source}}
        <dt>Created</dt><dd>{{created}}</dd>
        <dt>Expires</dt><dd>{{expires}}</dd>
        </dl>
        <form method="post" action="{{action}}">
        <input type="hidden" name="cancel_transfer" value="{{id}}">
        {{#needsToken}}<p><input type="password" name="admin_token" aria-label="Admin token" placeholder="Admin token" required></p>\
        {{/needsToken}}
        <button type="submit" name="cancel" value="{{id}}">Cancel transfer</button>
        </form>
        </section>
        {{/transfers}}
        """
}
