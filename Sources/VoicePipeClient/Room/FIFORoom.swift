import Glibc
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// A simulated room played between two FIFOs, for a program that uses real ALSA devices on a
/// machine with no sound card: ALSA's `file` PCM reads its capture from one FIFO (`infile`) and
/// writes its playback to another (`file`), and the room, in its own thread or process, reads what
/// the speaker played, runs it through a ``RoomSimulator`` with a talker and noise, and writes what
/// the microphone hears, paced in real time by the room's clock.
///
/// ```
///  session process (e.g. voicepipe session --mic room_mic --speaker room_speaker)
///    speaker: ALSA file PCM ──write──▶ [speaker FIFO] ──read, one period's worth per tick──┐
///    (over null: no clock of its own; blocks only while the pipe is full)                  │
///                                                                                          ▼
///  room (the thread calling run(), on CLOCK_MONOTONIC deadlines, one tick per period)   RoomSimulator
///                                                                                          │ (room rate)
///    mic: ALSA file PCM ◀──read── [microphone FIFO] ◀──write one whole period per tick──────┘
///    (each read() waits for the room's next write:     (resampled to the FIFO's rate and
///     the room is the microphone's clock)                channels, saturated at full scale)
/// ```
///
/// Implementation notes, measured with alsa-lib 1.2.8 (the reasons for the order of things):
/// - The `file` PCM over `null` has no clock: `null` takes and gives any number of frames at
///   once. Capture is paced only because the plugin's `read()` of its `infile` waits for data,
///   and a read returns whatever the pipe holds, so the room writes each period whole, in one
///   `write()` of at most `PIPE_BUF` bytes (atomic), and a reader whose period is the room's (or
///   divides it) never sees part of one. A short read is not an error to the plugin: it reports
///   the full period with the rest of the buffer untouched.
/// - Opening a FIFO waits for its other end: the plugin opens `infile` for reading when the PCM
///   is opened, and its playback `file` for writing when the hardware parameters are set. So the
///   room opens the speaker FIFO for reading at once (non-blocking, which never waits), then
///   waits for a reader of the microphone FIFO with non-blocking opens for writing (ENXIO until
///   someone opens it), and neither side waits on the other whatever the order they start in.
/// - Once the microphone has a reader, the room fills in `prefillPeriods` of silence and starts
///   its timeline at the moment the reader takes it, so frame 0 (and a talker placed on it) is
///   where the reader starts reading, not where it happened to open the device.
/// - After the writer of the speaker FIFO has gone, a read returns 0; after the reader of the
///   microphone FIFO has gone, a write fails with EPIPE (SIGPIPE is ignored for it). Either ends
///   the room. (Past the end of its `infile` the plugin returns full periods of nothing at once,
///   so a session's microphone must not outlive the room.)
/// - Both pipes are shrunk to about `pipePeriods` periods (`F_SETPIPE_SZ`, rounded up to whole
///   pages): the speaker's writer then runs at most that far ahead of the room, plus the plugin's
///   own buffer of one ALSA buffer, and a microphone reader that stalls loses periods (counted as
///   dropped) instead of hearing stale audio later.
/// - Measured with VoicePipe's ALSA capture and reply output on the two PCMs (48 kHz stereo
///   Float32): a period reaches the capture tap 0.2–0.3 ms (median) after the room writes it, and
///   the capture's stamps are that close to the room's sampling instant; a reply frame reaches the
///   room about 100 ms after the instant the reply output's stamp gives, because `snd_pcm_delay`
///   on the plugin counts neither its own buffer nor the pipe.
public final class FIFORoom: Sendable {
    /// The microphone FIFO (the room writes, an ALSA capture PCM reads).
    public let microphonePath: String
    /// The speaker FIFO (an ALSA playback PCM writes, the room reads).
    public let speakerPath: String
    /// The microphone FIFO's samples.
    public let microphoneFormat: FIFOStreamFormat
    /// The speaker FIFO's samples.
    public let speakerFormat: FIFOStreamFormat
    /// The room: its playback rate is the speaker FIFO's, its capture rate the room's own
    /// (resampled to the microphone FIFO's rate when they differ).
    public let configuration: RoomConfiguration
    /// Pacing and buffering.
    public let options: FIFORoomOptions
    /// Microphone FIFO frames per period.
    public let microphonePeriodFrames: Int
    private let talker: RoomTalker?
    private let prepared: Guarded<RoomSimulator?>
    private let stopRequested = Atomic<Bool>(false)

