import COpenSSL

/// A GeneralName (RFC 5280 §4.2.1.6) of the kinds certificate profiles here write.
public enum GeneralName: Equatable, Hashable, Sendable {
    case uri(String)
    case email(String)
    case dns(String)
}

/// The keyUsage bits (RFC 5280 §4.2.1.3), with OpenSSL's KU_* values.
public struct KeyUsage: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let digitalSignature = KeyUsage(rawValue: UInt32(KU_DIGITAL_SIGNATURE))
    public static let nonRepudiation = KeyUsage(rawValue: UInt32(KU_NON_REPUDIATION))
    public static let keyEncipherment = KeyUsage(rawValue: UInt32(KU_KEY_ENCIPHERMENT))
    public static let dataEncipherment = KeyUsage(rawValue: UInt32(KU_DATA_ENCIPHERMENT))
    public static let keyAgreement = KeyUsage(rawValue: UInt32(KU_KEY_AGREEMENT))
    public static let keyCertSign = KeyUsage(rawValue: UInt32(KU_KEY_CERT_SIGN))
    public static let cRLSign = KeyUsage(rawValue: UInt32(KU_CRL_SIGN))

    /// The names OpenSSL's X509V3 configuration syntax uses.
    var configNames: [String] {
        let all: [(KeyUsage, String)] = [
            (.digitalSignature, "digitalSignature"), (.nonRepudiation, "nonRepudiation"),
            (.keyEncipherment, "keyEncipherment"), (.dataEncipherment, "dataEncipherment"),
            (.keyAgreement, "keyAgreement"), (.keyCertSign, "keyCertSign"), (.cRLSign, "cRLSign"),
        ]
        return all.filter { contains($0.0) }.map(\.1)
    }
}

/// Extension values read back through OpenSSL's own decoders (X509_get_ext_d2i and the
/// cached extension flags), never by hand.
extension Certificate {
    /// basicConstraints cA; nil when the extension is absent.
    public var isCA: Bool? {
        guard X509_get_ext_by_NID(x509, NID_basic_constraints, -1) >= 0 else { return nil }
        return X509_get_extension_flags(x509) & UInt32(EXFLAG_CA) != 0
    }

    /// basicConstraints pathLenConstraint; nil when absent.
    public var pathLengthConstraint: Int? {
        let value = X509_get_pathlen(x509)
        return value >= 0 ? Int(value) : nil
    }

    /// nil when the certificate has no keyUsage extension.
    public var keyUsage: KeyUsage? {
        guard X509_get_extension_flags(x509) & UInt32(EXFLAG_KUSAGE) != 0 else { return nil }
        return KeyUsage(rawValue: X509_get_key_usage(x509))
    }

    /// extendedKeyUsage purposes as dotted OIDs; nil when absent.
    public var extendedKeyUsage: [String]? {
        guard let raw = X509_get_ext_d2i(x509, NID_ext_key_usage, nil, nil) else { return nil }
        let stack = OpaquePointer(raw)
        defer { EXTENDED_KEY_USAGE_free(stack) }
        return (0..<OPENSSL_sk_num(stack)).compactMap { index in
            OPENSSL_sk_value(stack, index).map { ObjectIdentifiers.dotted(OpaquePointer($0)) }
        }
    }

    public var subjectKeyIdentifier: [UInt8]? {
        X509_get0_subject_key_id(x509).map { ASN1Conversions.octets($0) }
    }

    /// The keyIdentifier of authorityKeyIdentifier; nil when absent or without one.
    public var authorityKeyIdentifier: [UInt8]? {
        X509_get0_authority_key_id(x509).map { ASN1Conversions.octets($0) }
    }

    public var issuerAlternativeNames: [GeneralName]? { generalNames(NID_issuer_alt_name) }
    public var subjectAlternativeNames: [GeneralName]? { generalNames(NID_subject_alt_name) }

    /// The full-name URIs of every distribution point; nil when the extension is absent.
    public var crlDistributionPointURIs: [String]? {
        guard let raw = X509_get_ext_d2i(x509, NID_crl_distribution_points, nil, nil) else { return nil }
        let points = OpaquePointer(raw)
        defer { CRL_DIST_POINTS_free(points) }
        var uris: [String] = []
        for index in 0..<OPENSSL_sk_num(points) {
            guard let point = OPENSSL_sk_value(points, index)?.assumingMemoryBound(to: DIST_POINT.self),
                  let name = point.pointee.distpoint, name.pointee.type == 0, // 0: fullName
                  let full = name.pointee.name.fullname
            else { continue }
            uris += GeneralNames.read(full).compactMap { if case .uri(let u) = $0 { return u } else { return nil } }
        }
        return uris
    }

    /// Dotted OIDs of the extensions marked critical.
    public var criticalExtensionOIDs: [String] {
        (0..<X509_get_ext_count(x509)).compactMap { index in
            guard let ext = X509_get_ext(x509, index), X509_EXTENSION_get_critical(ext) == 1 else { return nil }
            return ObjectIdentifiers.dotted(X509_EXTENSION_get_object(ext))
        }
    }

    /// Dotted OIDs of every extension, in certificate order.
    public var extensionOIDs: [String] {
        (0..<X509_get_ext_count(x509)).compactMap { index in
            X509_get_ext(x509, index).map { ObjectIdentifiers.dotted(X509_EXTENSION_get_object($0)) }
        }
    }

    /// The extnValue contents (the DER inside the OCTET STRING) of the extension with dotted
    /// OID `oid`, for extensions OpenSSL has no decoder for (Android's KeyDescription, Apple's
    /// App Attest nonce), which callers then read with swift-asn1; nil when absent. A
    /// certificate with the extension twice gives nil too (RFC 5280 §4.2: at most one instance).
    public func extensionValue(oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else { OpenSSLErrors.clear(); return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(x509, object, -1)
        guard index >= 0, X509_get_ext_by_OBJ(x509, object, index) < 0,
              let ext = X509_get_ext(x509, index), let data = X509_EXTENSION_get_data(ext)
        else { return nil }
        return ASN1Conversions.octets(UnsafePointer(data))
    }

    private func generalNames(_ nid: Int32) -> [GeneralName]? {
        guard let raw = X509_get_ext_d2i(x509, nid, nil, nil) else { return nil }
        let names = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(names) }
        return GeneralNames.read(names)
    }
}

enum GeneralNames {
    /// Reads a borrowed STACK_OF(GENERAL_NAME); kinds other than URI, email and DNS are skipped.
    static func read(_ names: OpaquePointer) -> [GeneralName] {
        (0..<OPENSSL_sk_num(names)).compactMap { index -> GeneralName? in
            guard let name = OPENSSL_sk_value(names, index)?.assumingMemoryBound(to: GENERAL_NAME.self) else { return nil }
            switch name.pointee.type {
            case GEN_URI: return .uri(ia5(name.pointee.d.uniformResourceIdentifier))
            case GEN_EMAIL: return .email(ia5(name.pointee.d.rfc822Name))
            case GEN_DNS: return .dns(ia5(name.pointee.d.dNSName))
            default: return nil
            }
        }
    }

    private static func ia5(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> String {
        guard let string else { return "" }
        return String(decoding: ASN1Conversions.octets(UnsafePointer(string)), as: UTF8.self)
    }
}

enum ObjectIdentifiers {
    static func dotted(_ object: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0, Int(length) < buffer.count else { return "" }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
