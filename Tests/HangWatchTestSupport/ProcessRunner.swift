import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Result of running a real child process to completion.
package struct ProcessResult {
    package var status: Int32
    package var stdout: String
    package var stderr: String
    package init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

package enum ProcessRunner {
    /// Runs `executable` with `arguments`, capturing stdout and stderr, and
    /// kills it if it outlives `timeout` seconds (a hung test must not hang CI).
    package static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                    timeout: TimeInterval = 60, whileRunning: ((Process) -> Void)? = nil) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Drain both pipes concurrently so a chatty child never blocks on a full pipe.
        let outData = DataBox(), errData = DataBox()
        let group = DispatchGroup()
        for (pipe, box) in [(out, outData), (err, errData)] {
            group.enter()
            DispatchQueue.global().async {
                box.set(pipe.fileHandleForReading.readDataToEndOfFile())
                group.leave()
            }
        }
        whileRunning?(process)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            group.wait()
            throw TestFailure("\(executable) did not finish within \(timeout) s; stderr: \(errData.string)")
        }
        process.waitUntilExit()
        group.wait()
        let status = process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
        return ProcessResult(status: status, stdout: outData.string, stderr: errData.string)
    }

    /// Compiles a C demo with the system compiler (no Swift runtime involved).
    /// `flags` go before the source (include paths, defines), `libraries`
    /// after it (`-L`, `-l`, rpaths); both default to none.
    package static func compileC(_ source: String, into dir: URL, name: String, flags: [String] = [],
                                 libraries: [String] = []) throws -> String {
        let output = dir.appendingPathComponent(name).path
        let result = try run("/usr/bin/cc", ["-O2", "-g"] + flags + ["-o", output, source] + libraries + ["-lpthread"])
        guard result.status == 0 else { throw TestFailure("cc failed: \(result.stderr)") }
        return output
    }

    /// Compiles the benchmark program `Bench/NAME.c`, which tests run too, into `dir`.
    package static func compileBench(_ name: String, into dir: URL, flags: [String] = []) throws -> String {
        let source = TestPaths.packageRoot.appendingPathComponent("Bench/\(name).c").path
        return try compileC(source, into: dir, name: name, flags: flags)
    }

    /// The iteration count that a benchmark program's `--calibrate MS` says
    /// takes about `ms` ms of work on this machine.
    package static func calibratedIterations(_ program: String, ms: Int) throws -> UInt64 {
        let output = try run(program, ["--calibrate", "\(ms)"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let iterations = UInt64(output) else { throw TestFailure("\(program) --calibrate \(ms) said '\(output)'") }
        return iterations
    }
}

package final class DataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    package func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
    package var string: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
}

package struct TestFailure: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