    /// A room between two FIFOs, checked but not yet opened.
    /// - Parameters:
    ///   - microphone: the FIFO an ALSA capture PCM reads as its `infile`, and its format.
    ///   - speaker: the FIFO an ALSA playback PCM writes as its `file`, and its format.
    ///   - room: the room; `playbackRate` must be the speaker FIFO's rate.
    ///   - talker: the person speaking, on the room's timeline at its capture rate.
    /// - Throws: ``FIFORoomError`` for a path that is not a FIFO, a format or option outside
    ///   range, a period too large for one pipe write, or a room the simulator refuses.
    public init(microphone: String, format microphoneFormat: FIFOStreamFormat, speaker: String, format speakerFormat: FIFOStreamFormat,
                room: RoomConfiguration, talker: RoomTalker? = nil, options: FIFORoomOptions = FIFORoomOptions()) throws(FIFORoomError) {
        try FIFODescriptor.check(microphone, role: "microphone")
        try FIFODescriptor.check(speaker, role: "speaker")
        var first = stat(), second = stat()
        if stat(microphone, &first) == 0, stat(speaker, &second) == 0, first.st_dev == second.st_dev, first.st_ino == second.st_ino {
            throw .sameFIFO(path: speaker)
        }
        for (role, format) in [("microphone", microphoneFormat), ("speaker", speakerFormat)] {
            guard FIFOStreamFormat.sampleRates.contains(format.sampleRate) else {
                throw .unusableFormat(role: role, reason: "\(format.sampleRate) Hz is outside \(FIFOStreamFormat.sampleRates.lowerBound) ... \(FIFOStreamFormat.sampleRates.upperBound) Hz")
            }
            guard FIFOStreamFormat.channelCounts.contains(format.channelCount) else {
                throw .unusableFormat(role: role, reason: "\(format.channelCount) channels is outside \(FIFOStreamFormat.channelCounts.lowerBound) ... \(FIFOStreamFormat.channelCounts.upperBound)")
            }
        }
        guard room.playbackRate.hertz == Double(speakerFormat.sampleRate) else {
            throw .rateMismatch("the loudspeaker runs at \(room.playbackRate) but the speaker FIFO carries \(speakerFormat.sampleRate) Hz")
        }
        let period = microphoneFormat.sampleRate * options.periodMilliseconds / 1000
        guard period * microphoneFormat.bytesPerFrame <= Int(PIPE_BUF) else {
            throw .periodTooLarge(bytes: period * microphoneFormat.bytesPerFrame)
        }
        do {
            prepared = Guarded(try RoomSimulator(room, talker: talker))
        } catch {
            throw .room(error)
        }
        microphonePath = microphone
        speakerPath = speaker
        self.microphoneFormat = microphoneFormat
        self.speakerFormat = speakerFormat
        configuration = room
        self.talker = talker
        self.options = options
        microphonePeriodFrames = period
    }

    /// Asks ``run(onEvent:onSpeaker:)`` to end after its current period (or its current wait);
    /// safe from any thread.
    public func requestStop() {
        stopRequested.store(true, ordering: .relaxed)
    }

