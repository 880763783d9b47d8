import ArgumentParser

@main
struct TrustbedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trustbed",
        abstract: "An OpenID Federation 1.0 trust ecosystem in one server.",
        subcommands: [Serve.self, Resolve.self, Check.self, Keys.self, TrustMarkCommand.self, OfferCommand.self, CredentialsCommand.self, InstancesCommand.self, WalletCommand.self,
                      VerifyCommand.self],
        defaultSubcommand: Serve.self)
}
