import Foundation
import HangWatch
import HangWatchAnalysis
import HangWatchCapture
import HangWatchRender

/// `hangwatch dump PID [--format text|json] [-o FILE]`: every thread's stack once.
enum DumpCommand {
    static func main(_ args: [String]) -> Int32 {
        var pids: [String] = []
        var json = false
        var output: String?
        var words = ArgumentWords(args)
        do {
            while let word = words.next() {
                switch word {
                case .positional(let text): pids.append(text)
                case .option(let flag, let inline):
                    switch flag {
                    case "-h", "--help":
                        print(Usage.dump)
                        return 0
                    case "--format":
                        let name = try words.value(of: flag, inline: inline)
                        guard name == "text" || name == "json" else {
                            throw UsageError("unknown format '\(name)' for dump (expected text or json)")
                        }
                        json = name == "json"
                    case "-o", "--output": output = try OptionValues.nonEmpty(words.value(of: flag, inline: inline), for: flag)
                    default: throw UsageError("unknown option '\(flag)' (try 'hangwatch dump --help')")
                    }
                }
            }
            guard pids.count == 1, let text = pids.first else {
                throw UsageError(pids.isEmpty ? "no process id given (usage: hangwatch dump PID [--format text|json])"
                                              : "one process id at a time (got \(pids.count))")
            }
            let pid = try AttachOptions.pid(text)
            let dump: ThreadDump
            let stopAll = CaptureOptions.attachStopBlocked.environmentSwitch == true
            do { dump = try ThreadDump.capture(pid: pid, stopBlockedThreads: stopAll) } catch { return refused(error) }
            let data: Data
            do { data = json ? try dump.json() + Data("\n".utf8) : Data(dump.text().utf8) } catch {
                writeStderr("hangwatch: \(error)")
                return ExitCode.internalError
            }
            return ReportOutput.write(data, to: OutputDestination(path: output, otherwise: .standardOutput))
        } catch let error as UsageError {
            return usageError(error.message)
        } catch {
            return usageError("\(error)")
        }
    }
}
