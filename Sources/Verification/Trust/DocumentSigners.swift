import COSE
import Cryptography
import MDoc
import Support

/// What the verifier keeps about the mdoc document signers it meets, so that an issuer's
/// documents presented again do not cost a decoding of its `x5chain` and a path validation
/// each (OpenSSL 3's `d2i_X509` and its key decoders are slow; measured: see
/// docs/performance.md, issue 22):
///
/// - `decoded`: the leaf certificate of an `x5chain`, by the SHA-256 of its DER, read before
///   any trust decision for the issuer URI it names (a pure function of the bytes);
/// - `chains`: chains that passed path validation to a set of IACA roots with the document
///   signer EKU (`ValidatedChainCache`, checked against the time on every use), which
///   `DeviceResponseVerifier` consults.
///
/// Both are bounded; nothing request-specific (the MSO, its digests, the device signature) is
/// kept: every presentation is verified in full.
final class DocumentSigners: Sendable {
    static let capacity = 256
    let chains = ValidatedChainCache(limit: capacity)
    private let decoded = Locked<[[UInt8]: Certificate]>([:])

    /// The document signer (the leaf of issuerAuth's `x5chain`, §9.1.2.4) of `issuerSigned`.
    func signer(of issuerSigned: IssuerSigned) throws -> Certificate {
        guard let der = try issuerSigned.issuerAuth.x5chain().first else { throw MDocError.malformed("issuerAuth has no x5chain") }
        let key = Digest.sha256(der)
        if let hit = decoded.read({ $0[key] }) { return hit }
        let certificate = try Certificate(der: der)
        decoded.withLock { table in
            if table[key] == nil, table.count >= Self.capacity { table.remove(at: table.startIndex) }
            table[key] = certificate
        }
        return certificate
    }
}
