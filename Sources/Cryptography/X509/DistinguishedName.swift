import COpenSSL

/// An X.501 name with the attributes certificate profiles here use (ISO/IEC 18013-5 Annex B:
/// C, ST, O, CN; L and OU for completeness). Built in the RFC 5280 order C, ST, L, O, OU, CN.
/// Parsed names keep only these attributes; `text` shows the whole name as OpenSSL read it.
public struct DistinguishedName: Equatable, Hashable, Sendable {
    public var country: String?
    public var stateOrProvince: String?
    public var locality: String?
    public var organization: String?
    public var organizationalUnit: String?
    public var commonName: String?

    public init(
        country: String? = nil, stateOrProvince: String? = nil, locality: String? = nil,
        organization: String? = nil, organizationalUnit: String? = nil, commonName: String? = nil
    ) {
        self.country = country
        self.stateOrProvince = stateOrProvince
        self.locality = locality
        self.organization = organization
        self.organizationalUnit = organizationalUnit
        self.commonName = commonName
    }

    private var entries: [(nid: Int32, value: String?)] {
        [(NID_countryName, country), (NID_stateOrProvinceName, stateOrProvince), (NID_localityName, locality),
         (NID_organizationName, organization), (NID_organizationalUnitName, organizationalUnit),
         (NID_commonName, commonName)]
    }

    /// A new X509_NAME the caller owns. Country is an ISO 3166-1 alpha-2 code; OpenSSL's
    /// string table then encodes it as the PrintableString RFC 5280 requires, the rest UTF8String.
    func makeX509Name() throws(CertificateError) -> OpaquePointer {
        if let country, country.utf8.count != 2 || !country.utf8.allSatisfy({ (65...90).contains($0) }) {
            throw CertificateError(.invalidName, "country must be an ISO 3166-1 alpha-2 code, got \"\(country)\"")
        }
        guard let name = X509_NAME_new() else { throw CertificateError(.invalidName, "out of memory") }
        for entry in entries {
            guard let value = entry.value else { continue }
            guard !value.isEmpty, value.utf8.count <= 64 else {
                X509_NAME_free(name)
                throw CertificateError(.invalidName, "name attribute must be 1 to 64 bytes")
            }
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_NID(name, entry.nid, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
                OpenSSLErrors.clear(); X509_NAME_free(name)
                throw CertificateError(.invalidName, "OpenSSL refused \"\(value)\"")
            }
        }
        return name
    }

    /// Reads the known attributes of a borrowed X509_NAME.
    init(borrowing name: OpaquePointer) {
        func value(_ nid: Int32) -> String? {
            let index = X509_NAME_get_index_by_NID(name, nid, -1)
            guard index >= 0, let entry = X509_NAME_get_entry(name, index),
                  let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
            var utf8: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&utf8, data)
            guard length >= 0, let utf8 else { OpenSSLErrors.clear(); return nil }
            defer { CRYPTO_free(utf8, #fileID, #line) }
            return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
        }
        self.init(
            country: value(NID_countryName), stateOrProvince: value(NID_stateOrProvinceName),
            locality: value(NID_localityName), organization: value(NID_organizationName),
            organizationalUnit: value(NID_organizationalUnitName), commonName: value(NID_commonName))
    }

    /// XN_FLAG_RFC2253 without ASN1_STRFLGS_ESC_MSB, so non-ASCII stays readable UTF-8 (the
    /// composite macro itself does not import into Swift).
    private static let rfc2253UTF8 = UInt(
        ASN1_STRFLGS_ESC_2253 | ASN1_STRFLGS_ESC_CTRL | ASN1_STRFLGS_UTF8_CONVERT | ASN1_STRFLGS_DUMP_UNKNOWN
            | ASN1_STRFLGS_DUMP_DER) | UInt(XN_FLAG_SEP_COMMA_PLUS | XN_FLAG_DN_REV | XN_FLAG_DUMP_UNKNOWN_FIELDS)

    /// RFC 2253-style text of a borrowed X509_NAME ("CN=...,O=...,C=...").
    static func text(of name: OpaquePointer) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        guard X509_NAME_print_ex(bio, name, 0, rfc2253UTF8) >= 0 else { OpenSSLErrors.clear(); return "" }
        return BIOText.read(bio)
    }
}

/// The contents of a memory BIO as text.
enum BIOText {
    static func read(_ bio: OpaquePointer) -> String {
        var data: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
        guard length > 0, let data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}
