import Synchronization
import VoicePipeCore
import VoicePipeIO

/// How a live session in a simulated room is set up: the room, the person speaking into it, and
/// the echo control between its microphone and the frames sent.
public struct RoomSessionOptions: Sendable {
    /// The room; its capture rate is the capture target (16 kHz) and its playback rate the reply's
    /// (24 kHz), so no device converts.
    public var room: RoomConfiguration
    /// The person speaking into the room: 16 kHz mono, full scale ±1.
    public var talker: [Float]
    /// When the person starts speaking (seconds of room time): a moment of the room alone first,
    /// as a person starts a little after the session does, lets the voice gate learn its noise floor.
    public var talkerStartSeconds: Double
    /// The echo canceller, or nil for none (`--echo off`: the room's echo goes out as it is heard).
    public var echo: EchoBackend?
    /// The canceller's options.
    public var echoOptions: EchoControlOptions
    /// The capture path's frame length and downmix.
    public var capture: CaptureOptions
    /// How long the session stays ready (nobody speaking, nothing playing) after the talker has
    /// finished before the microphone stops and the session ends.
    public var idleSecondsAfterTalker: Double
    /// The longest the microphone runs after the talker has finished, whatever the session does.
    public var longestTailSeconds: Double
    /// Keep the microphone, near-end, echo and cleaned signals for ``RoomSessionDevices/writeRecording(to:)``
    /// (256 KB per second of session).
    public var keepsSignals: Bool

    public init(room: RoomConfiguration, talker: [Float], talkerStartSeconds: Double = 0.5, echo: EchoBackend? = .default,
                echoOptions: EchoControlOptions = EchoControlOptions(), capture: CaptureOptions = CaptureOptions(),
                idleSecondsAfterTalker: Double = 1, longestTailSeconds: Double = 120, keepsSignals: Bool = false) {
        self.room = room
        self.talker = talker
        self.talkerStartSeconds = talkerStartSeconds
        self.echo = echo
        self.echoOptions = echoOptions
        self.capture = capture
        self.idleSecondsAfterTalker = idleSecondsAfterTalker
        self.longestTailSeconds = longestTailSeconds
        self.keepsSignals = keepsSignals
    }
}

/// Why a room session's devices could not be built.
public enum RoomSessionError: Error, Sendable, CustomStringConvertible {
    case room(RoomError)
    case echo(EchoControlError)
    case reference(EchoReferenceError)
    case device(AudioUnavailable)
    case converter(CaptureConverterError)
    case pump(CapturePumpError)
    case output(ReplyPlayerError)
    /// The room's rates are not the capture target and the reply's.
    case rates(capture: SampleRate, playback: SampleRate)
    /// A talker start or a time limit that is negative or not finite.
    case badTime(option: String, value: Double)

    public var description: String {
        switch self {
        case .room(let error): "\(error)"
        case .echo(let error): "\(error)"
        case .reference(let error): error.message
        case .device(let error): error.message
        case .converter(let error): "\(error)"
        case .pump(let error): error.message
        case .output(let error): "\(error)"
        case .rates(let capture, let playback):
            "a room session runs its microphone at \(SampleRate.capture) and its loudspeaker at \(SampleRate.reply), not \(capture) and \(playback)"
        case .badTime(let option, let value): "the \(option) must be a finite number of seconds, at least 0, not \(value)"
        }
    }
}

