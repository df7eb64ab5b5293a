// Short, Time Profiler-style names for the text report.
//
// The report keeps full demangled names (the JSON file is for tools and for
// telling overloads apart); a terminal line has room for about 50 columns of
// name. Instruments shows Swift functions the way they are called: the type
// and function name with argument labels, `RunLoop.run(mode:before:)`, not
// `Foundation.RunLoop.run(mode: Foundation.RunLoop.Mode, before:
// FoundationEssentials.Date) -> Swift.Bool`. These rules produce that form
// from the demangled text.
//
// Module names: a function's leading module is dropped when the image it runs
// in is that module (`RunLoopDemo.parse()` in RunLoopDemo, `Foundation.X` in
// libFoundation.so, `Swift.X` in libswiftCore.so) since the image is printed
// next to the name. Otherwise it stays: `Swift.Array.append(_:)` in an app's
// image says the standard library's generic code was specialized into the app.

/// A short name for one frame, and where its function's base name ends.
package struct SymbolDisplayName: Sendable, Equatable {
    /// The short form, e.g. `closure #2 in runSequence(_:)`.
    package var text: String
    /// Character offset just past the function's base name (`runSequence`),
    /// which a cut to fit a width must not split; nil when there is no such name.
    package var baseNameEnd: Int?

    package init(text: String, baseNameEnd: Int?) {
        self.text = text
        self.baseNameEnd = baseNameEnd
    }

    /// The short form of `symbol` (a demangled Swift or C++ name, or a C
    /// name) for a frame in `image` (a path or file name).
    package init(symbol: String, image: String) {
        self = DisplayNameRules(module: Self.moduleName(ofImage: image)).displayName(for: symbol)
    }

    /// The text cut to at most `width` characters. Cuts happen at the end,
    /// where argument labels and conformances are; when even the base name
    /// does not fit, the front goes instead, so the base name is never split.
    package func fitted(to width: Int) -> String {
        guard text.count > width else { return text }
        guard width > 1 else { return width == 1 ? "…" : "" }
        guard let baseNameEnd, baseNameEnd > width - 1 else {
            return String(text.prefix(width - 1)) + "…"
        }
        let endsAtBase = baseNameEnd >= text.count
        let kept = width - (endsAtBase ? 1 : 2)
        let head = text.prefix(baseNameEnd)
        return "…" + String(head.suffix(kept)) + (endsAtBase ? "" : "…")
    }

    /// The Swift module an image holds: `RunLoopDemo` for the executable,
    /// `Foundation` for libFoundation.so, `Swift` for libswiftCore.so,
    /// `_Concurrency` for libswift_Concurrency.so.
    package static func moduleName(ofImage image: String) -> String {
        var name = Substring(image.split(separator: "/").last ?? Substring(image))
        if let so = name.firstRange(of: ".so") { name = name[..<so.lowerBound] }
        guard name.hasPrefix("lib") else { return String(name) }
        name = name.dropFirst(3)
        if name == "swiftCore" { return "Swift" }
        if name.hasPrefix("swift"), name.count > 5 { name = name.dropFirst(5) }
        return String(name)
    }
}

/// The rewriting rules, for one image's module.
struct DisplayNameRules {
    let module: String

    /// A short name in three pieces: `closure #2 in ` + `runSequence` + `(_:)`.
    private struct Parts {
        var prefix = ""
        var name: String
        var suffix = ""
        /// False for text these rules do not understand: it is shown as it is,
        /// and no base name is protected when it is cut.
        var nameIsBaseName = true

        func adding(prefix more: String) -> Parts {
            var copy = self
            copy.prefix = more + prefix
            return copy
        }
    }

    func displayName(for symbol: String) -> SymbolDisplayName {
        // Names hangwatch made up (`<all>`, `libc.so.6+0x3f960`, `0x1234`) stay as they are.
        if symbol.isEmpty || symbol.hasPrefix("<") || symbol.hasPrefix("0x") || symbol.contains("+0x") {
            return SymbolDisplayName(text: symbol, baseNameEnd: nil)
        }
        if !symbol.contains(" ") && !symbol.contains("(") && !symbol.contains("<") {
            // A qualified Swift name without parameters (`Type.__deallocating_deinit`) ends
            // in its base name; a C name is best cut at its end.
            let text = dropModule(symbol)
            return SymbolDisplayName(text: text, baseNameEnd: symbol.contains(".") ? text.count : nil)
        }
        if symbol.contains("::") { return cxx(symbol) }
        let parts = swiftEntity(Self.withoutNoise(symbol))
        return SymbolDisplayName(text: parts.prefix + parts.name + parts.suffix,
                                 baseNameEnd: parts.nameIsBaseName ? parts.prefix.count + parts.name.count : nil)
    }

    // MARK: Swift

