import JSON
import Store

/// The admin view of wallet instances (issue 20, item 8), shared by `GET <wp>/admin/instances`,
/// `POST <wp>/admin/instances/<id>/status` and `trustbed instances`, so the CLI prints exactly
/// what the admin API answers.
public enum WalletInstanceJSON {
    /// `{"instances": [...]}`.
    public static func list(_ instances: [WalletInstanceRecord]) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + 256 * instances.count)
        writer.openObject()
        writer.name("instances")
        writer.openArray()
        for instance in instances { write(instance, to: &writer) }
        writer.closeArray()
        writer.closeObject()
        return writer.bytes
    }

    /// One instance: `{id, account, state, reason, format, created_at, updated_at}`, and
    /// `integrity_assertion` with `integrity_assertion_at` once it sent one.
    public static func one(_ instance: WalletInstanceRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        write(instance, to: &writer)
        return writer.bytes
    }

    static func write(_ instance: WalletInstanceRecord, to writer: inout JSONWriter) {
        writer.openObject()
        writer.name("id"); writer.string(instance.id)
        writer.name("account"); writer.string(instance.account)
        writer.name("state"); writer.string(instance.state)
        writer.name("reason")
        if let reason = instance.reason { writer.string(reason) } else { writer.null() }
        writer.name("format"); writer.string(instance.format)
        writer.name("created_at"); writer.int(instance.createdAt)
        writer.name("updated_at"); writer.int(instance.updatedAt)
        // Only once the instance sent one (item 6: stored, not checked).
        if let assertion = instance.integrityAssertion {
            writer.name("integrity_assertion"); writer.string(assertion)
            writer.name("integrity_assertion_at"); writer.int(instance.integrityAssertionAt ?? 0)
        }
        writer.closeObject()
    }
}