/// What only a simulator can know about a session in its room.
public struct RoomSessionReport: Sendable, Hashable {
    /// Echo return loss enhancement in far-end single talk (the reply playing, the person silent),
    /// after the canceller's first 2 s of echo: microphone energy over sent energy, in dB. Nil
    /// without echo control or without enough single talk.
    public var echoReturnLossEnhancementDB: Double?
    /// Seconds of far-end single talk the figure is over.
    public var singleTalkSeconds: Double
    /// Interruptions of the reply while the person was silent: the runtime heard the loudspeaker.
    public var selfInterruptions: Int
    /// Times the person started speaking over the reply.
    public var bargeIns: Int
    /// Of those, the ones the runtime honoured (an interruption within 1.5 s of the person starting).
    public var bargeInsHonoured: Int
    /// Every interruption the session saw.
    public var interruptions: Int
    /// The clock drift the aligner measured between loudspeaker and microphone, in ppm.
    public var measuredDriftPPM: Double?
    /// Blocks the canceller failed on and passed through unprocessed.
    public var blocksPassedThrough: Int
    /// Seconds of room time the microphone ran.
    public var seconds: Double
    /// Periods in which the loudspeaker ran dry while playing (the reply output fell behind).
    public var loudspeakerUnderruns: Int = 0
    /// Speaker frames of silence the aligner put in for gaps between the periods played.
    public var referenceGapFrames: Int = 0
}

/// A live session's devices in a simulated room, and the scoring of what happened in it.
///
/// ```
///  talker ─▶ SimulatedRoom ─▶ microphone ─▶ CapturePump ─▶ converter ─▶ EchoControlStage ─▶ session frames
///              ▲   (real time, one timeline)                                ▲ reference
///              └── loudspeaker ◀── DeviceReplyOutput ◀── reply ─── aligner ◀┘ (each period played)
///  scoring: the room's own echo and near end per 10 ms block, the stage's cleaned blocks, and
///           the session's interruptions, on the room's frame count
/// ```
///
/// The microphone runs in real time until the talker has finished and the session has been ready
/// for ``RoomSessionOptions/idleSecondsAfterTalker`` (or the tail limit passed); then the capture
/// ends and the session ends as after a file. Feed the session's events to ``observe(_:)``.
public final class RoomSessionDevices: @unchecked Sendable {
    // Safety: the scoreboard's arrays are each written by one thread (the room's microphone
    // thread, or the capture converter's) at distinct blocks and read only after the session,
    // when both threads have ended; everything else shared is atomic or behind a lock.
    public let room: SimulatedRoom
    /// The capture path from the room's microphone (with the echo stage, when on).
    public let pump: CapturePump
    /// The reply into the room's loudspeaker.
    public let output: DeviceReplyOutput
    /// The reference aligner and the echo stage, when echo control is on.
    public let aligner: EchoReferenceAligner?
    public let stage: EchoControlStage?
    public let options: RoomSessionOptions
    private let board: RoomScoreboard

