/// Why an `audio.chunk` message's audio was refused.
public enum AudioChunkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The data string is not valid base64. Offsets count bytes of the data string once JSON
    /// escapes are undone (for data without escapes: bytes after its opening quote).
    case badBase64(Base64Error)
    /// The payload decodes to this odd number of bytes; Int16 audio needs an even number.
    case oddByteCount(Int)
    /// The payload would decode to `bytes`, more than `limit` (found before decoding anything).
    case payloadTooLarge(bytes: Int, limit: Int)
    /// The message has no `data` field.
    case missingData
    /// `data` is not a string; the value as written.
    case dataNotAString(String)
    /// The message has no `sampleRate` field.
    case missingSampleRate
    /// `sampleRate` is not a positive JSON integer (a fraction, an exponent, a string, zero, a
    /// negative number, or too large for `Int`); the value as written.
    case badSampleRate(String)
    /// The buffer given to ``AudioChunkJSON/decodeSamples(of:in:into:)`` holds `available`
    /// samples; the chunk has `needed`.
    case sampleBufferTooSmall(needed: Int, available: Int)
    /// The header given to ``AudioChunkJSON/decodeSamples(of:in:into:)`` was not parsed from the
    /// message given with it.
    case headerDoesNotMatchMessage

    public var description: String {
        switch self {
        case .badBase64(let error):
            "the audio.chunk data is not valid base64: \(error) (offsets count characters of the data string)"
        case .oddByteCount(let count):
            "the audio.chunk data decodes to \(count) byte\(count == 1 ? "" : "s"); 16-bit audio needs an even number"
        case .payloadTooLarge(let bytes, let limit):
            "the audio.chunk data decodes to \(bytes) bytes, over the \(limit)-byte limit"
        case .missingData:
            "the audio.chunk message has no \"data\" field"
        case .dataNotAString(let value):
            "the audio.chunk \"data\" field is \(value), not a base64 string"
        case .missingSampleRate:
            "the audio.chunk message has no \"sampleRate\" field"
        case .badSampleRate(let value):
            "the audio.chunk \"sampleRate\" is \(value); it must be a positive whole number of hertz"
        case .sampleBufferTooSmall(let needed, let available):
            "the sample buffer holds \(available) samples but the audio.chunk has \(needed)"
        case .headerDoesNotMatchMessage:
            "the audio.chunk header was parsed from a different message"
        }
    }
}

/// What ``AudioChunkJSON/parse(_:maxPayloadBytes:)`` found in an `audio.chunk` message: enough to
/// size a buffer and decode the samples into it.
public struct AudioChunkHeader: Sendable, Hashable {
    /// The `sampleRate` field (a positive whole number of hertz).
    public let sampleRate: SampleRate
    /// The number of Int16 samples the data decodes to.
    public let sampleCount: Int
    /// The bytes of the data string in the message, between its quotes, as written.
    public let dataRange: Range<Int>
    /// Whether the data string contains JSON escapes (such as `\/`); decoding then undoes them as
    /// it goes.
    public let dataIsEscaped: Bool
}

/// A decoded `audio.chunk`: the sample rate and the samples.
public struct AudioChunk: Sendable, Hashable {
    /// The rate of the samples; the wire carries it as a whole number of hertz.
    public let sampleRate: SampleRate
    public let samples: [Int16]

    public init(sampleRate: SampleRate, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.samples = samples
    }
}

/// The fast path's verdict on one message.
public enum AudioChunkParse<Chunk: Sendable & Hashable>: Sendable, Hashable {
    /// An `audio.chunk` whose audio is usable (for a header: as far as its length and padding
    /// show; the base64 characters are checked when decoding).
    case chunk(Chunk)
    /// Not an `audio.chunk` in the shape the fast path handles: another type, other or repeated
    /// keys, escapes in a key or in the type, an object or array as a value, or not well-formed
    /// JSON at all. Hand the message to the general decoder, which keeps extra fields and reports
    /// what is wrong with malformed ones.
    case notAudioChunk
    /// An `audio.chunk` whose audio fields are wrong.
    case failure(AudioChunkError)
}

