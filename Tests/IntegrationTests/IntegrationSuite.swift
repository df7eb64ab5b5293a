import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

/// Every test that runs real programs under `hangwatch run` lives under this
/// suite and runs one at a time: they measure durations, and a 2-core VM
/// running several demos at once would measure the scheduler instead. (One
/// exception inside a test: WrapperSafety's pairs of the same program, plain
/// and watched, run side by side; they spend their time in timed waits.)
@Suite(.serialized, .exclusiveMachine) enum Integration {}