    /// Runs the room on this thread until the session closes either device, the duration is
    /// reached, or ``requestStop()`` is called.
    /// - Parameters:
    ///   - onEvent: told, on this thread, as the room waits, opens, starts and ends.
    ///   - onSpeaker: given each tick's loudspeaker block (mono, at the speaker FIFO's rate, as
    ///     played into the room: silence where nothing had been written) and the speaker
    ///     timeline's frame of its first sample; valid only during the call.
    /// - Returns: what moved through the two FIFOs.
    /// - Throws: ``FIFORoomError`` when a FIFO cannot be opened or an I/O call fails for another
    ///   reason than its other end closing.
    public func run(onEvent: (FIFORoomEvent) -> Void = { _ in },
                    onSpeaker: ((UnsafeBufferPointer<Float>, Int) -> Void)? = nil) throws(FIFORoomError) -> FIFORoomReport {
        _ = DescriptorSupport.brokenPipesIgnored
        let speakerFIFO = try FIFODescriptor.openReader(speakerPath, role: "speaker")
        let speakerPeriodBytes = max(1, speakerFormat.sampleRate * options.periodMilliseconds / 1000) * speakerFormat.bytesPerFrame
        _ = try speakerFIFO.setCapacity(options.pipePeriods * speakerPeriodBytes)
        var report = FIFORoomReport()

        onEvent(.waitingForMicrophone)
        var opened: FIFODescriptor?
        while opened == nil {
            if stopRequested.load(ordering: .relaxed) { return finish(&report, .stopped, onEvent) }
            opened = try FIFODescriptor.openWriterIfRead(microphonePath, role: "microphone")
            if opened == nil { Self.sleep(nanoseconds: 10_000_000) }
        }
        guard let microphoneFIFO = opened else { return finish(&report, .stopped, onEvent) }
        onEvent(.microphoneOpened)
        let periodBytes = microphonePeriodFrames * microphoneFormat.bytesPerFrame
        let capacity = try microphoneFIFO.setCapacity(options.pipePeriods * periodBytes)
        var silence = [UInt8](repeating: 0, count: periodBytes)
        var prefilled = 0
        for _ in 0..<min(options.prefillPeriods, max(capacity / periodBytes, 1)) {
            guard Self.write(microphoneFIFO.descriptor, &silence) == .written else { break }
            prefilled += periodBytes
        }
        // The timeline starts when the reader takes the silence.
        while microphoneFIFO.bytesInPipe >= prefilled && prefilled > 0 {
            if stopRequested.load(ordering: .relaxed) { return finish(&report, .stopped, onEvent) }
            if Self.readerGone(microphoneFIFO.descriptor) { return finish(&report, .microphoneClosed, onEvent) }
            Self.sleep(nanoseconds: 1_000_000)
        }
        onEvent(.started)
        var simulator = prepared.withLock { $0.take() }
        if simulator == nil {
            do { simulator = try RoomSimulator(configuration, talker: talker) } catch { throw .room(error) }
        }
        guard var room = simulator else { return finish(&report, .stopped, onEvent) }
        var pump = try RoomPump(room: configuration, microphone: microphoneFormat, speaker: speakerFormat, periodFrames: microphonePeriodFrames,
                                periodMilliseconds: options.periodMilliseconds)
        let end = try pump.run(room: &room, microphone: microphoneFIFO, speaker: speakerFIFO, options: options,
                               stop: stopRequested, report: &report, onEvent: onEvent, onSpeaker: onSpeaker)
        return finish(&report, end, onEvent)
    }

    private func finish(_ report: inout FIFORoomReport, _ end: FIFORoomEnd, _ onEvent: (FIFORoomEvent) -> Void) -> FIFORoomReport {
        report.end = end
        onEvent(.ended(end))
        return report
    }

    /// The outcome of one write of a whole period.
    enum WriteOutcome { case written, full, readerGone }

    /// Writes `bytes` in one call (whole or not at all, since they fit in `PIPE_BUF`).
    static func write(_ descriptor: Int32, _ bytes: inout [UInt8]) -> WriteOutcome {
        while true {
            let result = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if result == bytes.count { return .written }
            if result < 0 && errno == EINTR { continue }
            if result < 0 && errno == EPIPE { return .readerGone }
            return .full
        }
    }

    /// True once the FIFO's reader has closed it (poll reports an error on the write end).
    static func readerGone(_ descriptor: Int32) -> Bool {
        var watched = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&watched, 1, 0) > 0 && watched.revents & Int16(POLLERR) != 0
    }

    static func sleep(nanoseconds: Int) {
        var interval = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        var remaining = timespec()
        while nanosleep(&interval, &remaining) != 0 && errno == EINTR { interval = remaining }
    }

    /// An ALSA configuration that defines the two PCMs on the FIFOs: a `file` PCM over `null`
    /// whose `infile` is the microphone FIFO, and one whose `file` is the speaker FIFO.
    /// - Parameters:
    ///   - includingSystemConfiguration: start with the system's `alsa.conf`, for a file that
    ///     `ALSA_CONFIG_PATH` names (leave it out for `~/.asoundrc`, which alsa.conf reads itself).
    /// - Returns: the text, ending with a newline.
    public static func alsaConfiguration(microphoneFIFO: String, speakerFIFO: String, microphonePCM: String = "room_mic",
                                         speakerPCM: String = "room_speaker", includingSystemConfiguration: Bool = true) -> String {
        func quoted(_ text: String) -> String {
            "\"" + text.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"") + "\""
        }
        var lines = [String]()
        if includingSystemConfiguration { lines.append("</usr/share/alsa/alsa.conf>") }
        lines += [
            "# The microphone and speaker of 'voicepipe room': raw samples through two FIFOs, in the format",
            "# the program negotiates (a voicepipe device takes FLOAT_LE, 48000 Hz, 2 channels here).",
            "# Start 'voicepipe room' first or at the same time: opening a FIFO waits for its other end.",
            "pcm.\(microphonePCM) {",
            "    type file",
            "    slave.pcm { type null }",
            "    file \"/dev/null\"",
            "    infile \(quoted(microphoneFIFO))",
            "    format raw",
            "}",
            "pcm.\(speakerPCM) {",
            "    type file",
            "    slave.pcm { type null }",
            "    file \(quoted(speakerFIFO))",
            "    format raw",
            "}",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    /// This text with every `target` replaced (Foundation-free).
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}

