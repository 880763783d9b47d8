import CBOR
import COSE
import Cryptography

/// The EUDI PID in mdoc form (PID Rulebook, ARF Annex 3.1): one docType and one nameSpace of
/// the same name, holding elements such as `family_name`, `birth_date` (full-date, tag 1004) and
/// `nationality` (array of alpha-2 codes).
public enum EUDIPID {
    public static let docType = "eu.europa.ec.eudi.pid.1"
    public static let nameSpace = "eu.europa.ec.eudi.pid.1"
}

/// The key and certificates that sign MSOs: a document signer certificate (ISO/IEC 18013-5
/// Annex B.1.4) first, then any intermediates, never the IACA root, which verifiers already hold.
public struct DocumentSigner: Sendable {
    public let key: PrivateKey
    public let certificateChain: [Certificate]
    public let algorithm: COSEAlgorithm
    /// The leaf certificate's validity (Unix seconds), read once: the certificate getters parse
    /// the ASN.1 time on every call, and every mdoc needs it.
    let notBefore: Int64
    let notAfter: Int64

    public init(key: PrivateKey, certificateChain: [Certificate], algorithm: COSEAlgorithm = .es256) throws(MDocError) {
        guard let leaf = certificateChain.first else { throw .invalidInput("empty certificate chain") }
        guard let certificateKey = try? leaf.publicKey(), certificateKey == key.publicKey else {
            throw .invalidInput("key does not match the document signer certificate")
        }
        guard key.publicKey.fits(algorithm.signatureAlgorithm) else {
            throw .invalidInput("key does not fit \(algorithm)")
        }
        self.key = key
        self.certificateChain = certificateChain
        self.algorithm = algorithm
        notBefore = leaf.notBefore
        notAfter = leaf.notAfter
    }
}

extension IssuerSigned {
    /// Issues an mdoc's IssuerSigned (ISO/IEC 18013-5 §8.3.2.1.2.2, §9.1.2.4).
    ///
    /// Each element becomes an IssuerSignedItem with fresh random salt; digestIDs are a random
    /// permutation of 0..<n per nameSpace, so they reveal neither the element order nor which
    /// elements a later presentation left out (§9.1.2.5). Items keep the given order. The MSO
    /// digests each tag-24 item with SHA-256 and is signed as `#6.24(bstr .cbor MSO)` in an
    /// untagged COSE_Sign1 with `alg` protected and `x5chain` (label 33) unprotected.
    ///
    /// - Parameters:
    ///   - nameSpaces: nameSpace → (elementIdentifier, elementValue), in presentation order.
    ///     Dates must already be tagged (`.fullDate(...)` for `birth_date`, `.dateTime(...)`).
    ///   - deviceKey: the wallet's key (proof of possession) bound into `deviceKeyInfo`.
    ///   - randomLength: bytes of salt per item (at least 16).
    public static func issue(
        docType: String, nameSpaces: [String: [(identifier: String, value: CBORValue)]], deviceKey: COSEKey,
        validity: ValidityInfo, status: StatusListReference? = nil, signer: DocumentSigner, randomLength: Int = 32
    ) throws(MDocError) -> IssuerSigned {
        try issue(docType: docType,
                  elements: nameSpaces.mapValues { $0.map { IssuerSignedElement(identifier: $0.identifier, value: $0.value) } },
                  deviceKey: deviceKey, validity: validity, status: status, signer: signer, randomLength: randomLength)
    }

    /// `issue(docType:nameSpaces:...)` with the elements' values already encoded.
    public static func issue(
        docType: String, elements nameSpaces: [String: [IssuerSignedElement]], deviceKey: COSEKey,
        validity: ValidityInfo, status: StatusListReference? = nil, signer: DocumentSigner, randomLength: Int = 32
    ) throws(MDocError) -> IssuerSigned {
        guard !docType.isEmpty else { throw .invalidInput("empty docType") }
        guard randomLength >= IssuerSignedItem.minimumRandomLength else {
            throw .invalidInput("random must be at least \(IssuerSignedItem.minimumRandomLength) bytes")
        }
        guard nameSpaces.values.contains(where: { !$0.isEmpty }) else { throw .invalidInput("no data elements") }
        if let problem = validity.consistencyProblem { throw .invalidInput(problem) }
        // §9.3.3: a verifier rejects an MSO signed outside its certificate's validity.
        guard signer.notBefore <= validity.signed, validity.signed <= signer.notAfter else {
            throw .invalidInput("signed lies outside the document signer certificate's validity")
        }

        var generator = SecureRandomGenerator()
        var issued: [String: [IssuerSignedItemBytes]] = [:]
        var valueDigests: [String: [UInt64: [UInt8]]] = [:]
        // One SHA-256 context for every element's digest (see Digest.SHA256Context).
        let hasher = Digest.SHA256Context()
        for (nameSpace, elements) in nameSpaces where !elements.isEmpty {
            var seen = Set<String>()
            for element in elements where !seen.insert(element.identifier).inserted {
                throw .invalidInput("duplicate element \(element.identifier) in \(nameSpace)")
            }
            var digestIDs = Array(UInt64(0)..<UInt64(elements.count))
            digestIDs.shuffle(using: &generator)
            var items: [IssuerSignedItemBytes] = []
            var digests: [UInt64: [UInt8]] = [:]
            for (element, digestID) in zip(elements, digestIDs) {
                let item = IssuerSignedItemBytes(
                    IssuerSignedItem(digestID: digestID, random: generator.bytes(randomLength),
                                     elementIdentifier: element.identifier, elementValue: element.value),
                    encodedElementValue: element.encodedValue)
                items.append(item)
                digests[digestID] = item.digest(hasher)
            }
            issued[nameSpace] = items
            valueDigests[nameSpace] = digests
        }

        let mso = MobileSecurityObject(
            valueDigests: valueDigests, deviceKey: deviceKey, docType: docType, validityInfo: validity, status: status)
        let payload = CBORValue.embedded(mso.cborValue).encoded()
        let issuerAuth: COSESign1
        do {
            issuerAuth = try COSESign1.sign(
                payload: payload, key: signer.key, algorithm: signer.algorithm, x5chain: signer.certificateChain.map(\.der))
        } catch {
            throw .signature(error)
        }
        return IssuerSigned(nameSpaces: issued, issuerAuth: issuerAuth)
    }
}

/// Uniform random numbers from OpenSSL's CSPRNG, for the digestID permutation and the items'
/// `random` values: the system generator would do as well, but one source of randomness is
/// easier to audit. Drawn through one buffer: a RAND_bytes call per number would be the largest
/// fixed cost of an mdoc after the signature.
struct SecureRandomGenerator: RandomNumberGenerator {
    private var buffer = SecureRandom.Buffer()

    /// Eight pool bytes read in place, not an array per number: the digestID shuffle of every
    /// mdoc draws one per element.
    mutating func next() -> UInt64 {
        buffer.withNext(8) { UnsafeRawPointer($0.baseAddress!).loadUnaligned(as: UInt64.self) }
    }

    mutating func bytes(_ count: Int) -> [UInt8] { buffer.next(count) }
}