    /// Builds the room and its devices; nothing runs until the session starts the capture.
    /// - Throws: ``RoomSessionError`` for a room option out of range, a canceller that cannot be
    ///   built, or rates other than 16 kHz capture and 24 kHz playback.
    public init(_ options: RoomSessionOptions) throws(RoomSessionError) {
        let configuration = options.room
        guard configuration.captureRate == .capture, configuration.playbackRate == .reply else {
            throw .rates(capture: configuration.captureRate, playback: configuration.playbackRate)
        }
        for (name, value) in [("talker start", options.talkerStartSeconds), ("idle time after the talker", options.idleSecondsAfterTalker),
                              ("longest tail", options.longestTailSeconds)] where !(value.isFinite && value >= 0) {
            throw .badTime(option: name, value: value)
        }
        self.options = options
        let rate = configuration.captureRate.hertz
        let talkerStart = Int((options.talkerStartSeconds * rate).rounded())
        let talkerEnd = talkerStart + options.talker.count
        let frameLimit = talkerEnd + Int((options.longestTailSeconds * rate).rounded())
        let board = RoomScoreboard(blocks: frameLimit / EchoBlock.frameCount + 2, keepsSignals: options.keepsSignals,
                                   talkerEnd: talkerEnd, idleFrames: Int((options.idleSecondsAfterTalker * rate).rounded()))
        self.board = board
        do throws(RoomError) {
            room = try SimulatedRoom(configuration, talker: RoomTalker(samples: options.talker, startFrame: talkerStart), clock: .realTime,
                                     periodFrames: EchoBlock.frameCount, onPeriod: { period in board.heard(period) })
        } catch {
            throw .room(error)
        }
        let microphone: CaptureDevice, loudspeaker: PlaybackDevice
        do throws(AudioUnavailable) {
            microphone = try CaptureDevice(room.microphone)
            loudspeaker = try PlaybackDevice(room.loudspeaker)
        } catch {
            throw .device(error)
        }
        let converter: CaptureConverter
        do throws(CaptureConverterError) {
            converter = try CaptureConverter(input: microphone.format, options: options.capture)
        } catch {
            throw .converter(error)
        }
        if let backend = options.echo {
            let aligner: EchoReferenceAligner
            do throws(EchoReferenceError) {
                aligner = try EchoReferenceAligner(playbackRate: loudspeaker.format.sampleRate, captureRate: configuration.captureRate)
            } catch {
                throw .reference(error)
            }
            let stage: EchoControlStage
            do throws(EchoControlError) {
                stage = try EchoControlStage(canceller: backend.make(options: options.echoOptions), reference: aligner, frameSamples: converter.frameLength)
            } catch {
                throw .echo(error)
            }
            stage.blockObserver = { microphone, reference, cleaned, stamp in board.cleaned(microphone, reference, cleaned, at: stamp.framePosition) }
            self.aligner = aligner
            self.stage = stage
        } else {
            aligner = nil
            stage = nil
        }
        do throws(CapturePumpError) {
            pump = try CapturePump(device: microphone, converter: converter, frameLimit: frameLimit, whenFull: .drop, echo: stage)
        } catch {
            throw .pump(error)
        }
        var observer: PlayedPeriodObserver?
        if let aligner { observer = { aligner.submit($0) } }
        do throws(ReplyPlayerError) {
            output = try DeviceReplyOutput(device: loudspeaker, periodObserver: observer)
        } catch {
            throw .output(error)
        }
        board.stop = { [pump] in pump.stop() }
    }

    /// Tells the scoring what the session did: interruptions, and when it is ready again.
    public func observe(_ event: SessionEvent) {
        guard case .note(let note) = event else { return }
        switch note {
        case .interrupted:
            board.interrupted(atFrame: room.capturedFrames)
        case .stateChanged(_, let state):
            board.sessionIs(ready: state == .ready, atFrame: room.capturedFrames)
        default:
            break
        }
    }

    /// The scores, once the session has ended (the microphone and the capture have stopped).
    public func report() -> RoomSessionReport {
        var report = board.report(stage: stage, aligner: aligner, sampleRate: options.room.captureRate)
        report.loudspeakerUnderruns = room.loudspeaker.underruns
        report.referenceGapFrames = aligner?.gapFramesFilled ?? 0
        return report
    }

    /// Writes the microphone, near-end, echo, reference and cleaned signals (16 kHz Float32 mono
    /// WAV, one timeline; the reference, as the aligner gave it to the canceller, and the cleaned
    /// signal only with echo control) into `directory`, once the session has ended.
    /// - Returns: the paths written.
    /// - Throws: ``AudioFileError`` when a file cannot be written.
    public func writeRecording(to directory: String) throws(AudioFileError) -> [String] {
        var paths: [String] = []
        for (name, signal) in board.signals(cleaned: stage != nil) {
            let path = directory + "/" + name + ".wav"
            let writer = try AudioFileWriter(path: path, sampleRate: options.room.captureRate, channelCount: 1, encoding: .float32)
            try signal.withUnsafeBufferPointer { samples throws(AudioFileError) in try writer.write(samples) }
            try writer.close()
            paths.append(path)
        }
        return paths
    }
}

