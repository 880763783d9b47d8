import JSON

/// `services.verifier.apple` (issue 22, item 5): Apple's Verify with Wallet for this relying
/// party. `merchant_id` and `team_id` go into the SessionTranscript of every envelope; `key`
/// names a PKCS#8 PEM (relative to `Entities/`) with the merchant's P-256 encryption key, else
/// one is generated into `Keys/<name>/verifier/apple/`.
public struct AppleIdentityConfiguration: Sendable, Equatable {
    public var merchantID: String
    public var teamID: String
    public var keyFile: String?

    public init(merchantID: String, teamID: String, keyFile: String? = nil) {
        self.merchantID = merchantID
        self.teamID = teamID
        self.keyFile = keyFile
    }

    public static let knownFields: Set<String> = ["merchant_id", "team_id", "key"]

    public static func parse(_ reader: JSONReader) throws(JSONReadError) -> AppleIdentityConfiguration {
        try reader.rejectUnknown(allowed: knownFields)
        var c = AppleIdentityConfiguration(merchantID: try reader.nonEmptyString("merchant_id"),
                                           teamID: try reader.nonEmptyString("team_id"))
        if let key = try reader.optionalField("key")?.nonEmptyString() { c.keyFile = key }
        return c
    }
}
