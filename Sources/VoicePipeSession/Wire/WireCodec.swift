import VoicePipeCore

/// Encodes and decodes wire messages as JSON text.
///
/// Outgoing messages are compact JSON with `type` first and the fields in the order the protocol
/// lists them; `audio.chunk` is written by the allocation-free fast path in Core
/// (``AudioChunkJSON``), byte for byte `{"type":"audio.chunk","data":"…","sampleRate":16000}`.
/// Incoming `audio.chunk` messages take the same fast path; everything else (and an audio.chunk
/// with extra fields) goes through a strict JSON parser. Unknown types and extra fields are kept.
///
/// Core's ``AudioChunkJSON`` owns the audio of an `audio.chunk` on both paths: this codec reads
/// and writes the other fields, and leaves the `data` string (base64, little-endian samples, the
/// size limit) to Core, whose ``AudioChunkError`` it reports as ``WireError/audioChunk(_:)``.
public enum WireCodec {
    /// The JSON text of a message, with any extra fields after its own.
    public static func encode(_ message: WireMessage, extras: JSONObject = JSONObject()) -> String {
        if case .audioChunk(let chunk) = message, extras.isEmpty {
            return chunk.samples.withUnsafeBufferPointer { AudioChunkJSON.encode($0, sampleRate: chunk.sampleRate) }
        }
        var object = fields(of: message)
        for (key, value) in extras where object[key] == nil {
            object[key] = value
        }
        return JSONWriter.string(.object(object))
    }

    /// The JSON text of a decoded message, extras included.
    public static func encode(_ envelope: WireEnvelope) -> String {
        encode(envelope.message, extras: envelope.extras)
    }

    /// Decodes one message.
    /// - Throws: ``WireError`` naming what is wrong; nothing is partially decoded.
    public static func decode(_ text: String, limits: WireLimits = .default) throws(WireError) -> WireEnvelope {
        var copy = text
        return try copy.withUTF8 { buffer in
            Result { () throws(WireError) in try decode(UnsafeRawBufferPointer(buffer), limits: limits) }
        }.get()
    }

