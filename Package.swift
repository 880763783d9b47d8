// swift-tools-version:6.0
import PackageDescription

// Layers (see DESIGN.md): each target depends only on those above it.
let package = Package(
    name: "Trustbed",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "trustbed", targets: ["trustbed"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.3.0"),
    ],
    targets: [
        // System-library shims: a module map and a header, nothing else.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode",
                       providers: [.apt(["libqrencode-dev"]), .brew(["qrencode"])]),

        // C code over the system libraries (a .c and its include/ header; the shims above stay
        // declarations).
        .target(name: "CMicroHTTPDSupport", dependencies: ["CMicroHTTPD"]),
        // C++ over zxing-cpp and libpng behind a plain C function: reads the QR code in a PNG
        // (the verifier's `POST <rp>/verify/pixelpass` with an image body). Neither library
        // needs a module map: only the .cpp includes their headers.
        .target(name: "CQRDecode", linkerSettings: [.linkedLibrary("ZXing"), .linkedLibrary("png16")]),

        .target(name: "JSON"),
        // What every service needs: the clock, the lock, hex/base64url, query and form parsing.
        .target(name: "Support"),
        // Not "Crypto": that is swift-crypto's module name, and a user adding it would clash.
        .target(name: "Cryptography", dependencies: [
            "COpenSSL", "Support", .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
        // The server, its routing, and what every hosted service shares there (`HostedService`,
        // the admin bearer check, which compares digests with `Cryptography`'s constant-time check).
        .target(name: "HTTP", dependencies: [
            "CMicroHTTPD", "CMicroHTTPDSupport", "Cryptography", "JSON", "Support", .product(name: "Logging", package: "swift-log"),
        ]),
        // What services show people, without HTTP: the page layout and QR codes.
        .target(name: "Pages", dependencies: [
            "CQRDecode", "CQREncode", "CZlib", "Support", .product(name: "Mustache", package: "swift-mustache"),
        ]),
        .target(name: "JOSE", dependencies: ["Cryptography", "JSON", "Support"]),
        .target(name: "CBOR"),
        .target(name: "COSE", dependencies: ["CBOR", "Cryptography"]),
        // Credential formats, independent of any server.
        .target(name: "SDJWT", dependencies: ["Cryptography", "JOSE", "JSON", "Support"]),
        .target(name: "StatusList", dependencies: ["CZlib", "Cryptography", "JOSE", "JSON", "Support"]),
        .target(name: "MDoc", dependencies: ["CBOR", "COSE", "Cryptography", "Support"]),
        .target(name: "Store", dependencies: ["CSQLite", "Cryptography"]),
                // Outgoing HTTP(S) through libcurl, with limits and timeouts (the resolver, the CLI wallet).
        .target(name: "HTTPClient", dependencies: ["CCurl", "Support"]),
        // The test wallet behind `trustbed wallet receive`: an OpenID4VCI 1.0 client, no server code.
        .target(name: "Wallet", dependencies: [
            "HTTPClient", "JSON", "Support", "Cryptography", "JOSE", "SDJWT", "MDoc", "CBOR", "COSE", "StatusList",
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
        // Benchmark-only: the load client of `trustbed wallet bench` (plain HTTP/1.1 to a loopback issuer).
        .target(name: "WalletBench", dependencies: ["Wallet", "HTTPClient", "JSON", "Support"]),
        .testTarget(name: "HTTPClientTests", dependencies: ["HTTPClient"]),
        .testTarget(name: "WalletTests", dependencies: [
            "Wallet", "HTTPClient", "JSON", "Support", "Cryptography", "JOSE", "SDJWT", "MDoc", "CBOR", "COSE", "StatusList",
        ]),
        .testTarget(name: "WalletBenchTests", dependencies: ["WalletBench", "Wallet", "HTTPClient", "JOSE", "JSON", "SDJWT", "Support"]),
        .target(name: "Federation", dependencies: [
            "HTTPClient", "JSON", "HTTP", "Cryptography", "JOSE", "Store", "Support", .product(name: "Logging", package: "swift-log"),
        ]),
        // What every service's authorization server needs (DPoP, access tokens, PAR/PKCE, codes,
        // stateless nonces, replay records, client and key attestations, `OAuthError`), as value
        // types over repository protocols it declares; no HTTP, no service.
        .target(name: "OAuth", dependencies: ["Cryptography", "JOSE", "JSON", "Support", "Store"]),
        // The OpenID4VCI credential issuer (the PID Provider) on top of `OAuth`.
        .target(name: "Issuance", dependencies: [
            "CBOR", "COSE", "CZlib", "Cryptography", "HTTP", "JOSE", "JSON", "MDoc", "OAuth", "Pages", "SDJWT",
            "StatusList", "Store", "Support",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The mock Wallet Provider (issue 20): instances, device key attestations, wallet and key attestations.
        .target(name: "WalletProvider", dependencies: [
            "CBOR", "COSE", "Cryptography", "HTTP", "JOSE", "JSON", "MDoc", "OAuth", "Pages", "SDJWT", "Store", "Support",
            .product(name: "SwiftASN1", package: "swift-asn1"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "WalletProviderTests", dependencies: [
            "WalletProvider", "CBOR", "COSE", "Cryptography", "JOSE", "JSON", "MDoc", "OAuth", "SDJWT", "Store", "Support", "TestSupport",
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
        // The verifier (issue 22): OpenID4VP, SD-JWT VC and mdoc DeviceResponse verification, Apple's
        // HPKE identity envelope, PixelPass.
        .target(name: "Verification", dependencies: [
            "CBOR", "COSE", "Cryptography", "HTTP", "JOSE", "JSON", "MDoc", "OAuth", "Pages", "SDJWT",
            "StatusList", "Store", "Support",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "VerificationTests", dependencies: [
            "Verification", "CBOR", "COSE", "Cryptography", "JOSE", "JSON", "MDoc", "Pages", "SDJWT", "StatusList", "Store", "Support", "TestSupport",
        ]),
        // The federation explorer: HTML pages over the running federation (issue 19).
        .target(name: "Explorer", dependencies: [
            "Federation", "HTTP", "JOSE", "JSON", "Pages", "Cryptography", "Support",
        ]),
        .testTarget(name: "ExplorerTests", dependencies: ["Explorer", "Federation", "HTTP", "JOSE", "JSON", "Support", "Store", "Cryptography"]),
        .target(name: "Trustbed", dependencies: [
            "Explorer", "Verification", "WalletProvider", "JSON", "HTTP", "HTTPClient", "Cryptography", "JOSE", "Store", "Federation", "Issuance", "OAuth", "Support",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "trustbed", dependencies: [
            "Trustbed", "Federation", "Issuance", "JOSE", "JSON", "Store", "Support", "Cryptography", "SDJWT", "MDoc",
            "CBOR", "COSE", "StatusList", "Verification", "Wallet", "WalletBench", "WalletProvider", "Pages",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // Shared by the test targets: runs the independent Python checks.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "SupportTests", dependencies: ["Support"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "JSON", "Support"]),
        .testTarget(name: "PagesTests", dependencies: ["Pages", "CZlib", "TestSupport"]),
        .testTarget(name: "CryptographyTests", dependencies: ["Cryptography", "TestSupport"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "Cryptography", "JSON", "Support", "TestSupport"]),
        .testTarget(name: "CBORTests", dependencies: ["CBOR", "TestSupport"]),
        .testTarget(name: "COSETests", dependencies: ["COSE", "CBOR", "Cryptography"]),
        .testTarget(name: "SDJWTTests", dependencies: ["SDJWT", "JOSE", "Cryptography", "JSON", "Support", "TestSupport"]),
        .testTarget(name: "StatusListTests", dependencies: ["StatusList", "JOSE", "Cryptography", "JSON", "Support", "TestSupport"]),
        .testTarget(name: "MDocTests", dependencies: ["MDoc", "CBOR", "COSE", "Cryptography", "Support", "TestSupport"]),
        .testTarget(name: "StoreTests", dependencies: ["Store"]),
        .testTarget(name: "FederationTests", dependencies: ["Federation", "HTTP", "JOSE", "Cryptography", "JSON", "Store", "Support"]),
        .testTarget(name: "OAuthTests", dependencies: ["OAuth", "Cryptography", "JOSE", "JSON", "Store", "Support"]),
        .testTarget(name: "IssuanceTests", dependencies: [
            "Issuance", "OAuth", "HTTP", "Pages", "JOSE", "JSON", "Cryptography", "SDJWT", "MDoc", "CBOR", "COSE", "StatusList", "Store", "Support",
            "TestSupport",
        ]),
        .testTarget(name: "TrustbedTests", dependencies: ["Trustbed", "Federation", "OAuth", "JOSE", "JSON", "HTTP", "Store", "Support"]),
    ]
)
