import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The reply player: wire chunks through converter and queue into a sink, nothing lost or added,
/// interruptions cut only what had not been heard, unplayable chunks refused whole.
struct ReplyPlayerTests {
    static func chunk(_ samples: [Int16], rate: Int = 24_000) -> AudioChunk {
        AudioChunk(sampleRate: SampleRate(hertz: Double(rate)), samples: samples)
    }

    @Test func everyChunkReachesTheSinkExactlyAndInOrder() throws {
        let sink = RecordingSink()
        let player = try ReplyPlayer(sink: sink)
        #expect(sink.connectedFormat == .playback)
        let samples = Signals.int16(Signals.noise(amplitude: 0.5, frames: 24_000, seed: 8))
        // Uneven chunks, as a runtime sends them.
        var start = 0
        for size in [1, 479, 480, 2_000, 7, 21_033] {
            try player.play(Self.chunk(Array(samples[start..<(start + size)])))
            start += size
        }
        // The pre-roll stays queued between chunks, as on a device.
        #expect(player.framesPlayed == 24_000 - 1_440)
        try player.finish()
        #expect(sink.disconnected)
        #expect(sink.channels[0] == samples.map { Float($0) / 32768 })
        #expect(player.framesPlayed == 24_000)
    }

    @Test func anInterruptionCutsWhatWasNotHeardWithAFadeAndTheNextReplyStartsFresh() throws {
        let sink = RecordingSink()
        let player = try ReplyPlayer(sink: sink)
        try player.play(Self.chunk([Int16](repeating: 16_384, count: 4_800)))
        // 4 800 − 1 440 frames (the pre-roll) were heard; the pre-roll is cut with a 5 ms fade.
        try player.interrupt()
        #expect(player.interruptions == 1)
        let heard = sink.channels[0]
        #expect(heard.count == 4_800 - 1_440 + 120)
        #expect(heard.prefix(3_360).allSatisfy { $0 == 0.5 })
        let fade = heard.suffix(120)
        #expect(zip(fade, fade.dropFirst()).allSatisfy { $0 >= $1 }, "the fade only falls")
        #expect(fade.last ?? 1 < 0.01)
        // The same player plays the next reply from its first sample, at full level.
        try player.play(Self.chunk([Int16](repeating: 8_192, count: 480)))
        try player.finish()
        #expect(Array(sink.channels[0].dropFirst(heard.count)) == [Float](repeating: 0.25, count: 480))
    }

