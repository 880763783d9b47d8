import Cryptography
import Foundation
import JSON

/// What `trustbed wallet receive` was asked to do (the command parses its arguments into this).
public struct ReceiveOptions {
    /// The credential offer: an `openid-credential-offer://` URL, a `credential_offer_uri` or the JSON.
    public var offer: String
    public var txCode: String?
    /// Use DPoP-bound tokens (RFC 9449); without it DPoP is still used when the server insists.
    public var dpop = false
    /// dc+sd-jwt, mso_mdoc or credential_configuration_ids; empty: every offered configuration.
    public var format: [String] = []
    /// Credentials per configuration, one proof key each.
    public var batch = 1
    /// pre-authorized_code or authorization_code; nil: what the offer grants, pre-authorized first.
    public var grant: String?
    public var loginHint: String?
    public var clientID: String?
    public var redirectURI = "http://127.0.0.1/trustbed-wallet/callback"
    /// IACA certificates to trust: a PEM file or an http(s) URL.
    public var trust: String?
    public var checkStatus = true
    public var verbose = false
    /// The test wallet file: its wallet attestation authenticates the client at PAR and the
    /// token endpoint (`client_id` = the attestation's `sub`); received credentials are stored in it.
    public var walletPath: String?
    public var clientAttestation = false
    /// `--save FILE`: store the received credentials with their holder keys in this test wallet
    /// file (created when absent), so `wallet present` can use them without a Wallet Provider.
    public var savePath: String?
    /// Ask the wallet file's Wallet Provider for a key attestation of the proof keys.
    public var keyAttestation = false
    /// Asks the person for a line (the tx_code, the redirect URL after a browser login); nil
    /// when none comes.
    public var ask: (String) -> String? = { _ in nil }
    /// Progress, prompts and warnings (stderr in the CLI).
    public var log: (String) -> Void = { _ in }

    public init(offer: String) { self.offer = offer }
}

/// What a receive run produced: the text the CLI prints, or the same as one JSON document.
public struct ReceiveResult {
    public let text: String
    public let json: JSONValue
}

/// Runs a credential offer end to end (OpenID4VCI 1.0): discovery, the grant, nonce, credential
/// request, deferred polling, notification, verification and the status list. Throws unless
/// every credential arrived and verified.
public struct WalletReceiver {
    public let options: ReceiveOptions

    public init(options: ReceiveOptions) { self.options = options }

