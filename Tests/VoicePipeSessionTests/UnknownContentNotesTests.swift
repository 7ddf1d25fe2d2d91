import Testing
import VoicePipeSession

/// The notes about unknown types and fields: their exact words, one line per message at most,
/// each thing noted once.
struct UnknownContentNotesTests {
    static func envelope(_ json: String) throws -> WireEnvelope {
        try WireCodec.decode(json)
    }

    @Test func oneNewFieldIsNamed() throws {
        var notes = UnknownContentNotes()
        #expect(notes.note(for: try Self.envelope(#"{"type":"transcript","role":"user","text":"hi","turnId":7}"#))
                == #"transcript carries a field "turnId" this version does not know (kept, ignored)"#)
    }

    @Test func upToEightNewFieldsAreAllNamedInOrder() throws {
        var notes = UnknownContentNotes()
        #expect(notes.note(for: try Self.envelope(#"{"type":"debug","message":"m","b":1,"a":2,"c":3}"#))
                == #"debug carries 3 fields this version does not know (kept, ignored): "b", "a", "c""#)
        let eight = (1...8).map { #""x\#($0)":0"# }.joined(separator: ",")
        #expect(notes.note(for: try Self.envelope(#"{"type":"debug","message":"m",\#(eight)}"#))
                == #"debug carries 8 fields this version does not know (kept, ignored): "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8""#)
    }

    /// The hostile line: one note, eight names, the exact count of the rest.
    @Test func sixtyThousandNewFieldsAreOneLine() throws {
        var notes = UnknownContentNotes()
        let fields = (0..<60_000).map { #""f\#($0)":0"# }.joined(separator: ",")
        let note = notes.note(for: try Self.envelope(#"{"type":"transcript","role":"user","text":"hi","final":true,\#(fields)}"#))
        #expect(note == #"transcript carries 60000 fields this version does not know (kept, ignored): "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7" … and 59992 more"#)
        #expect(note?.contains("\n") == false)
    }

    @Test func eachFieldIsNotedOncePerType() throws {
        var notes = UnknownContentNotes()
        #expect(notes.note(for: try Self.envelope(#"{"type":"transcript","role":"user","text":"a","turn":1}"#)) != nil)
        #expect(notes.note(for: try Self.envelope(#"{"type":"transcript","role":"user","text":"b","turn":2}"#)) == nil)
        #expect(notes.note(for: try Self.envelope(#"{"type":"transcript","role":"user","text":"c","turn":3,"lang":"en"}"#))
                == #"transcript carries a field "lang" this version does not know (kept, ignored)"#)
        // The same name with another type is new for that type.
        #expect(notes.note(for: try Self.envelope(#"{"type":"debug","message":"m","turn":1}"#))
                == #"debug carries a field "turn" this version does not know (kept, ignored)"#)
        // Nothing unknown: no note.
        #expect(notes.note(for: try Self.envelope(#"{"type":"audio.chunk","data":"AQI=","sampleRate":24000}"#)) == nil)
        #expect(notes.note(for: try Self.envelope(#"{"type":"interruption"}"#)) == nil)
    }

    @Test func anUnknownTypeIsNotedOnceWhateverItsFields() throws {
        var notes = UnknownContentNotes()
        #expect(notes.note(for: try Self.envelope(#"{"type":"avatar.pose","yaw":1}"#))
                == #"message type "avatar.pose" is not known to this version (kept, ignored)"#)
        #expect(notes.note(for: try Self.envelope(#"{"type":"avatar.pose","yaw":2,"pitch":0}"#)) == nil)
        #expect(notes.note(for: try Self.envelope(#"{"type":"avatar.blink"}"#))
                == #"message type "avatar.blink" is not known to this version (kept, ignored)"#)
    }

    @Test func namesStayOnOneLineAndShort() throws {
        var notes = UnknownContentNotes()
        let long = String(repeating: "n", count: 100)
        #expect(notes.note(for: try Self.envelope(#"{"type":"debug","message":"m","line\nbreak":1,"\#(long)":2}"#))
                == #"debug carries 2 fields this version does not know (kept, ignored): "line\nbreak", ""# + String(repeating: "n", count: 40) + #""…"#)
        #expect(notes.note(for: try Self.envelope(#"{"type":"a\u0000\nb"}"#))
                == #"message type "a\u0000\nb" is not known to this version (kept, ignored)"#)
    }

    /// Past the remembered limit new names are still noted, one line per message, but not
    /// remembered, so they are noted again when they come back.
    @Test func memoryIsBounded() throws {
        var notes = UnknownContentNotes(rememberedLimit: 2)
        #expect(notes.note(for: try Self.envelope(#"{"type":"debug","message":"m","a":1,"b":1,"c":1}"#))
                == #"debug carries 3 fields this version does not know (kept, ignored): "a", "b", "c""#)
        #expect(notes.note(for: try Self.envelope(#"{"type":"debug","message":"m","a":1,"b":1,"c":1}"#))
                == #"debug carries a field "c" this version does not know (kept, ignored)"#)
        for type in ["t1", "t2", "t3"] { _ = notes.note(for: try Self.envelope(#"{"type":"\#(type)"}"#)) }
        #expect(notes.note(for: try Self.envelope(#"{"type":"t1"}"#)) == nil)
        #expect(notes.note(for: try Self.envelope(#"{"type":"t3"}"#)) == #"message type "t3" is not known to this version (kept, ignored)"#)
    }
}
