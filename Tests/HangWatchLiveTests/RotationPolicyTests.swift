import HangWatchLive
import Testing

/// `--rotate SIZE|INTERVAL`: units are required, sizes are powers of 1024,
/// and rotated files keep their extension.
@Suite struct RotationPolicyTests {
    @Test func sizesAndIntervalsNeedTheirUnit() throws {
        #expect(try RotationPolicy.parse("10M").maxBytes == 10 << 20)
        #expect(try RotationPolicy.parse("512K").maxBytes == 512 << 10)
        #expect(try RotationPolicy.parse("1GiB").maxBytes == 1 << 30)
        #expect(try RotationPolicy.parse("4096B").maxBytes == 4096)
        #expect(try RotationPolicy.parse("10m").intervalNs == 600_000_000_000, "lower-case m is minutes")
        #expect(try RotationPolicy.parse("1h").intervalNs == 3_600_000_000_000)
        #expect(try RotationPolicy.parse("1.5s").intervalNs == 1_500_000_000)
        #expect(try RotationPolicy.parse("1d", keep: 30).keep == 30)
        #expect(try RotationPolicy.parse("1h").keep == RotationPolicy.defaultKeep)
        for bad in ["10", "", "M", "1K", "0.5s", "-1M", "10x", "nanM", "400d"] {
            #expect(throws: RotationPolicyError.self, "\(bad)") { try RotationPolicy.parse(bad) }
        }
        #expect(throws: RotationPolicyError.self) { try RotationPolicy.parse("1h", keep: 0) }
    }

    @Test func rotatedFilesKeepTheirExtension() {
        #expect(RotatingEventLog.name("hangs.jsonl", 2) == "hangs.2.jsonl")
        #expect(RotatingEventLog.name("/var/log/app/hangs.jsonl", 1) == "/var/log/app/hangs.1.jsonl")
        #expect(RotatingEventLog.name("hangs", 3) == "hangs.3")
        #expect(RotatingEventLog.name("/tmp/my.dir/hangs", 1) == "/tmp/my.dir/hangs.1", "a dot in a directory is not an extension")
        #expect(RotatingEventLog.name(".hangs", 1) == ".hangs.1", "a hidden file's leading dot is not an extension")
    }
}