    /// Decodes one message from UTF-8 bytes.
    public static func decode(_ bytes: UnsafeRawBufferPointer, limits: WireLimits = .default) throws(WireError) -> WireEnvelope {
        guard bytes.count <= limits.maxMessageBytes else {
            throw .messageTooLarge(bytes: bytes.count, limit: limits.maxMessageBytes)
        }
        var fastPathError: AudioChunkError?
        switch AudioChunkJSON.parse(bytes, maxPayloadBytes: limits.maxPayloadBytes) {
        case .chunk(let header):
            var samples = [Int16](repeating: 0, count: header.sampleCount)
            let decoded = samples.withUnsafeMutableBufferPointer { buffer in
                Result { () throws(AudioChunkError) in try AudioChunkJSON.decodeSamples(of: header, in: bytes, into: buffer) }
            }
            switch decoded {
            case .success:
                return WireEnvelope(message: .audioChunk(AudioChunk(sampleRate: header.sampleRate, samples: samples)))
            case .failure(let error):
                fastPathError = error
            }
        case .failure(let error):
            fastPathError = error
        case .notAudioChunk:
            break
        }
        // Everything but a well-formed audio.chunk goes through the general path. A malformed
        // chunk does too, so text that is not JSON, or a field of the wrong JSON type, is reported
        // as for any message; its audio is checked there by Core's decodeData, which makes the
        // fast path's checks in its order, so the AudioChunkError is the same either way.
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw .notJSON(error)
        }
        let decoded = try envelope(from: consume value, limits: limits)
        if let fastPathError { throw .audioChunk(fastPathError) }
        return decoded
    }

    // MARK: Encoding

    /// The message's fields, `type` first.
    static func fields(of message: WireMessage) -> JSONObject {
        var object: JSONObject = ["type": .string(message.type.rawValue)]
        switch message {
        case .sessionStart(let sessionId, let context, let continues):
            object["sessionId"] = .string(sessionId)
            object["context"] = .object(context)
            if let continues { object["continuesSessionId"] = .string(continues) }
        case .audioChunk(let chunk):
            object["data"] = .string(chunk.samples.withUnsafeBufferPointer { AudioChunkJSON.encodeData($0) })
            object["sampleRate"] = .integer(chunk.sampleRate.roundedHertz)
        case .textInput(let text):
            object["text"] = .string(text)
        case .escalationRequest(let reason):
            object["reason"] = .string(reason)
        case .sessionEnd, .interruption:
            break
        case .transcript(let role, let text, let isFinal):
            object["role"] = .string(role.rawValue)
            object["text"] = .string(text)
            object["final"] = .bool(isFinal)
        case .toolCall(let id, let name, let input):
            object["id"] = .string(id)
            object["name"] = .string(name)
            object["input"] = input
        case .toolResult(let id, let name, let output, let duration):
            object["id"] = .string(id)
            object["name"] = .string(name)
            object["output"] = output
            if let duration { object["durationMs"] = .number(duration) }
        case .classification(let label, let confidence):
            object["label"] = .string(label)
            object["confidence"] = .number(confidence)
        case .escalation(let status):
            object["status"] = .string(status)
        case .infoMessage(let markdown):
            object["markdown"] = .string(markdown)
        case .sessionEnded(let reason):
            if let reason { object["reason"] = .string(reason) }
        case .error(let message, let code):
            object["message"] = .string(message)
            if let code { object["code"] = .string(code) }
        case .debug(let message):
            object["message"] = .string(message)
        case .sessionResumed(let audioChunks, let texts):
            object["audioChunks"] = .integer(audioChunks)
            object["texts"] = .integer(texts)
        case .unknown(_, let fields):
            for (key, value) in fields where key != "type" { object[key] = value }
        }
        return object
    }

    // MARK: Decoding

    static func envelope(from value: consuming JSONValue, limits: WireLimits) throws(WireError) -> WireEnvelope {
        let object: JSONObject
        switch consume value {
        case .object(let fields): object = fields
        case let other: throw .notAnObject(found: other.kind)
        }
        guard let typeValue = object["type"] else { throw .missingType }
        guard case .string(let type) = typeValue else { throw .typeNotAString(found: typeValue.kind) }
        var reader = FieldReader(type: type, object: consume object)
        let message: WireMessage
        switch MessageType(rawValue: type) {
        case .sessionStart:
            message = .sessionStart(sessionId: try reader.string("sessionId"), context: try reader.optionalObject("context") ?? JSONObject(),
                                    continuesSessionId: try reader.optionalString("continuesSessionId"))
        case .audioChunk:
            message = .audioChunk(try audioChunk(&reader, limits: limits))
        case .textInput:
            message = .textInput(text: try reader.string("text"))
        case .escalationRequest:
            message = .escalationRequest(reason: try reader.string("reason"))
        case .sessionEnd:
            message = .sessionEnd
        case .transcript:
            let roleText = try reader.string("role")
            guard let role = TranscriptRole(rawValue: roleText) else {
                throw .invalidValue(type: type, field: "role", reason: "must be \"user\" or \"assistant\", not \"\(roleText)\"")
            }
            message = .transcript(role: role, text: try reader.string("text"), isFinal: try reader.optionalBool("final") ?? false)
        case .toolCall:
            message = .toolCall(id: try reader.string("id"), name: try reader.string("name"), input: reader.optionalValue("input") ?? .null)
        case .toolResult:
            message = .toolResult(id: try reader.string("id"), name: try reader.string("name"), output: reader.optionalValue("output") ?? .null, durationMilliseconds: try reader.optionalNumber("durationMs"))
        case .classification:
            message = .classification(label: try reader.string("label"), confidence: try reader.number("confidence"))
        case .escalation:
            message = .escalation(status: try reader.string("status"))
        case .interruption:
            message = .interruption
        case .infoMessage:
            message = .infoMessage(markdown: try reader.string("markdown"))
        case .sessionEnded:
            message = .sessionEnded(reason: try reader.optionalString("reason"))
        case .error:
            // Runtimes send error codes as strings ("E503") or numbers (429); both are kept as text.
            message = .error(message: try reader.string("message"), code: try reader.optionalCode("code"))
        case .debug:
            message = .debug(message: try reader.string("message"))
        case .sessionResumed:
            message = .sessionResumed(audioChunks: try reader.count("audioChunks"), texts: try reader.count("texts"))
        default:
            return WireEnvelope(message: .unknown(type: type, fields: reader.takeRemaining()))
        }
        return WireEnvelope(message: message, extras: reader.takeRemaining())
    }

    /// An audio.chunk through the general path (it had extra fields or an unusual shape): the
    /// fields read here, the audio checked and decoded by Core.
    static func audioChunk(_ reader: inout FieldReader, limits: WireLimits) throws(WireError) -> AudioChunk {
        let data = try reader.string("data")
        let rate = try reader.integer("sampleRate")
        do throws(AudioChunkError) {
            return try AudioChunkJSON.decodeData(data, sampleRate: rate, maxPayloadBytes: limits.maxPayloadBytes)
        } catch {
            throw .audioChunk(error)
        }
    }
}

