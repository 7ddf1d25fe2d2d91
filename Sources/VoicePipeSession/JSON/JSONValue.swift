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

    /// The object without the entries at `removed` (a few distinct positions in ``entries``), the
    /// others in their order. One pass over the entries; no key is hashed again.
    func removingEntries(at removed: [Int]) -> JSONObject {
        var result = JSONObject()
        result.entries.reserveCapacity(entries.count - removed.count)
        for (position, entry) in entries.enumerated() where !removed.contains(position) {
            result.entries.append(entry)
        }
        result.keyIndex = keyIndex?.removing(removed)
        return result
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
/// Linear probing over a power-of-two number of slots kept at most half full; a slot holds an
/// entry's position plus one, or zero when empty. The hash of every entry's key is kept in entry
/// order, so growing the table, removing an entry or indexing a subset of the entries never
/// hashes a key again: a key is hashed once when it is added and once per lookup. The hashes are
/// the standard library's, seeded afresh in every process, so keys cannot be prepared in advance
/// to collide.
struct JSONKeyIndex: Sendable {
    /// The hash of each entry's key, in entry order.
    private var hashes: [Int]
    /// Position + 1 of an entry per slot; 0 for an empty slot. A power of two long.
    private var slots: [Int] = []

    init(hashes: [Int]) {
        self.hashes = hashes
        rebuild()
    }

    /// The entry whose key is `key` (`hash` is `key.hashValue`), or nil and the empty slot where
    /// a new entry with that key goes.
    func find(_ key: String, hash: Int, in entries: [(key: String, value: JSONValue)]) -> (position: Int?, slot: Int) {
        let mask = slots.count - 1
        var slot = hash & mask
        while true {
            let stored = slots[slot]
            if stored == 0 { return (nil, slot) }
            if hashes[stored - 1] == hash && entries[stored - 1].key == key { return (stored - 1, slot) }
            slot = (slot + 1) & mask
        }
    }

    /// Records the entry just appended to the object, in the empty slot `find` gave for its key.
    mutating func append(hash: Int, slot: Int) {
        hashes.append(hash)
        if 2 * hashes.count > slots.count {
            rebuild()
        } else {
            slots[slot] = hashes.count
        }
    }

    /// Forgets the entry at `position`; the ones after it move up one place.
    mutating func remove(at position: Int) {
        hashes.remove(at: position)
        rebuild()
    }

    /// The index of the object without the entries at `removed`.
    func removing(_ removed: [Int]) -> JSONKeyIndex {
        var kept = [Int]()
        kept.reserveCapacity(hashes.count - removed.count)
        for (position, hash) in hashes.enumerated() where !removed.contains(position) { kept.append(hash) }
        return JSONKeyIndex(hashes: kept)
    }

    /// Puts every entry in a table between twice and four times their number (at least 32 slots).
    private mutating func rebuild() {
        var count = 32
        while count < 2 * (hashes.count + 1) { count *= 2 }
        slots = [Int](repeating: 0, count: count)
        let mask = count - 1
        for (position, hash) in hashes.enumerated() {
            var slot = hash & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = position + 1
        }
    }
}
