/// The texts a user typed, from typing to the runtime: queued until the session can send them,
/// in flight while a transport decides, then sent with the turn each one started. Outlives
/// connections, so a text is sent exactly once however often the connection changes.
///
/// ```
///  typed ─▶ queued ─▶ in flight ─┬─▶ sent (a turn) ──▶ not written after all ─┐
///             ▲                  └─▶ refused ──────────────────────────────────┤
///             └────────────────── re-inserted in typing order ◀────────────────┘
/// ```
struct TextQueue: Sendable {
    /// Waiting for the session to send them, in typing order.
    private(set) var queued: [PendingText] = []
    /// Handed to the transport; its report (taken or refused) has not come yet.
    private(set) var inFlight: [PendingText] = []
    /// Texts the transport took, by number, with the turn each started, until one is reported
    /// as never written.
    private var sent: [Int: (text: PendingText, turn: Int)] = [:]
    private var nextNumber = 1
    /// When refused texts are tried again (nil: none refused since the last send).
    private(set) var retryAt: SessionInstant?

    /// Queued and in flight together.
    var waitingCount: Int { queued.count + inFlight.count }

    /// Texts typed and not yet taken by the transport, in typing order.
    var pending: [PendingText] { (inFlight + queued).sorted { $0.number < $1.number } }

    /// Numbers and queues a typed text.
    mutating func append(_ text: String, at now: SessionInstant) -> PendingText {
        let pending = PendingText(number: nextNumber, text: text, typedAt: now)
        nextNumber += 1
        queued.append(pending)
        return pending
    }

    /// Every queued text, now in flight, in order.
    mutating func takeQueued() -> [PendingText] {
        let texts = queued
        inFlight += texts
        queued.removeAll()
        retryAt = nil
        return texts
    }

    /// The transport took `text`, which started `turn`. False when it was not in flight.
    mutating func markSent(_ text: PendingText, turn: Int) -> Bool {
        guard let index = inFlight.firstIndex(of: text) else { return false }
        inFlight.remove(at: index)
        sent[text.number] = (text, turn)
        return true
    }

    /// The transport refused `text`: back into the queue in its place, to be tried again at
    /// `retryAt`. False when it was not in flight.
    mutating func markRefused(_ text: PendingText, retryAt: SessionInstant) -> Bool {
        guard let index = inFlight.firstIndex(of: text) else { return false }
        inFlight.remove(at: index)
        reinsert(text)
        self.retryAt = retryAt
        return true
    }

    /// A sent text that its connection never wrote goes back into the queue in its place; its
    /// turn is returned so it can be withdrawn. Nil when no such text was sent (or it was
    /// already withdrawn).
    mutating func withdraw(number: Int) -> (text: PendingText, turn: Int)? {
        guard let entry = sent.removeValue(forKey: number) else { return nil }
        reinsert(entry.text)
        return entry
    }

    /// The numbers of the `count` texts sent last (texts go out in typing order).
    func newestSent(_ count: Int) -> [Int] {
        Array(sent.keys.sorted().suffix(max(count, 0)))
    }

    private mutating func reinsert(_ text: PendingText) {
        let place = queued.firstIndex { $0.number > text.number } ?? queued.endIndex
        queued.insert(text, at: place)
    }
}
