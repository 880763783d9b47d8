import Foundation
import XCTest

/// Runs a Python script that reads its input on stdin and writes its answer to stdout, so a
/// unit test can check an artifact with an independent implementation from PyPI. Interpreters
/// tried in order: `$TRUSTBED_PYTHON`, the interop venv (`Tests/interop/.venv`, where `make test`
/// installs the packages before the unit tests run), then `python3` from the PATH. A script
/// exits with status 3 when a package it needs is missing; then the next interpreter is tried,
/// and the test is skipped when none has it.
public enum PythonRunner {
    public static func run(_ script: String, input: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var candidates: [[String]] = []
        if let configured = ProcessInfo.processInfo.environment["TRUSTBED_PYTHON"] { candidates.append([configured]) }
        candidates.append([root.appendingPathComponent("Tests/interop/.venv/bin/python").path])
        candidates.append(["/usr/bin/env", "python3"])
        for command in candidates where FileManager.default.isExecutableFile(atPath: command[0]) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst()) + ["-c", script]
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
            // 3: a package is missing; 127: env found no python3.
            if process.terminationStatus == 3 || process.terminationStatus == 127 { continue }
            guard process.terminationStatus == 0 else { throw PythonFailure(message: String(decoding: err, as: UTF8.self)) }
            return String(decoding: out, as: UTF8.self)
        }
        throw XCTSkip("no Python interpreter with the packages this check needs")
    }
}

/// The script failed: its standard error, for the test report.
public struct PythonFailure: Error, CustomStringConvertible {
    public let message: String
    public var description: String { "python failed: \(message)" }
}
