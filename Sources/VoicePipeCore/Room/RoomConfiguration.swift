/// Everything that makes a simulated room: the two devices' rates, the loudspeaker, the room's
/// response, the noise, and how far the microphone's clock drifts from the loudspeaker's.
public struct RoomConfiguration: Sendable, Hashable {
    /// Device latencies (seconds) the room models: from a block's playing to its sound leaving the loudspeaker.
    public static let latencies: ClosedRange<Double> = 0.01...0.2
    /// Loudspeaker drives the room models (nil is a linear loudspeaker).
    public static let drives: ClosedRange<Double> = 0.1...20
    /// Echo gains (dB) the room models.
    public static let echoGains: ClosedRange<Double> = -80...20
    /// Latency the loudspeaker leaves out of its delay report (s) the room models.
    public static let unreportedLatencies: ClosedRange<Double> = -0.1...0.4
    /// Clock drifts (ppm) the room models.
    public static let clockDrifts: ClosedRange<Double> = -1000...1000

    /// The loudspeaker's rate: what the playback side is given.
    public var playbackRate: SampleRate
    /// The microphone's nominal rate: what the capture side delivers.
    public var captureRate: SampleRate
    /// Seconds from a frame's playing to its sound leaving the loudspeaker (0.01 ... 0.2).
    public var latency: Double
    /// The loudspeaker's soft clipping, y = tanh(drive·x) / drive (unity gain for quiet sound,
    /// never past 1/drive); nil for a linear loudspeaker.
    public var loudspeakerDrive: Double?
    /// The room between loudspeaker and microphone, at ``captureRate``.
    public var impulseResponse: RoomImpulseResponse
    /// A gain on the echo after the room (dB): how loud the loudspeaker is at the microphone.
    public var echoGainDB: Double
    /// The background noise at the microphone, or none.
    public var noise: RoomNoise?
    /// How fast the microphone's clock runs against the loudspeaker's, in ppm: it takes
    /// captureRate·(1 + ppm·10⁻⁶) frames per second of the loudspeaker's clock.
    public var clockDriftPPM: Double
    /// Chooses the noise.
    public var seed: UInt64
    /// Seconds of the loudspeaker's latency its delay report leaves out (negative: it reports
    /// more than there is), as ALSA's file plugin leaves out its buffer and a Bluetooth link its
    /// own: the sound is heard that much later than the device says. 0: the report is exact.
    public var unreportedLatency: Double = 0

    public init(playbackRate: SampleRate, captureRate: SampleRate, latency: Double, loudspeakerDrive: Double? = nil,
                impulseResponse: RoomImpulseResponse, echoGainDB: Double, noise: RoomNoise? = nil,
                clockDriftPPM: Double = 0, seed: UInt64 = 1) {
        self.playbackRate = playbackRate
        self.captureRate = captureRate
        self.latency = latency
        self.loudspeakerDrive = loudspeakerDrive
        self.impulseResponse = impulseResponse
        self.echoGainDB = echoGainDB
        self.noise = noise
        self.clockDriftPPM = clockDriftPPM
        self.seed = seed
    }

    /// Throws the first option outside its range.
    public func validate() throws(RoomError) {
        try RoomError.check(rate: playbackRate)
        try RoomError.check(rate: captureRate)
        try RoomError.check("latency (s)", latency, in: Self.latencies)
        if let loudspeakerDrive { try RoomError.check("loudspeaker drive", loudspeakerDrive, in: Self.drives) }
        try RoomError.check("echo gain (dB)", echoGainDB, in: Self.echoGains)
        try RoomError.check("clock drift (ppm)", clockDriftPPM, in: Self.clockDrifts)
        try RoomError.check("unreported latency (s)", unreportedLatency, in: Self.unreportedLatencies)
        guard impulseResponse.sampleRate == captureRate else {
            throw .impulseResponseRate(impulse: impulseResponse.sampleRate, capture: captureRate)
        }
    }
}

/// Three rooms to try a live session in, with figures chosen to be typical of each.
///
/// | preset    | T60    | distance | echo gain | echo at mic* | noise             | latency | loudspeaker      |
/// |-----------|--------|----------|-----------|--------------|-------------------|---------|------------------|
/// | `car`     | 0.08 s | 0.7 m    | −6 dB     | about −1 dB  | brown, −40 dBFS   | 40 ms   | linear           |
/// | `office`  | 0.4 s  | 1.0 m    | −10 dB    | about −7 dB  | pink, −55 dBFS    | 60 ms   | linear           |
/// | `kitchen` | 0.6 s  | 1.5 m    | −8 dB     | about −6 dB  | babble ×6, −45 dBFS | 100 ms | drive 2 (a small smart speaker pushed hard) |
///
/// *Echo at the microphone for white noise: the echo gain plus the response's energy (direct path
/// 1/distance and a tail as strong as the direct path at 1 m). A car's cabin is small and padded
/// (short T60) with the speakers close and road noise below 200 Hz (brown at −40 dBFS: the quiet
/// car of issue 24, 15–20 dB under speech); an office is the reference room (0.3–0.4 s,
/// echo about 10 dB down, 60 ms late) with ventilation hiss; a kitchen has hard surfaces, people
/// talking in the next room, and a Bluetooth speaker's longer latency.
public enum RoomPreset: String, Sendable, Hashable, CaseIterable {
    case car
    case office
    case kitchen

    /// The preset's room between devices at `playbackRate` and `captureRate`.
    /// - Throws: ``RoomError/unsupportedRate(_:)`` for a rate the room cannot run at.
    public func configuration(playbackRate: SampleRate = .reply, captureRate: SampleRate = .capture, seed: UInt64 = 1) throws(RoomError) -> RoomConfiguration {
        switch self {
        case .car:
            RoomConfiguration(playbackRate: playbackRate, captureRate: captureRate, latency: 0.04,
                              impulseResponse: try RoomImpulseResponse(reverberationTime: 0.08, distance: 0.7, sampleRate: captureRate, seed: seed),
                              echoGainDB: -6, noise: RoomNoise(.brown, levelDBFS: -40), seed: seed)
        case .office:
            RoomConfiguration(playbackRate: playbackRate, captureRate: captureRate, latency: 0.06,
                              impulseResponse: try RoomImpulseResponse(reverberationTime: 0.4, distance: 1.0, sampleRate: captureRate, seed: seed),
                              echoGainDB: -10, noise: RoomNoise(.pink, levelDBFS: -55), seed: seed)
        case .kitchen:
            RoomConfiguration(playbackRate: playbackRate, captureRate: captureRate, latency: 0.1, loudspeakerDrive: 2,
                              impulseResponse: try RoomImpulseResponse(reverberationTime: 0.6, distance: 1.5, sampleRate: captureRate, seed: seed),
                              echoGainDB: -8, noise: RoomNoise(.babble(talkers: 6), levelDBFS: -45), seed: seed)
        }
    }
}
