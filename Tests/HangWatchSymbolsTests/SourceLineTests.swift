import Foundation
import HangWatchModel
import HangWatchSymbols
import HangWatchTestSupport
import Testing

/// `--source-lines` below the CLI: reading llvm-symbolizer's answers. Running it is
/// in IntegrationTests/SymbolizerProcessTests.swift, trees, JSON and text with sources
/// in HangWatchRenderTests/SourceLineRenderTests.swift.
@Suite struct SourceLineTests {
    // MARK: llvm-symbolizer's JSON lines

    /// Lines captured from real `llvm-symbolizer --output-style=JSON` runs
    /// (LLVM 21 from the Swift toolchain, and Debian's LLVM 14 for the error line).
    enum Captured {
        /// A Swift function of RunLoopDemo (release build, with DWARF).
        static let swiftFunction = #"{"Address":"0xbf660","ModuleName":".build/release/RunLoopDemo","Symbol":[{"Column":0,"Discriminator":0,"FileName":"/work/main/Demos/RunLoopDemo/Work.swift","FunctionName":"$s11RunLoopDemo18parseLargeDocumentyyF","Line":66,"StartAddress":"0xbf660","StartFileName":"/work/main/Demos/RunLoopDemo/Work.swift","StartLine":66}]}"#
        /// The Swift toolchain's libFoundation.so: symbols, but no DWARF.
        static let noDwarf = #"{"Address":"0x2a8940","ModuleName":"/opt/swift/usr/lib/swift/linux/libFoundation.so","Symbol":[{"Column":0,"Discriminator":0,"FileName":"","FunctionName":"$s10Foundation014_CFErrorSPIForA10XMLUseOnlyV018unsafelyAssumingIsB0ACyXl_tcfC","Line":0,"StartAddress":"0x2a8940","StartFileName":"","StartLine":0}]}"#
        /// A module file that is gone.
        static let missingFile = #"{"Address":"0x1000","Error":{"Message":"No such file or directory"},"ModuleName":"/nonexistent/libgone.so"}"#
        /// glibc through libc6-dbg's separate debug file: declaration line 23, first instruction on 24.
        static let libcWithDeclaration = #"{"Address":"0xff250","ModuleName":"/usr/lib/x86_64-linux-gnu/libc.so.6","Symbol":[{"Column":1,"Discriminator":0,"FileName":"./misc/../sysdeps/posix/usleep.c","FunctionName":"usleep","Line":24,"StartAddress":"0xff250","StartFileName":"./misc/../sysdeps/posix/usleep.c","StartLine":23}]}"#
        /// A C function built by gcc (`cc -g -O2`, DWARF 5): LLVM gives its declaration line but no file.
        static let gccFunction = #"{"Address":"0x1df0","ModuleName":"/tmp/epoll_loop","Symbol":[{"Column":1,"Discriminator":0,"FileName":"/work/main/Demos/c/epoll_loop.c","FunctionName":"process_batch","Line":155,"StartAddress":"0x1df0","StartFileName":"","StartLine":154}]}"#
        /// glibc, the same way, at an address inside the function.
        static let libcWithoutDeclarationFile = #"{"Address":"0x29d90","ModuleName":"/usr/lib/x86_64-linux-gnu/libc.so.6","Symbol":[{"Column":10,"Discriminator":0,"FileName":"./iconv/gconv_conf.c","FunctionName":"__gconv_read_conf","Line":492,"StartAddress":"0x29b50","StartFileName":"","StartLine":462}]}"#
        /// An address in inlined code: innermost frame first (no line of its own), the function last.
        static let inlined = #"{"Address":"0xbf68f","ModuleName":".build/release/RunLoopDemo","Symbol":[{"Column":23,"Discriminator":0,"FileName":"/work/main/Sources/HangWatch/Render/TextTable.swift","FunctionName":"$sSlsE3mapySayqd__Gqd__7ElementQzqd_0_YKXEqd_0_YKs5ErrorRd_0_r0_lFSnySiG_Sis5NeverOTg5","Line":0,"StartAddress":"","StartFileName":"","StartLine":0},{"Column":38,"Discriminator":0,"FileName":"/work/main/Sources/HangWatch/Render/TextTable.swift","FunctionName":"$s9HangWatch9TextTableV5lines5width6marginSaySSGSi_SStF","Line":19,"StartAddress":"0xbf470","StartFileName":"/work/main/Sources/HangWatch/Render/TextTable.swift","StartLine":18}]}"#
    }

    @Test func parsesCapturedSymbolizerLines() throws {
        #expect(SymbolizerAnswer(jsonLine: Captured.swiftFunction)
            == SymbolizerAnswer(modulePath: ".build/release/RunLoopDemo", address: 0xbf660,
                                source: "/work/main/Demos/RunLoopDemo/Work.swift:66"))
        // No DWARF: the empty file and line 0 are dropped, not shown as ":0".
        #expect(SymbolizerAnswer(jsonLine: Captured.noDwarf)
            == SymbolizerAnswer(modulePath: "/opt/swift/usr/lib/swift/linux/libFoundation.so", address: 0x2a8940, source: nil))
        #expect(SymbolizerAnswer(jsonLine: Captured.missingFile)
            == SymbolizerAnswer(modulePath: "/nonexistent/libgone.so", address: 0x1000, source: nil,
                                error: "No such file or directory"))
        // The declaration line wins over the first instruction's line.
        #expect(SymbolizerAnswer(jsonLine: Captured.libcWithDeclaration)?.source == "./misc/../sysdeps/posix/usleep.c:23")
        // No declaration file: the address's file with the declaration line.
        #expect(SymbolizerAnswer(jsonLine: Captured.gccFunction)?.source == "/work/main/Demos/c/epoll_loop.c:154")
        #expect(SymbolizerAnswer(jsonLine: Captured.libcWithoutDeclarationFile)?.source == "./iconv/gconv_conf.c:462")
        // The function, not the inlined callee, and its declaration.
        #expect(SymbolizerAnswer(jsonLine: Captured.inlined)?.source
            == "/work/main/Sources/HangWatch/Render/TextTable.swift:18")
    }

    @Test func refusesLinesThatAreNotAnswers() {
        #expect(SymbolizerAnswer(jsonLine: "") == nil)
        #expect(SymbolizerAnswer(jsonLine: "??:0:0") == nil)
        #expect(SymbolizerAnswer(jsonLine: #"{"Address":"zz","ModuleName":"/a"}"#) == nil)
        #expect(SymbolizerAnswer(jsonLine: String(Captured.swiftFunction.dropLast(3))) == nil)
    }
}
