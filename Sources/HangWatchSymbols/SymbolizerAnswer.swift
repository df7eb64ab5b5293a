// Reading `llvm-symbolizer --output-style=JSON`: one JSON object per line, one
// line per query, e.g.
//   {"Address":"0xbf660","ModuleName":"/app/Demo","Symbol":[{"FileName":"/src/Work.swift",
//    "Line":66,"StartFileName":"/src/Work.swift","StartLine":66,...}]}
// or, for a file it cannot read, {"Address":"0x10","Error":{"Message":"..."},"ModuleName":"..."}.
// `Symbol` lists the inlined frames at the address, innermost first; the last
// entry is the function the address belongs to.

import Foundation
import HangWatchModel

/// One line of llvm-symbolizer's JSON output, reduced to what a frame shows.
package struct SymbolizerAnswer: Sendable, Equatable {
    /// The module file, as it was given in the query.
    package var modulePath: String
    /// The queried address.
    package var address: UInt64
    /// `path:line` of the function, nil when the debug information has none:
    /// a module without DWARF answers with an empty or `??` file and line 0.
    package var source: String?
    /// The symbolizer's message when it could not answer (missing file, not ELF, ...).
    package var error: String?

    package init(modulePath: String, address: UInt64, source: String?, error: String? = nil) {
        self.modulePath = modulePath
        self.address = address
        self.source = source
        self.error = error
    }

    /// Parses one output line; nil for anything that is not an answer to a query.
    package init?(jsonLine: some StringProtocol) {
        guard let line = try? JSONDecoder().decode(Line.self, from: Data(jsonLine.utf8)),
              let address = Self.address(line.address) else { return nil }
        self.modulePath = line.moduleName
        self.address = address
        self.error = line.error?.message
        self.source = line.symbol?.last.flatMap(Self.source(of:))
    }

    /// The function's declaration (`StartFileName`/`StartLine`, from the
    /// subprogram's DW_AT_decl_file/line) when given. LLVM leaves the file
    /// empty for gcc's DWARF 5 while the line is right; the address's own file
    /// (`FileName`) stands in then: at a function's first instruction that is
    /// the file the function's body is in. Without a declaration line, the
    /// address's own line, which for a first instruction is where the function begins.
    private static func source(of frame: Line.Frame) -> String? {
        if let file = usableFile(frame.startFileName), let line = frame.startLine, line > 0 {
            return "\(file):\(line)"
        }
        guard let file = usableFile(frame.fileName) else { return nil }
        if let line = frame.startLine, line > 0 { return "\(file):\(line)" }
        if let line = frame.line, line > 0 { return "\(file):\(line)" }
        return nil
    }

    /// "" and "??" are what the symbolizer prints for "no file known".
    private static func usableFile(_ name: String?) -> String? {
        guard let name, !name.isEmpty, name != "??" else { return nil }
        return name
    }

    private static func address(_ text: String) -> UInt64? {
        let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : Substring(text)
        return UInt64(digits, radix: 16)
    }

    private struct Line: Decodable {
        var address: String
        var moduleName: String
        var symbol: [Frame]?
        var error: Failure?

        struct Frame: Decodable {
            var fileName: String?
            var line: Int?
            var startFileName: String?
            var startLine: Int?
            enum CodingKeys: String, CodingKey {
                case fileName = "FileName", line = "Line", startFileName = "StartFileName", startLine = "StartLine"
            }
        }

        struct Failure: Decodable {
            var message: String
            enum CodingKeys: String, CodingKey { case message = "Message" }
        }

        enum CodingKeys: String, CodingKey {
            case address = "Address", moduleName = "ModuleName", symbol = "Symbol", error = "Error"
        }
    }
}
