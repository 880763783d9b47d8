import COSE
import Cryptography

/// Why an mdoc could not be issued or was refused by the verifier. Each case is one kind of
/// failure, so a wallet or a test can tell a tampered element from an untrusted signer.
public enum MDocError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not the CBOR structure ISO/IEC 18013-5 §8.3.2.1.2 defines; the text names the field path.
    case malformed(String)
    /// Issuance input the issuer must not sign (duplicate element, bad validity, key mismatch).
    case invalidInput(String)
    /// issuerAuth failed: algorithm not allowed, bad header, key mismatch or bad signature.
    case signature(COSEError)
    /// The document signer certificate does not chain to a trusted IACA, or the MSO was signed
    /// outside the certificate's validity.
    case untrustedDocumentSigner(String)
    case unsupportedDigestAlgorithm(String)
    /// An IssuerSignedItem whose digestID has no entry in the MSO's valueDigests.
    case missingDigest(nameSpace: String, digestID: UInt64)
    /// An IssuerSignedItem whose bytes do not hash to the MSO's value: the element, its random
    /// or its digestID was changed after signing.
    case digestMismatch(nameSpace: String, digestID: UInt64)
    case docTypeMismatch(expected: String, found: String)
    case notYetValid(validFrom: Int64)
    case expired(validUntil: Int64)

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed mdoc: \(why)"
        case .invalidInput(let why): return "cannot issue mdoc: \(why)"
        case .signature(let error): return "issuerAuth: \(error)"
        case .untrustedDocumentSigner(let why): return "untrusted document signer: \(why)"
        case .unsupportedDigestAlgorithm(let alg): return "unsupported digest algorithm \(alg)"
        case .missingDigest(let ns, let id): return "no value digest for \(ns) digestID \(id)"
        case .digestMismatch(let ns, let id): return "value digest mismatch for \(ns) digestID \(id)"
        case .docTypeMismatch(let expected, let found): return "docType \(found), expected \(expected)"
        case .notYetValid(let t): return "mdoc not valid before \(t)"
        case .expired(let t): return "mdoc expired at \(t)"
        }
    }
}
