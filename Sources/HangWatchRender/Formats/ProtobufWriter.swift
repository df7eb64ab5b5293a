// A minimal protocol-buffers encoder: the wire types profile.proto and OTLP need.

/// Appends protobuf fields to a byte buffer.
///
/// Zero scalars are skipped, as proto3 writers do: a reader treats a missing
/// field as zero. Repeated strings and messages are always written, because
/// their count is the data (`string_table` must start with an empty string).
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    private enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    private mutating func key(_ field: Int, _ wire: WireType) {
        varint(UInt64(field) << 3 | wire.rawValue)
    }

    private mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// `uint64` fields (ids, addresses).
    mutating func uint64(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        key(field, .varint)
        varint(value)
    }

    /// `int64` fields: negative numbers take ten bytes, as two's complement.
    mutating func int64(_ field: Int, _ value: Int64) {
        uint64(field, UInt64(bitPattern: value))
    }

    /// A varint written even when zero: a member of a `oneof`, whose presence is the data.
    mutating func presentVarint(_ field: Int, _ value: UInt64) {
        key(field, .varint)
        varint(value)
    }

    /// `fixed64` fields (OTLP timestamps); zero is skipped.
    mutating func fixed64(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        key(field, .fixed64)
        littleEndian64(value)
    }

    /// A `double` written even when zero (a `oneof` member).
    mutating func presentDouble(_ field: Int, _ value: Double) {
        key(field, .fixed64)
        littleEndian64(value.bitPattern)
    }

    private mutating func littleEndian64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func bool(_ field: Int, _ value: Bool) {
        uint64(field, value ? 1 : 0)
    }

    mutating func string(_ field: Int, _ value: String) {
        bytesField(field, Array(value.utf8))
    }

    mutating func bytesField(_ field: Int, _ value: [UInt8]) {
        key(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes += value
    }

    /// A nested message, written by `body` into its own buffer first so its length is known.
    mutating func message(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var nested = ProtobufWriter()
        body(&nested)
        bytesField(field, nested.bytes)
    }

    /// A packed repeated varint field (proto3's default for repeated scalars).
    mutating func packed(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var nested = ProtobufWriter()
        for value in values { nested.varint(value) }
        bytesField(field, nested.bytes)
    }
}
