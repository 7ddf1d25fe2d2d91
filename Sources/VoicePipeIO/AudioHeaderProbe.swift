import CSndFile

/// What a WAV (RIFF, RIFX, RF64) or AIFF/AIFC header says, read by hand.
///
/// libsndfile is the reader, but it hides two things VoicePipe must report:
/// - it refuses a WAV whose header says 0 Hz or 0 channels (and turns an AIFF's 0 Hz into 1 Hz), so
///   the format as reported is lost; the probe recovers it so the ``FormatGuard`` can give its verdict;
/// - it silently clamps a data chunk that claims more bytes than the file holds; the probe keeps the
///   declared frame count so the reader can report the truncation.
///
/// Implementation notes: only chunk headers, `fmt `/`ds64`/`COMM` bodies and the `data`/`SSND` sizes
/// are read (a few hundred bytes at most); the audio itself is never touched.
struct AudioHeaderProbe: Equatable {
    enum Container: Equatable {
        case wav, rf64, aiff

        /// The libsndfile major format this container corresponds to.
        var sndfileMajor: Int32 {
            switch self {
            case .wav: Int32(SF_FORMAT_WAV)
            case .rf64: Int32(SF_FORMAT_RF64)
            case .aiff: Int32(SF_FORMAT_AIFF)
            }
        }
    }

    var container: Container
    /// The rate exactly as the header states it (an AIFF rate is an 80-bit float and may be fractional).
    var sampleRate: Double
    /// The channel count as the header states it (AIFF stores it signed).
    var channelCount: Int
    /// The libsndfile subformat (`SF_FORMAT_PCM_16`, ...) the header describes, when it is one we know.
    var subformat: Int32?
    /// A name for the encoding when ``subformat`` is nil, e.g. "WAV format tag 0x0055".
    var encodingFallbackName: String
    /// Frames the header promises: the data chunk size over the block size (WAV, uncompressed
    /// encodings only), the `ds64` sample count (RF64) or `numSampleFrames` (AIFF). Nil when unknown.
    var declaredFrameCount: Int?

    /// Reads at most `count` bytes at `offset`; returns fewer at the end of the file.
    typealias ByteReader = (_ offset: Int, _ count: Int) -> [UInt8]

    /// Probes a header. Returns nil when the bytes are not a WAV/RF64/AIFF header the probe understands
    /// (including a header whose format chunk is missing or cut short).
    static func probe(_ read: ByteReader) -> AudioHeaderProbe? {
        let start = read(0, 12)
        guard start.count == 12 else { return nil }
        switch (tag(start, 0), tag(start, 8)) {
        case ("RIFF", "WAVE"): return probeWAV(read, bigEndian: false, rf64: false)
        case ("RIFX", "WAVE"): return probeWAV(read, bigEndian: true, rf64: false)
        case ("RF64", "WAVE"), ("BW64", "WAVE"): return probeWAV(read, bigEndian: false, rf64: true)
        case ("FORM", "AIFF"): return probeAIFF(read, compressed: false)
        case ("FORM", "AIFC"): return probeAIFF(read, compressed: true)
        default: return nil
        }
    }

    /// Chunks walked before giving up; a real header has a handful before its audio.
    private static let chunkLimit = 256

    // MARK: WAV

