import CBOR
import JSON
import MDoc
import Support

extension VerificationReport {
    /// Copies an mdoc verification's checks one for one, and, when all passed, the disclosed
    /// elements as `claims[docType][nameSpace][element]`.
    public mutating func add(_ result: DeviceResponseVerification) {
        for check in result.checks {
            if check.ok { pass(check.name, check.detail) } else { fail(check.name, check.detail) }
        }
        guard result.verified else { return }
        var byDocType = claims.objectValue ?? [:]
        for document in result.documents {
            byDocType[document.docType] = .object(document.elements.mapValues { .object($0.mapValues(Self.json)) })
        }
        claims = .object(byDocType)
    }

    /// An element value as JSON: full-date (tag 1004) and tdate (tag 0) as their text, byte
    /// strings (a portrait) as base64url, other tags by their content.
    static func json(_ value: CBORValue) -> JSONValue {
        switch value {
        case .unsigned, .negative: return value.intValue.map(JSONValue.int) ?? .string(value.description)
        case .bytes(let bytes): return .string(Base64URL.encode(bytes))
        case .text(let text): return .string(text)
        case .array(let items): return .array(items.map(json))
        case .map(let entries):
            var object: [String: JSONValue] = [:]
            for entry in entries { object[entry.key.textValue ?? entry.key.description] = json(entry.value) }
            return .object(object)
        case .tagged(_, let inner): return json(inner)
        case .bool(let flag): return .bool(flag)
        case .float(let number): return .double(number)
        case .null, .undefined, .simple: return .null
        }
    }
}