/// How a ``FIFORoom`` paces and buffers.
public struct FIFORoomOptions: Sendable, Hashable {
    /// Audio per tick, milliseconds (1 ... 100): each microphone write and each speaker read.
    public var periodMilliseconds: Int
    /// Periods of silence written before the timeline starts (1 ... 8).
    public var prefillPeriods: Int
    /// The pipe buffer each FIFO is given, in periods (1 ... 64; the kernel rounds up to pages).
    public var pipePeriods: Int
    /// Seconds of timeline after which the room ends by itself; nil for until the session closes.
    public var duration: Double?

    public init(periodMilliseconds: Int = 10, prefillPeriods: Int = 2, pipePeriods: Int = 4, duration: Double? = nil) {
        self.periodMilliseconds = min(max(periodMilliseconds, 1), 100)
        self.prefillPeriods = min(max(prefillPeriods, 1), 8)
        self.pipePeriods = min(max(pipePeriods, 1), 64)
        self.duration = duration.map { $0.isFinite ? max($0, 0) : 0 }
    }
}

/// What a ``FIFORoom`` tells as it runs.
public enum FIFORoomEvent: Sendable, Hashable {
    /// The speaker FIFO is open; the room waits for a program to open the microphone.
    case waitingForMicrophone
    /// A program opened the microphone; the room fills in silence and waits for the first read.
    case microphoneOpened
    /// The microphone's reader took the first audio: the timeline starts.
    case started
    /// The first samples arrived from the speaker.
    case speakerOpened
    /// The room ended.
    case ended(FIFORoomEnd)
}

/// Why a ``FIFORoom`` ended.
public enum FIFORoomEnd: String, Sendable, Hashable {
    /// The microphone's reader closed it.
    case microphoneClosed = "the session closed its microphone"
    /// The speaker's writer closed it after playing.
    case speakerClosed = "the session closed its speaker"
    /// The duration asked for has passed.
    case durationReached = "the duration has passed"
    /// ``FIFORoom/requestStop()`` was called.
    case stopped = "it was stopped"
}

/// What moved through a ``FIFORoom``'s FIFOs.
public struct FIFORoomReport: Sendable, Hashable {
    /// Why the room ended.
    public var end: FIFORoomEnd = .stopped
    /// Ticks run (microphone periods on the timeline).
    public var periods = 0
    /// Microphone FIFO frames the reader was given (the prefill's silence not counted).
    public var microphoneFrames = 0
    /// Microphone FIFO frames dropped because the pipe was full (the reader fell behind).
    public var droppedMicrophoneFrames = 0
    /// Frames read from the speaker FIFO.
    public var speakerFrames = 0
    /// Loudspeaker frames played as silence because nothing had been written in time.
    public var speakerSilenceFrames = 0
    /// Frames read from the speaker FIFO with a sound (any sample not zero).
    public var speakerSoundFrames = 0
    /// The speaker timeline's first frame with a sound (read, not padded), if any.
    public var firstSpeakerSoundFrame: Int?
    /// The speaker timeline's last frame with a sound, if any.
    public var lastSpeakerSoundFrame: Int?
    /// Ticks that began more than one period after their deadline.
    public var latePeriods = 0
    /// The latest a tick began after its deadline, seconds.
    public var maximumLateness = 0.0
    /// The timeline's length, seconds.
    public var seconds = 0.0

    public init() {}
}

