import Testing
import VoicePipeSession

/// JSONObject: keys in order, each once, set/replace/remove as a dictionary would, order-sensitive
/// equality; the same below and above the size where it starts keeping an index.
struct JSONObjectTests {
    @Test func settingReplacesInPlaceAppendsOrRemoves() {
        for size in [3, 15, 16, 40, 1_000] {
            var object = JSONObject()
            for k in 0..<size { object["k\(k)"] = .integer(k) }
            #expect(object.keys == (0..<size).map { "k\($0)" }, "size \(size)")

            object["k1"] = .string("one")           // replaced where it stands
            #expect(object.keys == (0..<size).map { "k\($0)" })
            #expect(object["k1"] == .string("one"))
            #expect(object.index(forKey: "k1") == 1)

            object["new"] = .bool(true)             // appended
            #expect(object.keys.last == "new")
            #expect(object.index(forKey: "new") == size)

            object["k0"] = nil                      // removed; later keys move up one place
            #expect(object["k0"] == nil)
            #expect(object.count == size)
            #expect(object.keys.first == "k1")
            #expect(object.index(forKey: "new") == size - 1)
            #expect(object.index(forKey: "k2") == 1)
            for k in 1..<size { #expect(object["k\(k)"] == (k == 1 ? .string("one") : .integer(k))) }

            object["absent"] = nil                  // removing what is not there changes nothing
            #expect(object.count == size)
            object["k0"] = .null                    // null is a value, appended at the end
            #expect(object.keys.last == "k0")
            #expect(object["k0"] == .null)
        }
    }

    /// Random sets and removals against a plain array of pairs, across the indexing threshold.
    @Test(arguments: [64, 700])
    func agreesWithAnOrderedListUnderRandomEdits(keyCount: Int) {
        var generator = SplitMixForTests(seed: 21)
        var object = JSONObject()
        var model: [(key: String, value: Int)] = []
        for step in 0..<20_000 {
            let key = "key\(generator.next() % UInt64(keyCount))"
            let remove = generator.next() % 3 == 0
            if remove {
                object[key] = nil
                model.removeAll { $0.key == key }
            } else {
                object[key] = .integer(step)
                if let i = model.firstIndex(where: { $0.key == key }) { model[i].value = step } else { model.append((key, step)) }
            }
            if step % 97 == 0 || step > 19_900 {
                #expect(object.keys == model.map(\.key))
                #expect(object.entries.map(\.value) == model.map { .integer($0.value) })
                for k in 0..<keyCount where object.index(forKey: "key\(k)") != model.firstIndex(where: { $0.key == "key\(k)" }) {
                    Issue.record("key\(k) at step \(step): index \(String(describing: object.index(forKey: "key\(k)")))")
                }
            }
        }
    }

    @Test func equalityAndHashFollowOrder() {
        let ab: JSONObject = ["a": .integer(1), "b": .integer(2)]
        let ba: JSONObject = ["b": .integer(2), "a": .integer(1)]
        #expect(ab != ba)
        #expect(ab == ["a": .integer(1), "b": .integer(2)])
        #expect(Set([ab, ba, ["a": .integer(1), "b": .integer(2)]]).count == 2)

        // An object that grew an index equals one built with the same entries in the same order.
        var large = JSONObject()
        for k in 0..<100 { large["k\(k)"] = .integer(k) }
        for k in 20..<100 { large["k\(k)"] = nil }
        var small = JSONObject()
        for k in 0..<20 { small["k\(k)"] = .integer(k) }
        #expect(large == small)
        #expect(large.hashValue == small.hashValue)
    }

    @Test func aLiteralWithARepeatedKeyKeepsTheFirstPlaceAndTheLastValue() {
        let object: JSONObject = ["a": .integer(1), "b": .integer(2), "a": .integer(3)]
        #expect(object.keys == ["a", "b"])
        #expect(object["a"] == .integer(3))
    }
}
