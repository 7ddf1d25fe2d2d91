/// A JSON value, keeping what a wire message needs exactly: integers apart from other numbers,
/// and object keys in their order.
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int`.
    case integer(Int)
    /// Any other number.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The value as compact JSON text.
    public var description: String { JSONWriter.string(self) }

    /// The JSON type's name, for error messages ("string", "number", …).
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A JSON object whose keys keep their order (the order they were parsed or added in).
///
/// Each key appears once. Looking a key up and adding a new one take constant time on average
/// however many keys the object holds (a message with 60 000 fields decodes in linear time);
/// removing one takes time linear in the count. Keys compare as Swift strings do, so two
/// canonically equivalent spellings (`"é"` and `"e\u0301"`) are the same key. Equality and
/// hashing depend on the order: `{"a":1,"b":2}` and `{"b":2,"a":1}` are different objects.
///
/// ``JSONParser`` refuses JSON text that repeats a key within one object; setting a key that is
/// already present through the subscript replaces its value in place.
///
/// Implementation notes: the entries live in one array, in order. Once there are more than
/// ``maximumUnindexedCount`` of them, a ``JSONKeyIndex`` beside them finds a key's position
/// with one hash; smaller objects (nearly every wire message) are searched linearly and never
/// pay for an index, as swift-collections' `OrderedSet` has no hash table up to 15 elements.
///
/// ```
/// entries  [("type","transcript"), ("role","user"), ("f0",0), ("f1",0), …]
/// index    hashes [h("type"), h("role"), h("f0"), …]  slots [0, 3, 0, 0, 1, …] (position + 1)
/// ```
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// The entries in order, each key once.
    public private(set) var entries: [(key: String, value: JSONValue)] = []
    /// Where each key is; nil while the object is small enough to search linearly.
    private var keyIndex: JSONKeyIndex?

    /// The most entries an object keeps without an index (searched linearly).
    static let maximumUnindexedCount = 15

    public init() {}

    /// An object of these entries in this order; a key given twice keeps its first position and
    /// its last value, as setting them one by one through the subscript does.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (key, value) in elements { self[key] = value }
    }

    /// The value for `key`; setting replaces it in place or appends it; setting `nil` removes it.
    public subscript(key: String) -> JSONValue? {
        get { index(forKey: key).map { entries[$0].value } }
        set {
            let found = find(key)
            if let position = found.position {
                if let newValue { entries[position].value = newValue } else { remove(at: position) }
            } else if let newValue {
                append(key, newValue, found)
            }
        }
    }

    /// The position of `key` in ``entries``, or nil when the object does not hold it.
    public func index(forKey key: String) -> Int? {
        find(key).position
    }

    /// Appends `key` unless the object already holds it; one hash of the key either way.
    /// - Returns: false, leaving the object unchanged, when `key` is already present.
    mutating func insertNew(_ key: String, _ value: JSONValue) -> Bool {
        let found = find(key)
        guard found.position == nil else { return false }
        append(key, value, found)
        return true
    }

    /// Removes the entries at `removed` (a few distinct positions in ``entries``), keeping the
    /// others in their order: one pass, in place when the object is not shared, no key hashed again.
    mutating func removeEntries(at removed: [Int]) {
        guard !removed.isEmpty else { return }
        var kept = 0
        entries.withUnsafeMutableBufferPointer { buffer in
            for position in buffer.indices where !removed.contains(position) {
                if kept != position { buffer.swapAt(kept, position) }
                kept += 1
            }
        }
        entries.removeLast(entries.count - kept)
        keyIndex?.removeEntries(at: removed)
    }

    /// Where `key` is, or where the index would put it (for an object without an index, the hash
    /// and slot are 0 and unused).
    private func find(_ key: String) -> (position: Int?, hash: Int, slot: Int) {
        guard let keyIndex else { return (entries.firstIndex { $0.key == key }, 0, 0) }
        let hash = key.hashValue
        let (position, slot) = keyIndex.find(key, hash: hash, in: entries)
        return (position, hash, slot)
    }

    /// Appends an entry whose key `find` has just reported absent.
    private mutating func append(_ key: String, _ value: JSONValue, _ found: (position: Int?, hash: Int, slot: Int)) {
        entries.append((key, value))
        if keyIndex != nil {
            keyIndex?.append(hash: found.hash, slot: found.slot)
        } else if entries.count > Self.maximumUnindexedCount {
            keyIndex = JSONKeyIndex(hashes: entries.map(\.key.hashValue))
        }
    }

    /// Removes the entry at `position`; the entries after it move up one place.
    private mutating func remove(at position: Int) {
        entries.remove(at: position)
        keyIndex?.remove(at: position)
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public var keys: [String] { entries.map(\.key) }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        entries.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.entries.count == rhs.entries.count && zip(lhs.entries, rhs.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for entry in entries {
            hasher.combine(entry.key)
            hasher.combine(entry.value)
        }
    }

    public var description: String { JSONWriter.string(.object(self)) }
}

