import Foundation
import XCTest

/// Runs a Python script that reads JSON on stdin and writes JSON to stdout, for checks by
/// independent implementations. Uses `$TRUSTBED_PYTHON`, else the interop venv
/// (`Tests/interop/.venv`, where `make test` installs the PyPI packages), else python3.
/// A script that exits 3 (package missing) makes the test skip.
enum PythonRunner {
    static func run(_ script: String, input: String, file: StaticString = #filePath) throws -> String {
        let root = URL(fileURLWithPath: "\(file)").deletingLastPathComponent().deletingLastPathComponent()
        let candidates: [String?] = [ProcessInfo.processInfo.environment["TRUSTBED_PYTHON"],
                          root.appendingPathComponent("interop/.venv/bin/python").path, "/usr/bin/python3"]
        guard let python = candidates.compactMap({ $0 }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("python3 not installed")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        if process.terminationStatus == 3 { throw XCTSkip("Python package missing for \(python)") }
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "python", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: String(decoding: err, as: UTF8.self)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
