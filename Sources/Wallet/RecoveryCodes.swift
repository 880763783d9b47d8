import JSON

/// The wallet-side check of the NL recovery flows (issue 21, PIN recovery step 3): before it asks
/// the Wallet Provider for anything, the wallet compares the recovery code the PID Provider's
/// token response previews with the one in the PID it already holds, so a person who logged in
/// as someone else learns it before their account is touched. The provider checks again, on the
/// PID itself (`disclose_recovery_code`); this check only saves a doomed round.
public enum RecoveryCodes {
    /// Every `recovery_code` string anywhere in `value` (an SD-JWT VC's claims, an mdoc's
    /// `{nameSpace: {element: value}}`, the NL wallet's `credential_payload`).
    public static func find(in value: JSONValue) -> [String] {
        switch value {
        case .object(let members):
            var out: [String] = []
            for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                if name == "recovery_code", let code = member.stringValue { out.append(code) }
                out += find(in: member)
            }
            return out
        case .array(let elements):
            return elements.flatMap { find(in: $0) }
        default:
            return []
        }
    }

    /// The distinct recovery codes of a token response's `credential_previews`, in either form:
    /// Trustbed's (`claims`, `token_claims_preview: true`) or the NL wallet's
    /// (`credential_payload`, `"nl"`). Empty when the response carries no previews.
    public static func previewed(inTokenResponse json: [String: JSONValue]) -> [String] {
        var codes: [String] = []
        for preview in json["credential_previews"]?.arrayValue ?? [] {
            for member in ["claims", "credential_payload"] {
                for code in find(in: preview[member] ?? .null) where !codes.contains(code) { codes.append(code) }
            }
        }
        return codes
    }

    /// The recovery code of the newest credential in the wallet file that carries one (the
    /// `claims` the receive flow stored with it), or nil.
    public static func stored(in wallet: TestWalletFile) -> String? {
        for entry in wallet.credentials.reversed() {
            if let code = find(in: entry["claims"] ?? .null).first { return code }
        }
        return nil
    }

    /// What the wallet concludes from the two: a line for the CLI, and whether to go on.
    public static func compare(previewed: [String], stored: String?) -> (matches: Bool, report: String) {
        guard let previewedCode = previewed.first else {
            return (false, "recovery code check: the token response carries no credential_previews (token_claims_preview is off)")
        }
        guard previewed.count == 1 else {
            return (false, "recovery code check: the previews disagree (\(previewed.count) different codes)")
        }
        guard let stored else {
            return (true, "recovery code check: no stored PID to compare with; the Wallet Provider will decide")
        }
        return previewedCode == stored
            ? (true, "recovery code check: the preview's recovery code matches the stored PID's")
            : (false, "recovery code check: MISMATCH: the preview's recovery code is not the stored PID's (another person?)")
    }
}
