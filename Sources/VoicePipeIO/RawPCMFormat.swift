import CSndFile
import VoicePipeCore

/// How the samples of a headerless file are stored: the encodings telephony and capture hardware
/// produce. Multi-byte encodings are little-endian.
///
/// The raw values are the names the command line takes (`--raw 8000:1:mulaw`).
public enum RawEncoding: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Unsigned 8-bit PCM (128 is silence), as WAV stores 8-bit audio.
    case u8
    /// Signed 16-bit PCM.
    case int16
    /// Signed 24-bit PCM in three bytes.
    case int24
    /// Signed 32-bit PCM.
    case int32
    /// IEEE 754 single precision, full scale 1.0.
    case float32
    /// IEEE 754 double precision, full scale 1.0.
    case float64
    /// G.711 µ-law, one byte a sample: what North American and Japanese telephone media carry.
    case mulaw
    /// G.711 A-law, one byte a sample: the European telephone encoding.
    case alaw

    /// The sample type the reader delivers: the narrowest of VoicePipe's types that holds every
    /// decoded value exactly, as libsndfile decodes it (8-bit, µ-law and A-law scaled to Int16,
    /// 24-bit left-justified in Int32).
    public var decodedSampleType: SampleType {
        SndFileFormat.nativeSampleType(subtype: sndfileSubtype)
    }

    /// Bytes one sample occupies in the file.
    public var bytesPerSample: Int {
        switch self {
        case .u8, .mulaw, .alaw: 1
        case .int16: 2
        case .int24: 3
        case .int32, .float32: 4
        case .float64: 8
        }
    }

    /// The libsndfile subtype (`SF_FORMAT_PCM_U8`, ...) that reads this encoding.
    var sndfileSubtype: Int32 {
        switch self {
        case .u8: Int32(SF_FORMAT_PCM_U8)
        case .int16: Int32(SF_FORMAT_PCM_16)
        case .int24: Int32(SF_FORMAT_PCM_24)
        case .int32: Int32(SF_FORMAT_PCM_32)
        case .float32: Int32(SF_FORMAT_FLOAT)
        case .float64: Int32(SF_FORMAT_DOUBLE)
        case .mulaw: Int32(SF_FORMAT_ULAW)
        case .alaw: Int32(SF_FORMAT_ALAW)
        }
    }

    /// A name for messages: "unsigned 8-bit PCM", "µ-law", ...
    public var description: String {
        switch self {
        case .u8: "unsigned 8-bit PCM"
        case .int16: "16-bit PCM"
        case .int24: "24-bit PCM"
        case .int32: "32-bit PCM"
        case .float32: "32-bit float"
        case .float64: "64-bit float"
        case .mulaw: "µ-law"
        case .alaw: "A-law"
        }
    }
}

/// What a headerless file holds: interleaved frames at a rate, in one ``RawEncoding``.
///
/// Only a description, and possibly a wrong one (0 Hz, no channels): ``AudioFileReader/init(path:rawFormat:)``
/// passes ``decodedFormat`` through the ``FormatGuard`` before it touches the file.
public struct RawPCMFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: SampleRate
    /// Samples per frame.
    public var channelCount: Int
    /// How each sample is stored.
    public var encoding: RawEncoding

    public init(sampleRate: SampleRate, channelCount: Int, encoding: RawEncoding) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.encoding = encoding
    }

    /// The format the reader delivers: this rate and channel count, interleaved, in the encoding's
    /// decoded sample type.
    public var decodedFormat: AudioFormat {
        AudioFormat(sampleRate: sampleRate, channelCount: channelCount, sampleType: encoding.decodedSampleType, isInterleaved: true)
    }

    /// Bytes one frame occupies in the file, or 0 when the channel count is not positive.
    public var bytesPerFrame: Int { max(channelCount, 0) * encoding.bytesPerSample }

    /// "8000 Hz, mono, µ-law".
    public var description: String {
        let channels = channelCount == 1 ? "mono" : channelCount == 2 ? "stereo" : "\(channelCount) ch"
        return "\(sampleRate), \(channels), \(encoding)"
    }
}
