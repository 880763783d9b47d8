/// Why a JOSE object was refused. Callers map these onto their protocol's error codes
/// (e.g. `invalid_request` vs `invalid_client`), so each case names one kind of failure.
public enum JOSEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not three parts, bad base64url, header or payload not a JSON object, bad member types.
    case malformed(String)
    /// `none`, HS*, unknown, or not in the caller's allow-list.
    case unsupportedAlgorithm(String)
    case typeMismatch(expected: String, actual: String?)
    case missingKeyID
    case unknownKeyID(String)
    /// Key type or curve does not fit `alg`, or the JWK's own `alg`/`use`/`key_ops` forbid it.
    case keyAlgorithmMismatch
    case invalidSignature
    /// A token may not supply its own trust (jwk, jku, x5u) or demand unknown extensions (crit).
    case forbiddenHeader(String)
    case invalidKey(String)

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed JOSE object: \(why)"
        case .unsupportedAlgorithm(let alg): return "unsupported or disallowed algorithm \"\(alg)\""
        case .typeMismatch(let expected, let actual):
            return "typ must be \"\(expected)\", got " + (actual.map { "\"\($0)\"" } ?? "none")
        case .missingKeyID: return "missing kid header"
        case .unknownKeyID(let kid): return "no trusted key with kid \"\(kid)\""
        case .keyAlgorithmMismatch: return "key does not fit the algorithm"
        case .invalidSignature: return "signature verification failed"
        case .forbiddenHeader(let name): return "forbidden header parameter \(name)"
        case .invalidKey(let why): return "invalid key: \(why)"
        }
    }
}
