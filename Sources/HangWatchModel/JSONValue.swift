// A JSON document as a plain value, and a writer that prints it exactly as
// Foundation's JSONEncoder does with [.prettyPrinted, .sortedKeys,
// .withoutEscapingSlashes], without going through Codable.
//
// Why: JSONEncoder's generic path looks up, the first time it meets each type,
// whether the type conforms to a handful of marker protocols, and each lookup
// scans the conformance records of every loaded library: that and its container
// machinery cost more than the rest of a short report put together
// (BENCHMARKS.md, "Figures behind code comments"). The tree is
// also Encodable, so event lines that embed a hang still go through JSONEncoder,
// and the tests hold this writer's bytes to JSONEncoder's for the same tree.

import Foundation

/// A JSON value: what the report's fields are written as.
package indirect enum JSONValue: Sendable {
    /// Members in the order given; written sorted by key.
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case string(String)
    case double(Double)
    case int(Int64)
    case uint(UInt64)
    case bool(Bool)
    case null

    /// An integer of any width.
    package static func integer(_ value: some BinaryInteger) -> JSONValue {
        if let signed = Int64(exactly: value) { return .int(signed) }
        return .uint(UInt64(clamping: value))
    }

    /// `value` through `make`, or null.
    package static func optional<T>(_ value: T?, _ make: (T) -> JSONValue) -> JSONValue {
        value.map(make) ?? .null
    }
}

extension JSONValue: Encodable {
    package func encode(to encoder: any Encoder) throws {
        switch self {
        case let .object(members):
            var container = encoder.container(keyedBy: JSONKey.self)
            for (key, value) in members { try container.encode(value, forKey: JSONKey(stringValue: key)) }
        case let .array(elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .string, .double, .int, .uint, .bool, .null:
            var container = encoder.singleValueContainer()
            switch self {
            case let .string(value): try container.encode(value)
            case let .double(value): try container.encode(value)
            case let .int(value): try container.encode(value)
            case let .uint(value): try container.encode(value)
            case let .bool(value): try container.encode(value)
            default: try container.encodeNil()
            }
        }
    }
}

extension JSONValue {
    /// The value as JSONEncoder writes it with `[.prettyPrinted, .sortedKeys,
    /// .withoutEscapingSlashes]`, byte for byte. Throws `EncodingError.invalidValue`
    /// for a NaN or infinite number, as JSONEncoder does.
    package func prettyPrinted() throws -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        try write(into: &out, indent: 0)
        return Data(out)
    }

    private func write(into out: inout [UInt8], indent: Int) throws {
        switch self {
        case let .object(members):
            out.append(UInt8(ascii: "{"))
            out.append(UInt8(ascii: "\n"))
            let sorted = members.sorted { Self.keyPrecedes($0.key, $1.key) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { out += [UInt8(ascii: ","), UInt8(ascii: "\n")] }
                Self.indent(&out, indent + 2)
                Self.writeString(member.key, into: &out)
                out += [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")]
                try Self.within(JSONKey(stringValue: member.key)) { try member.value.write(into: &out, indent: indent + 2) }
            }
            out.append(UInt8(ascii: "\n"))  // an empty object is "{", two newlines, "}"
            Self.indent(&out, indent)
            out.append(UInt8(ascii: "}"))
        case let .array(elements):
            out.append(UInt8(ascii: "["))
            out.append(UInt8(ascii: "\n"))
            for (index, element) in elements.enumerated() {
                if index > 0 { out += [UInt8(ascii: ","), UInt8(ascii: "\n")] }
                Self.indent(&out, indent + 2)
                try Self.within(JSONIndex(intValue: index)) { try element.write(into: &out, indent: indent + 2) }
            }
            out.append(UInt8(ascii: "\n"))  // an empty array is "[", two newlines, "]"
            Self.indent(&out, indent)
            out.append(UInt8(ascii: "]"))
        case let .string(value):
            Self.writeString(value, into: &out)
        case let .double(value):
            guard value.isFinite else {
                throw EncodingError.invalidValue(value, .init(codingPath: [],
                                                              debugDescription: "Unable to encode Double.\(value) directly in JSON."))
            }
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            out += text.utf8
        case let .int(value):
            out += String(value).utf8
        case let .uint(value):
            out += String(value).utf8
        case let .bool(value):
            out += (value ? "true" : "false").utf8
        case .null:
            out += "null".utf8
        }
    }

    /// Runs `body`; an `EncodingError` it throws gets `key` in front of its coding path,
    /// so the error names the field (`hangs[0].cpuMs`). Costs nothing unless thrown.
    private static func within(_ key: any CodingKey, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let EncodingError.invalidValue(value, context) {
            throw EncodingError.invalidValue(value, .init(codingPath: [key] + context.codingPath,
                                                          debugDescription: context.debugDescription))
        }
    }

    private static func indent(_ out: inout [UInt8], _ count: Int) {
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count))
    }

    /// JSON string escaping: quote, backslash and control characters; `/` and
    /// everything else, non-ASCII included, as is.
    private static func writeString(_ value: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xf)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// JSONEncoder's key order on Linux (swift-foundation): by UTF-8 bytes, so
    /// `"A" < "_a" < "a"` and `"10" < "2"`.
    static func keyPrecedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}

/// An array position in a coding path.
private struct JSONIndex: CodingKey {
    var intValue: Int?
    var stringValue: String { intValue.map(String.init) ?? "" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}
