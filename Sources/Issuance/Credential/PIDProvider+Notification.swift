import JSON
import OAuth
import Store

/// A Notification Request's `event` (OpenID4VCI 1.0 §11.1).
public enum NotificationEvent: String, Sendable, CaseIterable {
    case credentialAccepted = "credential_accepted"
    case credentialFailure = "credential_failure"
    case credentialDeleted = "credential_deleted"
}

extension PIDProvider {
    /// The Notification Endpoint (§11) for a request whose access token passed
    /// `accessGrant(for:)`. Records the event on every credential of the response that carried
    /// the `notification_id`; repeating a notification succeeds again (§11: idempotent). A
    /// `notification_id` of another persona's credentials is as unknown as a made-up one.
    ///
    /// Errors (§11.3): `invalid_notification_request` for a body that is not a JSON object, a
    /// missing or non-string `notification_id`, an `event` outside the three of §11.1, or an
    /// `event_description` with characters outside %x20-21 / %x23-5B / %x5D-7E;
    /// `invalid_notification_id` for an id this grant's persona never received.
    public func notify(grant: AccessGrant, mediaType: String?, body: [UInt8]) throws(IssuanceError) {
        func refuse(_ why: String) -> IssuanceError { IssuanceError(.invalidNotificationRequest, why) }
        guard mediaType == "application/json" else { throw refuse("Content-Type must be application/json") }
        guard let value = try? JSONValue.parse(body), let object = value.objectValue else {
            throw refuse("the body must be a JSON object")
        }
        guard let id = object["notification_id"]?.stringValue, !id.isEmpty else {
            throw refuse("notification_id must be a non-empty string")
        }
        guard let eventName = object["event"]?.stringValue, let event = NotificationEvent(rawValue: eventName) else {
            throw refuse("event must be credential_accepted, credential_failure or credential_deleted")
        }
        if let description = object["event_description"] {
            guard let text = description.stringValue,
                  text.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) && $0 != "\"" && $0 != "\\" }) else {
                throw refuse("event_description must be printable ASCII without '\"' and '\\'")
            }
        }
        let matched = try withCredentialStore { () throws(StoreError) in
            try IssuedCredentialRepository(database: database).recordNotification(
                issuer: issuer, notificationID: id, persona: grant.personaID, event: event.rawValue)
        }
        guard matched > 0 else { throw IssuanceError(.invalidNotificationID, "unknown notification_id") }
        logger.info("notification \(event.rawValue) for \(matched) credential(s)")
        if event == .credentialDeleted, credentialObserver != nil {
            let records = try withCredentialStore { () throws(StoreError) in
                try IssuedCredentialRepository(database: database).list(issuer: issuer, persona: grant.personaID)
            }
            reportWithdrawn(records.filter { $0.notificationID == id })
        }
    }
}
