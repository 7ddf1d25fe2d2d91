/// The person speaking into a simulated room: samples at the microphone's rate, from a frame on
/// the microphone's timeline.
public struct RoomTalker: Sendable, Hashable {
    /// The talker's voice at the microphone's rate, as it reaches the microphone.
    public var samples: [Float]
    /// The microphone frame at which `samples[0]` is heard.
    public var startFrame: Int
    /// A gain on the samples (dB).
    public var gainDB: Double

    public init(samples: [Float], startFrame: Int = 0, gainDB: Double = 0) {
        self.samples = samples
        self.startFrame = startFrame
        self.gainDB = gainDB
    }
}

/// Where a block sits on the room's one timeline (seconds of the loudspeaker's clock since the
/// room started), for an aligner.
public struct RoomTimestamp: Sendable, Hashable {
    /// The device's own frame count at the block's first frame (silence the device played or
    /// recorded included).
    public let frame: Int
    /// The instant of the block's first frame on the shared timeline: when the loudspeaker's
    /// device plays it, or when the microphone samples it.
    public let time: Double
    /// The device's latency (seconds): a played frame is heard `latency` after ``time``; the
    /// microphone's is 0 (the room models the whole path's latency on the loudspeaker's side).
    public let latency: Double

    public init(frame: Int, time: Double, latency: Double) {
        self.frame = frame
        self.time = time
        self.latency = latency
    }
}

/// What one microphone period of the room held, beside the samples.
public struct RoomCaptureReport: Sendable, Hashable {
    /// Where the period's first frame sits on the timeline.
    public let timestamp: RoomTimestamp
    /// The period's frames.
    public let frames: Int
    /// Loudspeaker frames of silence this period needed because nothing more had been played
    /// (an underrun of the playback side).
    public let underrunFrames: Int
    /// The largest magnitude of the near-end talker in the period (0 when the talker is silent).
    public let nearEndPeak: Float
}

/// A simulated acoustic room as a value: what the loudspeaker played goes in, what the microphone
/// captures comes out, with everything the simulator knows for scoring (the echo, the near-end
/// talker and the noise, each alone).
///
/// ```
///  play(x) at playbackRate                                              capture(...) at captureRate
///   │                                                                      ▲ microphone = echo + near + noise
///   ▼                                                                      │
///  [latency: L zeros first] ─▶ soft clip ─▶ FIFO ─▶ fractional resampler ─▶ FIR (room) ─▶ × echo gain ─┤
///   (playback frame i is heard at                  (step = playbackRate ÷                               │
///    time (i + L)/playbackRate)                      captureRate·(1+ppm·10⁻⁶))      talker ─────────────┤
///                                                                                   noise ──────────────┘
/// ```
///
/// One timeline: the loudspeaker's clock. Microphone frame n is sampled at n ÷ (captureRate·(1 +
/// ppm·10⁻⁶)) and reads the loudspeaker's output at that instant, so with +100 ppm the microphone
/// delivers 100 ppm more frames per second than its nominal rate. When the microphone needs sound
/// the loudspeaker was never given, the loudspeaker plays silence (counted as underrun frames) and
/// later blocks play after it, as on a real device. Output depends only on what was played and in
/// what order, never on how the periods are cut.
public struct RoomSimulator: Sendable {
    /// The room.
    public let configuration: RoomConfiguration
    /// The latency in loudspeaker frames.
    public let latencyFrames: Int
    private let resampler: FractionalResampler
    private var convolver: RoomConvolver
    private let echoGain: Float
    private let drive: Float?
    private var noise: RoomNoiseGenerator?
    private var talker: RoomTalker?
    private let talkerGain: Float
    /// Clipped loudspeaker output; element 0 is loudspeaker stream frame `sourceBase` (stream frame
    /// i is heard at i ÷ playbackRate; the first L frames are the latency's silence).
    private var source: [Float]
    private var sourceBase: Int
    private var resampled: [Float]
    private var scratchEcho: [Float]
    private var scratchNear: [Float]
    private var scratchNoise: [Float]
    /// Microphone frames captured so far.
    public private(set) var capturedFrames = 0
    /// Loudspeaker frames of silence played because nothing had been given in time.
    public private(set) var underrunFrames = 0
    /// Frames given to ``play(_:)`` so far.
    public private(set) var playedFrames = 0

