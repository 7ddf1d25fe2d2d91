import CSndFile
import Foundation

/// Files written by libsndfile itself, in any format it writes, for tests that need an encoding
/// VoicePipe's own writer does not produce (8-bit, 24-bit, µ-law, A-law, FLAC, Ogg, MP3).
public enum SndFileFixtures {
    /// Why a fixture could not be made.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Writes interleaved `samples` with libsndfile in the given `SF_FORMAT_*` major | subtype,
    /// using the `sf_writef_*` call that matches `T` (Int16, Int32, Float, Double); libsndfile
    /// converts them to the subtype.
    /// - Parameter bitrateMode: an `SF_BITRATE_MODE_*` for lossy encoders (MP3 at a constant
    ///   bitrate), or nil for libsndfile's default.
    /// - Throws: ``Failure`` when libsndfile refuses the format or writes fewer frames.
    public static func write<T>(_ path: String, format: Int32, sampleRate: Int, channels: Int, samples: [T], bitrateMode: Int32? = nil) throws {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw Failure(description: "libsndfile cannot write \(path): \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
        // libsndfile 1.2.0 returns 0 from a successful SFC_SET_BITRATE_MODE, so judge by its error state.
        if var mode = bitrateMode, sf_command(file, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size)) < 0 || sf_error(file) != 0 {
            throw Failure(description: "libsndfile cannot set bitrate mode \(mode) for \(path): \(String(cString: sf_strerror(file)))")
        }
        let frames = sf_count_t(samples.count / channels)
        let written: sf_count_t = samples.withUnsafeBytes { raw in
            switch T.self {
            case is Int16.Type: sf_writef_short(file, raw.assumingMemoryBound(to: Int16.self).baseAddress, frames)
            case is Int32.Type: sf_writef_int(file, raw.assumingMemoryBound(to: Int32.self).baseAddress, frames)
            case is Float.Type: sf_writef_float(file, raw.assumingMemoryBound(to: Float.self).baseAddress, frames)
            case is Double.Type: sf_writef_double(file, raw.assumingMemoryBound(to: Double.self).baseAddress, frames)
            default: -1
            }
        }
        guard written == frames else {
            throw Failure(description: "libsndfile wrote \(written) of \(frames) frames to \(path)")
        }
    }

    /// The bytes of a RIFF WAV file's `data` chunk: the file without its header, as a headerless
    /// capture of the same audio would hold them.
    /// - Throws: ``Failure`` when the file is not a RIFF WAV with a whole `data` chunk.
    public static func wavData(_ path: String) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw Failure(description: "\(path) is not a RIFF WAV file")
        }
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            if bytes[offset..<(offset + 4)].elementsEqual("data".utf8) {
                guard offset + 8 + size <= bytes.count else { break }
                return Array(bytes[(offset + 8)..<(offset + 8 + size)])
            }
            offset += 8 + size + (size & 1)
        }
        throw Failure(description: "\(path) has no whole data chunk")
    }

    /// An MP3 stream without its first frame when that frame is a Xing or Info header (what LAME,
    /// and so libsndfile, writes first): the exact frame count and gapless trim go with it, so
    /// decoders must estimate the length from the file's size, as for many MP3s in the wild.
    /// - Throws: ``Failure`` when the stream does not start with an MPEG Layer III Xing/Info frame.
    public static func mp3WithoutInfoFrame(_ bytes: [UInt8]) throws -> [UInt8] {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0, (bytes[1] >> 1) & 3 == 1 else {
            throw Failure(description: "the stream does not start with an MPEG Layer III frame header")
        }
        let version = (bytes[1] >> 3) & 3  // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
        let bitrates = version == 3 ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320] : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        let rates = [44_100, 48_000, 32_000]
        let bitrateIndex = Int(bytes[2] >> 4), rateIndex = Int((bytes[2] >> 2) & 3)
        guard bitrateIndex > 0, bitrateIndex < bitrates.count, rateIndex < rates.count, version != 1 else {
            throw Failure(description: "the first frame header has a free or reserved bitrate or rate")
        }
        let rate = rates[rateIndex] / (version == 3 ? 1 : version == 2 ? 2 : 4)
        let length = (version == 3 ? 144 : 72) * bitrates[bitrateIndex] * 1_000 / rate + Int((bytes[2] >> 1) & 1)
        let first = bytes.prefix(length)
        guard length < bytes.count, first.firstRange(of: Array("Xing".utf8)) != nil || first.firstRange(of: Array("Info".utf8)) != nil else {
            throw Failure(description: "the first frame is not a Xing or Info header")
        }
        return Array(bytes[length...])
    }
}