/// Reads typed fields of one message, remembering which it used so the rest become extras.
///
/// Taking a field is one lookup in the object and nothing else: the positions taken are noted
/// (a message type reads at most a handful of fields), and the extras are gathered once, in
/// order, when asked for. A message with 60 000 unknown fields costs linear time, not quadratic.
struct FieldReader {
    let type: String
    private var object: JSONObject
    /// Positions in `object` already read (`type` included): a few at most.
    private var taken: [Int]

    /// Reads the fields of `object`, which it takes over (so the extras are cut out of it in
    /// place rather than copied).
    init(type: String, object: consuming JSONObject) {
        self.type = type
        self.object = object
        taken = self.object.index(forKey: "type").map { [$0] } ?? []
    }

    /// The fields not read, in the order they arrived. Ends the reading.
    mutating func takeRemaining() -> JSONObject {
        object.removeEntries(at: taken)
        taken = []
        return object
    }

    /// The field's value, or nil when it is absent, null or already taken.
    private mutating func take(_ name: String) -> JSONValue? {
        guard let position = object.index(forKey: name), !taken.contains(position) else { return nil }
        taken.append(position)
        let value = object.entries[position].value
        if case .null = value { return nil }
        return value
    }

    mutating func string(_ name: String) throws(WireError) -> String {
        guard let value = try optionalString(name) else { throw .missingField(type: type, field: name) }
        return value
    }

    mutating func optionalString(_ name: String) throws(WireError) -> String? {
        guard let value = take(name) else { return nil }
        guard case .string(let text) = value else { throw .wrongFieldType(type: type, field: name, expected: "string", found: value.kind) }
        return text
    }

    /// A code given as a string or as a whole number, as text.
    mutating func optionalCode(_ name: String) throws(WireError) -> String? {
        guard let value = take(name) else { return nil }
        switch value {
        case .string(let text): return text
        case .integer(let number): return String(number)
        default: throw .wrongFieldType(type: type, field: name, expected: "string", found: value.kind)
        }
    }

    mutating func optionalBool(_ name: String) throws(WireError) -> Bool? {
        guard let value = take(name) else { return nil }
        guard case .bool(let flag) = value else { throw .wrongFieldType(type: type, field: name, expected: "boolean", found: value.kind) }
        return flag
    }

    mutating func number(_ name: String) throws(WireError) -> Double {
        guard let value = try optionalNumber(name) else { throw .missingField(type: type, field: name) }
        return value
    }

    mutating func optionalNumber(_ name: String) throws(WireError) -> Double? {
        guard let value = take(name) else { return nil }
        switch value {
        case .integer(let integer): return Double(integer)
        case .number(let number): return number
        default: throw .wrongFieldType(type: type, field: name, expected: "number", found: value.kind)
        }
    }

    mutating func integer(_ name: String) throws(WireError) -> Int {
        guard let value = take(name) else { throw .missingField(type: type, field: name) }
        switch value {
        case .integer(let integer): return integer
        default: throw .wrongFieldType(type: type, field: name, expected: "integer", found: value.kind)
        }
    }

    /// A whole number of things, zero or more.
    mutating func count(_ name: String) throws(WireError) -> Int {
        let value = try integer(name)
        guard value >= 0 else { throw .invalidValue(type: type, field: name, reason: "must be zero or more, not \(value)") }
        return value
    }

    mutating func optionalObject(_ name: String) throws(WireError) -> JSONObject? {
        guard let value = take(name) else { return nil }
        guard case .object(let object) = value else { throw .wrongFieldType(type: type, field: name, expected: "object", found: value.kind) }
        return object
    }

    mutating func optionalValue(_ name: String) -> JSONValue? {
        take(name)
    }
}
