import Glibc
import VoicePipeTestSupport

/// A level at a frequency (dB).
struct LevelAt: Codable {
    var frequency: Double
    var dB: Double
}

/// Quality figures of one contender on one workload.
struct StreamQuality: Codable {
    var workload: String
    /// SINAD (dB) of a 997 Hz −1 dBFS tone: on the Int16 output for capture, the Float32 output for playback.
    var sinadDB: Double
    /// Capture only: the same fit on the resampler's Float32 output, before Int16 rounding.
    var sinadFloatDB: Double?
    /// C1/C2: Float32 output RMS for −1 dBFS input tones above the output band, dB relative to the
    /// input tone's RMS (power-averaged over sine and cosine phase). C3/P1: the image of the 997 Hz
    /// tone (at outputRate/2·k ± 997 Hz), dBc, on the Float32 output.
    var outOfBand: [LevelAt]
    /// C1 only: gain (dB) of −6 dBFS tones, fitted output amplitude over input amplitude (Float32).
    var passband: [LevelAt]
    /// Position of a band-limited pulse in the output minus its ideal position, output samples.
    var delaySamples: Double
    /// Ideal output count minus the count produced, after each 20 ms chunk past the first 0.5 s.
    var holdbackMin: Double
    var holdbackMax: Double
    /// Delay plus the largest holdback, in milliseconds.
    var latencyMilliseconds: Double
    /// Largest difference between the outputs streamed in 10 or 100 ms chunks and in 20 ms chunks,
    /// in Int16 LSB (playback: Float32 difference × 32768).
    var chunkInvarianceLSB: Double
    /// VoicePipe capture only: the pipeline with the Float32 tap gave exactly the Int16 output of
    /// the plain pipeline.
    var tapMatchesPlainPipeline: Bool?
}

struct QualityRow: Codable {
    var contender: String
    var family: String
    var workloads: [StreamQuality]
}

/// C1 magnitude response through the streaming path: output RMS over input tone RMS, dB.
struct ResponseCurve: Codable {
    var contender: String
    var family: String
    var frequencies: [Double]
    var gainDB: [Double]
}

struct QualityResults: Codable {
    var rows: [QualityRow]
    var response: [ResponseCurve]
    var analysisWindow: String
}

/// Measures every resampler contender through the same streaming path as the throughput runs
/// (VoicePipe: `CaptureConverter` / `PlaybackConverter`; peers: the same glue as their cells).
struct QualityBenchmark {
    static let aliasFrequencies: [Double] = [8_500, 9_000, 10_000, 12_000, 16_000, 20_000]
    static let passbandFrequencies: [Double] = [100, 1_000, 3_400, 6_000, 7_000, 7_500]
    static let toneFrequency = 997.0

    let sweepStep: Double
    let filter: (String) -> Bool

    /// Streams `mono` (full scale 1.0, the same in every input channel, in the workload's format)
    /// through a fresh contender in chunks of `chunkMilliseconds`, recording the output and the
    /// produced count after every chunk.
    static func stream(_ spec: ContenderSpec, _ workload: Workload, mono: [Double], chunkMilliseconds: Int = 20, tap: Bool = true) -> OutputRecorder {
        let signal = InputSignal(workload: workload, mono: mono)
        defer { signal.release() }
        let maxChunk = workload.chunkFrames(milliseconds: Workload.chunkMilliseconds.max()!)
        let contender = spec.make(workload, chunkMilliseconds, maxChunk, tap)
        let recorder = OutputRecorder()
        contender.recorder = recorder
        let chunkBytes = workload.chunkFrames(milliseconds: chunkMilliseconds) * workload.bytesPerFrame
        let input = signal.prefix(frames: signal.frames)
        var offset = 0
        while offset < input.count {
            let end = min(offset + chunkBytes, input.count)
            contender.process(UnsafeRawBufferPointer(rebasing: input[offset..<end]))
            recorder.producedAfterChunk.append(contender.produced)
            offset = end
        }
        return recorder
    }

    func run(progress: Progress) -> QualityResults {
        var rows: [QualityRow] = []
        var curves: [ResponseCurve] = []
        for spec in ContenderSpec.all where spec.isResampler {
            var measured: [StreamQuality] = []
            for workload in Workload.all where filter("quality/\(workload.id)/\(spec.name)") {
                progress.say("quality: \(workload.id) \(spec.name)")
                measured.append(Self.measure(spec, workload))
            }
            if !measured.isEmpty {
                rows.append(QualityRow(contender: spec.name, family: spec.family.rawValue, workloads: measured))
            }
            if filter("response/C1/\(spec.name)") {
                progress.say("response: C1 \(spec.name)")
                curves.append(response(spec))
            }
        }
        return QualityResults(rows: rows, response: curves,
                              analysisWindow: "SINAD: 0.5–2.5 s of output of a 3 s tone; tone levels: 0.25–1.25 s of output of 1.5 s tones; response: 0.2–0.4 s of output of 0.6 s tones; all streamed in 20 ms chunks")
    }

    /// A sine of `frequency` Hz at `dBFS` peak, `frames` long at the workload's input rate.
    static func tone(_ workload: Workload, frames: Int, frequency: Double, dBFS: Double, phase: Double = 0) -> [Double] {
        Signals.sine(frequency: frequency, amplitude: Signals.amplitude(dBFS: dBFS), sampleRate: Double(workload.inputRate), frames: frames, phase: phase)
    }

