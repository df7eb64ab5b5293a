// hangwatch command-line tool: a thin shell that turns arguments into a
// configuration and calls the HangWatch library.
#if canImport(Glibc)
import Glibc
#endif
import CHangWatchCLISupport
import HangWatch

// Before any unwinding: libunwind's lock takes no signal-mask system calls here.
hw_cli_unwind_mask_shortcut_install()
// Options are read as text; `run` gets the bytes too, for the program's argv.
let rawArguments = Array(RawCommandLine.arguments.dropFirst())
let arguments = rawArguments.map(\.displayed)
let status: Int32
switch arguments.first {
case "run":
    status = RunCommand.main(Array(rawArguments.dropFirst()))
case "report":
    status = ReportCommand.main(Array(arguments.dropFirst()))
case "attach":
    status = AttachCommand.main(Array(arguments.dropFirst()))
case "dump":
    status = DumpCommand.main(Array(arguments.dropFirst()))
case "diff":
    status = DiffCommand.main(Array(arguments.dropFirst()))
case "--version", "-V":
    status = VersionCommand.main(Array(arguments.dropFirst()))
case "help":
    status = HelpCommand.main(Array(arguments.dropFirst()))
case "--help", "-h":
    print(Usage.top)
    status = 0
case nil:
    writeStderr(Usage.top)
    status = ExitCode.usage
case let other?:
    status = usageError("unknown command '\(other)' (try 'hangwatch --help')")
}
exit(status)
