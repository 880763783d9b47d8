/// The verifier's state (issue 22): its presentation requests and, once answered, the verdict.
/// Every row carries the `verifier` (the verifier's entity ID), so several verifiers share one
/// file.
enum VerificationSchema {
    /// A presentation request (OpenID4VP 1.0): `id` names it in URLs (`<rp>/request/<id>`, the
    /// admin API, the result page); `state` and `nonce` are the values the wallet echoes; the
    /// DCQL query as JSON text. `status` is `pending` until one response arrives, then `verified`
    /// or `refused` with `result` (the check-by-check report, JSON) and, for same-device flows,
    /// the `response_code` appended to `redirect_uri`.
    static let version10 = [
        """
        CREATE TABLE verifier_requests (
            verifier TEXT NOT NULL,
            id TEXT NOT NULL,
            state TEXT NOT NULL,
            nonce TEXT NOT NULL,
            client_id TEXT NOT NULL,
            client_id_prefix TEXT NOT NULL,
            response_mode TEXT NOT NULL,
            dcql_query TEXT NOT NULL,
            redirect_uri TEXT,
            status TEXT NOT NULL,
            result TEXT,
            response_code TEXT,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            answered_at INTEGER,
            PRIMARY KEY (verifier, id)
        ) STRICT
        """,
        """
        CREATE UNIQUE INDEX verifier_requests_by_state ON verifier_requests (verifier, state)
        """,
        """
        CREATE INDEX verifier_requests_by_expiry ON verifier_requests (expires_at)
        """,
    ]
}