    /// A 5 ms fade is 480 frames at 96 kHz and 960 at 192 kHz: two and four render periods.
    @Test(arguments: [96_000.0, 192_000.0])
    func fadesLongerThanARenderPeriodPlayWhole(rate: Double) throws {
        let sink = RecordingSink()
        let format = try PlayerFormat(FormatGuard.validate(AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: 2, sampleType: .float32, isInterleaved: false)))
        let player = try ReplyPlayer(sink: sink, format: format)
        let fadeFrames = Int((rate * 0.005).rounded())
        for reply in 1...3 {
            try player.play(Self.chunk([Int16](repeating: 16_384, count: 4_800)))
            let heard = player.framesPlayed
            try player.interrupt()
            #expect(player.framesPlayed == heard + fadeFrames, "reply \(reply): the whole fade plays")
            let fade = sink.channels[0].suffix(fadeFrames)
            #expect(zip(fade, fade.dropFirst()).allSatisfy { $0 >= $1 } && fade.last ?? 1 < 0.01, "reply \(reply)")
        }
        try player.finish()
        #expect(sink.channels[0] == sink.channels[1])
        #expect(player.interruptions == 3)
    }

    @Test func aChunkAtAnUnplayableRateIsRefusedWholeAndPlayingGoesOn() throws {
        let sink = RecordingSink()
        let player = try ReplyPlayer(sink: sink)
        try player.play(Self.chunk([Int16](repeating: 100, count: 2_400)))
        #expect(throws: ReplyPlayerError.unplayableChunk(sampleRate: 1_000_000, .resampler(.unsupportedRate(1_000_000)))) {
            try player.play(Self.chunk([Int16](repeating: 9_999, count: 2_400), rate: 1_000_000))
        }
        try player.play(Self.chunk([Int16](repeating: 200, count: 2_400)))
        try player.finish()
        let expected = [Float](repeating: 100 / 32768, count: 2_400) + [Float](repeating: 200 / 32768, count: 2_400)
        #expect(sink.channels[0] == expected)
    }

    @Test func chunksAtAnotherRateAreResampledToTheSinkWithTheirFullLength() throws {
        let sink = RecordingSink()
        let stereo48k = try PlayerFormat(FormatGuard.validate(AudioFormat(sampleRate: 48_000, channelCount: 2, sampleType: .float32, isInterleaved: false)))
        let player = try ReplyPlayer(sink: sink, format: stereo48k)
        let tone = Signals.int16(Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 24_000, frames: 24_000))
        for start in stride(from: 0, to: tone.count, by: 480) { try player.play(Self.chunk(Array(tone[start..<(start + 480)]))) }
        // A switch to 16 kHz mid-stream: the 24 kHz tail is played first.
        try player.play(Self.chunk(Signals.int16(Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 16_000, frames: 16_000)), rate: 16_000))
        try player.finish()
        #expect(sink.channels.count == 2 && sink.channels[0] == sink.channels[1])
        #expect(sink.channels[0].count == 96_000)
        let fit = Measurement.fitTone(sink.channels[0][4_800..<43_200], frequency: 1_000, sampleRate: 48_000)
        #expect(abs(Measurement.dB(fit.amplitude / 0.5)) < 0.1)
    }

    /// What one converter per part makes of `parts`, each flushed: the rational length of each.
    static func converted(_ parts: [(samples: [Int16], rate: Int)]) throws -> [Float] {
        var out = [Float]()
        for part in parts {
            let converter = try PlaybackConverter(sourceRate: SampleRate(hertz: Double(part.rate)))
            try part.samples.withUnsafeBufferPointer { try converter.process($0) { out += $0.copyChannel(0) } }
            try converter.flush { out += $0.copyChannel(0) }
        }
        return out
    }

    @Test func aRateChangeMidReplyQueuesTheOldConvertersTailFirst() throws {
        let sink = RecordingSink()
        let player = try ReplyPlayer(sink: sink)
        let low = Signals.int16(Signals.sine(frequency: 500, amplitude: 0.5, sampleRate: 16_000, frames: 4_800))
        let high = Signals.int16(Signals.sine(frequency: 500, amplitude: 0.5, sampleRate: 48_000, frames: 9_602))
        // Three chunks at 16 kHz, then 48 kHz: the array, Span and pointer forms of play.
        try player.play(Array(low[0..<1_600]), sampleRate: 16_000)
        let middle = Array(low[1_600..<3_200])
        try player.play(middle.span, sampleRate: 16_000)
        try low[3_200...].withUnsafeBufferPointer { samples throws(ReplyPlayerError) in try player.play(samples, sampleRate: 16_000) }
        try player.play(high, sampleRate: 48_000)
        try player.finish()
        // 4 800 samples at 16 kHz are 7 200 frames at 24 kHz, 9 602 at 48 kHz are 4 801: the 16 kHz
        // tail was queued before the switch, not lost, and each part is what its own converter makes.
        #expect(sink.channels[0].count == 7_200 + 4_801)
        #expect(sink.channels[0] == (try Self.converted([(low, 16_000), (high, 48_000)])))
    }

    @Test func withARenderThreadPlayOnlyQueuesAndEachPeriodIsTenMillisecondsFilledWithSilence() throws {
        let sink = RecordingSink()
        let player = try ReplyPlayer(sink: sink, queueOptions: PlaybackQueueOptions(preRollMilliseconds: 0), rendering: .onRenderThread(waitForRoom: { false }))
        try player.play([Int16](repeating: 16_384, count: 300), sampleRate: 24_000)
        #expect(sink.channels[0].isEmpty && player.queuedFrames == 300)
        // The render thread's calls: 240 frames each, the audio first, then silence.
        #expect(try player.renderPeriod() == 240)
        #expect(try player.renderPeriod() == 60)
        #expect(try player.renderPeriod() == 0)
        #expect(sink.channels[0] == [Float](repeating: 0.5, count: 300) + [Float](repeating: 0, count: 420))
        #expect(player.framesPlayed == 300 && player.statistics.silenceFrames == 420)
    }

    @Test func withAStoppedRenderThreadAFullQueueRefusesTheRestOfTheChunk() throws {
        let player = try ReplyPlayer(sink: RecordingSink(), queueOptions: PlaybackQueueOptions(capacitySeconds: 0.1), rendering: .onRenderThread(waitForRoom: { false }))
        // 2 400 frames of room: the converter's blocks of 1 024 fit twice, the third (952) does not.
        #expect(throws: ReplyPlayerError.queue(.full(frames: 952, free: 352))) {
            try player.play([Int16](repeating: 1, count: 3_000), sampleRate: 24_000)
        }
        #expect(player.queuedFrames == 2_048)
    }
}

/// Any PCM format to a player's format: channels kept or averaged, rates converted, exact when nothing changes.
struct PCMPlaybackConverterTests {
    static func player(rate: Double, channels: Int) throws -> PlayerFormat {
        try PlayerFormat(FormatGuard.validate(AudioFormat(sampleRate: SampleRate(hertz: rate), channelCount: channels, sampleType: .float32, isInterleaved: false)))
    }