    /// A room as `configuration` says, with `talker` speaking into it.
    /// - Throws: ``RoomError`` for any option outside its range or unusable samples.
    public init(_ configuration: RoomConfiguration, talker: RoomTalker? = nil) throws(RoomError) {
        try configuration.validate()
        self.configuration = configuration
        let playbackRate = configuration.playbackRate.hertz
        latencyFrames = Int((configuration.latency * playbackRate).rounded())
        let microphoneRate = configuration.captureRate.hertz * (1 + configuration.clockDriftPPM * 1e-6)
        resampler = FractionalResampler(inputRate: playbackRate, outputRate: microphoneRate)
        convolver = RoomConvolver(taps: configuration.impulseResponse.samples)
        echoGain = Float(Elementary.exp(configuration.echoGainDB / 20 * Elementary.log(10)))
        drive = configuration.loudspeakerDrive.map(Float.init)
        noise = try configuration.noise.map { noise throws(RoomError) in
            try RoomNoiseGenerator(noise, sampleRate: configuration.captureRate, seed: configuration.seed &+ 0x5EED)
        }
        if let talker {
            guard talker.samples.allSatisfy(\.isFinite) else { throw .unusableSamples("the talker has a sample that is not a finite number") }
            try RoomError.check("talker gain (dB)", talker.gainDB, in: -80...40)
        }
        self.talker = talker
        talkerGain = Float(Elementary.exp((talker?.gainDB ?? 0) / 20 * Elementary.log(10)))
        source = [Float](repeating: 0, count: resampler.reach + latencyFrames)
        source.reserveCapacity(1 << 16)
        sourceBase = -resampler.reach
        resampled = [Float](repeating: 0, count: RoomConvolver.maximumBlock)
        scratchEcho = resampled
        scratchNear = resampled
        scratchNoise = resampled
    }

    /// Loudspeaker frames given but not yet played by the device (its buffer's fill).
    public var bufferedPlaybackFrames: Int {
        let horizon = Int(resampler.position(ofOutputFrame: capturedFrames).rounded(.down))
        return max(0, sourceBase + source.count - latencyFrames - horizon)
    }

    /// The shared timeline's present: the instant of the next microphone frame, in seconds.
    public var time: Double {
        resampler.position(ofOutputFrame: capturedFrames) / configuration.playbackRate.hertz
    }

    /// Plays `samples` through the loudspeaker (at the playback rate), after anything played before.
    /// Non-finite samples play as silence; the loudspeaker saturates past full scale.
    /// - Returns: where the block's first frame sits on the timeline.
    @discardableResult
    public mutating func play(_ samples: UnsafeBufferPointer<Float>) -> RoomTimestamp {
        let streamFrame = sourceBase + source.count
        let deviceFrame = streamFrame - latencyFrames
        for sample in samples { source.append(loudspeaker(sample)) }
        playedFrames += samples.count
        let rate = configuration.playbackRate.hertz
        return RoomTimestamp(frame: deviceFrame, time: Double(deviceFrame) / rate, latency: Double(latencyFrames) / rate)
    }

    /// Plays `samples` (see ``play(_:)-(UnsafeBufferPointer<Float>)``).
    @discardableResult
    public mutating func play(_ samples: [Float]) -> RoomTimestamp {
        samples.withUnsafeBufferPointer { play($0) }
    }

    /// Captures `microphone.count` frames of what the microphone hears, and, into the buffers
    /// given, the same frames' echo, near-end talker and noise alone (each the same count).
    /// - Returns: the period's timestamp and what it held.
    @discardableResult
    public mutating func capture(into microphone: UnsafeMutableBufferPointer<Float>,
                                 echo: UnsafeMutableBufferPointer<Float>? = nil,
                                 nearEnd: UnsafeMutableBufferPointer<Float>? = nil,
                                 noise: UnsafeMutableBufferPointer<Float>? = nil) -> RoomCaptureReport {
        let firstFrame = capturedFrames
        let underrunBefore = underrunFrames
        var peak: Float = 0
        var done = 0
        while done < microphone.count {
            let count = min(RoomConvolver.maximumBlock, microphone.count - done)
            peak = max(peak, captureBlock(count))
            scratchEcho.withUnsafeBufferPointer { echoBlock in
                scratchNear.withUnsafeBufferPointer { nearBlock in
                    scratchNoise.withUnsafeBufferPointer { noiseBlock in
                        for index in 0..<count {
                            microphone[done + index] = echoBlock[index] + nearBlock[index] + noiseBlock[index]
                            echo?[done + index] = echoBlock[index]
                            nearEnd?[done + index] = nearBlock[index]
                            noise?[done + index] = noiseBlock[index]
                        }
                    }
                }
            }
            done += count
        }
        let rate = configuration.captureRate.hertz * (1 + configuration.clockDriftPPM * 1e-6)
        return RoomCaptureReport(timestamp: RoomTimestamp(frame: firstFrame, time: Double(firstFrame) / rate, latency: 0),
                                 frames: microphone.count, underrunFrames: underrunFrames - underrunBefore, nearEndPeak: peak)
    }