/// The per-tick work of a running ``FIFORoom``: buffers sized once, conversions, the clock.
private struct RoomPump {
    let microphone: FIFOStreamFormat
    let speaker: FIFOStreamFormat
    let periodFrames: Int
    let roomPeriodFrames: Int
    let resampler: BuiltInResampler?
    var microphoneBytes: [UInt8]
    var speakerBytes: [UInt8]
    var speakerCarry = 0
    var speakerMono: [Float]
    var roomBlock: [Float]
    var resampled: [Float]
    var pending: [Float]
    var pendingCount = 0

    init(room: RoomConfiguration, microphone: FIFOStreamFormat, speaker: FIFOStreamFormat, periodFrames: Int, periodMilliseconds: Int) throws(FIFORoomError) {
        self.microphone = microphone
        self.speaker = speaker
        self.periodFrames = periodFrames
        roomPeriodFrames = max(1, Int((room.captureRate.hertz * Double(periodMilliseconds) / 1000).rounded()))
        if room.captureRate.hertz == Double(microphone.sampleRate) {
            resampler = nil
        } else {
            do {
                resampler = try BuiltInResampler(inputRate: room.captureRate, outputRate: SampleRate(hertz: Double(microphone.sampleRate)))
            } catch {
                throw .resampler("\(error)")
            }
        }
        let resampledCapacity = resampler?.maxOutputFrames(forInputFrames: roomPeriodFrames) ?? roomPeriodFrames
        microphoneBytes = [UInt8](repeating: 0, count: periodFrames * microphone.bytesPerFrame)
        // A tick never takes more speaker frames than its share rounded up.
        let speakerTick = (periodFrames * speaker.sampleRate + microphone.sampleRate - 1) / microphone.sampleRate + 1
        speakerBytes = [UInt8](repeating: 0, count: speakerTick * speaker.bytesPerFrame)
        speakerMono = [Float](repeating: 0, count: speakerTick)
        roomBlock = [Float](repeating: 0, count: roomPeriodFrames)
        resampled = [Float](repeating: 0, count: resampledCapacity)
        pending = [Float](repeating: 0, count: periodFrames + resampledCapacity)
    }

    /// Ticks until an end; the clock starts now.
    mutating func run(room: inout RoomSimulator, microphone microphoneFIFO: FIFODescriptor, speaker speakerFIFO: FIFODescriptor,
                      options: FIFORoomOptions, stop: borrowing Atomic<Bool>, report: inout FIFORoomReport,
                      onEvent: (FIFORoomEvent) -> Void, onSpeaker: ((UnsafeBufferPointer<Float>, Int) -> Void)?) throws(FIFORoomError) -> FIFORoomEnd {
        let start = MonotonicClock.nanoseconds()
        let microphoneRate = Int64(microphone.sampleRate)
        let periodNanoseconds = Double(periodFrames) * 1e9 / Double(microphoneRate)
        var speakerConsumed = 0
        var speakerHeard = false
        var tick: Int64 = 0
        while true {
            if stop.load(ordering: .relaxed) { return .stopped }
            if let duration = options.duration, report.seconds >= duration { return .durationReached }
            // A period is ready once its last frame has been sampled.
            let deadline = start + (tick + 1) * Int64(periodFrames) * 1_000_000_000 / microphoneRate
            Self.sleep(until: deadline)
            let lateness = Double(MonotonicClock.nanoseconds() - deadline)
            if lateness > periodNanoseconds { report.latePeriods += 1 }
            report.maximumLateness = max(report.maximumLateness, lateness / 1e9)

            // The loudspeaker plays what was written for this period, silence for what was not.
            let due = Int((tick + 1) * Int64(periodFrames) * Int64(speaker.sampleRate) / microphoneRate) - speakerConsumed
            let (frames, closed) = try readSpeaker(speakerFIFO, frames: due)
            if frames > 0 && !speakerHeard {
                speakerHeard = true
                onEvent(.speakerOpened)
            }
            report.speakerFrames += frames
            report.speakerSilenceFrames += due - frames
            for index in 0..<due {
                if index >= frames { speakerMono[index] = 0; continue }
                if speakerMono[index] != 0 {
                    report.speakerSoundFrames += 1
                    if report.firstSpeakerSoundFrame == nil { report.firstSpeakerSoundFrame = speakerConsumed + index }
                    report.lastSpeakerSoundFrame = speakerConsumed + index
                }
            }
            speakerMono.withUnsafeBufferPointer { mono in
                let block = UnsafeBufferPointer(rebasing: mono[0..<due])
                room.play(block)
                onSpeaker?(block, speakerConsumed)
            }
            speakerConsumed += due

            // The microphone: one whole period, written in one piece.
            try fillPending(room: &room)
            encodeMicrophonePeriod()
            switch FIFORoom.write(microphoneFIFO.descriptor, &microphoneBytes) {
            case .written: report.microphoneFrames += periodFrames
            case .full: report.droppedMicrophoneFrames += periodFrames
            case .readerGone: return .microphoneClosed
            }
            tick += 1
            report.periods = Int(tick)
            report.seconds = Double(tick) * Double(periodFrames) / Double(microphoneRate)
            if closed && speakerHeard { return .speakerClosed }
        }
    }

