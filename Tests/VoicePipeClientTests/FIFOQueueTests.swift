import Testing
@testable import VoicePipeClient

/// The queue behind the transports' backlogs and the session inbox: in order, and holding only
/// what waits, however long it never runs empty.
struct FIFOQueueTests {
    final class Item {
        let number: Int
        init(_ number: Int) { self.number = number }
    }

    @Test func elementsComeOutInOrder() {
        var queue = FIFOQueue<Int>()
        #expect(queue.popFirst() == nil && queue.isEmpty)
        for number in 0..<1_000 { queue.append(number) }
        var taken: [Int] = []
        for number in 1_000..<5_000 {
            if let first = queue.popFirst() { taken.append(first) }
            if number % 3 != 0 { queue.append(number) }
        }
        while let first = queue.popFirst() { taken.append(first) }
        #expect(taken == Array(0..<1_000) + (1_000..<5_000).filter { $0 % 3 != 0 })
        #expect(queue.isEmpty && queue.count == 0)
    }

    /// Regression: a queue that never ran empty kept every element that had passed through it,
    /// so a WebSocket session sent at full speed grew by every message it had sent (35 MB in
    /// 10 minutes of audio in the load run).
    @Test func aQueueThatNeverRunsEmptyReleasesWhatWasTaken() {
        var queue = FIFOQueue<Item>()
        for number in 0..<10 { queue.append(Item(number)) }
        weak var taken: Item?
        for number in 10..<100_000 {
            let item = queue.popFirst()
            #expect(item?.number == number - 10)
            taken = item
            queue.append(Item(number))
            #expect(queue.count == 10)
        }
        #expect(taken == nil, "a taken element is still held by the queue")
        #expect(queue.storageCount <= 2 * 32 + 10)
    }
}
