import Cryptography
import Foundation
import JOSE
import JSON
@testable import WalletProvider

/// The fixtures Tests/Fixtures/device-attestation/make_fixtures.py wrote (Python cryptography,
/// asn1crypto and cbor2, under test roots), read for the DeviceAttestation*Tests.
struct DeviceAttestationFixture: Decodable {
    let source: String
    let check_time: Int64
    let hardware_jwk: [String: String]
    let other_jwk: [String: String]?
    let root_pem: String
    let other_root_pem: String
    let challenge_hex: String?
    let client_data_hash_hex: String?
    let app_id: String?
    let key_id: String?
    let android: [String: [String]]?
    let apple: [String: String]?

    enum CodingKeys: String, CodingKey {
        case source, check_time, hardware_jwk, other_jwk, root_pem, other_root_pem, challenge_hex,
             client_data_hash_hex, app_id, key_id, cases
    }

    init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        source = try c.decode(String.self, forKey: .source)
        check_time = try c.decode(Int64.self, forKey: .check_time)
        hardware_jwk = try c.decode([String: String].self, forKey: .hardware_jwk)
        other_jwk = try c.decodeIfPresent([String: String].self, forKey: .other_jwk)
        root_pem = try c.decode(String.self, forKey: .root_pem)
        other_root_pem = try c.decode(String.self, forKey: .other_root_pem)
        challenge_hex = try c.decodeIfPresent(String.self, forKey: .challenge_hex)
        client_data_hash_hex = try c.decodeIfPresent(String.self, forKey: .client_data_hash_hex)
        app_id = try c.decodeIfPresent(String.self, forKey: .app_id)
        key_id = try c.decodeIfPresent(String.self, forKey: .key_id)
        android = try? c.decode([String: [String]].self, forKey: .cases)
        apple = android == nil ? try c.decode([String: String].self, forKey: .cases) : nil
    }

    static func load(_ name: String) throws -> DeviceAttestationFixture {
        let url = directory.appendingPathComponent(name)
        return try JSONDecoder().decode(DeviceAttestationFixture.self, from: Data(contentsOf: url))
    }

    static var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/device-attestation")
    }

    static func jwk(_ members: [String: String]) throws -> JWK {
        try JWK(json: members.mapValues { JSONValue.string($0) })
    }

    static func bytes(hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index ..< next], radix: 16)!)
            index = next
        }
        return out
    }
}
