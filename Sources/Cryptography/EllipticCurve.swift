/// The NIST prime curves JOSE uses, with the names each layer knows them by.
enum EllipticCurve: CaseIterable, Sendable {
    case p256, p384, p521

    /// JOSE / NIST name ("crv" in a JWK); OpenSSL also accepts it as a group name.
    var joseName: String {
        switch self {
        case .p256: return "P-256"
        case .p384: return "P-384"
        case .p521: return "P-521"
        }
    }

    /// The name OpenSSL reports for a key's group.
    var openSSLName: String {
        switch self {
        case .p256: return "prime256v1"
        case .p384: return "secp384r1"
        case .p521: return "secp521r1"
        }
    }

    /// Bytes per coordinate, and per half of a JWS r||s signature.
    var coordinateSize: Int {
        switch self {
        case .p256: return 32
        case .p384: return 48
        case .p521: return 66
        }
    }

    init?(joseName: String) {
        guard let c = Self.allCases.first(where: { $0.joseName == joseName }) else { return nil }
        self = c
    }

    /// OpenSSL may report either the SEC/X9.62 short name or the NIST name.
    init?(openSSLName: String) {
        guard let c = Self.allCases.first(where: { $0.openSSLName == openSSLName || $0.joseName == openSSLName })
        else { return nil }
        self = c
    }
}
