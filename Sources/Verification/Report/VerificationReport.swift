import JSON

/// The verdict on one presentation, explained check by check: every verifier answer (the OpenID4VP
/// response endpoint, Apple's identity envelope, PixelPass) is one of these, so a relying-party team
/// sees which check failed and why instead of a bare "invalid".
public struct VerificationReport: Sendable, Equatable {
    /// One named check and its outcome, e.g. `("issuer_signature", true, "ES256 by kid ...")`.
    public struct Check: Sendable, Equatable {
        public let name: String
        public let ok: Bool
        public let detail: String

        public init(name: String, ok: Bool, detail: String) {
            self.name = name
            self.ok = ok
            self.detail = detail
        }
    }

    public private(set) var checks: [Check] = []
    /// The disclosed claims, by credential query id (DCQL) or docType, only when every check passed.
    public var claims: JSONValue = .object([:])

    public init() {}

    /// True when at least one check ran and none failed.
    public var verified: Bool { !checks.isEmpty && checks.allSatisfy(\.ok) }

    public mutating func pass(_ name: String, _ detail: String) {
        checks.append(Check(name: name, ok: true, detail: detail))
    }

    public mutating func fail(_ name: String, _ detail: String) {
        checks.append(Check(name: name, ok: false, detail: detail))
    }

    /// `{"state": "verified" | "refused", "checks": [...], "claims": {...}}`, the shape of
    /// `GET <rp>/admin/presentation-requests/<id>` once an answer arrived.
    public var json: JSONValue {
        .object([
            "state": .string(verified ? "verified" : "refused"),
            "checks": .array(checks.map {
                .object(["name": .string($0.name), "ok": .bool($0.ok), "detail": .string($0.detail)])
            }),
            "claims": verified ? claims : .object([:]),
        ])
    }
}