    public func run() throws -> ReceiveResult {
        let (batch, verbose) = (options.batch, options.verbose)
        var clientID = options.clientID
        let http = try WalletHTTP()
        if verbose { http.trace = options.log }
        var wallet = try (options.clientAttestation || options.keyAttestation)
            ? TestWalletFile.load(options.walletPath ?? TestWalletFile.defaultPath()) : nil
        let attestedClient = try wallet.flatMap { options.clientAttestation ? try AttestedClient(wallet: $0) : nil }
        if let attestedClient { clientID = attestedClient.clientID }
        let anchors = try options.trust.map { try loadTrustAnchors($0, http: http) }
        let offer = try CredentialOffer.resolve(options.offer, http: http)
        let usePreAuthorized: Bool
        switch options.grant {
        case nil: usePreAuthorized = offer.preAuthorized != nil
        case "authorization_code": usePreAuthorized = false
        default:
            guard offer.preAuthorized != nil else { throw WalletError.usage("the offer has no pre-authorized_code grant") }
            usePreAuthorized = true
        }
        let grantServer = usePreAuthorized ? offer.preAuthorized?.authorizationServer : offer.authorizationCode?.authorizationServer
        let context = try IssuerContext.discover(offer: offer, http: http, grantServer: grantServer)
        let configurations = try selectedConfigurations(offer: offer, metadata: context.issuer)
        if batch > 1 {
            guard let size = context.issuer.batchSize else { throw WalletError.usage("the issuer advertises no batch_credential_issuance") }
            guard batch <= size else { throw WalletError.usage("--batch \(batch) exceeds the issuer's batch_size \(size)") }
        }
        let session = try WalletSession(context: context, http: http, dpop: options.dpop)
        if let attestedClient { session.clientAttestation = attestedClient.headers }
        if options.keyAttestation, let wallet { session.keyAttester = try AttestedClient.keyAttester(wallet: wallet, http: http) }

        let token: TokenResponse
        if usePreAuthorized, let pre = offer.preAuthorized {
            session.clientID = clientID
            token = try session.preAuthorizedToken(code: pre.code, txCode: try transactionCode(pre))
        } else {
            session.clientID = clientID ?? "trustbed-wallet"
            token = try authorizationCodeFlow(session, offer: offer, configurations: configurations)
        }
        if verbose { options.log("token: \(token.tokenType)") }
        for warning in session.warnings { options.log("warning: \(warning)") }

        let verifier = CredentialVerifier(http: http, trustAnchors: anchors)
        var results: [JSONValue] = []
        var stored: [JSONValue] = []
        var text: [String] = [
            "credential_issuer: \(context.issuer.credentialIssuer)",
            "authorization_server: \(context.authorizationServer.issuer)",
            "grant: \(usePreAuthorized ? "pre-authorized_code" : "authorization_code"), token_type: \(token.tokenType)",
        ]
        for configuration in configurations {
            let keys = try (0..<batch).map { _ in try HolderKey() }
            let identifier = token.credentialIdentifiers[configuration.id]?.first
            let delivery = try session.credential(accessToken: token.accessToken, configurationID: configuration.id,
                                                  identifier: identifier, keys: keys)
            guard delivery.credentials.count == keys.count else {
                throw WalletError.malformed("\(configuration.id): \(delivery.credentials.count) credentials for \(keys.count) proofs")
            }
            for (index, credential) in delivery.credentials.enumerated() {
                let verified: VerifiedCredential
                do {
                    verified = try verifier.verify(credential, configuration: configuration, holders: keys)
                } catch {
                    // §11.1: tell the issuer the credential was not accepted, then fail.
                    if let notification = delivery.notificationID {
                        try? session.notify(accessToken: token.accessToken, notificationID: notification, event: "credential_failure")
                    }
                    throw error
                }
                var status: String?
                if let reference = verified.status, options.checkStatus {
                    status = "\(try verifier.status(uri: reference.uri, index: reference.index))".lowercased()
                }
                results.append(describe(verified, configuration: configuration, status: status, deferred: delivery.deferred,
                                        credential: credential))
                // The wallet file keeps the credential with its key, so a later presentation can sign with it.
                if wallet != nil || options.savePath != nil, var entry = results.last?.objectValue {
                    entry["holder_key"] = .object(try keys[index].privateJWK())
                    entry["received_at"] = .int(WalletProofs.now())
                    stored.append(.object(entry))
                }
                text.append("credential \(index + 1)/\(delivery.credentials.count): \(configuration.id) (\(configuration.format))"
                            + (delivery.deferred ? " [deferred]" : "") + ": verified")
                text += verified.checks.map { "  check: \($0)" }
                text.append("  signer: \(verified.signer)")
                if let reference = verified.status {
                    text.append("  status: \(status ?? "not fetched") (\(reference.uri) idx \(reference.index))")
                }
                if !verified.disclosedPaths.isEmpty { text.append("  disclosed: \(verified.disclosedPaths.joined(separator: " "))") }
                text.append("  claims: " + Self.abbreviated(verified.claims).serialized(pretty: true)
                    .replacingOccurrences(of: "\n", with: "\n  "))
            }
            if let notification = delivery.notificationID {
                try session.notify(accessToken: token.accessToken, notificationID: notification)
                text.append("notification: credential_accepted (\(configuration.id))")
            }
        }
        text += session.warnings.map { "warning: \($0)" }
        if let savePath = options.savePath, savePath != wallet?.path {
            var file = try TestWalletFile.load(savePath)
            file.credentials += stored
            try file.save()
            text.append("stored in: \(file.path)")
        } else if var file = wallet {
            file.credentials += stored
            try file.save()
            wallet = file
            text.append("stored in: \(file.path)")
        }
        do {
            var document: [String: JSONValue] = [
                "credential_issuer": .string(context.issuer.credentialIssuer),
                "authorization_server": .string(context.authorizationServer.issuer),
                "grant": .string(usePreAuthorized ? "pre-authorized_code" : "authorization_code"),
                "token_type": .string(token.tokenType),
                "credentials": .array(results),
            ]
            if !session.warnings.isEmpty { document["warnings"] = JSONValue(session.warnings) }
            return ReceiveResult(text: text.joined(separator: "\n"), json: .object(document))
        }
    }

    private func describe(_ verified: VerifiedCredential, configuration: IssuerMetadata.Configuration, status: String?,
                          deferred: Bool, credential: JSONValue) -> JSONValue {
        var out: [String: JSONValue] = [
            "credential_configuration_id": .string(configuration.id), "format": .string(configuration.format),
            "verified": true, "checks": JSONValue(verified.checks), "signer": .string(verified.signer),
            "claims": verified.claims, "deferred": .bool(deferred), "credential": credential,
        ]
        if !verified.disclosedPaths.isEmpty { out["disclosed"] = JSONValue(verified.disclosedPaths) }
        if let reference = verified.status {
            var entry: [String: JSONValue] = ["uri": .string(reference.uri), "idx": JSONValue(reference.index)]
            if let status { entry["status"] = .string(status) }
            out["status"] = .object(entry)
        }
        return .object(out)
    }

