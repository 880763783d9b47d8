import JSON

/// The DCQL queries `/verify/new` and `{"template": ...}` offer (issue 22, item 3), written for
/// the PIDs the demo PID Provider issues (SD-JWT VC `urn:eudi:pid:1`, NL `urn:eudi:pid:nl:1`).
public enum DCQLTemplate: String, Sendable, CaseIterable {
    case ageOver18 = "age_over_18"
    case fullPID = "full_pid"
    case nameAndBirthDate = "name_and_birth_date"
    case nlBSN = "nl_bsn"
    case recoveryCode = "recovery_code"

    public var title: String {
        switch self {
        case .ageOver18: "Age over 18"
        case .fullPID: "Full PID"
        case .nameAndBirthDate: "Name and birth date"
        case .nlBSN: "NL BSN"
        case .recoveryCode: "Recovery code"
        }
    }

    /// The query: one `pid` credential query.
    public var query: JSONValue {
        func sdJWT(_ vct: [String], _ paths: [[JSONValue]]?) -> JSONValue {
            var credential: [String: JSONValue] = [
                "id": "pid", "format": "dc+sd-jwt", "meta": ["vct_values": .array(vct.map(JSONValue.string))],
            ]
            if let paths { credential["claims"] = .array(paths.map { ["path": .array($0)] }) }
            return ["credentials": [.object(credential)]]
        }
        let pid = ["urn:eudi:pid:1", "urn:eudi:pid:nl:1"]
        switch self {
        case .ageOver18: return sdJWT(pid, [["age_equal_or_over", "18"]])
        case .fullPID: return sdJWT(pid, nil)
        case .nameAndBirthDate: return sdJWT(pid, [["given_name"], ["family_name"], ["birthdate"]])
        case .nlBSN: return sdJWT(["urn:eudi:pid:nl:1"], [["bsn"]])
        case .recoveryCode: return sdJWT(pid, [["recovery_code"]])
        }
    }
}