    /// Removes what never helps a reader: the linker's suffix on outlined
    /// copies and the private discriminator (`(name in _2DF8E098…)` -> `name`).
    private static func withoutNoise(_ symbol: String) -> String {
        var text = symbol
        if let suffix = text.firstRange(of: " with unmangled suffix ") {
            text = String(text[..<suffix.lowerBound])
        }
        var searchFrom = text.startIndex
        while let marker = text[searchFrom...].firstRange(of: " in _") {
            // Only "(name in _<hex>)" is a discriminator; "closure #1 in _FoundationCollections.X" is not.
            guard let open = text[..<marker.lowerBound].lastIndex(of: "("),
                  let close = text[marker.upperBound...].firstIndex(of: ")"),
                  text[marker.upperBound..<close].allSatisfy(\.isHexDigit),
                  !text[text.index(after: open)..<marker.lowerBound].contains(where: { "() ".contains($0) })
            else {
                searchFrom = marker.upperBound
                continue
            }
            let name = text[text.index(after: open)..<marker.lowerBound]
            let offset = text.distance(from: text.startIndex, to: open) + name.count
            text.replaceSubrange(open...close, with: name)
            searchFrom = text.index(text.startIndex, offsetBy: offset)
        }
        // "destroy value witness for T" reads as well as "destroy for T".
        return text.replacing(" value witness for ", with: " for ")
    }

    /// One entity, with the wrappers the compiler adds around functions;
    /// text that matches no rule comes back unchanged.
    private func swiftEntity(_ text: String) -> Parts {
        let scan = DemangledText(text)
        for (wrapper, shown) in Self.wrappers where text.hasPrefix(wrapper) {
            let inner = swiftEntity(String(text.dropFirst(wrapper.count)))
            // Specializations nest ("function signature specialization … of generic specialization …").
            return shown == "specialized " && inner.prefix.hasPrefix(shown) ? inner : inner.adding(prefix: shown)
        }
        if let specialized = specialization(scan) {
            let inner = swiftEntity(specialized)
            return inner.prefix.hasPrefix("specialized ") ? inner : inner.adding(prefix: "specialized ")
        }
        if text.hasPrefix("reabstraction thunk") { return Parts(name: "reabstraction thunk", nameIsBaseName: false) }
        if let partial = asyncPartialFunction(scan) { return swiftEntity(partial) }
        if text.hasPrefix("default argument "), let of = scan.firstTopLevel(" of ") {
            return swiftEntity(scan.string((of + 4)..<scan.count)).adding(prefix: scan.string(0..<(of + 4)))
        }
        return witness(scan) ?? closureOrLocalFunction(scan) ?? function(scan)
            ?? Parts(name: text, nameIsBaseName: false)
    }

    /// Wrappers kept (shortened) in front of the wrapped function's short name.
    private static let wrappers: [(String, String)] = [
        ("merged ", ""),
        ("partial apply forwarder for ", "partial apply for "),
        ("partial apply for ", "partial apply for "),
        ("dispatch thunk of ", "dispatch thunk of "),
        ("@objc ", "@objc "),
        ("specialized ", "specialized "),
    ]

    /// `generic specialization <…> of X`, `function signature specialization <…> of X`,
    /// and their variants: returns X.
    private func specialization(_ scan: DemangledText) -> String? {
        guard let keyword = scan.firstTopLevel(" specialization <"),
              scan.string(0..<keyword).allSatisfy({ $0.isLetter || $0 == " " || $0 == "-" }),
              let end = scan.endOfGroup(openingAt: keyword + " specialization ".count),
              scan.hasPrefix(" of ", at: end)
        else { return nil }
        return scan.string((end + 4)..<scan.count)
    }

    /// `(1) suspend resume partial function for X` (a piece of an async function): X.
    private func asyncPartialFunction(_ scan: DemangledText) -> String? {
        guard scan.hasPrefix("("), let end = scan.endOfGroup(openingAt: 0),
              scan.string(1..<(end - 1)).allSatisfy(\.isNumber),
              let marker = scan.firstTopLevel(" partial function for ", from: end)
        else { return nil }
        return scan.string((marker + " partial function for ".count)..<scan.count)
    }

    /// `protocol witness for P.f(x: T) -> U in conformance C : P in M`
    /// -> `protocol witness for P.f(x:) in conformance C`.
    private func witness(_ scan: DemangledText) -> Parts? {
        let start = "protocol witness for ".count
        guard scan.hasPrefix("protocol witness for "), let conformance = scan.firstTopLevel(" in conformance ", from: start),
              let requirement = function(DemangledText(scan.string(start..<conformance)))
        else { return nil }
        let typeStart = conformance + " in conformance ".count
        let typeEnd = scan.firstTopLevel(" : ", from: typeStart) ?? scan.count
        // A conditional conformance starts with its requirements: "< where A: Hashable> Swift.RangeSet<A>".
        let type = dropModule(String(scan.removingGroups(startingWith: "<", in: typeStart..<typeEnd)
            .drop { $0 == " " }))
        var parts = requirement.adding(prefix: "protocol witness for ")
        parts.suffix += " in conformance " + type
        return parts
    }