/// Where each key of a large ``JSONObject`` is: an open-addressing hash table of entry positions.
///
/// Linear probing over a power-of-two number of slots kept at most half full. A slot packs the
/// top 32 bits of its key's hash (the fingerprint, which also picks the slot) above the entry's
/// position plus one, so a probe compares fingerprints in the table itself and reads an entry's
/// key only when they match; an empty slot is 0. The fingerprint of every entry is kept in entry
/// order, so growing the table or removing entries never hashes a key again: a key is hashed once
/// when it is added and once per lookup. The hashes are the standard library's, seeded afresh in
/// every process, so keys cannot be prepared in advance to collide.
struct JSONKeyIndex: Sendable {
    /// The fingerprint of each entry's key, in entry order.
    private var fingerprints: [UInt32]
    /// fingerprint << 32 | (position + 1) per slot; 0 for an empty slot. A power of two long.
    private var slots: [UInt64] = []

    init(hashes: [Int]) {
        fingerprints = hashes.map(Self.fingerprint)
        rebuild()
    }

    /// The bits of a key's hash the table uses.
    static func fingerprint(_ hash: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: UInt64(bitPattern: Int64(hash)) >> 32)
    }

    /// The entry whose key is `key` (`hash` is `key.hashValue`), or nil and the empty slot where
    /// a new entry with that key goes.
    func find(_ key: String, hash: Int, in entries: [(key: String, value: JSONValue)]) -> (position: Int?, slot: Int) {
        let print = Self.fingerprint(hash)
        let mask = slots.count - 1
        var slot = Int(print) & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return (nil, slot) }
            if UInt32(truncatingIfNeeded: stored >> 32) == print {
                let position = Int(truncatingIfNeeded: stored & 0xFFFF_FFFF) - 1
                if entries[position].key == key { return (position, slot) }
            }
            slot = (slot + 1) & mask
        }
    }

    /// Records the entry just appended to the object, in the empty slot `find` gave for its key.
    mutating func append(hash: Int, slot: Int) {
        let print = Self.fingerprint(hash)
        fingerprints.append(print)
        if 2 * fingerprints.count > slots.count {
            rebuild()
        } else {
            slots[slot] = UInt64(print) << 32 | UInt64(fingerprints.count)
        }
    }

    /// Forgets the entry at `position`; the ones after it move up one place.
    mutating func remove(at position: Int) {
        removeEntries(at: [position])
    }

    /// Forgets the entries at `removed` (a few distinct positions); the others keep their order
    /// and move up past the removed ones. In place: each removed slot is cleared by shifting its
    /// probe run back, then one pass renumbers the positions.
    mutating func removeEntries(at removed: [Int]) {
        let mask = slots.count - 1
        for position in removed {
            var slot = Int(fingerprints[position]) & mask
            while Int(truncatingIfNeeded: slots[slot] & 0xFFFF_FFFF) != position + 1 { slot = (slot + 1) & mask }
            deleteSlot(slot)
        }
        let sorted = removed.sorted()
        slots.withUnsafeMutableBufferPointer { table in
            for slot in table.indices where table[slot] != 0 {
                let stored = Int(truncatingIfNeeded: table[slot] & 0xFFFF_FFFF)
                let shift = sorted.prefix { $0 < stored - 1 }.count
                if shift > 0 { table[slot] -= UInt64(shift) }
            }
        }
        var kept = 0
        fingerprints.withUnsafeMutableBufferPointer { buffer in
            for position in buffer.indices where !removed.contains(position) {
                buffer[kept] = buffer[position]
                kept += 1
            }
        }
        fingerprints.removeLast(fingerprints.count - kept)
    }

    /// Empties `slot` and moves later members of its probe run back so every key stays reachable
    /// (backward-shift deletion for linear probing).
    private mutating func deleteSlot(_ slot: Int) {
        let mask = slots.count - 1
        var hole = slot
        var next = (slot + 1) & mask
        while slots[next] != 0 {
            let home = Int(truncatingIfNeeded: slots[next] >> 32) & mask
            // The entry at `next` may fill the hole unless its home lies cyclically in (hole, next].
            let distanceToNext = (next - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = 0
    }

    /// Puts every entry in a table between twice and four times their number (at least 32 slots).
    private mutating func rebuild() {
        var count = 32
        while count < 2 * (fingerprints.count + 1) { count *= 2 }
        let mask = count - 1
        var table = [UInt64](repeating: 0, count: count)
        table.withUnsafeMutableBufferPointer { table in
            for (position, print) in fingerprints.enumerated() {
                var slot = Int(print) & mask
                while table[slot] != 0 { slot = (slot + 1) & mask }
                table[slot] = UInt64(print) << 32 | UInt64(position + 1)
            }
        }
        slots = table
    }
}
