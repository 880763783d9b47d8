import ArgumentParser
import Foundation
import Store
import Support
import Trustbed
import WalletProvider

/// `trustbed instances`: the Wallet Providers' wallet instances (issue 20, item 8), read and
/// changed directly in the SQLite file like `trustbed credentials`, so it works with the server
/// stopped too. A running server sees a change at its next request: the provider reads the
/// instance row on every attestation request and caches nothing about it. Output is the admin
/// API's JSON.
struct InstancesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instances", abstract: "List, revoke and purge the Wallet Providers' wallet instances.",
        subcommands: [List.self, Revoke.self, Purge.self])

    /// Where a provider's name is looked up (`--provider wallet-provider`).
    struct Target: ParsableArguments {
        @Option(help: "Only this Wallet Provider (entity name or entity ID).") var provider: String?
        @OptionGroup var paths: StatePaths
        @Option(help: "Base URL of entity IDs (to resolve a provider's name); must match the server's.")
        var baseURL = "http://127.0.0.1:8080"

        /// The provider's entity ID: a URL as given, a name through the entity files.
        func providerID() throws -> String? {
            guard let provider else { return nil }
            if provider.contains("://") { return provider }
            let catalog = try EntityCatalog.load(directory: paths.entities, baseURL: baseURL)
            guard let id = catalog.idsByName[provider] else {
                throw InstancesCommandError(description: "no entity named \(provider) in \(paths.entities)")
            }
            return id
        }

        func repository() throws -> WalletInstanceRepository {
            WalletInstanceRepository(database: try database())
        }

        func database() throws -> Database { try Database(path: paths.database) }

        /// The one provider to act on for `id`: the one given, else the only one that has it.
        func provider(for id: String, in found: [String], what: String) throws -> String {
            if let given = try providerID() {
                guard found.contains(given) else { throw InstancesCommandError(description: "no \(what) \(id) at \(given)") }
                return given
            }
            guard let only = found.first else { throw InstancesCommandError(description: "no \(what) \(id) in \(paths.database)") }
            guard found.count == 1 else {
                throw InstancesCommandError(description: "\(what) \(id) exists at \(found.joined(separator: ", ")); name one with --provider")
            }
            return only
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print wallet instances as JSON ({\"instances\": [...]}, as GET <wp>/admin/instances).")

        @OptionGroup var target: Target
        @Option(help: "Only this account's instances.") var account: String?

        func run() throws {
            let file = try target.database()
            let repository = WalletInstanceRepository(database: file)
            var instances: [WalletInstanceRecord]
            // PIDs that expired since the last look take their instances back to `operational`.
            try WalletInstanceValidity(database: file).settle(provider: target.providerID(), now: SystemClock().now())
            if let provider = try target.providerID() {
                instances = try repository.list(provider: provider, account: account)
            } else {
                instances = try repository.listAll()
                if let account { instances = instances.filter { $0.account == account } }
            }
            print(String(decoding: WalletInstanceJSON.list(instances), as: UTF8.self))
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an instance's hardware key (back to installed; its attestation requests are refused from then on). Unknown id: exit status 1.")

        @Argument(help: "Instance id (its hardware_key_tag, from `trustbed instances list`).") var id: String
        @Option(help: "Reason shown in the instance list.") var reason: String?
        @OptionGroup var target: Target

        func run() throws {
            let repository = try target.repository()
            let provider = try target.provider(for: id, in: repository.providers(instance: id), what: "wallet instance")
            guard try repository.revoke(provider: provider, id: id, reason: reason, now: SystemClock().now()) else {
                throw InstancesCommandError(description: "wallet instance \(id) is uninstalled, which is final")
            }
            guard let record = try repository.find(provider: provider, id: id) else {
                throw InstancesCommandError(description: "no wallet instance \(id) at \(provider)")
            }
            print(String(decoding: WalletInstanceJSON.one(record), as: UTF8.self))
        }
    }

    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an account with all its instances (as DELETE <wp>/admin/accounts/<id>). Unknown account: exit status 1.")

        @Argument(help: "Account id (the `account` of `trustbed instances list`).") var account: String
        @OptionGroup var target: Target

        func run() throws {
            let repository = try target.repository()
            let provider = try target.provider(for: account, in: repository.providers(account: account), what: "account")
            guard try repository.purgeAccount(provider: provider, account: account) > 0 else {
                throw InstancesCommandError(description: "no account \(account) at \(provider)")
            }
            // The admin API answers 204 with no body; the list of what is left is the JSON here.
            print(String(decoding: WalletInstanceJSON.list(try repository.list(provider: provider, account: account)), as: UTF8.self))
        }
    }
}

struct InstancesCommandError: Error, CustomStringConvertible {
    let description: String
}