    private static func probeWAV(_ read: ByteReader, bigEndian: Bool, rf64: Bool) -> AudioHeaderProbe? {
        var fmt: [UInt8]?
        var dataSize: UInt64?
        var ds64DataSize: UInt64?
        var ds64SampleCount: UInt64?
        var offset = 12
        for _ in 0..<chunkLimit {
            let header = read(offset, 8)
            guard header.count == 8 else { break }
            let id = tag(header, 0)
            let size = UInt64(u32(header, 4, bigEndian: bigEndian))
            switch id {
            case "fmt ":
                fmt = read(offset + 8, Int(min(size, 64)))
            case "ds64" where rf64:
                let body = read(offset + 8, 24)
                if body.count == 24 {
                    ds64DataSize = u64le(body, 8)
                    ds64SampleCount = u64le(body, 16)
                }
            case "data":
                dataSize = size
            default:
                break
            }
            if fmt != nil && dataSize != nil { break }
            // Chunks are padded to an even length. Step with overflow checks: the size is untrusted.
            let (next, overflow) = offset.addingReportingOverflow(8 + Int(size) + Int(size & 1))
            guard !overflow else { break }
            offset = next
        }
        guard let fmt, fmt.count >= 16 else { return nil }

        var formatTag = u16(fmt, 0, bigEndian: bigEndian)
        let channels = Int(u16(fmt, 2, bigEndian: bigEndian))
        let rate = Double(u32(fmt, 4, bigEndian: bigEndian))
        let blockAlign = Int(u16(fmt, 12, bigEndian: bigEndian))
        let bits = Int(u16(fmt, 14, bigEndian: bigEndian))
        if formatTag == 0xFFFE, fmt.count >= 26 {
            // WAVE_FORMAT_EXTENSIBLE: the real tag is the first two bytes of the SubFormat GUID.
            formatTag = u16(fmt, 24, bigEndian: bigEndian)
        }
        let subformat = wavSubformat(tag: formatTag, bits: bits)

        var declared: Int?
        let isUncompressed = [0x0001, 0x0003, 0x0006, 0x0007].contains(formatTag)
        let frameBytes = blockAlign > 0 ? blockAlign : channels * ((bits + 7) / 8)
        if rf64, let ds64SampleCount, ds64SampleCount > 0 {
            declared = Int(exactly: ds64SampleCount)
        } else if isUncompressed, frameBytes > 0 {
            var bytes = dataSize
            if rf64, dataSize == 0xFFFF_FFFF { bytes = ds64DataSize }
            // 0xFFFFFFFF in a plain RIFF is the "still being written" marker, not a size.
            if !rf64, dataSize == 0xFFFF_FFFF { bytes = nil }
            if let bytes { declared = Int(exactly: bytes / UInt64(frameBytes)) }
        }
        let hex = String(formatTag, radix: 16, uppercase: true)
        return AudioHeaderProbe(
            container: rf64 ? .rf64 : .wav, sampleRate: rate, channelCount: channels, subformat: subformat,
            encodingFallbackName: "WAV format tag 0x\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex)",
            declaredFrameCount: declared)
    }

    private static func wavSubformat(tag: UInt16, bits: Int) -> Int32? {
        let code: Int32?
        switch tag {
        case 0x0001:
            switch bits {
            case 1...8: code = Int32(SF_FORMAT_PCM_U8)
            case 9...16: code = Int32(SF_FORMAT_PCM_16)
            case 17...24: code = Int32(SF_FORMAT_PCM_24)
            case 25...32: code = Int32(SF_FORMAT_PCM_32)
            default: code = nil
            }
        case 0x0003: code = bits == 64 ? Int32(SF_FORMAT_DOUBLE) : bits == 32 ? Int32(SF_FORMAT_FLOAT) : nil
        case 0x0006: code = Int32(SF_FORMAT_ALAW)
        case 0x0007: code = Int32(SF_FORMAT_ULAW)
        case 0x0002: code = Int32(SF_FORMAT_MS_ADPCM)
        case 0x0011: code = Int32(SF_FORMAT_IMA_ADPCM)
        case 0x0031: code = Int32(SF_FORMAT_GSM610)
        default: code = nil
        }
        return code
    }

    // MARK: AIFF

