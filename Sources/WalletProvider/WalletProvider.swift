/// The mock Wallet Provider (issue 20): wallet instance registration with a device key
/// attestation, wallet attestations (OAuth attestation-based client authentication) and key
/// attestations (OpenID4VCI 1.0 Appendix D) for the wallet's keys, and the instance lifecycle,
/// as the IT-Wallet specifications describe a Wallet Solution. Shaped like `Issuance`: domain
/// folders by concern, repositories in `Store/WalletProvider/`, and `Endpoints/` the only part
/// importing `HTTP`.
public enum WalletProviderModule {}
