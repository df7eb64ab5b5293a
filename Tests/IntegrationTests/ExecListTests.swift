import Foundation
import HangWatchTestSupport
import Testing

extension Integration {
    /// The list forms of exec hand the new image the same arguments and, for
    /// execle, exactly the environment given (the one after the list's NULL).
    @Suite struct ExecList {
        @Test(arguments: ["l", "lp", "le"]) func listExecsSeeWhatPlainOnesSee(form: String) throws {
            let program = try SafetyProgram.build("execl_family")
            let plain = try program.plain([form])
            let watched = try program.watched([form])
            #expect(plain.result.status == 0 && watched.result.status == plain.result.status,
                    "plain \(plain.result.status) watched \(watched.result.status): \(watched.result.stderr)")
            #expect(watched.result.stdout == plain.result.stdout, "plain [\(plain.result.stdout)] watched [\(watched.result.stdout)]")
            if form == "le" { #expect(plain.result.stdout == "HW_EXECLE=1\nSECOND=two\n", "\(plain.result.stdout)") }
        }
    }
}
