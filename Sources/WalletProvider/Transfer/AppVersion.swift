/// A wallet app's version as the NL wallet sends it (`app_version`, Semantic Versioning 2.0.0):
/// the source may only hand its wallet to a destination at least as new as itself, because an
/// older app may not read the newer one's database (the NL wallet's `pair_transfer` check).
public struct AppVersion: Sendable, Equatable, Comparable, CustomStringConvertible {
    public let numbers: [Int]
    /// The pre-release part after `-` (SemVer §9), if any; build metadata after `+` is ignored
    /// for ordering (§10).
    public let preRelease: [String]
    public let description: String

    /// Parses `MAJOR.MINOR.PATCH[-pre][+build]`; nil for anything else.
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        let withoutBuild = text.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = withoutBuild.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        let core = parts[0].split(separator: ".", omittingEmptySubsequences: false)
        guard core.count == 3 else { return nil }
        var numbers: [Int] = []
        for part in core {
            guard !part.isEmpty, part.count <= 9, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  part == "0" || !part.hasPrefix("0"), let value = Int(part) else { return nil }
            numbers.append(value)
        }
        var preRelease: [String] = []
        if parts.count == 2 {
            preRelease = parts[1].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard preRelease.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") } }) else {
                return nil
            }
        }
        self.numbers = numbers
        self.preRelease = preRelease
        description = text
    }

    public static func == (a: AppVersion, b: AppVersion) -> Bool { a.numbers == b.numbers && a.preRelease == b.preRelease }

    /// SemVer §11: numbers first; a pre-release sorts before its release; identifiers compare
    /// numerically when both are numbers, else as ASCII, numbers before words.
    public static func < (a: AppVersion, b: AppVersion) -> Bool {
        if a.numbers != b.numbers { return a.numbers.lexicographicallyPrecedes(b.numbers) }
        if a.preRelease.isEmpty || b.preRelease.isEmpty { return !a.preRelease.isEmpty && b.preRelease.isEmpty }
        for (x, y) in zip(a.preRelease, b.preRelease) where x != y {
            switch (Int(x), Int(y)) {
            case let (m?, n?): return m < n
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return x < y
            }
        }
        return a.preRelease.count < b.preRelease.count
    }
}
