// swift-tools-version:6.0
// hangwatch: hang detection, sampling and call-tree reports for Linux Swift programs.
//
// The preload agent (libhangwatch-agent.so) is deliberately NOT a SwiftPM
// product: SwiftPM links libswiftCore into every dynamic library it builds,
// and the agent must stay pure C so it can be injected into any program.
// The AgentBuilder plugin builds it from CSupport/os + engine + agent with
// the system `cc` (as the Makefile does), a resource of the `hangwatch` target.
import PackageDescription

let package = Package(
    name: "hangwatch",
    products: [
        .library(name: "HangWatch", targets: ["HangWatch"]),
        .executable(name: "hangwatch", targets: ["hangwatch"]),
    ],
    targets: [
        // The OS layer under the engine and attach: each /proc file parsed once, the clock. Pure C.
        .target(
            name: "CHangWatchOS",
            path: "CSupport/os",
            cSettings: [.define("_GNU_SOURCE")]
        ),
        // In-process engine: heartbeat, watchdog, signal sampler, sample log. Pure C.
        .target(
            name: "CHangWatchEngine",
            dependencies: ["CHangWatchOS"],
            path: "CSupport/engine",
            cSettings: [.define("_GNU_SOURCE"), .unsafeFlags(["-fno-omit-frame-pointer", "-funwind-tables"])],
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]
        ),
        // Off-thread DWARF unwinding of captured register + stack copies (libunwind remote API).
        .target(
            name: "CHangWatchUnwind",
            dependencies: ["CHangWatchEngine"],
            path: "CSupport/unwind",
            cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [.linkedLibrary("unwind-x86_64"), .linkedLibrary("unwind")]
        ),
        // `hangwatch attach` / `dump`: watching a running process from outside
        // (/proc heartbeat, per-sample ptrace stops). Pure C; no agent code.
        .target(
            name: "CHangWatchAttach",
            dependencies: ["CHangWatchOS", "CHangWatchEngine"],
            path: "CSupport/attach",
            cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [.linkedLibrary("pthread")]
        ),
        // Linked into the `hangwatch` executable only: libunwind's signal-mask
        // calls answered without a system call (see unwind_mask.c).
        .target(
            name: "CHangWatchCLISupport",
            dependencies: ["CHangWatchOS", "CHangWatchEngine"],
            path: "CSupport/cli",
            cSettings: [.define("_GNU_SOURCE")]
        ),
        // libelf, read from Swift for symbol tables and build-ids.
        .systemLibrary(name: "CLibElf", path: "Sources/CLibElf"),
        // zlib, for gzip-compressed pprof profiles.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // The Swift side, one target per stage, each depending only on those above it
        // in this list: model → symbols → capture → analysis → render → live → session → library → CLI.
        // SwiftPM refuses cycles between targets, so no stage can reach back up.

        // The report model and its JSON file (written and read): what every other stage shares.
        .target(name: "HangWatchModel"),
        // ELF symbol tables, build-ids, demangling, source lines: addresses to names.
        .target(name: "HangWatchSymbols", dependencies: ["HangWatchModel", "CLibElf"],
                linkerSettings: [.linkedLibrary("stdc++")]),
        // The sample-log reader: records in, unwound samples out (libunwind via CHangWatchUnwind);
        // `attach` drives the CHangWatchAttach poller into a sample log of its own. The last stage
        // that reads the engine's C records: it decodes them (Decoded/) into Swift values.
        .target(name: "HangWatchCapture",
                dependencies: ["HangWatchSymbols", "CHangWatchEngine", "CHangWatchUnwind", "CHangWatchAttach"]),
        // Captured samples to the report: report builder, call trees, filters, diff, metrics,
        // hang states (CPU clock, lock owners), and `dump`'s resolved thread stacks. Swift only.
        .target(name: "HangWatchAnalysis", dependencies: ["HangWatchCapture"]),
        // gzip framing over the system zlib, for pprof profiles: the one C library render needs,
        // kept behind a Swift seam so that no report stage imports a C module.
        .target(name: "HangWatchGzip", dependencies: ["CZlib"]),
        // The report in every format (text, markdown, HTML, exports) and diffs, with display names.
        .target(name: "HangWatchRender", dependencies: ["HangWatchAnalysis", "HangWatchGzip"]),
        // Hangs as they happen: live hang events, the (rotating) event file, the OTLP exporter.
        .target(name: "HangWatchLive", dependencies: ["HangWatchRender"]),
        // One capture whichever way in (preload, in-process, attach): the configuration's one
        // translation to C, log sizing, the reader's turn, the live sinks, the report.
        .target(name: "HangWatchSession", dependencies: ["HangWatchLive", "CHangWatchEngine", "CHangWatchAttach"]),
        // The library face: HangWatcher, FrameMonitor, LoopHeartbeat, re-exporting the model.
        .target(name: "HangWatch", dependencies: ["HangWatchSession", "CHangWatchEngine"]),
        // The command-line tool: argument parsing and process handling over the stages.
        .executableTarget(name: "hangwatch", dependencies: ["HangWatch", "CHangWatchCLISupport"],
                          plugins: ["AgentBuilder", "RevisionStamp"]),
        // Compiles the preload agent with cc for `swift build` (see the top of this file).
        .plugin(name: "AgentBuilder", capability: .buildTool()),
        // Writes the git revision into the executable, for `hangwatch --version`.
        .plugin(name: "RevisionStamp", capability: .buildTool()),

        // Demos used by the Quick start, the tests and the benchmarks.
        .executableTarget(name: "RunLoopDemo", dependencies: ["DemoSupport"], path: "Demos/RunLoopDemo"),
        .target(name: "DemoSupport", dependencies: ["HangWatch"], path: "Demos/Shared"),
        .executableTarget(name: "DispatchMainDemo", dependencies: ["DemoSupport"], path: "Demos/DispatchMainDemo"),
        .executableTarget(name: "AsyncMainDemo", dependencies: ["DemoSupport"], path: "Demos/AsyncMainDemo"),
        .executableTarget(name: "AsyncPoolDemo", dependencies: ["DemoSupport"], path: "Demos/AsyncPoolDemo"),
        // A test program: Swift Concurrency's observable behaviour, plain against watched.
        .executableTarget(name: "ConcurrencyChecks", dependencies: ["HangWatch"], path: "Tests/programs/ConcurrencyChecks"),
        // A test program: the waits the library redirects in process, plain against watched.
        .executableTarget(name: "InProcessWaitChecks", dependencies: ["HangWatch", "CEventLoopShim"],
                          path: "Tests/programs/InProcessWaitChecks"),
        // A test program: hazards of the redirected waits (signal handlers, fork), plain against watched.
        .target(name: "CInProcessHazards", path: "Tests/programs/CInProcessHazards"),
        .executableTarget(name: "InProcessHazardChecks", dependencies: ["HangWatch", "CInProcessHazards"],
                          path: "Tests/programs/InProcessHazardChecks"),
        .executableTarget(name: "FrameLoopDemo", dependencies: ["DemoSupport", "HangWatch"], path: "Demos/FrameLoopDemo"),
        .executableTarget(name: "WaitDemo", dependencies: ["DemoSupport"], path: "Demos/WaitDemo"),
        .executableTarget(name: "LibraryAPIDemo", dependencies: ["DemoSupport", "HangWatch"], path: "Demos/LibraryAPIDemo"),
        .executableTarget(name: "ThreadPoolDemo", path: "Demos/ThreadPoolDemo"),
        // A server shaped like SwiftNIO's: named epoll loops through a C shim, a parked main thread.
        .target(name: "CEventLoopShim", path: "Demos/CEventLoopShim"),
        .executableTarget(name: "EventLoopServerDemo", dependencies: ["DemoSupport", "CEventLoopShim"],
                          path: "Demos/EventLoopServerDemo"),

        // Benchmark programs for `make bench` (Bench/run.sh).
        .executableTarget(name: "BenchMonitorCost", dependencies: ["HangWatch"], path: "Bench/MonitorCost"),
        .executableTarget(name: "BenchIdleDispatch", dependencies: ["HangWatch"], path: "Bench/IdleDispatch"),
        .executableTarget(name: "BenchPoolJobs", path: "Bench/PoolJobs"),

        // Tests take the shape of the sources: one fast, in-process target per stage, the
        // library face, and the integration tests that launch programs (hangwatch, the
        // demos, compilers, validators, a browser). `swift test --skip IntegrationTests`
        // runs the unit layer alone.
        .target(name: "HangWatchTestSupport", dependencies: ["HangWatch"], path: "Tests/HangWatchTestSupport"),
        .testTarget(name: "HangWatchModelTests", dependencies: ["HangWatchModel", "HangWatchTestSupport"]),
        .testTarget(name: "HangWatchSymbolsTests", dependencies: ["HangWatchSymbols", "HangWatchTestSupport"]),
        .testTarget(name: "HangWatchCaptureTests", dependencies: ["HangWatchCapture", "HangWatchSymbols", "HangWatchTestSupport"]),
        .testTarget(name: "HangWatchAnalysisTests", dependencies: ["HangWatchAnalysis", "HangWatchTestSupport"]),
        .testTarget(name: "HangWatchRenderTests", dependencies: ["HangWatchRender", "HangWatchTestSupport"]),
        .testTarget(name: "HangWatchLiveTests", dependencies: ["HangWatchLive", "HangWatchTestSupport"]),
        .testTarget(name: "HangWatchTests", dependencies: ["HangWatch"]),
        // The integration tests launch programs and wait for them: optimising their own
        // code buys nothing at run time, and its whole-module -O pass is a large part of
        // every CI build (BENCHMARKS.md); -Onone compiles it in a fraction of that.
        .testTarget(name: "IntegrationTests", dependencies: ["HangWatch", "HangWatchTestSupport"],
                    swiftSettings: [.unsafeFlags(["-Onone"])]),
    ]
)
