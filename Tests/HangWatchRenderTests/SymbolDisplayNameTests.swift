import HangWatchAnalysis
import HangWatchModel
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

/// The short names of the text report. Every input below is a real demangled
/// name: from RunLoopDemo's reports, from `swift demangle` over the symbols of
/// the toolchain's libswiftCore / libFoundation / libFoundationEssentials, or
/// from a small Swift file compiled into module RunLoopDemo. The expected short
/// forms follow `swift demangle --simplified` (Xcode's and Instruments' style),
/// except that a module is kept when the image is not that module.
@Suite struct SymbolDisplayNameTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var image: String
        var symbol: String
        var expected: String
        var testDescription: String { expected }
    }

    static let cases: [Case] = [
        // RunLoopDemo's own hangs.
        Case(image: "libFoundation.so",
             symbol: "Foundation.RunLoop.run(mode: Foundation.RunLoop.Mode, before: FoundationEssentials.Date) -> Swift.Bool",
             expected: "RunLoop.run(mode:before:)"),
        Case(image: "/work/main/.build/release/RunLoopDemo",
             symbol: "closure #2 @Sendable () -> () in RunLoopDemo.runSequence(_: Swift.Array<RunLoopDemo.Step>, "
                 + "firstDelayMs: Swift.Double, index: Swift.Int) -> ()",
             expected: "closure #2 in runSequence(_:firstDelayMs:index:)"),
        Case(image: "RunLoopDemo",
             symbol: "partial apply forwarder for closure #1 @Sendable (Foundation.Timer) -> () in "
                 + "RunLoopDemo.after(Swift.Double, @Sendable () -> ()) -> ()",
             expected: "partial apply for closure #1 in after(_:_:)"),
        Case(image: "libFoundation.so",
             symbol: "@objc Foundation.__NSFireTimer(_: Swift.Optional<__C.CFRunLoopTimerRef>, "
                 + "info: Swift.Optional<Swift.UnsafeMutableRawPointer>) -> ()",
             expected: "@objc __NSFireTimer(_:info:)"),
        Case(image: "RunLoopDemo",
             symbol: "RunLoopDemo.compareRecords(Swift.Optional<Swift.UnsafeRawPointer>, "
                 + "Swift.Optional<Swift.UnsafeRawPointer>) -> Swift.Int32",
             expected: "compareRecords(_:_:)"),
        Case(image: "RunLoopDemo", symbol: "RunLoopDemo.parseLargeDocument() -> ()", expected: "parseLargeDocument()"),
        Case(image: "RunLoopDemo",
             symbol: "RunLoopDemo.checksum(_: Swift.UnsafeBufferPointer<Swift.UInt8>, until: Swift.UInt64) -> Swift.UInt64",
             expected: "checksum(_:until:)"),
        Case(image: "libswiftCore.so", symbol: "Swift._ContiguousArrayStorage.__deallocating_deinit",
             expected: "_ContiguousArrayStorage.__deallocating_deinit"),
        Case(image: "libswiftCore.so",
             symbol: "bool swift::RefCounts<swift::RefCountBitsT<(swift::RefCountInlinedness)1> >::doDecrementSlow"
                 + "<(swift::PerformDeinit)1>(swift::RefCountBitsT<(swift::RefCountInlinedness)1>, unsigned int)",
             expected: "swift::RefCounts<…>::doDecrementSlow<…>(…)"),
        // A module other than the image's stays: the image alone would not say whose code it is.
        Case(image: "RunLoopDemo",
             symbol: "Foundation.RunLoop.run(mode: Foundation.RunLoop.Mode, before: FoundationEssentials.Date) -> Swift.Bool",
             expected: "Foundation.RunLoop.run(mode:before:)"),
        // The standard library and its wrappers.
        Case(image: "/opt/swift/usr/lib/swift/linux/libswiftCore.so",
             symbol: "generic specialization <Swift.String> of Swift.String.replaceSubrange<A where A: Swift.Collection, "
                 + "A.Element == Swift.Character>(_: Swift.Range<Swift.String.Index>, with: A) -> ()",
             expected: "specialized String.replaceSubrange(_:with:)"),
        Case(image: "libswiftCore.so",
             symbol: "function signature specialization <Arg[2] = Dead> of generic specialization <serialized, "
                 + "Swift._ValidUTF8Buffer> of (extension in Swift):Swift.RangeReplaceableCollection.init("
                 + "repeating: A.Element, count: Swift.Int) -> A",
             expected: "specialized RangeReplaceableCollection.init(repeating:count:)"),
        Case(image: "libswiftCore.so",
             symbol: "protocol witness for Swift.Collection.formIndex(after: inout A.Index) -> () in conformance "
                 + "Swift.String.UTF8View : Swift.Collection in Swift",
             expected: "protocol witness for Collection.formIndex(after:) in conformance String.UTF8View"),
        Case(image: "libswiftCore.so",
             symbol: "protocol witness for Swift.Hashable.hash(into: inout Swift.Hasher) -> () in conformance "
                 + "< where A: Swift.Hashable> Swift.RangeSet<A> : Swift.Hashable in Swift",
             expected: "protocol witness for Hashable.hash(into:) in conformance RangeSet"),
        Case(image: "libswiftCore.so",
             symbol: "static Swift.UInt16./ infix(Swift.UInt16, Swift.UInt16) -> Swift.UInt16",
             expected: "static UInt16./ infix(_:_:)"),
        Case(image: "libswiftCore.so",
             symbol: "static Swift.Int.< infix(Swift.Int, Swift.Int) -> Swift.Bool",
             expected: "static Int.< infix(_:_:)"),
        Case(image: "libswiftCore.so",
             symbol: "(extension in Swift):Swift.ExpressibleByStringLiteral< where A.ExtendedGraphemeClusterLiteralType == "
                 + "A.StringLiteralType>.init(extendedGraphemeClusterLiteral: A.ExtendedGraphemeClusterLiteralType) -> A",
             expected: "ExpressibleByStringLiteral.init(extendedGraphemeClusterLiteral:)"),
        Case(image: "libswiftCore.so",
             symbol: "(4) suspend resume partial function for Swift.TaskLocal.withValueImpl<A>(_: __owned A, operation: "
                 + "() async throws -> A1, isolation: isolated Swift.Actor?, file: Swift.String, line: Swift.UInt) "
                 + "async throws -> A1",
             expected: "TaskLocal.withValueImpl(_:operation:isolation:file:line:)"),
        Case(image: "libswiftCore.so", symbol: "merged Swift.Dictionary.init(minimumCapacity: Swift.Int) -> [A : B]",
             expected: "Dictionary.init(minimumCapacity:)"),
        Case(image: "libswiftCore.so",
             symbol: "dispatch thunk of Swift.UnkeyedDecodingContainer.decode(Swift.Float.Type) throws -> Swift.Float",
             expected: "dispatch thunk of UnkeyedDecodingContainer.decode(_:)"),
        Case(image: "libswiftCore.so",
             symbol: "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping "
                 + "@callee_unowned @convention(block) () -> ()",
             expected: "reabstraction thunk"),
        // Foundation: private discriminators and the linker's suffixes go.
        Case(image: "libFoundation.so",
             symbol: "Foundation.FileHandle.(_immediatelyClose in _2DF8E09821905D55FA342549A73ACFB7)"
                 + "(closeFd: Swift.Bool) throws -> ()",
             expected: "FileHandle._immediatelyClose(closeFd:)"),
        Case(image: "libFoundationEssentials.so",
             symbol: "partial apply forwarder for closure #1 (Swift.UnsafeMutablePointer<_FoundationCollections."
                 + "_DequeBufferHeader>, Swift.UnsafeMutablePointer<A>) throws -> A1 in _FoundationCollections.Deque."
                 + "_Storage.update<A>((_FoundationCollections.Deque<A>._UnsafeHandle) throws -> A1) throws -> A1 "
                 + "with unmangled suffix \".7\"",
             expected: "partial apply for closure #1 in _FoundationCollections.Deque._Storage.update(_:)"),
        Case(image: "libFoundationEssentials.so",
             symbol: "closure #1 @Sendable (inout FoundationEssentials.LocaleCache.State) -> FoundationEssentials."
                 + "_LocaleProtocol in FoundationEssentials.LocaleCache.fixedComponents(FoundationEssentials.Locale."
                 + "Components) -> FoundationEssentials._LocaleProtocol",
             expected: "closure #1 in LocaleCache.fixedComponents(_:)"),
        // Swift forms compiled from a test file (module RunLoopDemo).
        Case(image: "RunLoopDemo",
             symbol: "inner #1 <A>(Swift.Int) -> Swift.Int in RunLoopDemo.Parser.parse(document: Swift.String, "
                 + "into: inout [Swift.Int], _: Swift.Bool) throws -> Swift.Int",
             expected: "inner #1 in Parser.parse(document:into:_:)"),
        Case(image: "RunLoopDemo", symbol: "RunLoopDemo.Parser.count.getter : Swift.Int", expected: "Parser.count.getter"),
        Case(image: "RunLoopDemo", symbol: "RunLoopDemo.Parser.subscript.getter : (Swift.Int) -> A",
             expected: "Parser.subscript.getter"),
        Case(image: "RunLoopDemo",
             symbol: "implicit closure #1 (Swift.Int, Swift.Int) -> Swift.Int in static RunLoopDemo.Loader.load<A "
                 + "where A: Swift.Collection, A.Element == Swift.Int>(from: A) -> Swift.Int",
             expected: "implicit closure #1 in static Loader.load(from:)"),
        Case(image: "RunLoopDemo",
             symbol: "(1) suspend resume partial function for closure #1 () async -> Swift.Int in "
                 + "RunLoopDemo.Renderer.render(thumbnails: [Swift.Int]) async -> Swift.Int",
             expected: "closure #1 in Renderer.render(thumbnails:)"),
        Case(image: "RunLoopDemo", symbol: "RunLoopDemo.Renderer.__allocating_init(size: Swift.Int) -> RunLoopDemo.Renderer",
             expected: "Renderer.__allocating_init(size:)"),
        Case(image: "RunLoopDemo",
             symbol: "default argument 0 of RunLoopDemo.Parser.init(items: [A]) -> RunLoopDemo.Parser<A>",
             expected: "default argument 0 of Parser.init(items:)"),
        // C names and names hangwatch makes up pass through untouched.
        Case(image: "libc.so.6", symbol: "qsort_r", expected: "qsort_r"),
        Case(image: "libc.so.6", symbol: "msort_with_tmp.part.0", expected: "msort_with_tmp.part.0"),
        Case(image: "libc.so.6", symbol: "libc.so.6+0x3f960", expected: "libc.so.6+0x3f960"),
        Case(image: "libFoundation.so", symbol: "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__",
             expected: "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__"),
        Case(image: "", symbol: "<all>", expected: "<all>"),
        Case(image: "", symbol: "<stack not fully captured>", expected: "<stack not fully captured>"),
        Case(image: "???", symbol: "0x10", expected: "0x10"),
    ]

    @Test(arguments: cases)
    func shortForm(_ item: Case) {
        #expect(SymbolDisplayName(symbol: item.symbol, image: item.image).text == item.expected)
    }

    /// The whole pipeline on a real symbol: the symbolicator's demangled name of
    /// a function in this test binary, shortened for the binary it lives in.
    @Test func shortensWhatTheSymbolicatorProduces() throws {
        var demangler = Demangler()
        let full = demangler.demangle("$s14HangWatchTests23symbolicatorProbeTargetys5Int32VADF")
        #expect(full == "HangWatchTests.symbolicatorProbeTarget(Swift.Int32) -> Swift.Int32")
        // The test binary is not module HangWatchTests, so the module stays.
        #expect(SymbolDisplayName(symbol: full, image: "HangWatchPackageTests.xctest").text
            == "HangWatchTests.symbolicatorProbeTarget(_:)")
    }

    @Test func moduleOfAnImage() {
        #expect(SymbolDisplayName.moduleName(ofImage: "/opt/swift/usr/lib/swift/linux/libswiftCore.so") == "Swift")
        #expect(SymbolDisplayName.moduleName(ofImage: "libswift_Concurrency.so") == "_Concurrency")
        #expect(SymbolDisplayName.moduleName(ofImage: "libswiftDispatch.so") == "Dispatch")
        #expect(SymbolDisplayName.moduleName(ofImage: "libFoundation.so") == "Foundation")
        #expect(SymbolDisplayName.moduleName(ofImage: "/work/main/.build/release/RunLoopDemo") == "RunLoopDemo")
        #expect(SymbolDisplayName.moduleName(ofImage: "libc.so.6") == "c")
    }

    // MARK: fitting a width

    static let closure = SymbolDisplayName(
        symbol: "closure #2 @Sendable () -> () in RunLoopDemo.runSequence(_: Swift.Array<RunLoopDemo.Step>, "
            + "firstDelayMs: Swift.Double, index: Swift.Int) -> ()",
        image: "RunLoopDemo")

    @Test func fitsUnchangedWhenThereIsRoom() {
        #expect(Self.closure.baseNameEnd == "closure #2 in runSequence".count)
        #expect(Self.closure.fitted(to: 100) == "closure #2 in runSequence(_:firstDelayMs:index:)")
        #expect(Self.closure.fitted(to: 48) == "closure #2 in runSequence(_:firstDelayMs:index:)")
    }

    @Test func cutsTheLabelsNotTheBaseName() {
        #expect(Self.closure.fitted(to: 40) == "closure #2 in runSequence(_:firstDelayM…")
        #expect(Self.closure.fitted(to: 26) == "closure #2 in runSequence…")
    }

    @Test func keepsTheBaseNameWhenEvenItDoesNotFit() {
        let fitted = Self.closure.fitted(to: 20)
        #expect(fitted == "… #2 in runSequence…")
        #expect(fitted.count == 20)
        let deinitName = SymbolDisplayName(symbol: "Swift._ContiguousArrayStorage.__deallocating_deinit",
                                           image: "libswiftCore.so")
        #expect(deinitName.fitted(to: 30) == "…Storage.__deallocating_deinit")
    }

    @Test func cNamesAreCutAtTheEnd() {
        let name = SymbolDisplayName(symbol: "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__",
                                     image: "libFoundation.so")
        #expect(name.baseNameEnd == nil)
        #expect(name.fitted(to: 20) == "__CFRUNLOOP_IS_CALL…")
        #expect(name.fitted(to: 1) == "…")
        #expect(name.fitted(to: 0) == "")
    }

    /// Every short form, at every width, stays within the width.
    @Test func neverExceedsTheWidth() {
        for item in Self.cases {
            let name = SymbolDisplayName(symbol: item.symbol, image: item.image)
            for width in 0...60 {
                #expect(name.fitted(to: width).count <= width, "\(item.expected) at \(width)")
            }
        }
    }
}
