/// One line per message about what it carries that this version does not know, each thing said
/// once per stream.
///
/// Unknown message types and extra fields are kept and never fatal (see ``WireEnvelope``), but a
/// person reading a runtime's messages wants to hear about them once, not once per message, and
/// never 60 000 lines for one hostile message. Feed every decoded message in order:
///
/// - a message of an unknown type is noted the first time its type is seen;
/// - a message of a known type is noted when it carries extra fields not seen before with that
///   type: one line naming up to ``listedNames`` of them, in the order they came, and how many
///   more there are.
///
/// ```
/// transcript carries a field "turnId" this version does not know (kept, ignored)
/// transcript carries 3 fields this version does not know (kept, ignored): "a", "b", "c"
/// transcript carries 60000 fields this version does not know (kept, ignored): "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7" … and 59992 more
/// message type "avatar.pose" is not known to this version (kept, ignored)
/// ```
///
/// Names are written as JSON strings (escaped, so a note is always one line) and cut after 40
/// characters. Memory stays bounded: at most `rememberedLimit` field names per type and as many
/// unknown types are remembered; past that, further new ones are noted but not remembered, so a
/// later message carrying them is noted again (still one line per message).
public struct UnknownContentNotes: Sendable {
    /// The most field names one note lists before "… and N more".
    public static let listedNames = 8

    private let rememberedLimit: Int
    /// Field names already noted, per message type.
    private var notedFields: [String: Set<String>] = [:]
    /// Unknown message types already noted.
    private var notedTypes: Set<String> = []

    /// - Parameter rememberedLimit: the most field names remembered per type, and the most
    ///   unknown types remembered (default 4096).
    public init(rememberedLimit: Int = 4_096) {
        self.rememberedLimit = rememberedLimit
    }

    /// The note about `envelope`, or nil when it carries nothing unknown that was not noted before.
    public mutating func note(for envelope: WireEnvelope) -> String? {
        let type = envelope.message.type.rawValue
        if case .unknown = envelope.message {
            guard !notedTypes.contains(type) else { return nil }
            if notedTypes.count < rememberedLimit { notedTypes.insert(type) }
            return "message type \(JSONWriter.quoted(type)) is not known to this version (kept, ignored)"
        }
        guard !envelope.extras.isEmpty else { return nil }
        // Taken out and put back so the set is changed in place, not copied.
        var noted = notedFields.removeValue(forKey: type) ?? []
        var new: [String] = []
        for key in envelope.extras.keys where !noted.contains(key) {
            new.append(key)
            if noted.count < rememberedLimit { noted.insert(key) }
        }
        notedFields[type] = noted
        guard let first = new.first else { return nil }
        if new.count == 1 {
            return "\(type) carries a field \(JSONWriter.quoted(first)) this version does not know (kept, ignored)"
        }
        let listed = new.prefix(Self.listedNames).map { JSONWriter.quoted($0) }.joined(separator: ", ")
        let rest = new.count - min(new.count, Self.listedNames)
        return "\(type) carries \(new.count) fields this version does not know (kept, ignored): \(listed)" + (rest > 0 ? " … and \(rest) more" : "")
    }
}
