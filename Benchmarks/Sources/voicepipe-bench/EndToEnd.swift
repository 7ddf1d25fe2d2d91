import Glibc
import VoicePipeCore
import VoicePipeIO
import VoicePipeTestSupport

/// Whole-job figures for one side of the end-to-end comparison.
struct EndToEndSide: Codable {
    var description: String
    var cpuSeconds: Spread
    var wallSeconds: Spread
    var xRealTimeCPU: Spread
    var xRealTimeWall: Spread
}

struct EndToEndResult: Codable {
    var inputFile: String
    var inputDescription: String
    var audioSeconds: Double
    var inputBytes: Int
    var repetitions: Int
    var voicepipe: EndToEndSide
    var shell: EndToEndSide
    var shellCommand: String
    /// VoicePipe's output: `audio.chunk` JSON Lines.
    var voicepipeMessages: Int
    var voicepipeOutputBytes: Int
    /// Shell pipeline CPU seconds over VoicePipe's (above 1: VoicePipe needs less CPU).
    var cpuRatio: Double
    /// Shell pipeline wall seconds over VoicePipe's (above 1: VoicePipe finishes sooner).
    var wallRatio: Double
}

/// A long 48 kHz stereo WAV → 16 kHz `audio.chunk` JSON Lines, VoicePipe's pipeline against
/// `sox … | base64`, measured alternately in the same run.
enum EndToEndBenchmark {
    static let frameMilliseconds = 20

    static func run(audioSeconds: Int, repetitions: Int, cacheDirectory: String, progress: Progress) -> EndToEndResult? {
        guard access("/usr/bin/sox", X_OK) == 0 || access("/bin/sox", X_OK) == 0 else {
            progress.say("end to end: sox not found (run scripts/install-peers); skipped")
            return nil
        }
        // v2: the program signal's noise comes from VoicePipeTestSupport's SplitMix64 (v1: a private
        // linear congruential generator), so a file cached by an older build is not reused.
        let input = "\(cacheDirectory)/e2e-48k-stereo-f32-\(audioSeconds)s-v2.wav"
        if access(input, R_OK) != 0 {
            progress.say("end to end: writing \(audioSeconds) s 48 kHz stereo Float32 WAV to \(input) (once)")
            writeInputFile(path: input, seconds: audioSeconds)
        }
        var info = stat()
        stat(input, &info)
        let output = "\(cacheDirectory)/e2e-voicepipe-output.jsonl"
        let command = "sox '\(input)' -r 16000 -c 1 -b 16 -t raw - | base64 > /dev/null"

        var ours: [(cpu: Double, wall: Double)] = []
        var theirs: [(cpu: Double, wall: Double)] = []
        var messages = 0
        var outputBytes = 0
        for repetition in 0...repetitions {
            progress.say(repetition == 0 ? "end to end: warm-up" : "end to end: repetition \(repetition) of \(repetitions)")
            let mine = runVoicePipe(input: input, output: output)
            let shell = runShell(command)
            messages = mine.messages
            outputBytes = mine.bytes
            if repetition > 0 {
                ours.append((mine.cpu, mine.wall))
                theirs.append(shell)
            }
        }
        unlink(output)
        let seconds = Double(audioSeconds)
        func side(_ description: String, _ times: [(cpu: Double, wall: Double)]) -> EndToEndSide {
            let cpu = Spread(times.map(\.cpu)), wall = Spread(times.map(\.wall))
            return EndToEndSide(description: description, cpuSeconds: cpu, wallSeconds: wall,
                                xRealTimeCPU: cpu.rate(work: seconds), xRealTimeWall: wall.rate(work: seconds))
        }
        let voicepipe = side("AudioFileReader → CaptureConverter (\(frameMilliseconds) ms frames) → AudioChunkJSON.encode → JSON Lines file; thread CPU time", ours)
        let shell = side("/bin/sh -c \"\(command)\"; CPU = children's user + system time (getrusage RUSAGE_CHILDREN)", theirs)
        return EndToEndResult(
            inputFile: input, inputDescription: "48 kHz stereo Float32 WAV, \(audioSeconds) s (the throughput signal repeated)",
            audioSeconds: seconds, inputBytes: Int(info.st_size), repetitions: repetitions,
            voicepipe: voicepipe, shell: shell, shellCommand: command,
            voicepipeMessages: messages, voicepipeOutputBytes: outputBytes,
            cpuRatio: shell.cpuSeconds.median / voicepipe.cpuSeconds.median,
            wallRatio: shell.wallSeconds.median / voicepipe.wallSeconds.median)
    }