    /// Long strings (a portrait as a data URL) cut for the terminal; --json keeps them whole.
    public static func abbreviated(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let s) where s.count > 120: return .string(String(s.prefix(60)) + "... (\(s.count) characters)")
        case .array(let items): return .array(items.map(abbreviated))
        case .object(let members): return .object(members.mapValues(abbreviated))
        default: return value
        }
    }

    /// `--format` picks among the offered configurations by format or id; none picks them all.
    private func selectedConfigurations(offer: CredentialOffer, metadata: IssuerMetadata) throws -> [IssuerMetadata.Configuration] {
        var offered: [IssuerMetadata.Configuration] = []
        for id in offer.configurationIDs {
            guard let configuration = metadata.configurations[id] else {
                throw WalletError.malformed("the offer names \(id), which the issuer metadata does not list")
            }
            offered.append(configuration)
        }
        let format = options.format
        guard !format.isEmpty else { return offered }
        let chosen = offered.filter { format.contains($0.id) || format.contains($0.format) }
        guard !chosen.isEmpty else {
            throw WalletError.usage("no offered credential matches --format \(format.joined(separator: ",")) (offered: "
                                    + offered.map { "\($0.id) (\($0.format))" }.joined(separator: ", ") + ")")
        }
        return chosen
    }

    /// §4.1.1 tx_code: from --tx-code, else asked on stdin with the issuer's description.
    private func transactionCode(_ grant: CredentialOffer.PreAuthorizedGrant) throws -> String? {
        guard let tx = grant.txCode else { return options.txCode }
        if let txCode = options.txCode { return txCode }
        var prompt = "Transaction code (\(tx.inputMode)"
        if let length = tx.length { prompt += ", \(length) characters" }
        prompt += ")" + (tx.description.map { ": \($0)" } ?? "") + ": "
        guard let line = options.ask(prompt), !line.isEmpty else {
            throw WalletError.usage("the offer needs a transaction code: pass --tx-code")
        }
        return line
    }

    private func authorizationCodeFlow(_ session: WalletSession, offer: CredentialOffer,
                                       configurations: [IssuerMetadata.Configuration]) throws -> TokenResponse {
        let request = try session.authorizationRequest(
            configurationIDs: configurations.map(\.id), redirectURI: options.redirectURI,
            issuerState: offer.authorizationCode?.issuerState, loginHint: options.loginHint)
        var location = try session.tryAuthorizeWithoutBrowser(request)
        if location == nil {
            options.log("Open this URL in a browser and log in:\n\n  \(request.url)\n")
            guard let line = options.ask("Then paste the URL you were redirected to (it starts with \(options.redirectURI)):\n"),
                  !line.isEmpty else {
                throw WalletError.usage("no redirect URL on stdin")
            }
            location = line.trimmingCharacters(in: .whitespaces)
        }
        let code = try session.code(fromRedirect: location!, request: request)
        return try session.authorizationCodeToken(code: code, verifier: request.verifier, redirectURI: request.redirectURI)
    }
}

/// PEM certificates from a file or an http(s) URL (a DER answer is accepted too), for the option
/// named `option` (`--trust`, `--verifier-ca`), which errors name.
public func loadTrustAnchors(_ source: String, http: WalletHTTP, option: String = "--trust") throws -> [Certificate] {
    let bytes: [UInt8]
    if source.hasPrefix("https://") || source.hasPrefix("http://") {
        let reply = try http.get(source, accept: "application/x-pem-file, application/pkix-cert, */*")
        guard reply.status == 200 else { throw WalletError.server(step: "\(option) \(source)", status: reply.status, body: reply.text) }
        bytes = reply.body
    } else {
        guard let data = FileManager.default.contents(atPath: source) else { throw WalletError.usage("cannot read \(option) \(source)") }
        bytes = Array(data)
    }
    let text = String(decoding: bytes, as: UTF8.self)
    do {
        let certificates = text.contains("-----BEGIN CERTIFICATE-----")
            ? try Certificate.certificates(pem: text) : [try Certificate(der: bytes)]
        guard !certificates.isEmpty else { throw WalletError.usage("\(option) \(source) holds no certificate") }
        return certificates
    } catch let error as WalletError {
        throw error
    } catch {
        throw WalletError.usage("\(option) \(source): \(error)")
    }
}
