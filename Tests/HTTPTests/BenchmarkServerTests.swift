import HTTP
import JSON
import Logging
import XCTest

/// Not a timed test: with TRUSTBED_HTTP_BENCH_PORT set it serves `{"status":"ok"}` on that port
/// for TRUSTBED_HTTP_BENCH_SECONDS (default 30) so wrk can compare this layer with
/// Tests/bench/static_responder.c. TRUSTBED_HTTP_BENCH_LOG=1 keeps the access log on (to stderr).
final class BenchmarkServerTests: XCTestCase {
    func testServeForBenchmark() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let port = environment["TRUSTBED_HTTP_BENCH_PORT"].flatMap(UInt16.init) else {
            throw XCTSkip("set TRUSTBED_HTTP_BENCH_PORT to serve for a benchmark")
        }
        let seconds = environment["TRUSTBED_HTTP_BENCH_SECONDS"].flatMap(UInt32.init) ?? 30
        var logger = Logger(label: "bench")
        logger.logLevel = environment["TRUSTBED_HTTP_BENCH_LOG"] == "1" ? .info : .warning
        let ok = HTTPResponse.json(["status": "ok"])
        let server = HTTPServer(configuration: HTTPServerConfiguration(port: port), logger: logger) { _ in ok }
        try server.start()
        sleep(seconds)
        server.stop()
    }
}