    /// VoicePipe's pipeline, timed on this thread (CPU includes its read and write system calls).
    static func runVoicePipe(input: String, output: String) -> (cpu: Double, wall: Double, messages: Int, bytes: Int) {
        let wall0 = Clock.wall()
        let cpu0 = Clock.threadCPU()
        let reader = try! AudioFileReader(path: input)
        let converter = try! CaptureConverter(input: reader.format, options: CaptureOptions(frameMilliseconds: frameMilliseconds))
        let descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(descriptor >= 0, "cannot write \(output)")
        let writer = BufferedWriter(descriptor: descriptor)
        let readFrames = Int(reader.format.sampleRate.hertz) * frameMilliseconds / 1000
        let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readFrames * reader.format.bytesPerFrame, alignment: 16)
        let message = UnsafeMutableRawBufferPointer.allocate(byteCount: AudioChunkJSON.encodedCount(sampleCount: 1_600, sampleRate: 16_000) + 1, alignment: 16)
        var messages = 0
        let deliver = { (frame: borrowing CaptureFrame) in
            let count = frame.withSamples { AudioChunkJSON.encode($0, sampleRate: 16_000, into: message) }
            message[count] = UInt8(ascii: "\n")
            writer.write(UnsafeRawBufferPointer(rebasing: message[0...count]))
            messages += 1
        }
        while true {
            let frames = try! reader.read(into: readBuffer)
            if frames == 0 { break }
            try! converter.process(UnsafeRawBufferPointer(rebasing: readBuffer[0..<(frames * reader.format.bytesPerFrame)]), deliver)
        }
        try! converter.flush(deliver)
        writer.flush()
        close(descriptor)
        readBuffer.deallocate()
        message.deallocate()
        let cpu1 = Clock.threadCPU()
        let wall1 = Clock.wall()
        return (cpu1 - cpu0, wall1 - wall0, messages, writer.total)
    }

    /// Runs `command` through /bin/sh; CPU is what its process tree used (reaped children).
    static func runShell(_ command: String) -> (cpu: Double, wall: Double) {
        var before = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &before)
        let wall0 = Clock.wall()
        var pid: pid_t = 0
        var arguments: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", command].map { (s: String) in strdup(s) } + [nil]
        defer { arguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &arguments, environ)
        precondition(spawned == 0, "posix_spawn failed: \(spawned)")
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let wall1 = Clock.wall()
        var after = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &after)
        precondition(status == 0, "the shell pipeline failed (status \(status)): \(command)")
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) * 1e-6 }
        let cpu = seconds(after.ru_utime) + seconds(after.ru_stime) - seconds(before.ru_utime) - seconds(before.ru_stime)
        return (cpu, wall1 - wall0)
    }

    /// Writes the throughput program signal (60 s, repeated) as a 48 kHz stereo IEEE-float WAV.
    static func writeInputFile(path: String, seconds: Int) {
        let rate = 48_000
        let blockSeconds = min(seconds, 60)
        let frames = blockSeconds * rate
        let left = Signals.program(sampleRate: Double(rate), frames: frames, channel: 0)
        let right = Signals.program(sampleRate: Double(rate), frames: frames, channel: 1)
        var block = [Float](repeating: 0, count: 2 * frames)
        for f in 0..<frames { block[2 * f] = Float(left[f]); block[2 * f + 1] = Float(right[f]) }
        let totalFrames = seconds * rate
        let dataBytes = totalFrames * 8
        var header: [UInt8] = []
        func text(_ s: String) { header += Array(s.utf8) }
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { header += $0 } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { header += $0 } }
        text("RIFF"); u32(4 + 26 + 12 + 8 + dataBytes); text("WAVE")
        text("fmt "); u32(18); u16(3); u16(2); u32(rate); u32(rate * 8); u16(8); u16(32); u16(0)
        text("fact"); u32(4); u32(totalFrames)
        text("data"); u32(dataBytes)
        let temporary = path + ".partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(descriptor >= 0, "cannot write \(temporary)")
        let writer = BufferedWriter(descriptor: descriptor)
        header.withUnsafeBytes { writer.write($0) }
        var written = 0
        while written < totalFrames {
            let count = min(frames, totalFrames - written)
            block.withUnsafeBytes { writer.write(UnsafeRawBufferPointer(rebasing: $0[0..<(count * 8)])) }
            written += count
        }
        writer.flush()
        close(descriptor)
        rename(temporary, path)
    }
}

/// Collects small writes into 64 KiB `write(2)` calls.
final class BufferedWriter {
    private let descriptor: Int32
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private var used = 0
    private(set) var total = 0

    init(descriptor: Int32) { self.descriptor = descriptor }
    deinit { buffer.deallocate() }

    func write(_ bytes: UnsafeRawBufferPointer) {
        total += bytes.count
        if used + bytes.count > buffer.count { flush() }
        if bytes.count > buffer.count {
            writeAll(bytes)
            return
        }
        UnsafeMutableRawBufferPointer(rebasing: buffer[used..<(used + bytes.count)]).copyMemory(from: bytes)
        used += bytes.count
    }

    func flush() {
        writeAll(UnsafeRawBufferPointer(rebasing: buffer[0..<used]))
        used = 0
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            precondition(n > 0, "write failed")
            offset += n
        }
    }
}