/// Per-10 ms-block energies of a room session, from the room's microphone thread and the capture
/// converter's, and the session's interruptions on the room's frame count.
private final class RoomScoreboard: @unchecked Sendable {
    // Safety: see RoomSessionDevices. `heard` runs on the microphone thread only, `cleaned` on
    // the converter's only; the signal arrays likewise; the rest is atomic or locked.
    let blocks: Int
    let keepsSignals: Bool
    let talkerEnd: Int
    let idleFrames: Int
    private let echoEnergy: UnsafeMutableBufferPointer<Float>
    private let nearEnergy: UnsafeMutableBufferPointer<Float>
    private let microphoneEnergy: UnsafeMutableBufferPointer<Float>
    private let cleanedEnergy: UnsafeMutableBufferPointer<Float>
    private var microphone: [Float] = [], nearEnd: [Float] = [], echo: [Float] = [], cleanedSignal: [Float] = [], referenceSignal: [Float] = []
    private let framesHeard = Atomic<Int>(0)
    /// The room frame at which the session last became ready; −1 while it is not ready.
    private let readySince = Atomic<Int>(-1)
    private let stopped = Atomic<Bool>(false)
    private let interruptionFrames = Guarded<[Int]>([])
    var stop: @Sendable () -> Void = {}

    init(blocks: Int, keepsSignals: Bool, talkerEnd: Int, idleFrames: Int) {
        self.blocks = blocks
        self.keepsSignals = keepsSignals
        self.talkerEnd = talkerEnd
        self.idleFrames = idleFrames
        echoEnergy = .allocate(capacity: blocks)
        nearEnergy = .allocate(capacity: blocks)
        microphoneEnergy = .allocate(capacity: blocks)
        cleanedEnergy = .allocate(capacity: blocks)
        for buffer in [echoEnergy, nearEnergy, microphoneEnergy, cleanedEnergy] { buffer.initialize(repeating: 0) }
    }

    deinit {
        for buffer in [echoEnergy, nearEnergy, microphoneEnergy, cleanedEnergy] { buffer.deallocate() }
    }

    /// Microphone thread: one period of the room, its parts alone.
    func heard(_ period: SimulatedRoom.Period) {
        let frame = period.report.timestamp.frame
        let block = frame / EchoBlock.frameCount
        if block < blocks {
            echoEnergy[block] = Self.meanSquare(period.echo)
            nearEnergy[block] = Self.meanSquare(period.nearEnd)
        }
        if keepsSignals {
            microphone.append(contentsOf: period.microphone)
            nearEnd.append(contentsOf: period.nearEnd)
            echo.append(contentsOf: period.echo)
        }
        let heard = frame + period.report.frames
        framesHeard.store(heard, ordering: .relaxed)
        let ready = readySince.load(ordering: .relaxed)
        if ready >= 0, heard >= max(ready, talkerEnd) + idleFrames, !stopped.exchange(true, ordering: .relaxed) {
            stop()
        }
    }

    /// Converter thread: one block as the echo stage cleaned it.
    func cleaned(_ microphone: UnsafeBufferPointer<Float>, _ reference: UnsafeBufferPointer<Float>, _ cleaned: UnsafeBufferPointer<Float>, at frame: Int) {
        let block = frame / EchoBlock.frameCount
        if block < blocks {
            microphoneEnergy[block] = Self.meanSquare(microphone)
            cleanedEnergy[block] = Self.meanSquare(cleaned)
        }
        if keepsSignals {
            cleanedSignal.append(contentsOf: cleaned)
            referenceSignal.append(contentsOf: reference)
        }
    }

    func interrupted(atFrame frame: Int) {
        interruptionFrames.withLock { $0.append(frame) }
    }

    /// The session became ready (or stopped being): staying ready for the idle time once the
    /// talker has finished ends the capture.
    func sessionIs(ready: Bool, atFrame frame: Int) {
        readySince.store(ready ? frame : -1, ordering: .relaxed)
    }

    func signals(cleaned: Bool) -> [(String, [Float])] {
        [("microphone", microphone), ("near-end", nearEnd), ("echo", echo)] + (cleaned ? [("reference", referenceSignal), ("cleaned", cleanedSignal)] : [])
    }