    /// `closure #2 @Sendable () -> () in X` -> `closure #2 in X'`, and local
    /// functions `inner #1 (Swift.Int) -> Swift.Int in X` -> `inner #1 in X'`.
    /// A local function's type has no labels, so none are shown for it.
    private func closureOrLocalFunction(_ scan: DemangledText) -> Parts? {
        guard let hash = scan.firstTopLevel(" #") else { return nil }
        let head = scan.string(0..<hash)
        let isClosure = head == "closure" || head == "implicit closure"
        let isLocalFunction = !head.isEmpty && head.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        guard isClosure || isLocalFunction else { return nil }
        var numberEnd = hash + 2
        while numberEnd < scan.count, scan.characters[numberEnd].isNumber { numberEnd += 1 }
        guard numberEnd > hash + 2, let inKeyword = scan.firstTopLevel(" in ", from: numberEnd) else { return nil }
        let context = swiftEntity(scan.string((inKeyword + 4)..<scan.count))
        if isClosure { return context.adding(prefix: scan.string(0..<numberEnd) + " in ") }
        return Parts(name: head, suffix: scan.string(hash..<numberEnd) + " in " + context.prefix + context.name
                     + context.suffix)
    }

    /// `static (extension in M):Module.Type.name<Generics>(label: T, U) async throws -> R`
    /// -> `static Type.name(label:_:)`; accessors (`.getter : T`) lose their type.
    private func function(_ scan: DemangledText) -> Parts? {
        var start = 0
        var prefix = ""
        for keyword in ["static ", "class "] where scan.hasPrefix(keyword) {
            prefix = keyword
            start = keyword.count
        }
        if scan.hasPrefix("(extension in ", at: start), let end = scan.endOfGroup(openingAt: start),
           scan.hasPrefix(":", at: end) {
            start = end + 1
        }
        // The name runs up to its parameter list, an accessor's " : Type", or the end.
        var nameEnd = scan.count
        var parameters: Range<Int>?
        if let open = scan.firstTopLevel("(", from: start), let close = scan.endOfGroup(openingAt: open) {
            nameEnd = open
            parameters = (open + 1)..<(close - 1)
        }
        if let colon = scan.firstTopLevel(" : ", from: start), colon < nameEnd {
            nameEnd = colon
            parameters = nil
        }
        guard start < nameEnd else { return nil }
        let name = dropModule(scan.removingGroups(startingWith: "<", in: start..<nameEnd))
        guard !name.isEmpty, !name.contains(" ") || name.hasSuffix("fix") else { return nil }
        return Parts(prefix: prefix, name: name, suffix: parameters.map { labels(scan, $0) } ?? "")
    }

    /// `(mode: RunLoop.Mode, _: Int, Swift.Bool)` -> `(mode:_:_:)`.
    private func labels(_ scan: DemangledText, _ range: Range<Int>) -> String {
        guard !range.isEmpty else { return "()" }
        let labels = scan.splitTopLevel(range, separator: ", ").map { piece -> String in
            let text = scan.string(piece)
            // "label: Type", or a bare "label:" in a name that is already short.
            guard let colon = text.firstRange(of: ": ") ?? (text.hasSuffix(":") ? text.firstRange(of: ":") : nil)
            else { return "_:" }
            let label = text[..<colon.lowerBound]
            let isLabel = !label.isEmpty && label.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
            return isLabel ? label + ":" : "_:"
        }
        return "(" + labels.joined() + ")"
    }

    /// `name` without its leading module when that module is this image's.
    private func dropModule(_ name: String) -> String {
        guard !module.isEmpty, name.hasPrefix(module + "."), name.count > module.count + 1 else { return name }
        return String(name.dropFirst(module.count + 1))
    }

    // MARK: C++

    /// `bool ns::Type<Args>::method<T>(ns::Arg, unsigned int) const` -> `ns::Type<…>::method<…>(…)`:
    /// no return type, template arguments and parameter types elided.
    private func cxx(_ symbol: String) -> SymbolDisplayName {
        // Operators (`operator()`, `operator<`) defeat the bracket rules; keep them whole.
        guard !symbol.contains("operator") else { return SymbolDisplayName(text: symbol, baseNameEnd: nil) }
        let masked = symbol.replacing("(anonymous namespace)", with: "{anonymous}")
        let scan = DemangledText(masked)
        let open = scan.firstTopLevel("(") ?? scan.count
        var nameStart = 0
        for piece in scan.splitTopLevel(0..<open, separator: " ") where !piece.isEmpty {
            nameStart = piece.lowerBound  // the last top-level word is the name; earlier ones the return type
        }
        var name = ""
        var index = nameStart
        while index < open {
            if scan.characters[index] == "<", let end = scan.endOfGroup(openingAt: index) {
                name += "<…>"
                index = end
            } else {
                name.append(scan.characters[index])
                index += 1
            }
        }
        name = name.replacing("{anonymous}", with: "(anonymous namespace)")
        guard open < scan.count, let close = scan.endOfGroup(openingAt: open) else {
            return SymbolDisplayName(text: name, baseNameEnd: name.count)
        }
        let parameters = close - open > 2 ? "(…)" : "()"
        return SymbolDisplayName(text: name + parameters, baseNameEnd: name.count)
    }
}