    private static func probeAIFF(_ read: ByteReader, compressed: Bool) -> AudioHeaderProbe? {
        var offset = 12
        for _ in 0..<chunkLimit {
            let header = read(offset, 8)
            guard header.count == 8 else { return nil }
            let size = Int(u32(header, 4, bigEndian: true))
            if tag(header, 0) == "COMM" {
                let body = read(offset + 8, min(size, 64))
                guard body.count >= 18 else { return nil }
                let channels = Int(Int16(bitPattern: u16(body, 0, bigEndian: true)))
                let frames = Int(u32(body, 2, bigEndian: true))
                let bits = Int(Int16(bitPattern: u16(body, 6, bigEndian: true)))
                let rate = extended80(Array(body[8..<18]))
                let compression = compressed && body.count >= 22 ? tag(body, 18) : "NONE"
                return AudioHeaderProbe(
                    container: .aiff, sampleRate: rate, channelCount: channels,
                    subformat: aiffSubformat(compression: compression, bits: bits),
                    encodingFallbackName: "AIFC compression '\(compression)'",
                    declaredFrameCount: frames)
            }
            let (next, overflow) = offset.addingReportingOverflow(8 + size + (size & 1))
            guard !overflow else { return nil }
            offset = next
        }
        return nil
    }

    private static func aiffSubformat(compression: String, bits: Int) -> Int32? {
        switch compression {
        case "NONE", "twos", "sowt":
            switch bits {
            case 1...8: Int32(SF_FORMAT_PCM_S8)
            case 9...16: Int32(SF_FORMAT_PCM_16)
            case 17...24: Int32(SF_FORMAT_PCM_24)
            case 25...32: Int32(SF_FORMAT_PCM_32)
            default: nil
            }
        case "fl32", "FL32": Int32(SF_FORMAT_FLOAT)
        case "fl64", "FL64": Int32(SF_FORMAT_DOUBLE)
        case "ulaw", "ULAW": Int32(SF_FORMAT_ULAW)
        case "alaw", "ALAW": Int32(SF_FORMAT_ALAW)
        case "ima4": Int32(SF_FORMAT_IMA_ADPCM)
        default: nil
        }
    }

    /// Decodes an IEEE 754 80-bit extended float (big-endian), the type of an AIFF sample rate.
    ///
    /// ```
    ///  byte 0-1: sign (1 bit) | exponent (15 bits, bias 16383)
    ///  byte 2-9: significand (64 bits, explicit integer bit)
    /// ```
    /// Zero, infinities and NaNs come back as such, so the ``FormatGuard`` can name them.
    static func extended80(_ bytes: [UInt8]) -> Double {
        guard bytes.count >= 10 else { return .nan }
        let signAndExponent = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let negative = signAndExponent & 0x8000 != 0
        let exponent = Int(signAndExponent & 0x7FFF)
        var significand: UInt64 = 0
        for byte in bytes[2..<10] { significand = significand << 8 | UInt64(byte) }
        if exponent == 0x7FFF {
            // The integer bit is ignored; a zero fraction is infinity, anything else NaN.
            return significand << 1 == 0 ? (negative ? -.infinity : .infinity) : .nan
        }
        if significand == 0 { return negative ? -0.0 : 0 }
        // value = significand × 2^(exponent − 16383 − 63); Double rounds the 64-bit significand.
        return Double(sign: negative ? .minus : .plus, exponent: exponent - 16383 - 63, significand: Double(significand))
    }

    // MARK: Byte helpers

    private static func tag(_ bytes: [UInt8], _ at: Int) -> String {
        guard bytes.count >= at + 4 else { return "" }
        return String(decoding: bytes[at..<at + 4], as: Unicode.ASCII.self)
    }

    private static func u16(_ bytes: [UInt8], _ at: Int, bigEndian: Bool) -> UInt16 {
        guard bytes.count >= at + 2 else { return 0 }
        let (a, b) = (UInt16(bytes[at]), UInt16(bytes[at + 1]))
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    private static func u32(_ bytes: [UInt8], _ at: Int, bigEndian: Bool) -> UInt32 {
        guard bytes.count >= at + 4 else { return 0 }
        var value: UInt32 = 0
        for i in 0..<4 {
            let byte = UInt32(bytes[bigEndian ? at + i : at + 3 - i])
            value = value << 8 | byte
        }
        return value
    }

    private static func u64le(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        guard bytes.count >= at + 8 else { return 0 }
        var value: UInt64 = 0
        for i in (0..<8).reversed() { value = value << 8 | UInt64(bytes[at + i]) }
        return value
    }
}
