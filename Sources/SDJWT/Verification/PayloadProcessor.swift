import JSON

/// A disclosure together with where its claim lands in the processed payload.
public struct DisclosedClaim: Sendable, Equatable {
    public let path: JSONPath
    public let disclosure: Disclosure
}

/// Rebuilds the processed payload from the issuer-signed payload and the disclosures
/// (RFC 9901 §7.1 steps 3–5): every `_sd` digest and `...` entry is either replaced by its
/// disclosure's claim or dropped, each digest may occur only once, and every disclosure must be
/// referenced exactly once.
struct PayloadProcessor {
    let algorithm: DigestAlgorithm
    private var byDigest: [String: Disclosure] = [:]
    private var seenDigests: Set<String> = []
    private(set) var disclosed: [DisclosedClaim] = []

    init(disclosures: [Disclosure], algorithm: DigestAlgorithm) throws(SDJWTError) {
        self.algorithm = algorithm
        for disclosure in disclosures {
            let digest = disclosure.digest(algorithm)
            // The same disclosure sent twice would otherwise be "referenced" once and pass.
            guard byDigest.updateValue(disclosure, forKey: digest) == nil else { throw .duplicateDigest(digest) }
        }
    }

    /// Processes the whole payload; `_sd_alg` is removed at the top level only (§7.1 step 6).
    mutating func processPayload(_ payload: [String: JSONValue]) throws(SDJWTError) -> [String: JSONValue] {
        var payload = payload
        payload["_sd_alg"] = nil
        guard case .object(let processed) = try process(.object(payload), path: .root) else {
            throw .malformed("payload is not an object")
        }
        if disclosed.count != byDigest.count {
            let used = Set(disclosed.map { $0.disclosure.encoded })
            let unused = byDigest.first { !used.contains($0.value.encoded) }!
            throw .unreferencedDisclosure(unused.key)
        }
        return processed
    }

    private mutating func process(_ value: JSONValue, path: JSONPath) throws(SDJWTError) -> JSONValue {
        switch value {
        case .object(let object): return .object(try processObject(object, path: path))
        case .array(let array): return .array(try processArray(array, path: path))
        default: return value
        }
    }

    private mutating func processObject(_ object: [String: JSONValue], path: JSONPath) throws(SDJWTError) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for (name, member) in object where name != "_sd" {
            out[name] = try process(member, path: path.appending(name))
        }
        guard let sd = object["_sd"] else { return out }
        guard let digests = sd.stringArray else { throw .malformed("\(path.appending("_sd")) must be an array of strings") }
        for digest in digests {
            try markSeen(digest)
            guard let disclosure = byDigest[digest] else { continue }  // a decoy, or not disclosed
            guard let name = disclosure.name else {
                throw .invalidDisclosedClaim("array element disclosure referenced from \(path.appending("_sd"))")
            }
            guard !DisclosurePlan.reservedNames.contains(name) else { throw .invalidDisclosedClaim("claim name \"\(name)\"") }
            guard out[name] == nil else { throw .invalidDisclosedClaim("\(path.appending(name)) already exists") }
            let claimPath = path.appending(name)
            disclosed.append(DisclosedClaim(path: claimPath, disclosure: disclosure))
            out[name] = try process(disclosure.value, path: claimPath)
        }
        return out
    }

    private mutating func processArray(_ array: [JSONValue], path: JSONPath) throws(SDJWTError) -> [JSONValue] {
        var out: [JSONValue] = []
        for element in array {
            // Only an object whose single member is "..." stands for an element (§4.2.4.2).
            guard let object = element.objectValue, object.count == 1, let reference = object["..."] else {
                out.append(try process(element, path: path.appending(index: out.count)))
                continue
            }
            guard let digest = reference.stringValue else { throw .malformed("\(path.appending(index: out.count)) \"...\" must be a string") }
            try markSeen(digest)
            guard let disclosure = byDigest[digest] else { continue }
            guard disclosure.name == nil else {
                throw .invalidDisclosedClaim("object member disclosure referenced as an element of \(path)")
            }
            let elementPath = path.appending(index: out.count)
            disclosed.append(DisclosedClaim(path: elementPath, disclosure: disclosure))
            out.append(try process(disclosure.value, path: elementPath))
        }
        return out
    }

    private mutating func markSeen(_ digest: String) throws(SDJWTError) {
        guard seenDigests.insert(digest).inserted else { throw .duplicateDigest(digest) }
    }
}
