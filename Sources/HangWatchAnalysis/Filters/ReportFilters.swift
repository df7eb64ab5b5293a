// Pure report filters behind `hangwatch report --min-ms/--top/--thread/--focus/--hide-system/--inverted`.

#if canImport(Glibc)
import Glibc
import HangWatchModel
#endif

/// Each filter returns a new report and leaves the input alone. Hang selections
/// keep the hangs' ids, so a filtered report still points at the same hangs as
/// the original, and recompute the summary from the hangs they keep.
extension Report {
    /// Only the hangs that lasted at least `ms`.
    package func keepingHangs(atLeastMs ms: Double) -> Report {
        selectingHangs { $0.durationMs >= ms }
    }

    /// Only the `count` longest hangs (earlier ones first on equal durations), in their original order.
    package func keepingLongestHangs(_ count: Int) -> Report {
        let ranked = hangs.indices.sorted {
            hangs[$0].durationMs != hangs[$1].durationMs ? hangs[$0].durationMs > hangs[$1].durationMs : $0 < $1
        }
        let kept = Set(ranked.prefix(max(0, count)))
        var copy = self
        copy.hangs = hangs.indices.filter(kept.contains).map { hangs[$0] }
        copy.summary = Summary(hangs: copy.hangs)
        return copy
    }

    /// Only the hangs of threads whose tid is `thread`, or whose name is `thread`
    /// exactly or matches it as a glob (`NIO-ELT-*`), as `hangwatch run --thread` does.
    package func keepingThread(_ thread: String) -> Report {
        let tid = Int(thread)
        return selectingHangs { hang in
            hang.thread.tid == tid || hang.thread.name == thread || fnmatch(thread, hang.thread.name, 0) == 0
        }
    }

    /// Only the hangs whose call tree calls `symbol` (a substring of the symbol
    /// name), each tree re-rooted at those calls; see `CallTreeNode.focused(on:)`.
    /// Hangs without a call tree have no evidence of the symbol and are dropped.
    /// The launch tree is focused too, and dropped when it does not call the symbol.
    package func focused(on symbol: String) -> Report {
        var copy = self
        copy.hangs = hangs.compactMap { hang in
            guard let tree = hang.callTree?.focused(on: symbol) else { return nil }
            var hang = hang
            hang.callTree = tree
            return hang
        }
        copy.summary = Summary(hangs: copy.hangs)
        copy.launch?.callTree = launch?.callTree?.focused(on: symbol)
        return copy
    }

    /// Every call tree (hangs and launch) with system-library frames folded into their callers.
    package func hidingSystemFrames() -> Report {
        mappingCallTrees { $0.hidingSystemFrames() }
    }

    /// Every call tree (hangs and launch) turned bottom-up; see `CallTreeNode.inverted()`.
    package func invertingCallTrees() -> Report {
        mappingCallTrees { $0.inverted() }
    }

    private func selectingHangs(_ keep: (Hang) -> Bool) -> Report {
        var copy = self
        copy.hangs = hangs.filter(keep)
        copy.summary = Summary(hangs: copy.hangs)
        return copy
    }

    private func mappingCallTrees(_ transform: (CallTreeNode) -> CallTreeNode?) -> Report {
        var copy = self
        for index in copy.hangs.indices {
            copy.hangs[index].callTree = copy.hangs[index].callTree.flatMap(transform)
        }
        copy.launch?.callTree = launch?.callTree.flatMap(transform)
        return copy
    }
}
