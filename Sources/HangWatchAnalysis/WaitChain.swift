import HangWatchCapture

/// Wait-for chains: thread A waits for a lock B holds, B for one C holds, and
/// so on. A chain that comes back to one of its threads is a deadlock.
package enum WaitChain {
    /// The longest chain followed, counting the hung thread's own link.
    package static let maxDepth = 8

    /// One link: `waiter` waits for a lock held by `owner`.
    package struct Link: Sendable, Equatable {
        package var waiter: Int32
        package var owner: Int32
        package var evidence: LockOwnerEvidence
        package var ownerName: String
        package init(waiter: Int32, owner: Int32, evidence: LockOwnerEvidence, ownerName: String) {
            self.waiter = waiter
            self.owner = owner
            self.evidence = evidence
            self.ownerName = ownerName
        }
    }

    /// The chain from `start`, following each thread's current link, up to
    /// `maxDepth` links. It ends at a thread with no link (running, waiting
    /// elsewhere or on a lock with no known owner) or at a thread already in it.
    package static func follow(from start: Int32, links: [Int32: Link], maxDepth: Int = maxDepth) -> [Link] {
        var chain: [Link] = []
        var seen: Set<Int32> = [start]
        var at = start
        while chain.count < maxDepth, let link = links[at], link.owner > 0 {
            chain.append(link)
            if !seen.insert(link.owner).inserted { break }
            at = link.owner
        }
        return chain
    }

    /// Whether `chain` (from `follow`) returns to one of its threads.
    package static func isCycle(_ chain: [Link]) -> Bool {
        guard let last = chain.last else { return false }
        return chain.contains { $0.waiter == last.owner }
    }
}