    /// The microphone's next `frames` frames and their parts, as arrays (for offline use and tests).
    public mutating func capture(frames: Int) -> (microphone: [Float], echo: [Float], nearEnd: [Float], noise: [Float], report: RoomCaptureReport) {
        var microphone = [Float](repeating: 0, count: max(frames, 0))
        var echo = microphone
        var nearEnd = microphone
        var noise = microphone
        let report = microphone.withUnsafeMutableBufferPointer { microphone in
            echo.withUnsafeMutableBufferPointer { echo in
                nearEnd.withUnsafeMutableBufferPointer { nearEnd in
                    noise.withUnsafeMutableBufferPointer { noise in
                        capture(into: microphone, echo: echo, nearEnd: nearEnd, noise: noise)
                    }
                }
            }
        }
        return (microphone, echo, nearEnd, noise, report)
    }

    /// Fills the scratch buffers with the next `count` frames' echo, talker and noise.
    /// - Returns: the talker's peak magnitude in the block.
    private mutating func captureBlock(_ count: Int) -> Float {
        let first = capturedFrames
        let lastWhole = Int(resampler.position(ofOutputFrame: first + count - 1).rounded(.down))
        let needed = lastWhole + resampler.reach + 1 - sourceBase
        if source.count < needed {
            underrunFrames += needed - source.count
            source.append(contentsOf: repeatElement(0, count: needed - source.count))
        }
        let resampler = resampler
        let base = sourceBase
        source.withUnsafeBufferPointer { source in
            resampled.withUnsafeMutableBufferPointer { resampled in
                for index in 0..<count {
                    resampled[index] = resampler.value(at: resampler.position(ofOutputFrame: first + index), input: source, base: base)
                }
            }
        }
        resampled.withUnsafeBufferPointer { resampled in
            scratchEcho.withUnsafeMutableBufferPointer { echo in
                let block = UnsafeMutableBufferPointer(rebasing: echo[0..<count])
                convolver.process(UnsafeBufferPointer(rebasing: resampled[0..<count]), into: block)
                for index in block.indices { block[index] *= echoGain }
            }
        }
        var peak: Float = 0
        let talker = talker
        let talkerGain = talkerGain
        scratchNear.withUnsafeMutableBufferPointer { near in
            for index in 0..<count {
                var value: Float = 0
                if let talker {
                    let position = first + index - talker.startFrame
                    if position >= 0 && position < talker.samples.count { value = talker.samples[position] * talkerGain }
                }
                near[index] = value
                peak = max(peak, value.magnitude)
            }
        }
        scratchNoise.withUnsafeMutableBufferPointer { noiseBlock in
            let block = UnsafeMutableBufferPointer(rebasing: noiseBlock[0..<count])
            if noise != nil {
                noise?.fill(block)
            } else {
                block.update(repeating: 0)
            }
        }
        capturedFrames += count
        // Drop loudspeaker output the microphone can no longer reach.
        let keepFrom = Int(resampler.position(ofOutputFrame: capturedFrames).rounded(.down)) - max(resampler.reach, 1) + 1 - sourceBase
        if keepFrom > 8192 {
            source.removeFirst(keepFrom)
            sourceBase += keepFrom
        }
        return peak
    }

    /// The loudspeaker: soft clipping tanh(drive·x)/drive when driven, else saturation at full
    /// scale; non-finite input is silence.
    @inline(__always)
    private func loudspeaker(_ sample: Float) -> Float {
        guard sample.isFinite else { return 0 }
        guard let drive else { return min(max(sample, -1), 1) }
        let u = Double(drive * sample)
        guard u.magnitude < 20 else { return (u < 0 ? -1 : 1) / drive }
        let e = Elementary.exp(2 * u)
        return Float((e - 1) / (e + 1)) / drive
    }
}