    static func measure(_ spec: ContenderSpec, _ workload: Workload) -> StreamQuality {
        let inRate = workload.inputRate, outRate = Double(workload.outputRate)
        let capture = !workload.isPlayback

        // SINAD, and the image for upsampling workloads.
        let tone = Self.tone(workload, frames: 3 * inRate, frequency: toneFrequency, dBFS: -1)
        let run20 = stream(spec, workload, mono: tone)
        let start = Int(0.5 * outRate), end = Int(2.5 * outRate)
        let floatWindow = Measurement.window(run20.float, from: start, to: end)
        let floatFit = Measurement.fitTone(floatWindow, frequency: toneFrequency, sampleRate: outRate)
        let sinad = capture ? Measurement.fitTone(Measurement.window(run20.int16, from: start, to: end), frequency: toneFrequency, sampleRate: outRate).sinad
                            : floatFit.sinad
        let sinadFloat = capture ? floatFit.sinad : nil

        var outOfBand: [LevelAt] = []
        if workload.outputRate > workload.inputRate {
            let image = Double(workload.inputRate) - toneFrequency
            let fits = Measurement.fitTones(floatWindow, frequencies: [toneFrequency, image], sampleRate: outRate)
            outOfBand = [LevelAt(frequency: image, dB: Measurement.dB(fits[1].amplitude / fits[0].amplitude))]
        } else {
            for frequency in aliasFrequencies where frequency < Double(inRate) / 2 {
                var power = 0.0
                for phase in [0.0, Double.pi / 2] {
                    let input = Self.tone(workload, frames: 3 * inRate / 2, frequency: frequency, dBFS: -1, phase: phase)
                    let output = stream(spec, workload, mono: input).float
                    let rms = Measurement.rms(Measurement.window(output, from: Int(0.25 * outRate), to: Int(1.25 * outRate)))
                    power += rms * rms / 2
                }
                let inputRMS = Signals.amplitude(dBFS: -1) / 2.0.squareRoot()
                outOfBand.append(LevelAt(frequency: frequency, dB: power > 0 ? 10 * log10(power / (inputRMS * inputRMS)) : -.infinity))
            }
        }

        var passband: [LevelAt] = []
        if workload.id == Workload.c1.id {
            for frequency in passbandFrequencies {
                let input = Self.tone(workload, frames: 3 * inRate / 2, frequency: frequency, dBFS: -6)
                let output = stream(spec, workload, mono: input).float
                let fit = Measurement.fitTone(Measurement.window(output, from: Int(0.25 * outRate), to: Int(1.25 * outRate)), frequency: frequency, sampleRate: outRate)
                passband.append(LevelAt(frequency: frequency, dB: Measurement.dB(fit.amplitude / Signals.amplitude(dBFS: -6))))
            }
        }

        // Delay from a band-limited pulse at 1.0 s; holdback from the counts after each chunk.
        let pulse = Signals.bandLimitedPulse(at: 1, bandwidth: 2_000, amplitude: 0.5, sampleRate: Double(inRate), frames: 2 * inRate)
        let pulseRun = stream(spec, workload, mono: pulse)
        let peak = capture ? Measurement.peakPosition(Measurement.window(pulseRun.int16, from: 0, to: pulseRun.int16.count)) : Measurement.peakPosition(pulseRun.float)
        let delay = peak - outRate
        let chunkFrames = workload.chunkFrames(milliseconds: 20)
        var holdbacks: [Double] = []
        for (k, produced) in pulseRun.producedAfterChunk.enumerated() where Double((k + 1) * chunkFrames) >= 0.5 * Double(inRate) {
            let ideal = Double((k + 1) * chunkFrames) * outRate / Double(inRate)
            holdbacks.append(ideal - Double(produced))
        }
        let holdbackMax = holdbacks.max() ?? 0

        // Chunking invariance against the 20 ms run.
        var largest = 0.0
        for ms in [10, 100] {
            let other = stream(spec, workload, mono: tone, chunkMilliseconds: ms)
            if capture {
                for i in 0..<min(other.int16.count, run20.int16.count) { largest = max(largest, abs(Double(other.int16[i]) - Double(run20.int16[i]))) }
            } else {
                for i in 0..<min(other.float.count, run20.float.count) { largest = max(largest, abs(Double(other.float[i]) - Double(run20.float[i])) * 32768) }
            }
        }

        var tapMatches: Bool?
        if spec.family == .voicepipe && capture {
            tapMatches = stream(spec, workload, mono: tone, tap: false).int16 == run20.int16
        }

        return StreamQuality(
            workload: workload.id, sinadDB: sinad, sinadFloatDB: sinadFloat, outOfBand: outOfBand, passband: passband,
            delaySamples: delay, holdbackMin: holdbacks.min() ?? 0, holdbackMax: holdbackMax,
            latencyMilliseconds: (delay + holdbackMax) / outRate * 1000, chunkInvarianceLSB: largest, tapMatchesPlainPipeline: tapMatches)
    }

    /// C1 magnitude response from a swept set of −1 dBFS tones through the streaming path.
    func response(_ spec: ContenderSpec) -> ResponseCurve {
        let workload = Workload.c1
        let inRate = workload.inputRate, outRate = Double(workload.outputRate)
        var frequencies: [Double] = []
        var f = sweepStep / 2
        while f < Double(inRate) / 2 {
            frequencies.append(f)
            f += sweepStep
        }
        let inputRMS = Signals.amplitude(dBFS: -1) / 2.0.squareRoot()
        let gains = frequencies.map { frequency -> Double in
            let input = Self.tone(workload, frames: inRate * 6 / 10, frequency: frequency, dBFS: -1, phase: 0.3)
            let output = Self.stream(spec, workload, mono: input).float
            let rms = Measurement.rms(Measurement.window(output, from: Int(0.2 * outRate), to: Int(0.4 * outRate)))
            return Measurement.dB(rms / inputRMS)
        }
        return ResponseCurve(contender: spec.name, family: spec.family.rawValue, frequencies: frequencies, gainDB: gains)
    }
}

