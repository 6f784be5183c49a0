import Testing
@testable import HTTP

@Suite struct RingBufferTests {
    @Test func elements_comeOutInTheOrderTheyWentIn_acrossGrowth() {
        var queue = RingBuffer<Int>()
        for value in 0..<100 { queue.append(value) }
        #expect(queue.count == 100)
        for value in 0..<100 { #expect(queue.popFirst() == value) }
        #expect(queue.popFirst() == nil)
        #expect(queue.isEmpty)
    }

    @Test func growth_whileWrappedAround_keepsTheOrder() {
        var queue = RingBuffer<Int>()
        for value in 0..<16 { queue.append(value) }
        for value in 0..<10 { #expect(queue.popFirst() == value) }
        // The next six go to the slots the first ten left, so the contents wrap; the
        // seventeenth element then forces a copy that has to unwrap them.
        for value in 16..<30 { queue.append(value) }
        for value in 10..<30 { #expect(queue.popFirst() == value) }
        #expect(queue.isEmpty)
    }

    /// The WorkerPool's load: a queue that never empties, with elements always passing
    /// through. Its storage must stay the size of its longest length, not of its traffic.
    @Test func storage_staysBoundedByTheLongestLength_whenTheQueueNeverEmpties() {
        var queue = RingBuffer<Int>()
        for value in 0..<40 { queue.append(value) }
        var outOfOrder = 0
        for value in 40..<200_000 {
            queue.append(value)
            if queue.popFirst() != value - 40 { outOfOrder += 1 }
        }
        #expect(outOfOrder == 0)
        #expect(queue.count == 40)
        #expect(queue.capacity == 64)
    }

    @Test func takenElements_areReleased() {
        final class Tracked {}
        weak var watched: Tracked?
        var queue = RingBuffer<Tracked>()
        do {
            let element = Tracked()
            watched = element
            queue.append(element)
        }
        #expect(watched != nil)
        _ = queue.popFirst()
        #expect(watched == nil)
    }
}
