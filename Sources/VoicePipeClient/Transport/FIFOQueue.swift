/// A first-in, first-out queue on an array that holds only what still waits: an element taken is
/// released at once, and the array drops its taken slots once they are half of it.
///
/// The queues between threads (a transport's outgoing messages and received events, a session's
/// inbox) used to reset their array only when it ran empty. A session streaming as fast as the
/// runtime takes it keeps them from ever running empty, so every message that ever passed stayed
/// referenced: memory grew with the session's length. Here it is bounded by what waits.
struct FIFOQueue<Element> {
    private var slots: [Element?] = []
    private var head = 0

    /// Taken slots tolerated before compacting, so a short queue never moves its elements.
    private static var compactionThreshold: Int { 32 }

    init() {}

    /// Elements waiting.
    var count: Int { slots.count - head }

    var isEmpty: Bool { head == slots.count }

    /// Slots the array holds, waiting and taken-but-not-yet-dropped (for tests).
    var storageCount: Int { slots.count }

    mutating func append(_ element: Element) {
        slots.append(element)
    }

    /// The oldest element, removed; nil when none waits.
    mutating func popFirst() -> Element? {
        guard head < slots.count else { return nil }
        let element = slots[head].take()
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= Self.compactionThreshold, head * 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return element
    }
}
