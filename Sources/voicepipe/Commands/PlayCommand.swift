import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// `voicepipe play`: any audio file, as deinterleaved Float32, to an ALSA playback device.
struct PlayCommand: Command {
    static let name = "play"
    static let abstract = "Play an audio file on an ALSA device through the Float32 playback path."
    static let options: [Arguments.Option] = [
        DeviceSupport.deviceOption,
        DeviceSupport.rateOption,
        DeviceSupport.channelsOption,
        InputFile.rawOption,
    ]
    static let flags: [Arguments.Flag] = []
    static var help: String {
        Arguments.help(
            usage: "voicepipe play <file> [--device <name>] [--rate <hz>] [--channels <n>] [--raw <rate:channels:type>]",
            abstract: abstract,
            discussion: """
            Opens the device with Float32 samples and non-interleaved access (one buffer per channel, the
            only format VoicePipe plays; a device that refuses it is unavailable rather than connected
            with 16 bits). The device is asked for the file's rate and channel count first and otherwise
            opened at its native ones: the file is then resampled with the built-in resampler, and a
            different channel count plays the average of the file's channels on every device channel.
            Ctrl-C stops after what is buffered. A missing, busy or unusable device exits with status 69.
            """,
            options: options, flags: flags)
    }

    let input: String
    let device: String
    let preferences: DevicePreferences
    let raw: AudioFormat?

    init(arguments: Arguments) throws(CommandFailure) {
        input = try arguments.positionals(exactly: ["file"], command: Self.name)[0]
        device = DeviceSupport.deviceName(arguments)
        preferences = try DeviceSupport.preferences(arguments, command: Self.name)
        raw = try InputFile.rawFormat(arguments.value("raw"), command: Self.name)
    }

    func run() throws(CommandFailure) -> ExitCode {
        let reader = try InputFile.open(input, raw: raw)
        let source = reader.format
        let player = try openDevice(for: source)
        let target = player.format
        do {
            try player.connect(format: target.format)
        } catch {
            throw CommandFailure("'\(device)' refused playback: \(error)", exitCode: .unavailable)
        }
        let converter: FileToPlayer
        do {
            converter = try FileToPlayer(source: source, target: target)
        } catch {
            throw CommandFailure("cannot play '\(input)' (\(DeviceSupport.describe(source.format))) on '\(device)' (\(DeviceSupport.describe(target.format.format))): \(error)", exitCode: .dataError)
        }
        let stop = Atomic<Bool>(false)
        let signals = StopSignals { stop.store(true, ordering: .relaxed) }
        let progress = ProgressLine(label: "playing", total: reader.info.frameCount.map { Double($0) / source.sampleRate }, unit: "s")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: FileToPlayer.blockFrames * source.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        var warning: String?
        do {
            while !stop.load(ordering: .relaxed) {
                let frames = try InputFile.readAllowingTruncation(reader, into: buffer) { read, declared in
                    warning = "warning: '\(input)' is truncated: its header declares \(declared) frames but the file holds \(read); played the \(read) frames present"
                }
                if frames == 0 { break }
                try converter.process(UnsafeRawBufferPointer(rebasing: buffer[0..<(frames * source.bytesPerFrame)]), frames: frames) { try player.play($0) }
                progress.update(Double(reader.framesRead) / source.sampleRate)
            }
            try converter.flush { try player.play($0) }
            try player.close()
        } catch let error as AudioFileError {
            progress.finish()
            throw InputFile.failure(error)
        } catch {
            progress.finish()
            throw CommandFailure("playing on '\(device)' failed: \(error)", exitCode: .ioError)
        }
        progress.finish()
        withExtendedLifetime(signals) {}
        if let warning { Console.error(warning) }
        let stopped = stop.load(ordering: .relaxed) ? " (stopped early)" : ""
        let underruns = player.underruns > 0 ? "; \(Console.count(player.underruns, "underrun")) recovered" : ""
        Console.error("played \(InputFile.seconds(reader.framesRead, rate: source.sampleRate)) of '\(input)' (\(DeviceSupport.describe(source.format))) on '\(device)' (\(DeviceSupport.describe(target.format.format)))\(stopped)\(underruns)")
        return .success
    }

