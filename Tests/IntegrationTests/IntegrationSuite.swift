import HangWatch
import HangWatchAnalysis
import HangWatchRender
import HangWatchSymbols
import HangWatchTestSupport
import Testing

/// Every test that runs real programs under `hangwatch run` lives under this
/// suite and runs one at a time: they measure durations, and a 2-core VM
/// running several demos at once would measure the scheduler instead.
@Suite(.serialized, .exclusiveMachine) enum Integration {}
