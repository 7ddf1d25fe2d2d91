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
    /// - Throws: ``Failure`` when libsndfile refuses the format or writes fewer frames.
    public static func write<T>(_ path: String, format: Int32, sampleRate: Int, channels: Int, samples: [T]) throws {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw Failure(description: "libsndfile cannot write \(path): \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
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
}
