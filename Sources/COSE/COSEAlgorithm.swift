import CBOR
import Cryptography

/// The COSE signature algorithms Trustbed signs and verifies with (RFC 9053 §2.1, §2.2), by
/// their registered integer values. Each maps onto the JOSE algorithm of the same name, whose
/// signature format (r||s for ECDSA, raw for EdDSA) COSE shares.
public enum COSEAlgorithm: Int64, Sendable, CaseIterable, Hashable {
    case es256 = -7
    case es384 = -35
    case es512 = -36
    case edDSA = -8

    public var signatureAlgorithm: SignatureAlgorithm {
        switch self {
        case .es256: return .ES256
        case .es384: return .ES384
        case .es512: return .ES512
        case .edDSA: return .EdDSA
        }
    }

    /// nil for algorithms COSE_Sign1 here does not support (RS256, PS256).
    public init?(_ algorithm: SignatureAlgorithm) {
        guard let a = Self.allCases.first(where: { $0.signatureAlgorithm == algorithm }) else { return nil }
        self = a
    }
}

/// Common header parameter labels (RFC 9052 §3.1) and x5chain (RFC 9360 §2).
public enum COSEHeaderLabel {
    public static let algorithm: CBORValue = 1
    public static let critical: CBORValue = 2
    public static let contentType: CBORValue = 3
    public static let keyID: CBORValue = 4
    public static let x5chain: CBORValue = 33
}
