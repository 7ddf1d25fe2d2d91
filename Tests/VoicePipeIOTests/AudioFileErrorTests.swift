import CSndFile
import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// Every way a file can be missing, wrong, broken or short ends in the typed error that says so.
struct AudioFileErrorTests {
    // MARK: Opening

    @Test func missingFileIsFileNotFound() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("nowhere.wav")
        #expect(caught { try AudioFileReader(path: path) } == .fileNotFound(path: path))
        #expect(caught { try AudioFileReader.inspect(path: path) } == .fileNotFound(path: path))
        #expect(caught { try AudioFileReader(path: path, rawFormat: RawPCMFormat(sampleRate: 16_000, channelCount: 1, encoding: .int16)) } == .fileNotFound(path: path))
    }

    @Test func directoryIsCannotOpen() throws {
        let directory = try TemporaryDirectory()
        let error = caught { try AudioFileReader(path: directory.url.path) }
        guard case .cannotOpen(directory.url.path, let reason, let code) = error else {
            Issue.record("expected cannotOpen, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("directory"))
        #expect(code == SystemErrorCode(.posix, EISDIR, message: String(cString: strerror(EISDIR))))
        #expect(error?.description.hasSuffix("(errno \(EISDIR))") == true)
    }

    @Test func garbageAndEmptyFilesAreUnrecognized() throws {
        let directory = try TemporaryDirectory()
        var generator = SplitMix64(seed: 42)
        let garbage = try directory.file("garbage.wav", (0..<4_096).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        let error = caught { try AudioFileReader(path: garbage) }
        guard case .unrecognizedFormat(garbage, let detail, let code) = error else {
            Issue.record("expected unrecognizedFormat, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("not recognised"))  // libsndfile's own words are kept
        #expect(code?.domain == .libsndfile && code?.value == Int32(SF_ERR_UNRECOGNISED_FORMAT))  // and its number
        #expect(caught { try AudioFileReader.inspect(path: garbage) } == error)

        let empty = try directory.file("empty.wav", [])
        #expect(caught { try AudioFileReader(path: empty) } == .unrecognizedFormat(path: empty, detail: "the file is empty", code: nil))

        // A RIFF header that stops before its fmt chunk is not a usable header either.
        let stub = try directory.file("stub.wav", Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8))
        guard case .unrecognizedFormat = caught({ try AudioFileReader(path: stub) }) else {
            Issue.record("a header-only RIFF stub should be unrecognized")
            return
        }
    }

    // MARK: Headers the guard refuses

    @Test func zeroRateWAVIsUnusableAndInspectShowsTheReportedFormat() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("zero-rate.wav", Fixtures.wav(sampleRate: 0, channels: 1, payload: Fixtures.int16LE([1, 2, 3, 4])))

        #expect(caught { try AudioFileReader(path: path) } == .unusableFormat(path: path, .sampleRateNotPositive(0)))

        let info = try AudioFileReader.inspect(path: path)
        #expect(info.container == "WAV")
        #expect(info.encoding == "Signed 16 bit PCM")
        #expect(info.format == AudioFormat(sampleRate: 0, channelCount: 1, sampleType: .int16, isInterleaved: true))
        #expect(info.declaredFrameCount == 4)
        #expect(info.verdict == .failure(.sampleRateNotPositive(0)))
    }

    @Test func zeroChannelWAVIsUnusable() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("no-channels.wav", Fixtures.wav(sampleRate: 16_000, channels: 0, payload: Fixtures.int16LE([1, 2])))
        #expect(caught { try AudioFileReader(path: path) } == .unusableFormat(path: path, .noChannels(0)))
        let info = try AudioFileReader.inspect(path: path)
        #expect(info.format.sampleRate == 16_000)
        #expect(info.format.channelCount == 0)
        #expect(info.verdict == .failure(.noChannels(0)))
    }

    @Test func zeroChannelExtensibleWAVIsUnusable() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("no-channels-ext.wav", Fixtures.wav(
            sampleRate: 48_000, channels: 0, bitsPerSample: 32, formatTag: 3, extensible: true, oddChunkFirst: true, payload: []))
        #expect(caught { try AudioFileReader(path: path) } == .unusableFormat(path: path, .noChannels(0)))
        let info = try AudioFileReader.inspect(path: path)
        #expect(info.encoding == "32 bit float")
        #expect(info.format == AudioFormat(sampleRate: 48_000, channelCount: 0, sampleType: .float32, isInterleaved: true))
    }

    @Test func zeroRateAIFFIsUnusableThoughLibsndfileWouldSayOneHertz() throws {
        let directory = try TemporaryDirectory()
        let payload = Fixtures.int16BE([1, 2, 3])
        let path = try directory.file("zero-rate.aiff", Fixtures.aiff(rate80: Fixtures.extended80(0), channels: 1, declaredFrames: 3, payload: payload))
        #expect(caught { try AudioFileReader(path: path) } == .unusableFormat(path: path, .sampleRateNotPositive(0)))
        let info = try AudioFileReader.inspect(path: path)
        #expect(info.container == "AIFF")
        #expect(info.format == AudioFormat(sampleRate: 0, channelCount: 1, sampleType: .int16, isInterleaved: true))

        let noChannels = try directory.file("no-channels.aiff", Fixtures.aiff(rate80: Fixtures.extended80(8_000), channels: 0, declaredFrames: 3, payload: payload))
        #expect(caught { try AudioFileReader(path: noChannels) } == .unusableFormat(path: noChannels, .noChannels(0)))
        #expect(try AudioFileReader.inspect(path: noChannels).format.channelCount == 0)

        // An infinite rate (exponent all ones, zero fraction) is named as not finite.
        let infinite = try directory.file("inf.aiff", Fixtures.aiff(rate80: [0x7F, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0], channels: 1, declaredFrames: 3, payload: payload))
        #expect(caught { try AudioFileReader(path: infinite) } == .unusableFormat(path: infinite, .sampleRateNotFinite(SampleRate(hertz: .infinity))))
    }

    // MARK: Truncation

    @Test func truncatedWAVDeliversEveryFramePresentThenThrows() throws {
        let directory = try TemporaryDirectory()
        let present = Signals.int16(Fixtures.signal(frames: 400, channels: 2, sampleRate: 16_000))
        // The header claims 1000 frames (4000 bytes); 400 frames are there.
        let path = try directory.file("cut.wav", Fixtures.wav(
            sampleRate: 16_000, channels: 2, declaredDataBytes: 4_000, payload: Fixtures.int16LE(present)))

        let info = try AudioFileReader.inspect(path: path)
        #expect(info.frameCount == 400)
        #expect(info.declaredFrameCount == 1_000)
        #expect(info.isKnownTruncated)

        for bufferFrames in [1, 7, 400, 480, 4_096] {
            let reader = try AudioFileReader(path: path)
            let (read, error) = AudioFiles.readAll(reader, bufferFrames: bufferFrames, as: Int16.self)
            #expect(read == present, "buffer of \(bufferFrames) frames")
            #expect(error == .truncated(path: path, framesRead: 400, framesDeclared: 1_000))
            #expect(reader.framesRead == 400)
            // Every later read says the same.
            #expect(AudioFiles.readAll(reader, bufferFrames: bufferFrames, as: Int16.self).error == error)
        }
    }

    @Test func truncatedAIFFAndRF64AreReportedToo() throws {
        let directory = try TemporaryDirectory()
        let present = Signals.int16(Fixtures.signal(frames: 250, channels: 1, sampleRate: 8_000))
        let aiff = try directory.file("cut.aiff", Fixtures.aiff(
            rate80: Fixtures.extended80(8_000), channels: 1, declaredFrames: 600, payload: Fixtures.int16BE(present)))
        let aiffRead = AudioFiles.readAll(try AudioFileReader(path: aiff), bufferFrames: 64, as: Int16.self)
        #expect(aiffRead.samples == present)
        #expect(aiffRead.error == .truncated(path: aiff, framesRead: 250, framesDeclared: 600))

        let rf64 = directory.path("cut.rf64")
        let full = Signals.int16(Fixtures.signal(frames: 4_000, channels: 2, sampleRate: 16_000))
        try Fixtures.writeWithLibsndfile(rf64, format: Int32(SF_FORMAT_RF64 | SF_FORMAT_PCM_16), sampleRate: 16_000, channels: 2, samples: full)
        let headerBytes = try Fixtures.fileSize(rf64) - full.count * 2
        try Fixtures.truncate(rf64, to: headerBytes + 1_000 * 4 + 3)  // 1000 whole frames and a partial one
        let rf64Read = AudioFiles.readAll(try AudioFileReader(path: rf64), bufferFrames: 480, as: Int16.self)
        #expect(rf64Read.samples == Array(full[0..<2_000]))
        #expect(rf64Read.error == .truncated(path: rf64, framesRead: 1_000, framesDeclared: 4_000))
    }

    /// A FLAC file with `samples` whose bytes at `offset` are overwritten with `count` bytes of noise.
    static func damagedFLAC(_ directory: TemporaryDirectory, _ name: String, samples: [Int16], offset: (Int) -> Int, count: Int) throws -> String {
        let path = directory.path(name)
        try Fixtures.writeWithLibsndfile(path, format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), sampleRate: 16_000, channels: 2, samples: samples)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(offset(try Fixtures.fileSize(path))))
        handle.write(Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }))
        try handle.close()
        return path
    }

    @Test func flacDecoderErrorIsCorruptAfterDeliveringWhatDecoded() throws {
        let directory = try TemporaryDirectory()
        let samples = Signals.int16(Fixtures.signal(frames: 40_000, channels: 2, sampleRate: 16_000))
        // Damage early in the audio: libFLAC fails and libsndfile reports a read error.
        let path = try Self.damagedFLAC(directory, "decoder-error.flac", samples: samples, offset: { _ in 20_000 }, count: 50)

        let reader = try AudioFileReader(path: path)
        let (read, error) = AudioFiles.readAll(reader, bufferFrames: 1_000, as: Int16.self)
        guard case .corrupt(path, let code) = error else {
            Issue.record("expected corrupt, got \(String(describing: error))")
            return
        }
        #expect(code.message.contains("flac decoder"))  // libsndfile's own words
        #expect(code.domain == .libsndfile && code.value != 0)  // and its number
        #expect(reader.framesRead > 0 && reader.framesRead < 40_000)
        #expect(read.count == reader.framesRead * 2)
        // What was delivered before the damage is the original audio.
        #expect(read.prefix(2_000) == samples.prefix(2_000))
        // Every later read says the same.
        #expect(AudioFiles.readAll(reader, bufferFrames: 1_000, as: Int16.self).error == error)
    }

    @Test func flacScribbledOverInTheMiddleIsCorruptNotTruncated() throws {
        let directory = try TemporaryDirectory()
        let samples = Signals.int16(Fixtures.signal(frames: 40_000, channels: 2, sampleRate: 16_000))
        // Scribble over the middle: the file still ends with a whole frame, so this is damage, not
        // a file cut short (TruncationTests has those).
        let path = try Self.damagedFLAC(directory, "damaged.flac", samples: samples, offset: { $0 / 2 }, count: 3_000)

        let reader = try AudioFileReader(path: path)
        #expect(reader.info.declaredFrameCount == 40_000)
        let (read, error) = AudioFiles.readAll(reader, bufferFrames: 1_000, as: Int16.self)
        #expect(reader.framesRead < 40_000)
        #expect(read.count == reader.framesRead * 2)
        #expect(read.prefix(2_000) == samples.prefix(2_000))
        guard case .corrupt(path, _) = error else {
            Issue.record("expected corrupt, got \(String(describing: error))")
            return
        }
    }

    // MARK: Raw formats and buffers

    @Test func rawFormatsTheGuardRefusesAreInvalid() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("capture.raw", [0, 0, 0, 0])
        for format in [
            RawPCMFormat(sampleRate: 0, channelCount: 1, encoding: .int16),
            RawPCMFormat(sampleRate: SampleRate(hertz: .nan), channelCount: 1, encoding: .mulaw),
            RawPCMFormat(sampleRate: -8_000, channelCount: 1, encoding: .alaw),
            RawPCMFormat(sampleRate: 16_000, channelCount: 0, encoding: .int24),
            RawPCMFormat(sampleRate: 44_100.5, channelCount: 1, encoding: .u8),
        ] {
            let error = caught { try AudioFileReader(path: path, rawFormat: format) }
            guard case .invalidRawFormat(path, let problem, _) = error else {
                Issue.record("\(format): expected invalidRawFormat, got \(String(describing: error))")
                continue
            }
            #expect(error?.description == "cannot read '\(path)' as raw PCM: \(problem)")
        }
        // The format is judged before the file: a bad format for a missing file is still the format's fault.
        guard case .invalidRawFormat = caught({ try AudioFileReader(path: directory.path("missing.raw"), rawFormat: RawPCMFormat(sampleRate: 0, channelCount: 1, encoding: .mulaw)) }) else {
            Issue.record("expected invalidRawFormat for a 0 Hz raw format")
            return
        }
    }

    @Test func buffersOfTheWrongTypeOrSizeAreRefusedWithoutReading() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("stereo.wav", Fixtures.wav(sampleRate: 16_000, channels: 2, payload: Fixtures.int16LE([1, 2, 3, 4])))
        let reader = try AudioFileReader(path: path)

        var floats = [Float](repeating: 0, count: 8)
        let wrongType = floats.withUnsafeMutableBufferPointer { buffer in caught { try reader.read(into: buffer) } }
        guard case .incompatibleBuffer(path, let detail) = wrongType else {
            Issue.record("expected incompatibleBuffer, got \(String(describing: wrongType))")
            return
        }
        #expect(detail.contains("Int16"))

        var one = [Int16](repeating: 0, count: 1)
        let tooSmall = one.withUnsafeMutableBufferPointer { buffer in caught { try reader.read(into: buffer) } }
        guard case .incompatibleBuffer = tooSmall else {
            Issue.record("expected incompatibleBuffer, got \(String(describing: tooSmall))")
            return
        }
        var bytes = [UInt8](repeating: 0, count: 3)
        let tooFewBytes = bytes.withUnsafeMutableBytes { buffer in caught { try reader.read(into: buffer) } }
        guard case .incompatibleBuffer = tooFewBytes else {
            Issue.record("expected incompatibleBuffer, got \(String(describing: tooFewBytes))")
            return
        }
        #expect(reader.framesRead == 0)
        #expect(AudioFiles.readAll(reader, bufferFrames: 2, as: Int16.self).samples == [1, 2, 3, 4])
    }

    // MARK: Writing

    @Test func unwritableOutputPathsAreCannotCreate() throws {
        let directory = try TemporaryDirectory()
        let inMissingDirectory = directory.path("no/such/dir/out.wav")
        let error = caught { try AudioFileWriter(path: inMissingDirectory, sampleRate: 16_000, channelCount: 1, encoding: .int16) }
        guard case .cannotCreate(inMissingDirectory, let reason, let code) = error else {
            Issue.record("expected cannotCreate, got \(String(describing: error))")
            return
        }
        #expect(reason.contains(directory.path("no/such/dir")))
        #expect(code?.domain == .posix && code?.value == ENOENT)

        let isDirectory = caught { try AudioFileWriter(path: directory.url.path, sampleRate: 16_000, channelCount: 1, encoding: .float32) }
        guard case .cannotCreate(directory.url.path, _, .some(let code)) = isDirectory, code.value == EISDIR else {
            Issue.record("expected cannotCreate, got \(String(describing: isDirectory))")
            return
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("no")))
    }

    @Test func writerRefusesFormatsTheGuardRefuses() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("out.wav")
        #expect(caught { try AudioFileWriter(path: path, sampleRate: 0, channelCount: 1, encoding: .int16) } == .unusableFormat(path: path, .sampleRateNotPositive(0)))
        #expect(caught { try AudioFileWriter(path: path, sampleRate: 16_000, channelCount: 0, encoding: .int16) } == .unusableFormat(path: path, .noChannels(0)))
        guard case .cannotCreate = caught({ try AudioFileWriter(path: path, sampleRate: 16_000, channelCount: 100_000, encoding: .int16) }) else {
            Issue.record("expected cannotCreate for 100 000 channels")
            return
        }
        // Nothing was created for a refused format.
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// A file header stores whole hertz, so a fractional rate (which the guard accepts) is refused
    /// before anything is created.
    @Test func writerRefusesAFractionalRate() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("out.wav")
        #expect(caught { try AudioFileWriter(path: path, sampleRate: 44_100.5, channelCount: 1, encoding: .int16) }
            == .cannotCreate(path: path, reason: "a WAV file stores a whole number of hertz, not 44100.5 Hz; round the rate", code: nil))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    // MARK: Descriptions

    @Test func everyDescriptionIsOneSentenceNamingTheFileAndTheCode() {
        let path = "/recordings/take 3.wav"
        let denied = SystemErrorCode(.posix, EACCES, message: "Permission denied")
        let errors: [AudioFileError] = [
            .fileNotFound(path: path),
            .cannotOpen(path: path, reason: "permission denied", code: denied),
            .unrecognizedFormat(path: path, detail: "Format not recognised.", code: SystemErrorCode(.libsndfile, 1, message: "Format not recognised.")),
            .unusableFormat(path: path, .sampleRateNotPositive(0)),
            .invalidRawFormat(path: path, problem: "the format has 0 channels; audio needs at least one; give the rate and channel count the samples were recorded with", code: nil),
            .corrupt(path: path, code: SystemErrorCode(.libsndfile, 30, message: "Internal error.")),
            .truncated(path: path, framesRead: 400, framesDeclared: 1_000),
            .incompatibleBuffer(path: path, detail: "the buffer holds 1 samples, less than one frame of 2 channels"),
            .cannotCreate(path: path, reason: "permission denied; choose a directory you can write to", code: denied),
            .writeFailed(path: path, reason: "the writer is already closed; create a new writer to write more", code: nil),
        ]
        for error in errors {
            let text = error.description
            #expect(text.contains(path), "\(text)")
            #expect(text.first?.isUppercase == false, "starts lower-case, as every VoicePipe error sentence: \(text)")
            #expect(!text.hasSuffix("."), "no full stop, as every VoicePipe error sentence: \(text)")
            #expect(!text.contains(".."), "\(text)")
            #expect(!text.contains(". "), "one sentence: \(text)")
            if let code = error.code {
                #expect(text.hasSuffix("(\(code))"), "the code closes the sentence: \(text)")
            }
        }
        #expect(AudioFileError.corrupt(path: path, code: SystemErrorCode(.libsndfile, 30, message: "Internal error.")).description.hasSuffix("(libsndfile error 30)"))
        #expect(AudioFileError.fileNotFound(path: path).code?.value == ENOENT)
        #expect(AudioFileError.truncated(path: path, framesRead: 400, framesDeclared: 1_000).description.contains("1000"))
        #expect(AudioFileError.unusableFormat(path: path, .sampleRateNotPositive(0)).description.contains("0 Hz"))
    }
}
