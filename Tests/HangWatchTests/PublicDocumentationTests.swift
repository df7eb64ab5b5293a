import Foundation
import Testing

/// Every public declaration of the library and of what it re-exports carries a
/// `///` doc comment: the report model is a contract with other tools, and its
/// docs are generated from these comments.
///
/// A plain text scan, not a Swift parser: a line that starts with `public` or
/// `open` (after attributes) is a declaration, and the nearest line above it
/// that is not an attribute must be a `///` line.
@Suite struct PublicDocumentationTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The library face and the model, whole, and the files of the declarations the
    /// library re-exports from the stages below (see Sources/HangWatch/Exports.swift).
    /// The stages' other declarations are `package` (or public in a module the
    /// library does not re-export): they are not API.
    static let scanned = ["Sources/HangWatchModel", "Sources/HangWatch",
                          "Sources/HangWatchCapture/CaptureConfig.swift", "Sources/HangWatchRender/ReportFormat.swift"]

    /// `file:line: declaration` for each public declaration without a doc comment.
    static func undocumented(in text: String, file: String) -> [String] {
        var missing: [String] = []
        var previous: [String] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            var declaration = line
            while declaration.hasPrefix("@"), let space = declaration.firstIndex(of: " ") {
                declaration = String(declaration[declaration.index(after: space)...])
            }
            if declaration.hasPrefix("public ") || declaration.hasPrefix("open ") {
                let above = previous.last { !$0.hasPrefix("@") } ?? ""
                if !above.hasPrefix("///") && !above.hasSuffix("*/") {
                    missing.append("\(file):\(index + 1): \(line)")
                }
            }
            previous.append(line)
        }
        return missing
    }

    static func sourceFiles() throws -> [URL] {
        var files: [URL] = []
        for path in scanned {
            let url = packageRoot.appendingPathComponent(path)
            guard url.pathExtension != "swift" else {
                files.append(url)
                continue
            }
            let walker = try #require(FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil))
            for case let file as URL in walker where file.pathExtension == "swift" { files.append(file) }
        }
        return files.sorted { $0.path < $1.path }
    }

    @Test func everyPublicDeclarationHasADocComment() throws {
        let files = try Self.sourceFiles()
        #expect(files.count > 15, "found only \(files.count) source files under \(Self.packageRoot.path)")
        var declarations = 0
        var missing: [String] = []
        for url in files {
            let text = try String(contentsOf: url, encoding: .utf8)
            declarations += text.split(separator: "\n").filter {
                let line = $0.trimmingCharacters(in: .whitespaces)
                return line.hasPrefix("public ") || line.hasPrefix("open ")
            }.count
            missing += Self.undocumented(in: text, file: url.lastPathComponent)
        }
        #expect(declarations > 100, "the scan found only \(declarations) public declarations")
        #expect(missing.isEmpty, "public declarations without a /// comment:\n\(missing.joined(separator: "\n"))")
    }

    /// The scanner itself: it must catch what it is there to catch.
    @Test func theScanFindsAMissingComment() {
        let text = """
        /// Documented.
        public struct A {
            /// Documented.
            @discardableResult
            public func b() -> Int { 1 }
            public var c = 0
            // A plain comment is not documentation.
            public static let d = 1
            var e = 0
        }
        """
        let missing = Self.undocumented(in: text, file: "X.swift")
        #expect(missing == ["X.swift:6: public var c = 0", "X.swift:8: public static let d = 1"])
    }
}