    /// The device at the file's rate and channel count when it takes them, else at its native ones.
    private func openDevice(for source: ValidatedFormat) throws(CommandFailure) -> PlaybackDevice {
        var asked = preferences
        if asked.sampleRate == nil, asked.channelCount == nil {
            asked.sampleRate = source.sampleRate
            asked.channelCount = source.channelCount
            if let matching = try? PlaybackDevice.open(name: device, preferences: asked) { return matching }
            asked = preferences
        }
        do {
            return try PlaybackDevice.open(name: device, preferences: asked)
        } catch {
            throw DeviceSupport.failure(error)
        }
    }
}

/// Interleaved frames of any file format to deinterleaved Float32 blocks of the player's format:
/// each channel as Float (or the average of all, copied to every player channel, when the counts
/// differ), then the built-in resampler per channel when the rates differ.
private final class FileToPlayer {
    static let blockFrames = 4_096
    private let source: ValidatedFormat
    private let channels: Int
    private let sameChannels: Bool
    private let resamplers: [BuiltInResampler]
    private let planar: UnsafeMutablePointer<Float>
    private let stride: Int
    private let staging: UnsafeMutablePointer<Float>

    init(source: ValidatedFormat, target: PlayerFormat) throws(ResamplerError) {
        self.source = source
        channels = target.channelCount
        sameChannels = source.channelCount == target.channelCount
        let streams = sameChannels ? channels : 1
        resamplers = source.sampleRate == target.sampleRate ? [] : try (0..<streams).map { _ throws(ResamplerError) in
            try BuiltInResampler(inputRate: source.sampleRate, outputRate: target.sampleRate)
        }
        let most = resamplers.first.map { max($0.maxOutputFrames(forInputFrames: Self.blockFrames), $0.maxFlushFrames) } ?? Self.blockFrames
        stride = max(most, Self.blockFrames)
        planar = .allocate(capacity: stride * channels)
        staging = .allocate(capacity: Self.blockFrames)
    }

    deinit {
        planar.deallocate()
        staging.deallocate()
    }

    /// Converts `frames` interleaved frames (at most ``blockFrames``) and hands the block over.
    func process(_ bytes: UnsafeRawBufferPointer, frames: Int, _ deliver: (PlaybackBuffer) throws -> Void) throws {
        guard let base = bytes.baseAddress else { return }
        var produced = frames
        for stream in 0..<(sameChannels ? channels : 1) {
            let mode: DownmixMode = sameChannels ? .channel(stream) : .average
            let destination = resamplers.isEmpty ? planar + stream * stride : staging
            Downmix.mono(interleaved: base, sampleType: source.sampleType, frames: frames, channels: source.channelCount, mode: mode, into: destination)
            if !resamplers.isEmpty {
                produced = try resamplers[stream].process(UnsafeBufferPointer(start: staging, count: frames),
                                                          into: UnsafeMutableBufferPointer(start: planar + stream * stride, count: stride))
            }
        }
        try emit(produced, deliver)
    }

    /// Hands over the resamplers' tails.
    func flush(_ deliver: (PlaybackBuffer) throws -> Void) throws {
        guard !resamplers.isEmpty else { return }
        var produced = 0
        for (stream, resampler) in resamplers.enumerated() {
            produced = try resampler.flush(into: UnsafeMutableBufferPointer(start: planar + stream * stride, count: stride))
        }
        try emit(produced, deliver)
    }

    private func emit(_ frames: Int, _ deliver: (PlaybackBuffer) throws -> Void) throws {
        guard frames > 0 else { return }
        if !sameChannels {
            for channel in 1..<max(channels, 1) {
                (planar + channel * stride).update(from: planar, count: frames)
            }
        }
        try deliver(PlaybackBuffer(base: planar, frameCount: frames, channelCount: channels, channelStride: stride))
    }
}
