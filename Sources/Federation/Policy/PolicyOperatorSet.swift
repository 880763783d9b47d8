import JSON

/// The standard operators of one metadata parameter policy (the third level of the structure
/// in section 6.1.2), with each operand's JSON type checked once at parse time so merging and
/// application can rely on it.
struct PolicyOperatorSet: Equatable, Sendable {
    /// `.null` is meaningful: it removes the parameter.
    var value: JSONValue?
    var add: [JSONValue]?
    var defaultValue: JSONValue?
    var oneOf: [JSONValue]?
    var subsetOf: [JSONValue]?
    var supersetOf: [JSONValue]?
    var essential: Bool?

    init() {}

    /// Additional operators named in `critical` are errors, since this engine understands only
    /// the standard ones; other additional operators are ignored (section 6.1.3.2).
    init(parameter: String, operators: [String: JSONValue], critical: Set<String>) throws(MetadataPolicyError) {
        for (name, operand) in operators.sorted(by: { $0.key < $1.key }) {
            guard let op = PolicyOperator(rawValue: name) else {
                if critical.contains(name) {
                    throw .invalidPolicy("\(parameter): critical policy operator \(name) is not supported")
                }
                continue
            }
            try set(op, operand, parameter: parameter)
        }
        // `scope` is a space-separated string that operators treat as an array (section 6.1.3.1.8).
        if parameter == MetadataPolicyScope.parameter {
            value = value.map(MetadataPolicyScope.split)
            defaultValue = defaultValue.map(MetadataPolicyScope.split)
        }
    }

    private mutating func set(_ op: PolicyOperator, _ operand: JSONValue, parameter: String) throws(MetadataPolicyError) {
        switch op {
        case .value:
            value = operand
        case .default:
            guard !operand.isNull else { throw .invalidPolicy("\(parameter): default must not be null") }
            defaultValue = operand
        case .add:
            add = try Self.array(operand, op, parameter)
        case .oneOf:
            let values = try Self.array(operand, op, parameter)
            // An empty one_of admits no value at all; merging already treats an empty
            // intersection as a conflict, so an empty operand is one too.
            guard !values.isEmpty else { throw .invalidPolicy("\(parameter): one_of must not be empty") }
            oneOf = values
        case .subsetOf:
            subsetOf = try Self.array(operand, op, parameter)
        case .supersetOf:
            supersetOf = try Self.array(operand, op, parameter)
        case .essential:
            guard let b = operand.boolValue else {
                throw .invalidPolicy("\(parameter): essential must be a boolean, not \(operand.typeName)")
            }
            essential = b
        }
    }

    /// Array operands hold strings (numbers and objects are allowed too); `null` or nested
    /// arrays have no set meaning.
    private static func array(_ operand: JSONValue, _ op: PolicyOperator, _ parameter: String) throws(MetadataPolicyError) -> [JSONValue] {
        guard let values = operand.arrayValue else {
            throw .invalidPolicy("\(parameter): \(op.rawValue) must be an array, not \(operand.typeName)")
        }
        for v in values {
            switch v {
            case .null, .array:
                throw .invalidPolicy("\(parameter): \(op.rawValue) must not contain \(v.typeName) values")
            default: continue
            }
        }
        return values
    }

    /// Back to the wire form, operator name → operand.
    var jsonObject: [String: JSONValue] {
        var o: [String: JSONValue] = [:]
        if let value { o[PolicyOperator.value.rawValue] = value }
        if let add { o[PolicyOperator.add.rawValue] = .array(add) }
        if let defaultValue { o[PolicyOperator.default.rawValue] = defaultValue }
        if let oneOf { o[PolicyOperator.oneOf.rawValue] = .array(oneOf) }
        if let subsetOf { o[PolicyOperator.subsetOf.rawValue] = .array(subsetOf) }
        if let supersetOf { o[PolicyOperator.supersetOf.rawValue] = .array(supersetOf) }
        if let essential { o[PolicyOperator.essential.rawValue] = .bool(essential) }
        return o
    }
}
