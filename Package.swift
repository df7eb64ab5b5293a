// swift-tools-version:6.0
// hangwatch: hang detection, sampling and call-tree reports for Linux Swift programs.
//
// The preload agent (libhangwatch-agent.so) is deliberately NOT a SwiftPM
// product: SwiftPM links libswiftCore into every dynamic library it builds,
// and the agent must stay pure C so it can be injected into any program.
// The Makefile builds it from CSupport/engine + CSupport/agent with `cc`.
import PackageDescription

let package = Package(
    name: "hangwatch",
    products: [
        .library(name: "HangWatch", targets: ["HangWatch"]),
        .executable(name: "hangwatch", targets: ["hangwatch"]),
    ],
    targets: [
        // In-process engine: heartbeat, watchdog, signal sampler, sample log. Pure C.
        .target(
            name: "CHangWatchEngine",
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
        // libelf, read from Swift for symbol tables and build-ids.
        .systemLibrary(name: "CLibElf", path: "Sources/CLibElf"),
        // zlib, for gzip-compressed pprof profiles.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .target(
            name: "HangWatch",
            dependencies: ["CHangWatchEngine", "CHangWatchUnwind", "CLibElf", "CZlib"],
            linkerSettings: [.linkedLibrary("stdc++")]
        ),
        .executableTarget(name: "hangwatch", dependencies: ["HangWatch"]),

        // Demos used by the Quick start, the tests and the benchmarks.
        .executableTarget(name: "RunLoopDemo", dependencies: ["HangWatch"], path: "Demos/RunLoopDemo"),
        .target(name: "DemoSupport", dependencies: ["HangWatch"], path: "Demos/Shared"),
        .executableTarget(name: "DispatchMainDemo", dependencies: ["DemoSupport"], path: "Demos/DispatchMainDemo"),
        .executableTarget(name: "AsyncMainDemo", dependencies: ["DemoSupport"], path: "Demos/AsyncMainDemo"),
        .executableTarget(name: "FrameLoopDemo", dependencies: ["DemoSupport", "HangWatch"], path: "Demos/FrameLoopDemo"),

        // Benchmark programs for `make bench` (Bench/run.sh).
        .executableTarget(name: "BenchMonitorCost", dependencies: ["HangWatch"], path: "Bench/MonitorCost"),
        .executableTarget(name: "BenchIdleDispatch", dependencies: ["HangWatch"], path: "Bench/IdleDispatch"),

        .testTarget(name: "HangWatchTests", dependencies: ["HangWatch"]),
    ]
)
