extension JSONValue {
    /// Compact serialization with sorted object keys and no escaped slashes, so URLs in
    /// statements read as they are and two runs sign identical bytes.
    public func serialized(pretty: Bool = false) -> String {
        var out = ""
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    public var bytes: [UInt8] { Array(serialized().utf8) }

    private func write(to out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.rounded() == d, abs(d) < 1e15 { out += String(Int64(d)) } else { out += "\(d)" }
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let a):
            if a.isEmpty { out += "[]"; return }
            out += "["
            for (n, v) in a.enumerated() {
                if n > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                v.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case .object(let o):
            if o.isEmpty { out += "{}"; return }
            out += "{"
            for (n, key) in o.keys.sorted().enumerated() {
                if n > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                Self.writeString(key, to: &out)
                out += pretty ? ": " : ":"
                o[key]!.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }
}

extension JSONValue: CustomStringConvertible {
    public var description: String { serialized() }
}