    static func run(_ converter: PCMPlaybackConverter, _ samples: [Int16], framesPerCall: Int) throws -> [[Float]] {
        var channels = [[Float]](repeating: [], count: converter.playerFormat.channelCount)
        let collect: (borrowing PlaybackBuffer) -> Void = { buffer in for c in channels.indices { channels[c] += buffer.copyChannel(c) } }
        let step = framesPerCall * converter.sourceFormat.channelCount
        for start in stride(from: 0, to: samples.count, by: step) {
            try samples[start..<min(start + step, samples.count)].withUnsafeBytes { try converter.process($0, collect) }
        }
        try converter.flush(collect)
        return channels
    }

    @Test func sameRateAndChannelsIsExactlyXOver32768PerChannel() throws {
        let source = try FormatGuard.validate(AudioFormat(sampleRate: 24_000, channelCount: 2, sampleType: .int16))
        let converter = try PCMPlaybackConverter(source: source, player: Self.player(rate: 24_000, channels: 2))
        let left = Signals.int16(Signals.noise(amplitude: 0.6, frames: 10_000, seed: 1))
        let right = Signals.int16(Signals.noise(amplitude: 0.6, frames: 10_000, seed: 2))
        let out = try Self.run(converter, Signals.interleave([left, right]), framesPerCall: 4_999)
        #expect(out[0] == left.map { Float($0) / 32768 })
        #expect(out[1] == right.map { Float($0) / 32768 })
    }

    @Test(arguments: [1, 333, 4_096, 44_100])
    func otherRatesAndChannelCountsGiveTheExactLengthAndTheAverageOnEveryChannel(framesPerCall: Int) throws {
        let source = try FormatGuard.validate(AudioFormat(sampleRate: 44_100, channelCount: 2, sampleType: .int16))
        let converter = try PCMPlaybackConverter(source: source, player: Self.player(rate: 48_000, channels: 3))
        // The tone in the left channel, silence in the right: their average is half the tone.
        let tone = Signals.sine(frequency: 1_000, amplitude: 0.5, sampleRate: 44_100, frames: 44_100)
        let out = try Self.run(converter, Signals.int16(Signals.interleave([tone, tone.map { $0 * 0 }])), framesPerCall: framesPerCall)
        #expect(out.allSatisfy { $0.count == 48_000 })
        #expect(out[1] == out[0] && out[2] == out[0])
        let fit = Measurement.fitTone(out[0][4_800..<43_200], frequency: 1_000, sampleRate: 48_000)
        #expect(abs(Measurement.dB(fit.amplitude / 0.25)) < 0.1)
    }

    @Test func partialFramesAreRefusedAndNothingIsConsumed() throws {
        let source = try FormatGuard.validate(AudioFormat(sampleRate: 24_000, channelCount: 2, sampleType: .float32))
        let converter = try PCMPlaybackConverter(source: source, player: .playback)
        let bytes = [UInt8](repeating: 0, count: 12)
        #expect(throws: PlaybackConverterError.partialFrame(byteCount: 12, bytesPerFrame: 8)) {
            try bytes.withUnsafeBytes { try converter.process($0) { _ in Issue.record("nothing is delivered") } }
        }
    }
}

/// The numbers a capture summary reports.
struct CaptureStatisticsTests {
    @Test func loudestQuietestAndSilentFramesAreCounted() throws {
        let format = try FormatGuard.validate(AudioFormat(sampleRate: 16_000, channelCount: 1, sampleType: .int16))
        let converter = try CaptureConverter(input: format, options: CaptureOptions(frameMilliseconds: 10))
        // 160-sample frames: silence, a −6 dBFS frame, a −20 dBFS frame, silence, and a partial last frame.
        let samples: [Int16] = [Int16](repeating: 0, count: 160) + [Int16](repeating: 16_384, count: 160)
            + [Int16](repeating: 3_277, count: 160) + [Int16](repeating: 0, count: 160) + [Int16](repeating: 0, count: 80)
        var stats = CaptureStatistics()
        try samples.withUnsafeBufferPointer { try converter.process($0) { stats.add($0) } }
        try converter.flush { stats.add($0) }
        #expect(stats.frames == 5 && stats.samples == 720 && stats.silentFrames == 3)
        #expect(PeakLevel.format(stats.maxDBFS) == "-6.0")
        #expect(stats.minNonSilentDBFS.map(PeakLevel.format) == "-20.0")
        #expect(stats.summary == "peak -6.0 dBFS; 3 of 5 frames digital silence")
        #expect(stats.seconds == 0.045)
        #expect(CaptureStatistics().summary == "no audio; 0 of 0 frames digital silence")
    }
}