/// The `audio.chunk` wire message, written and read without Foundation.
///
/// The one high-rate message, so it gets a fast path of its own. Written exactly as
///
/// ```
/// {"type":"audio.chunk","data":"<base64 of Int16 little-endian samples>","sampleRate":16000}
/// ```
///
/// (this key order, no spaces). Read from any flat JSON object whose keys are exactly `type`
/// (equal to `"audio.chunk"`), `data` and `sampleRate`, in any order, with any JSON whitespace
/// and JSON escapes in the data (Foundation's `JSONSerialization` writes `/` as `\/`). Samples are
/// little-endian on the wire on every host.
///
/// Reading is two steps so a caller can decode into its own buffer with no allocation:
/// ``parse(_:maxPayloadBytes:)`` checks the message and returns the sample rate, the exact sample
/// count and where the data is; ``decodeSamples(of:in:into:)`` decodes it.
/// ``decode(_:maxPayloadBytes:)`` does both into a new `[Int16]`.
///
/// An `audio.chunk` the fast path hands on (one with extra fields, say) is read by a general JSON
/// decoder, which still leaves the audio to this type: ``encodeData(_:)`` writes the `data`
/// string and ``decodeData(_:sampleRate:maxPayloadBytes:)`` reads it back with the fast path's
/// checks, in its order, with its errors, so a malformed chunk gets the same ``AudioChunkError``
/// whichever path read it.
///
/// ```
/// switch AudioChunkJSON.parse(message) {
/// case .chunk(let header):      // size checked, nothing decoded yet
///     try AudioChunkJSON.decodeSamples(of: header, in: message, into: buffer)
/// case .notAudioChunk:          // another message: the general JSON decoder's job
/// case .failure(let error):     // an audio.chunk with bad audio: a typed error
/// }
/// ```
public enum AudioChunkJSON {
    /// The default limit on a chunk's decoded payload: 1 MiB (about 33 s of 16 kHz audio).
    public static let defaultMaxPayloadBytes = 1 << 20

