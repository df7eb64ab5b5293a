import HangWatchAnalysis
import HangWatchCapture
import Testing

/// The pool-hang rule: spells where `width` jobs of one queue overlap.
@Suite struct PoolSpellTests {
    func spells(_ intervals: [(UInt64, UInt64)], width: Int, minimum: UInt64 = 100) -> [PoolHangs.Spell] {
        PoolHangs.spells(of: intervals.map { (start: $0.0, end: $0.1) }, width: width, minimumNs: minimum)
    }

    @Test func theSpellRunsFromTheLastThreadTakenToTheFirstFreed() {
        let found = spells([(0, 500), (120, 400)], width: 2)
        #expect(found == [PoolHangs.Spell(startNs: 120, endNs: 400, jobs: [0, 1])])
    }

    @Test func fewerJobsThanThreadsAreNoPoolHang() {
        #expect(spells([(0, 500)], width: 2).isEmpty)
        #expect(spells([(0, 500), (0, 500)], width: 3).isEmpty)
        #expect(spells([(0, 500)], width: 0).isEmpty)
    }

    @Test func aThreadFreedAtTheInstantAnotherJobStartsBreaksTheSpell() {
        // Thread A's first job ends at 300 and its next starts at 300: the pool had a free thread.
        let found = spells([(0, 300), (300, 600), (0, 600)], width: 2)
        #expect(found == [PoolHangs.Spell(startNs: 0, endNs: 300, jobs: [0, 2]),
                          PoolHangs.Spell(startNs: 300, endNs: 600, jobs: [1, 2])])
    }

    /// The first job noted waiting inside a spell, on its queue, to the spell's
    /// end; a note outside the spell or of another queue is not its.
    @Test func aJobNotedWaitingWaitedUntilTheSpellEndedAtLeast() {
        let spell = PoolHangs.Spell(startNs: 100_000_000, endNs: 500_000_000, jobs: [0, 1])
        let notes = [CapturedWaitingJob(poolQueue: 1, enqueuedNs: 50_000_000),   // before the spell
                     CapturedWaitingJob(poolQueue: 2, enqueuedNs: 150_000_000),  // another queue
                     CapturedWaitingJob(poolQueue: 1, enqueuedNs: 300_000_000),
                     CapturedWaitingJob(poolQueue: 1, enqueuedNs: 250_000_000),
                     CapturedWaitingJob(poolQueue: 1, enqueuedNs: 500_000_000)]  // at its end: free already
        #expect(PoolHangs.jobWaitMs(in: spell, queue: 1, waiting: notes) == 250)
        #expect(PoolHangs.jobWaitMs(in: spell, queue: 2, waiting: notes) == 350)
        #expect(PoolHangs.jobWaitMs(in: spell, queue: 3, waiting: notes) == nil)
        #expect(PoolHangs.jobWaitMs(in: spell, queue: 1, waiting: []) == nil)
    }

    @Test func shortSpellsAreNotHangs() {
        #expect(spells([(0, 500), (450, 900)], width: 2).isEmpty) // 50 of 100 needed
        #expect(spells([(0, 500), (400, 900)], width: 2).count == 1)
    }

    @Test func moreJobsThanTheWidthKeepTheSpellGoing() {
        let found = spells([(0, 400), (100, 700), (300, 900)], width: 2)
        #expect(found == [PoolHangs.Spell(startNs: 100, endNs: 700, jobs: [0, 1, 2])])
    }
}
