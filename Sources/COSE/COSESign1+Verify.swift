import CBOR
import Cryptography

extension COSESign1 {
    /// The signing algorithm, which must be in the protected header: left unprotected, it could
    /// be swapped without breaking the signature (ISO/IEC 18013-5 §9.1.2.4 requires it protected).
    public func algorithm() throws(COSEError) -> COSEAlgorithm {
        if protectedHeader.contains(where: { $0.key == COSEHeaderLabel.algorithm }) == false {
            if unprotectedHeader.contains(where: { $0.key == COSEHeaderLabel.algorithm }) {
                throw .malformed("alg must be in the protected header")
            }
            throw .unsupportedAlgorithm("(missing alg)")
        }
        let value = header(COSEHeaderLabel.algorithm)!
        guard let raw = value.intValue, let algorithm = COSEAlgorithm(rawValue: raw) else {
            throw .unsupportedAlgorithm("\(value)")
        }
        return algorithm
    }

    /// Verifies with a caller-supplied trusted key. Checks, in order: alg protected, known and in
    /// `allowList`; `crit` (RFC 9052 §3.1: a non-empty array of protected labels, each understood
    /// by this verifier or listed in `understoodCritical`); the payload (attached, or supplied
    /// when detached, never both); the key fits alg; the signature over Sig_structure.
    public func verify(
        key: PublicKey, allowList: Set<COSEAlgorithm>, detachedPayload: [UInt8]? = nil,
        externalAAD: [UInt8] = [], understoodCritical: Set<CBORValue> = []
    ) throws(COSEError) {
        let algorithm = try algorithm()
        guard allowList.contains(algorithm) else { throw .unsupportedAlgorithm("\(algorithm.rawValue)") }
        try checkCritical(understoodCritical)
        let content: [UInt8]
        switch (payload, detachedPayload) {
        case (let attached?, nil): content = attached
        case (nil, let detached?): content = detached
        case (nil, nil): throw .payloadMismatch("detached payload not supplied")
        case (.some, .some): throw .payloadMismatch("payload is attached; a detached one was also supplied")
        }
        guard key.fits(algorithm.signatureAlgorithm) else { throw .keyAlgorithmMismatch }
        let toBeSigned = Self.signatureStructure(protectedBytes: protectedBytes, externalAAD: externalAAD, payload: content)
        guard key.verify(signature: signature, data: toBeSigned, algorithm: algorithm.signatureAlgorithm) else {
            throw .invalidSignature
        }
    }

    /// Labels this library acts on itself, so `crit` may name them.
    static let understoodLabels: Set<CBORValue> = [
        COSEHeaderLabel.algorithm, COSEHeaderLabel.critical, COSEHeaderLabel.contentType,
        COSEHeaderLabel.keyID, COSEHeaderLabel.x5chain,
    ]

    private func checkCritical(_ understoodCritical: Set<CBORValue>) throws(COSEError) {
        if unprotectedHeader.contains(where: { $0.key == COSEHeaderLabel.critical }) {
            throw .malformed("crit must be in the protected header")
        }
        guard let crit = protectedHeader.first(where: { $0.key == COSEHeaderLabel.critical })?.value else { return }
        guard let labels = crit.arrayValue, !labels.isEmpty else { throw .malformed("crit must be a non-empty array") }
        for label in labels {
            guard Self.understoodLabels.contains(label) || understoodCritical.contains(label) else {
                throw .unsupportedCritical("\(label)")
            }
            guard protectedHeader.contains(where: { $0.key == label }) else {
                throw .malformed("crit lists \(label), which is not in the protected header")
            }
        }
    }
}
