import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

struct FixtureError: Error, CustomStringConvertible {
    let description: String
}

/// Hand-built headers and libsndfile-written files for the tests: no external tools.
enum Fixtures {
    // MARK: Byte building

    struct Bytes {
        var bytes: [UInt8] = []
        mutating func ascii(_ text: String) { bytes += Array(text.utf8) }
        mutating func u16le(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
        mutating func u32le(_ value: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
        mutating func u64le(_ value: UInt64) { for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8((value >> UInt64(shift)) & 0xFF)) } }
        mutating func u16be(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
        mutating func u32be(_ value: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) } }
    }

    static func int16LE(_ samples: [Int16]) -> [UInt8] {
        var out = Bytes()
        for sample in samples { out.u16le(UInt16(bitPattern: sample)) }
        return out.bytes
    }

    static func int16BE(_ samples: [Int16]) -> [UInt8] {
        var out = Bytes()
        for sample in samples { out.u16be(UInt16(bitPattern: sample)) }
        return out.bytes
    }

    /// Raw little-endian bytes of any fixed-width samples.
    static func littleEndianBytes<T>(_ samples: [T]) -> [UInt8] {
        samples.withUnsafeBytes { Array($0) }
    }

    /// A canonical 16-bit (or other) PCM WAV: `RIFF`, optional `LIST` chunk of odd length before `fmt `,
    /// `fmt ` (plain or WAVE_FORMAT_EXTENSIBLE), `data`. The data chunk size is `declaredDataBytes`
    /// (default: the payload's length), so a header can claim more than the file holds.
    static func wav(
        sampleRate: UInt32, channels: UInt16, bitsPerSample: UInt16 = 16, formatTag: UInt16 = 1,
        extensible: Bool = false, oddChunkFirst: Bool = false, declaredDataBytes: UInt32? = nil, payload: [UInt8]
    ) -> [UInt8] {
        var body = Bytes()
        body.ascii("WAVE")
        if oddChunkFirst {
            body.ascii("junk")
            body.u32le(3)
            body.bytes += [1, 2, 3, 0]  // 3 bytes + pad byte
        }
        let blockAlign = UInt16(truncatingIfNeeded: Int(channels) * Int(bitsPerSample) / 8)
        body.ascii("fmt ")
        body.u32le(extensible ? 40 : 16)
        body.u16le(extensible ? 0xFFFE : formatTag)
        body.u16le(channels)
        body.u32le(sampleRate)
        body.u32le(sampleRate &* UInt32(blockAlign))
        body.u16le(blockAlign)
        body.u16le(bitsPerSample)
        if extensible {
            body.u16le(22)                 // cbSize
            body.u16le(bitsPerSample)      // valid bits
            body.u32le(channels == 1 ? 0x4 : 0x3)
            body.u16le(formatTag)          // SubFormat GUID: tag, then 0000-0010-8000-00AA00389B71
            body.bytes += [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        }
        let dataBytes = declaredDataBytes ?? UInt32(payload.count)
        body.ascii("data")
        body.u32le(dataBytes)
        var file = Bytes()
        file.ascii("RIFF")
        file.u32le(UInt32(body.bytes.count) &+ dataBytes)
        return file.bytes + body.bytes + payload
    }

    /// An AIFF with a `COMM` chunk (rate given as the 10 raw bytes of an 80-bit float) and an `SSND`
    /// chunk holding `payload` (big-endian samples). `declaredFrames` goes into `COMM`; the SSND size
    /// follows it too, so a larger value makes a truncated file.
    static func aiff(rate80: [UInt8], channels: Int16, bitsPerSample: Int16 = 16, declaredFrames: UInt32, payload: [UInt8]) -> [UInt8] {
        let bytesPerFrame = UInt32(max(Int(channels), 1)) * UInt32(bitsPerSample / 8)
        let ssndBytes = 8 + declaredFrames * bytesPerFrame
        var body = Bytes()
        body.ascii("AIFF")
        body.ascii("COMM")
        body.u32be(18)
        body.u16be(UInt16(bitPattern: channels))
        body.u32be(declaredFrames)
        body.u16be(UInt16(bitPattern: bitsPerSample))
        body.bytes += rate80
        body.ascii("SSND")
        body.u32be(ssndBytes)
        body.u32be(0)  // offset
        body.u32be(0)  // block size
        var file = Bytes()
        file.ascii("FORM")
        file.u32be(UInt32(body.bytes.count - 8) + ssndBytes)
        return file.bytes + body.bytes + payload
    }

    /// The 80-bit extended encoding of a finite, non-negative value (an AIFF sample rate).
    static func extended80(_ value: Double) -> [UInt8] {
        guard value != 0 else { return [UInt8](repeating: 0, count: 10) }
        let exponent = UInt16(Int(value.exponent) + 16383)
        let significand = (UInt64(1) << 63) | (value.significandBitPattern << 11)
        var out = Bytes()
        out.u16be(exponent)
        for shift in stride(from: 56, through: 0, by: -8) { out.bytes.append(UInt8((significand >> UInt64(shift)) & 0xFF)) }
        return out.bytes
    }

    // MARK: Files written by libsndfile itself

    /// Writes interleaved `samples` with libsndfile in the given `SF_FORMAT_*` major | subtype, using the
    /// `sf_writef_*` call that matches `T` (Int16, Int32, Float, Double).
    static func writeWithLibsndfile<T>(_ path: String, format: Int32, sampleRate: Int, channels: Int, samples: [T]) throws {
        try SndFileFixtures.write(path, format: format, sampleRate: sampleRate, channels: channels, samples: samples)
    }

    /// Chops a file to `length` bytes.
    static func truncate(_ path: String, to length: Int) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(length))
        try handle.close()
    }

    static func fileSize(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.size] as? NSNumber)?.intValue ?? -1
    }

    // MARK: Signals

    /// A reproducible interleaved test signal at full-scale 1.0: a tone per channel plus a little noise.
    static func signal(frames: Int, channels: Int, sampleRate: Double, seed: UInt64 = 1) -> [Double] {
        let perChannel = (0..<channels).map { channel in
            let tone = Signals.sine(frequency: 440 * Double(channel + 1), amplitude: 0.6, sampleRate: sampleRate, frames: frames)
            let noise = Signals.noise(amplitude: 0.2, frames: frames, seed: seed &+ UInt64(channel))
            return zip(tone, noise).map { $0 + $1 }
        }
        return Signals.interleave(perChannel)
    }
}

/// The ``AudioFileError`` `body` throws, or nil if it returns. Any other error is a test failure.
func caught<R>(_ body: () throws -> R) -> AudioFileError? {
    do {
        _ = try body()
        return nil
    } catch let error as AudioFileError {
        return error
    } catch {
        Issue.record("expected an AudioFileError, got \(error)")
        return nil
    }
}