    /// The near end counts as speaking in a block above −60 dBFS (mean square), the echo as
    /// present above −70 dBFS.
    private static let speaking: Float = 1e-6, echoing: Float = 1e-7

    func report(stage: EchoControlStage?, aligner: EchoReferenceAligner?, sampleRate: SampleRate) -> RoomSessionReport {
        let heard = min(framesHeard.load(ordering: .relaxed) / EchoBlock.frameCount, blocks)
        let interruptions = interruptionFrames.withLock { $0 }
        let blocksPerSecond = sampleRate.hertz / Double(EchoBlock.frameCount)
        // Far-end single talk after the first 2 s of echo: how much the stage removed.
        var echoBlocksSeen = 0, singleTalk = 0
        var microphoneSum = 0.0, cleanedSum = 0.0
        for block in 0..<heard where echoEnergy[block] > Self.echoing {
            echoBlocksSeen += 1
            guard echoBlocksSeen > Int(2 * blocksPerSecond), nearEnergy[block] == 0 else { continue }
            singleTalk += 1
            microphoneSum += Double(microphoneEnergy[block])
            cleanedSum += Double(cleanedEnergy[block])
        }
        let erle = stage != nil && singleTalk >= Int(blocksPerSecond) && cleanedSum > 0 && microphoneSum > 0
            ? 10 * Elementary.log10(microphoneSum / cleanedSum) : nil
        // An interruption is the person's when they spoke in the second before it.
        let lookBack = Int(blocksPerSecond)
        var selfInterruptions = 0
        for frame in interruptions {
            let block = min(frame / EchoBlock.frameCount, heard)
            let spoke = (max(0, block - lookBack)..<block).contains { nearEnergy[$0] > Self.speaking }
            if !spoke { selfInterruptions += 1 }
        }
        // A barge-in: the person starts (after 0.3 s of silence) while the reply is heard.
        var bargeIns = 0, honoured = 0
        let quiet = Int(0.3 * blocksPerSecond), window = Int(1.5 * blocksPerSecond)
        var silentBlocks = quiet
        for block in 0..<heard {
            guard nearEnergy[block] > Self.speaking else {
                silentBlocks += 1
                continue
            }
            defer { silentBlocks = 0 }
            guard silentBlocks >= quiet else { continue }
            let replyHeard = (max(0, block - 10)...min(heard - 1, block + 2)).contains { echoEnergy[$0] > Self.echoing }
            guard replyHeard else { continue }
            bargeIns += 1
            let start = block * EchoBlock.frameCount, end = (block + window) * EchoBlock.frameCount
            if interruptions.contains(where: { (start...end).contains($0) }) { honoured += 1 }
        }
        return RoomSessionReport(echoReturnLossEnhancementDB: erle, singleTalkSeconds: Double(singleTalk) / blocksPerSecond,
                                 selfInterruptions: selfInterruptions, bargeIns: bargeIns, bargeInsHonoured: honoured,
                                 interruptions: interruptions.count, measuredDriftPPM: aligner?.driftPPM,
                                 blocksPassedThrough: stage?.blocksPassedThrough ?? 0, seconds: Double(heard) / blocksPerSecond)
    }

    private static func meanSquare(_ samples: UnsafeBufferPointer<Float>) -> Float {
        guard !samples.isEmpty else { return 0 }
        var sum: Float = 0
        for sample in samples { sum += sample * sample }
        return sum / Float(samples.count)
    }
}

extension RoomSessionOptions {
    /// The person's speech for a room, from a file through the capture path: 16 kHz mono, full scale ±1.
    /// - Throws: what reading or converting the file throws.
    public static func talker(from source: FileCaptureSource) throws -> [Float] {
        var samples: [Float] = []
        while let frame = try source.next() {
            samples.append(contentsOf: frame.samples.lazy.map(SampleConversion.float))
        }
        return samples
    }
}
