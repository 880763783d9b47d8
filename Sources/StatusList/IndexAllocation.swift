import Cryptography

extension StatusList {
    /// A random free index in `0..<size` (Token Status List §12.5: sequential indexes let a
    /// verifier correlate holders by issuance order). Drawn uniformly from the CSPRNG; the caller
    /// owns the set of used indexes (in the database) and records the result.
    public static func allocateIndex(size: Int, used: Set<Int>) throws(StatusListError) -> Int {
        let free = size - used.filter { (0..<size).contains($0) }.count
        guard size > 0, free > 0 else { throw .listFull }
        // Rejection sampling is fast while the list has room; past that, pick among the free
        // indexes directly so a nearly full list costs one pass instead of many draws.
        if free * 4 >= size {
            while true {
                let candidate = uniformRandom(below: size)
                if !used.contains(candidate) { return candidate }
            }
        }
        let target = uniformRandom(below: free)
        var seen = 0
        for index in 0..<size where !used.contains(index) {
            if seen == target { return index }
            seen += 1
        }
        throw .listFull
    }

    /// Uniform in `0..<bound` without modulo bias: draws are rejected above the largest
    /// multiple of `bound` that fits in 64 bits.
    static func uniformRandom(below bound: Int) -> Int {
        precondition(bound > 0)
        let range = UInt64(bound)
        let limit = UInt64.max - UInt64.max % range
        while true {
            let value = SecureRandom.bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if value < limit { return Int(value % range) }
        }
    }
}
