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
    /// end, less the stamps' error; a note outside the spell, one whose
    /// enqueue may have begun before it, or of another queue is not its.
    @Test func aJobNotedWaitingWaitedUntilTheSpellEndedAtLeast() {
        let spell = PoolHangs.Spell(startNs: 100_000_000, endNs: 500_000_000, jobs: [0, 1])
        func job(_ queue: UInt32, _ from: UInt64, _ by: UInt64) -> CapturedWaitingJob {
            CapturedWaitingJob(poolQueue: queue, enqueuedFromNs: from, enqueuedByNs: by)
        }
        let notes = [job(1, 50_000_000, 50_000_010),     // before the spell
                     job(1, 99_990_000, 200_000_000),    // its enqueue may have begun before the spell
                     job(2, 150_000_000, 150_000_000),   // another queue
                     job(1, 300_000_000, 300_000_000),
                     job(1, 250_000_000, 250_000_000),
                     job(1, 499_990_000, 499_990_000)]   // within the stamps' error of its end
        #expect(PoolHangs.jobWaitMs(in: spell, queue: 1, waiting: notes) == 249.98)
        #expect(PoolHangs.jobWaitMs(in: spell, queue: 2, waiting: notes) == 349.98)
        #expect(PoolHangs.jobWaitMs(in: spell, queue: 3, waiting: notes) == nil)
        #expect(PoolHangs.jobWaitMs(in: spell, queue: 1, waiting: [notes[5]]) == nil)
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