    static let prefix: [UInt8] = Array(#"{"type":"audio.chunk","data":""#.utf8)
    static let middle: [UInt8] = Array(#"","sampleRate":"#.utf8)

    // MARK: Writing

    /// The exact length in bytes of the message for `sampleCount` samples at `sampleRate`.
    ///
    /// The wire's `sampleRate` is a JSON integer: the rate is written as
    /// ``SampleRate/roundedHertz`` (a rate read from the wire is written back as it was read).
    /// - Precondition: `0 <= sampleCount <= Int.max / 4` and `sampleRate.roundedHertz > 0`.
    public static func encodedCount(sampleCount: Int, sampleRate: SampleRate) -> Int {
        precondition(sampleCount >= 0 && sampleCount <= Int.max / 4, "sample count out of range")
        precondition(sampleRate.roundedHertz > 0, "an audio.chunk needs a positive sample rate")
        return prefix.count + Base64.encodedCount(forByteCount: 2 * sampleCount) + middle.count + decimalDigitCount(sampleRate.roundedHertz) + 1
    }

    /// Writes the message for `samples` at `sampleRate` into `output`.
    ///
    /// Writes exactly ``encodedCount(sampleCount:sampleRate:)`` bytes at the start of `output`
    /// and allocates nothing.
    /// - Parameters:
    ///   - samples: the audio, in host order; it goes on the wire little-endian.
    ///   - sampleRate: positive; written in whole hertz (``SampleRate/roundedHertz``).
    ///   - output: at least `encodedCount(sampleCount:sampleRate:)` bytes (a shorter buffer is a
    ///     programming error and stops the program).
    /// - Returns: the number of bytes written.
    public static func encode(_ samples: UnsafeBufferPointer<Int16>, sampleRate: SampleRate, into output: UnsafeMutableRawBufferPointer) -> Int {
        let count = encodedCount(sampleCount: samples.count, sampleRate: sampleRate)
        precondition(output.count >= count, "audio.chunk output buffer holds \(output.count) bytes, the message needs \(count)")
        guard let destination = output.baseAddress else { return 0 }
        var offset = 0
        prefix.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + $0.count)]).copyMemory(from: $0) }
        offset += prefix.count
        offset += writeData(samples, into: UnsafeMutableRawBufferPointer(rebasing: output[offset...]))
        middle.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: output[offset..<(offset + $0.count)]).copyMemory(from: $0) }
        offset += middle.count
        var value = sampleRate.roundedHertz
        let digits = decimalDigitCount(value)
        for k in stride(from: offset + digits - 1, through: offset, by: -1) {
            destination.storeBytes(of: UInt8(ascii: "0") + UInt8(value % 10), toByteOffset: k, as: UInt8.self)
            value /= 10
        }
        offset += digits
        destination.storeBytes(of: UInt8(ascii: "}"), toByteOffset: offset, as: UInt8.self)
        return offset + 1
    }

    /// The message for `samples` at `sampleRate`, as a `String` allocated once at its exact size.
    public static func encode(_ samples: UnsafeBufferPointer<Int16>, sampleRate: SampleRate) -> String {
        String(unsafeUninitializedCapacity: encodedCount(sampleCount: samples.count, sampleRate: sampleRate)) { buffer in
            encode(samples, sampleRate: sampleRate, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Writes the message for samples held in an array into `output`, exactly as the pointer form does.
    public static func encode(_ samples: [Int16], sampleRate: SampleRate, into output: UnsafeMutableRawBufferPointer) -> Int {
        samples.withUnsafeBufferPointer { encode($0, sampleRate: sampleRate, into: output) }
    }

    /// Writes the message for samples lent as a `Span` (a ``CaptureFrame``'s, an array's) into
    /// `output`, exactly as the pointer form does.
    public static func encode(_ samples: Span<Int16>, sampleRate: SampleRate, into output: UnsafeMutableRawBufferPointer) -> Int {
        samples.withUnsafeBufferPointer { encode($0, sampleRate: sampleRate, into: output) }
    }

    /// The message for samples held in an array, as a `String`, exactly as the pointer form writes it.
    public static func encode(_ samples: [Int16], sampleRate: SampleRate) -> String {
        samples.withUnsafeBufferPointer { encode($0, sampleRate: sampleRate) }
    }

    /// The message for samples lent as a `Span`, as a `String`, exactly as the pointer form writes it.
    public static func encode(_ samples: Span<Int16>, sampleRate: SampleRate) -> String {
        samples.withUnsafeBufferPointer { encode($0, sampleRate: sampleRate) }
    }

    /// The `data` string of an `audio.chunk` for `samples`: base64 of the samples in little-endian
    /// order on every host, as the fast path writes it.
    ///
    /// For a general JSON writer that puts the string in a message of its own (one with more
    /// fields than the fast path writes); the string is allocated once, at its exact size.
    /// - Parameter samples: the audio, in host order.
    public static func encodeData(_ samples: UnsafeBufferPointer<Int16>) -> String {
        String(unsafeUninitializedCapacity: Base64.encodedCount(forByteCount: 2 * samples.count)) { buffer in
            writeData(samples, into: UnsafeMutableRawBufferPointer(buffer))
        }
    }

    /// Writes base64 of the samples, little-endian, at the start of `output` (large enough).
    static func writeData(_ samples: UnsafeBufferPointer<Int16>, into output: UnsafeMutableRawBufferPointer) -> Int {
        #if _endian(little)
        Base64.encode(UnsafeRawBufferPointer(samples), into: output)
        #else
        encodeByteSwapped(samples, into: output)
        #endif
    }

    /// Base64 of the samples byte-swapped, through a small stack buffer: what a big-endian host
    /// does to put little-endian samples on the wire. Pieces of 384 samples (768 bytes, a
    /// multiple of 3) encode to texts that join without padding between them.
    static func encodeByteSwapped(_ samples: UnsafeBufferPointer<Int16>, into output: UnsafeMutableRawBufferPointer) -> Int {
        let pieceSamples = 384
        return withUnsafeTemporaryAllocation(of: Int16.self, capacity: pieceSamples) { scratch in
            var done = 0
            var written = 0
            repeat {
                let count = min(pieceSamples, samples.count - done)
                for k in 0..<count { scratch[k] = samples[done + k].byteSwapped }
                let piece = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: scratch[0..<count]))
                written += Base64.encode(piece, into: UnsafeMutableRawBufferPointer(rebasing: output[written...]))
                done += count
            } while done < samples.count
            return written
        }
    }

    static func decimalDigitCount(_ value: Int) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    // MARK: Reading

    /// Checks one message and, if it is an `audio.chunk`, returns where its audio is.
    ///
    /// Reads the message once (the data string sixteen bytes at a time) and decodes nothing:
    /// the payload's exact size comes from the data's length and padding, so an oversized chunk is
    /// refused before any work or allocation. Checks, in order: `data` present and a string,
    /// `sampleRate` a positive integer, the base64 length and padding, the size limit, an even
    /// byte count.
    /// - Parameters:
    ///   - message: one JSON text, UTF-8.
    ///   - maxPayloadBytes: the most decoded bytes a chunk may carry.
    /// - Returns: ``AudioChunkParse/chunk(_:)`` with the header, ``AudioChunkParse/notAudioChunk``
    ///   for anything the fast path does not handle (see there), or ``AudioChunkParse/failure(_:)``.
    public static func parse(_ message: UnsafeRawBufferPointer, maxPayloadBytes: Int = defaultMaxPayloadBytes) -> AudioChunkParse<AudioChunkHeader> {
        guard let fields = Fields(scanning: message) else { return .notAudioChunk }
        do throws(AudioChunkError) {
            return .chunk(try header(of: fields, in: message, maxPayloadBytes: maxPayloadBytes))
        } catch {
            return .failure(error)
        }
    }

    /// Decodes the samples of a parsed chunk into `samples`, allocating nothing.
    ///
    /// Writes exactly `header.sampleCount` samples at the start of `samples`, in host order.
    /// When it throws, what it wrote is unspecified.
    /// - Parameters:
    ///   - header: from ``parse(_:maxPayloadBytes:)`` of this same `message`.
    ///   - message: the message the header was parsed from.
    ///   - samples: at least `header.sampleCount` samples.
    /// - Returns: the number of samples written.
    /// - Throws: ``AudioChunkError/badBase64(_:)`` for a character that is not base64,
    ///   ``AudioChunkError/sampleBufferTooSmall(needed:available:)`` before writing anything, or
    ///   ``AudioChunkError/headerDoesNotMatchMessage``.
    public static func decodeSamples(of header: AudioChunkHeader, in message: UnsafeRawBufferPointer, into samples: UnsafeMutableBufferPointer<Int16>) throws(AudioChunkError) -> Int {
        guard samples.count >= header.sampleCount else {
            throw .sampleBufferTooSmall(needed: header.sampleCount, available: samples.count)
        }
        guard header.dataRange.lowerBound >= 0, header.dataRange.upperBound <= message.count else {
            throw .headerDoesNotMatchMessage
        }
        let byteCount = 2 * header.sampleCount
        let output = UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(samples)[0..<byteCount])
        let written: Int
        if header.dataIsEscaped {
            written = try decodeEscaped(JSONStringContent(bytes: message, content: header.dataRange), into: output)
        } else {
            written = try decodeBase64(UnsafeRawBufferPointer(rebasing: message[header.dataRange]), into: output)
        }
        guard written == byteCount else { throw .headerDoesNotMatchMessage }
        toHostOrder(UnsafeMutableBufferPointer(rebasing: samples[0..<header.sampleCount]))
        return header.sampleCount
    }

    /// Decodes the `data` string of an `audio.chunk` that a general JSON decoder has read.
    ///
    /// Checks what the fast path checks once it has the two fields, in the same order and with
    /// the same errors: `sampleRate` positive, the base64 length and padding, the size limit, an
    /// even byte count (all before decoding anything), then every character. So a malformed chunk
    /// gets the same ``AudioChunkError`` from ``decode(_:maxPayloadBytes:)`` and from here.
    /// - Parameters:
    ///   - data: the data string as UTF-8, its JSON escapes already undone; offsets in a
    ///     ``AudioChunkError/badBase64(_:)`` count its bytes.
    ///   - sampleRate: the `sampleRate` field as the JSON integer it is on the wire (checked here, so
    ///     both paths refuse a rate that is not positive in the same words).
    ///   - maxPayloadBytes: the most decoded bytes a chunk may carry.
    /// - Returns: the chunk, its samples in host order.
    /// - Throws: ``AudioChunkError/badSampleRate(_:)`` (the rate in decimal),
    ///   ``AudioChunkError/badBase64(_:)``, ``AudioChunkError/payloadTooLarge(bytes:limit:)`` or
    ///   ``AudioChunkError/oddByteCount(_:)``.
    public static func decodeData(_ data: UnsafeRawBufferPointer, sampleRate: Int, maxPayloadBytes: Int = defaultMaxPayloadBytes) throws(AudioChunkError) -> AudioChunk {
        guard sampleRate > 0 else { throw .badSampleRate(String(sampleRate)) }
        let byteCount: Int
        do throws(Base64Error) {
            byteCount = try Base64.decodedCount(forEncoded: data)
        } catch {
            throw .badBase64(error)
        }
        try checkPayload(byteCount: byteCount, maxPayloadBytes: maxPayloadBytes)
        let sampleCount = byteCount / 2
        var failure: AudioChunkError?
        let samples = [Int16](unsafeUninitializedCapacity: sampleCount) { buffer, initialized in
            let output = UnsafeMutableBufferPointer(rebasing: buffer[0..<sampleCount])
            do throws(AudioChunkError) {
                _ = try decodeBase64(data, into: UnsafeMutableRawBufferPointer(output))   // exactly byteCount bytes
                toHostOrder(output)
                initialized = sampleCount
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return AudioChunk(sampleRate: SampleRate(hertz: Double(sampleRate)), samples: samples)
    }

    /// Decodes the `data` string of an `audio.chunk` that a general JSON decoder has read, as the
    /// `UnsafeRawBufferPointer` overload does.
    public static func decodeData(_ data: String, sampleRate: Int, maxPayloadBytes: Int = defaultMaxPayloadBytes) throws(AudioChunkError) -> AudioChunk {
        var data = data
        return try data.withUTF8 { utf8 in
            Result { () throws(AudioChunkError) in
                try decodeData(UnsafeRawBufferPointer(utf8), sampleRate: sampleRate, maxPayloadBytes: maxPayloadBytes)
            }
        }.get()
    }

    /// Parses one message and decodes its samples into a new array of exactly their count.
    public static func decode(_ message: UnsafeRawBufferPointer, maxPayloadBytes: Int = defaultMaxPayloadBytes) -> AudioChunkParse<AudioChunk> {
        switch parse(message, maxPayloadBytes: maxPayloadBytes) {
        case .notAudioChunk:
            return .notAudioChunk
        case .failure(let error):
            return .failure(error)
        case .chunk(let header):
            var failure: AudioChunkError?
            let samples = [Int16](unsafeUninitializedCapacity: header.sampleCount) { buffer, initialized in
                do throws(AudioChunkError) {
                    initialized = try decodeSamples(of: header, in: message, into: buffer)
                } catch {
                    failure = error
                    initialized = 0
                }
            }
            if let failure { return .failure(failure) }
            return .chunk(AudioChunk(sampleRate: header.sampleRate, samples: samples))
        }
    }

    /// Parses one message and decodes its samples into a new array of exactly their count.
    public static func decode(_ message: String, maxPayloadBytes: Int = defaultMaxPayloadBytes) -> AudioChunkParse<AudioChunk> {
        var message = message
        return message.withUTF8 { decode(UnsafeRawBufferPointer($0), maxPayloadBytes: maxPayloadBytes) }
    }

    // MARK: Internals

    /// The three fields of a flat JSON object whose keys are exactly `type` (`"audio.chunk"`),
    /// `data` and `sampleRate`, each at most once; nil for any other message.
    struct Fields {
        var data: JSONScanner.Scalar?
        var sampleRate: JSONScanner.Scalar?

        init?(scanning message: UnsafeRawBufferPointer) {
            var scanner = JSONScanner(message)
            var sawType = false
            scanner.skipWhitespace()
            guard scanner.consume(UInt8(ascii: "{")) else { return nil }
            repeat {
                scanner.skipWhitespace()
                guard let (key, keyEscaped) = scanner.scanString(), !keyEscaped else { return nil }
                let isType = Self.bytes(message, key, equal: "type")
                let isData = !isType && Self.bytes(message, key, equal: "data")
                let isRate = !isType && !isData && Self.bytes(message, key, equal: "sampleRate")
                guard isType || isData || isRate else { return nil }
                scanner.skipWhitespace()
                guard scanner.consume(UInt8(ascii: ":")) else { return nil }
                scanner.skipWhitespace()
                guard let value = scanner.scanScalar() else { return nil }
                if isType {
                    guard !sawType, case .string(let content, _, false) = value,
                          Self.bytes(message, content, equal: "audio.chunk") else { return nil }
                    sawType = true
                } else if isData {
                    guard data == nil else { return nil }
                    data = value
                } else {
                    guard sampleRate == nil else { return nil }
                    sampleRate = value
                }
                scanner.skipWhitespace()
            } while scanner.consume(UInt8(ascii: ","))
            guard scanner.consume(UInt8(ascii: "}")) else { return nil }
            scanner.skipWhitespace()
            guard scanner.isAtEnd, sawType else { return nil }
        }

        static func bytes(_ message: UnsafeRawBufferPointer, _ range: Range<Int>, equal word: StaticString) -> Bool {
            guard range.count == word.utf8CodeUnitCount, let base = message.baseAddress else { return false }
            let start = base + range.lowerBound
            for k in 0..<range.count where start.load(fromByteOffset: k, as: UInt8.self) != word.utf8Start[k] { return false }
            return true
        }
    }

    static func header(of fields: Fields, in message: UnsafeRawBufferPointer, maxPayloadBytes: Int) throws(AudioChunkError) -> AudioChunkHeader {
        guard let data = fields.data else { throw .missingData }
        guard case .string(let content, _, let escaped) = data else { throw .dataNotAString(text(message, data.token)) }
        guard let rate = fields.sampleRate else { throw .missingSampleRate }
        let sampleRate = try sampleRate(rate, in: message)

        let byteCount: Int
        if escaped {
            let (length, padding) = JSONStringContent(bytes: message, content: content).measure(trailing: Base64Tables.pad)
            guard length % 4 == 0 else { throw .badBase64(.invalidLength(length)) }
            guard padding <= 2 else { throw .badBase64(.invalidPadding(offset: length - padding)) }
            byteCount = length / 4 * 3 - padding
        } else {
            do throws(Base64Error) {
                byteCount = try Base64.decodedCount(forEncoded: UnsafeRawBufferPointer(rebasing: message[content]))
            } catch {
                throw .badBase64(error)
            }
        }
        try checkPayload(byteCount: byteCount, maxPayloadBytes: maxPayloadBytes)
        return AudioChunkHeader(sampleRate: sampleRate, sampleCount: byteCount / 2, dataRange: content, dataIsEscaped: escaped)
    }

    /// The checks on a payload's size that both paths make before decoding: the limit, then an
    /// even number of bytes.
    static func checkPayload(byteCount: Int, maxPayloadBytes: Int) throws(AudioChunkError) {
        guard byteCount <= maxPayloadBytes else { throw .payloadTooLarge(bytes: byteCount, limit: maxPayloadBytes) }
        guard byteCount % 2 == 0 else { throw .oddByteCount(byteCount) }
    }

    /// Decodes unescaped base64 whose length and padding were checked into `output`.
    static func decodeBase64(_ text: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(AudioChunkError) -> Int {
        do throws(Base64Error) {
            return try Base64.decode(text, into: output)
        } catch {
            throw chunkError(error, at: 0)
        }
    }

    /// Little-endian samples as decoded from the wire, put in host order (nothing to do on a
    /// little-endian host).
    @inline(__always)
    static func toHostOrder(_ samples: UnsafeMutableBufferPointer<Int16>) {
        #if _endian(big)
        for k in samples.indices { samples[k] = Int16(littleEndian: samples[k]) }
        #endif
    }

    /// The value of a JSON integer that is positive and fits in `Int`. An integer that is not
    /// positive is named in decimal, as ``decodeData(_:sampleRate:maxPayloadBytes:)`` names it
    /// (`-0` is `0`), so both paths refuse it in the same words.
    static func sampleRate(_ value: JSONScanner.Scalar, in message: UnsafeRawBufferPointer) throws(AudioChunkError) -> SampleRate {
        guard case .number(let token, true) = value else {
            throw .badSampleRate(text(message, value.token))
        }
        let negative = message[token.lowerBound] == UInt8(ascii: "-")
        var magnitude = 0
        for offset in token.dropFirst(negative ? 1 : 0) {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(message[offset] - UInt8(ascii: "0")))
            guard !overflow, !overflow2 else { throw .badSampleRate(text(message, token)) }
            magnitude = sum
        }
        guard !negative, magnitude > 0 else { throw .badSampleRate(String(negative ? -magnitude : magnitude)) }
        return SampleRate(hertz: Double(magnitude))
    }

    /// A value as written, for an error message (at most 40 bytes of it).
    static func text(_ message: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        let shown = range.prefix(40)
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: message[shown]), as: UTF8.self)
        return shown.count < range.count ? text + "…" : text
    }

    /// Undoes the JSON escapes of the data string piece by piece in a stack buffer and decodes
    /// each piece. Pieces are a multiple of 4 characters; only the last may hold padding.
    static func decodeEscaped(_ string: JSONStringContent, into output: UnsafeMutableRawBufferPointer) throws(AudioChunkError) -> Int {
        // withUnsafeTemporaryAllocation stays on the stack up to 1 KiB and goes to the heap past it.
        let pieceCapacity = 1_024
        // The unescaped length, from the decoded size the header promised.
        let length = (output.count + 2) / 3 * 4
        let result = withUnsafeTemporaryAllocation(byteCount: pieceCapacity, alignment: 8) { piece in
            Result { () throws(AudioChunkError) -> Int in
                var reader = JSONStringContent.Reader(string)
                var consumed = 0
                var written = 0
                while consumed < length {
                    let take = min(pieceCapacity, length - consumed)
                    guard reader.fill(UnsafeMutableRawBufferPointer(rebasing: piece[0..<take])) == take else {
                        throw .headerDoesNotMatchMessage
                    }
                    let text = UnsafeRawBufferPointer(rebasing: piece[0..<take])
                    let destination = UnsafeMutableRawBufferPointer(rebasing: output[written...])
                    do throws(Base64Error) {
                        if consumed + take == length {
                            written += try Base64.decode(text, into: destination)
                        } else {
                            written += try Base64.decode(text, padding: 0, into: destination)
                        }
                    } catch {
                        throw chunkError(error, at: consumed)
                    }
                    consumed += take
                }
                var probe: UInt8 = 0
                guard withUnsafeMutableBytes(of: &probe, { reader.fill($0) }) == 0 else { throw .headerDoesNotMatchMessage }
                return written
            }
        }
        return try result.get()
    }

    /// A base64 error in a piece of the data that starts `offset` characters in.
    static func chunkError(_ error: Base64Error, at offset: Int) -> AudioChunkError {
        switch error {
        case .invalidCharacter(let byte, let at): .badBase64(.invalidCharacter(byte, offset: offset + at))
        case .invalidPadding(let at): .badBase64(.invalidPadding(offset: offset + at))
        case .nonCanonicalTrailingBits(let at): .badBase64(.nonCanonicalTrailingBits(offset: offset + at))
        case .invalidLength, .outputTooSmall: .headerDoesNotMatchMessage   // parse checked the length
        }
    }
}