    /// Reads up to `frames` whole frames from the speaker FIFO into ``speakerMono`` (channels
    /// averaged), keeping a partial frame for the next call.
    /// - Returns: the frames read, and whether the writer has closed the FIFO.
    mutating func readSpeaker(_ fifo: FIFODescriptor, frames: Int) throws(FIFORoomError) -> (Int, Bool) {
        let bytesPerFrame = speaker.bytesPerFrame
        let wanted = frames * bytesPerFrame
        var filled = speakerCarry
        var closed = false
        while filled < wanted {
            let got = speakerBytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return read(fifo.descriptor, base + filled, wanted - filled)
            }
            if got > 0 { filled += got; continue }
            if got == 0 { closed = true; break }
            if errno == EINTR { continue }
            if errno == EAGAIN { break }
            throw .ioFailed(role: "speaker", code: .posix(errno))
        }
        let whole = filled / bytesPerFrame
        let channels = speaker.channelCount
        let scale = 1 / Float(channels)
        let encoding = speaker.encoding
        speakerBytes.withUnsafeBytes { bytes in
            speakerMono.withUnsafeMutableBufferPointer { mono in
                for frame in 0..<whole {
                    var sum: Float = 0
                    for channel in 0..<channels {
                        let offset = (frame * channels + channel) * encoding.bytes
                        sum += encoding == .s16LE
                            ? SampleConversion.float(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self)))
                            : Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                    }
                    mono[frame] = channels == 1 ? sum : sum * scale
                }
            }
        }
        speakerCarry = filled - whole * bytesPerFrame
        if speakerCarry > 0 {
            let (from, count) = (whole * bytesPerFrame, speakerCarry)
            speakerBytes.withUnsafeMutableBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                base.copyMemory(from: base + from, byteCount: count)
            }
        }
        return (whole, closed)
    }

    /// Captures room periods (resampled to the FIFO's rate) until a whole FIFO period is pending.
    mutating func fillPending(room: inout RoomSimulator) throws(FIFORoomError) {
        while pendingCount < periodFrames {
            roomBlock.withUnsafeMutableBufferPointer { block in _ = room.capture(into: block) }
            var produced = roomPeriodFrames
            if let resampler {
                do {
                    produced = try roomBlock.withUnsafeBufferPointer { block throws(ResamplerError) in
                        try resampled.withUnsafeMutableBufferPointer { output throws(ResamplerError) in try resampler.process(block, into: output) }
                    }
                } catch {
                    throw .resampler("\(error)")
                }
            } else {
                for index in 0..<produced { resampled[index] = roomBlock[index] }
            }
            for index in 0..<produced { pending[pendingCount + index] = resampled[index] }
            pendingCount += produced
        }
    }

    /// The first pending period as FIFO bytes (saturated at full scale, every channel the same),
    /// then drops it from the pending samples.
    mutating func encodeMicrophonePeriod() {
        let channels = microphone.channelCount
        let encoding = microphone.encoding
        let frames = periodFrames
        pending.withUnsafeBufferPointer { pending in
            microphoneBytes.withUnsafeMutableBytes { bytes in
                for frame in 0..<frames {
                    let value = min(max(pending[frame], -1), 1)
                    for channel in 0..<channels {
                        let offset = (frame * channels + channel) * encoding.bytes
                        if encoding == .s16LE {
                            bytes.storeBytes(of: SampleConversion.int16(value).littleEndian, toByteOffset: offset, as: Int16.self)
                        } else {
                            bytes.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: offset, as: UInt32.self)
                        }
                    }
                }
            }
        }
        let rest = pendingCount - frames
        for index in 0..<rest { pending[index] = pending[frames + index] }
        pendingCount = rest
    }

    /// Sleeps until `deadline` (nanoseconds on CLOCK_MONOTONIC).
    static func sleep(until deadline: Int64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}
