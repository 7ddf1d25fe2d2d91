import Foundation
import Testing
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// Files through the converters: every frame once, truncation an outcome, players fed their own format.
struct FileStreamingTests {
    /// A 16 kHz-bound WAV of `frames` stereo frames at 44.1 kHz, and its samples.
    static func stereoWAV(_ directory: TemporaryDirectory, frames: Int) throws -> (path: String, samples: [Int16]) {
        let samples = Signals.int16(Fixtures.signal(frames: frames, channels: 2, sampleRate: 44_100))
        let path = try directory.file("in.wav", Fixtures.wav(sampleRate: 44_100, channels: 2, payload: Fixtures.int16LE(samples)))
        return (path, samples)
    }

    @Test func convertingAFileGivesWhatTheConverterGivesForItsSamples() throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.stereoWAV(directory, frames: 30_001)
        let reader = try AudioFileReader(path: path)
        var fromFile = [Int16]()
        var progress = [Int]()
        let ending = try CaptureConverter(input: reader.format).convert(reader, progress: { progress.append($0) }) { fromFile += $0.copySamples() }
        #expect(ending == .endOfFile)
        #expect(progress.last == 30_001 && progress == progress.sorted())
        var direct = [Int16]()
        let converter = try CaptureConverter(input: reader.format)
        try samples.withUnsafeBufferPointer { try converter.process($0) { direct += $0.copySamples() } }
        try converter.flush { direct += $0.copySamples() }
        #expect(fromFile == direct)
        #expect(fromFile.count == Int((30_001.0 * 16_000 / 44_100).rounded()))
    }

    @Test func aTruncatedFileIsConvertedAsFarAsItGoesAndSaysSo() throws {
        let directory = try TemporaryDirectory()
        let samples = Signals.int16(Fixtures.signal(frames: 8_000, channels: 1, sampleRate: 16_000))
        let path = try directory.file("short.wav", Fixtures.wav(sampleRate: 16_000, channels: 1, declaredDataBytes: 40_000, payload: Fixtures.int16LE(samples)))
        let reader = try AudioFileReader(path: path)
        var out = [Int16]()
        let ending = try CaptureConverter(input: reader.format).convert(reader) { out += $0.copySamples() }
        #expect(ending == .truncated(framesRead: 8_000, framesDeclared: 20_000))
        #expect(out == samples, "16 kHz mono Int16 in, the same samples out, the tail flushed")
    }

    @Test func playingAFileFeedsThePlayerItsOwnFormatAndStopsWhenAsked() throws {
        let directory = try TemporaryDirectory()
        let (path, samples) = try Self.stereoWAV(directory, frames: 44_100)
        let sink = RecordingSink()
        let format = try PlayerFormat(FormatGuard.validate(AudioFormat(sampleRate: 44_100, channelCount: 2, sampleType: .float32, isInterleaved: false)))
        try sink.connect(format)
        let reader = try AudioFileReader(path: path)
        let ending = try PCMPlaybackConverter(source: reader.format, player: format).play(reader, into: sink)
        #expect(ending == .endOfFile)
        #expect(sink.channels[0] == stride(from: 0, to: samples.count, by: 2).map { Float(samples[$0]) / 32768 })
        #expect(sink.channels[1] == stride(from: 1, to: samples.count, by: 2).map { Float(samples[$0]) / 32768 })

        let stopped = RecordingSink()
        try stopped.connect(format)
        var blocks = 0
        let again = try AudioFileReader(path: path)
        let early = try PCMPlaybackConverter(source: again.format, player: format).play(again, into: stopped, shouldStop: { blocks += 1; return blocks > 2 })
        #expect(early == .stopped)
        #expect(stopped.channels[0].count == 2 * PCMPlaybackConverter.blockFrames)
    }

    @Test func aFileSinkThatCannotCreateItsFileSaysWhyWithTheSystemsCode() throws {
        let directory = try TemporaryDirectory()
        let sink = AudioFileSink(path: directory.path("no/such/dir/reply.wav"))
        do {
            try sink.connect(.playback)
            Issue.record("the sink connected to a file in a missing directory")
        } catch {
            guard case .failed(let message, let code) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("does not exist"))
            #expect(code == SystemErrorCode(.posix, ENOENT, message: String(cString: strerror(ENOENT))), "not code 0")
        }
        // A disk that is full when the header is written: the system's errno, not libsndfile's
        // "system error", and the code said once.
        let full = AudioFileSink(path: "/dev/full")
        do {
            try full.connect(.playback)
            Issue.record("the sink connected to /dev/full")
        } catch {
            guard case .failed(_, let code) = error else { Issue.record("\(error)"); return }
            #expect(code == .posix(ENOSPC))
            #expect(error.description == "cannot create '/dev/full': the file could not be started: no space left on device; check free space and the path (errno \(ENOSPC))")
        }
    }
}
