import Foundation
import VoicePipeCore
import VoicePipeTestSupport

/// One kernel cell's figures.
struct KernelRow: Codable {
    var name: String
    var kernel: String
    var implementation: String
    var data: String
    /// Bytes one operation counts: input bytes, except audio.chunk JSON (bytes of JSON) and base64
    /// decoding (decoded bytes), so both base64 directions count the same binary payload.
    var bytesPerOperation: Int
    var operationsPerPass: Int
    var passesPerRepetition: Int
    var repetitions: Int
    var gigabytesPerSecond: Spread
    var megaSamplesPerSecond: Double?
    var xRealTime: Double?
    /// The row this one is compared with (memcpy of the same bytes, or Foundation).
    var reference: String?
    /// Median GB/s over the reference's median GB/s.
    var ratioToReference: Double?
    var allocationsPerOperation: Double
    var wallOverCPU: Double
}

/// The per-stage kernels, each through VoicePipe's public API, with memcpy and Foundation beside them.
final class KernelBenchmark {
    /// A kernel: `run(n)` performs the operation n times.
    struct Case {
        let name: String
        let kernel: String
        let implementation: String
        let data: String
        let bytesPerOperation: Int
        let samplesPerOperation: Int?
        let sampleRate: Int?
        let operationsPerPass: Int
        let reference: String?
        let run: (Int) -> Void
    }

    private(set) var cases: [Case] = []
    private(set) var timed: [TimedCell] = []
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    private var keep: [AnyObject] = []

    init(signalSeconds: Double, filter: (String) -> Bool) {
        build(signalSeconds: signalSeconds)
        cases = cases.filter { filter($0.name) }
        timed = cases.map { kase in TimedCell(name: kase.name, maxPasses: 100_000) { kase.run(kase.operationsPerPass) } }
    }

    deinit { buffers.forEach { $0.deallocate() } }

    private func buffer<T>(_ type: T.Type, _ count: Int) -> UnsafeMutableBufferPointer<T> {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count * MemoryLayout<T>.stride, 1), alignment: 64)
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        buffers.append(raw)
        return raw.bindMemory(to: T.self)
    }

    private func add(_ name: String, kernel: String, implementation: String, data: String, bytes: Int, samples: Int? = nil, rate: Int? = nil,
                     operations: Int, reference: String? = nil, run: @escaping (Int) -> Void) {
        cases.append(Case(name: name, kernel: kernel, implementation: implementation, data: data, bytesPerOperation: bytes,
                          samplesPerOperation: samples, sampleRate: rate, operationsPerPass: max(operations, 1), reference: reference, run: run))
    }

    // swiftlint:disable:next function_body_length
    private func build(signalSeconds: Double) {
        // Sample conversion and the peak meter. A conversion reads one format and writes the other
        // (Int16 → Float32: 2 + 4 bytes a sample), so its ceiling is a memcpy moving the same
        // traffic: 3 bytes a sample read and 3 written. GB/s counts bytes read plus bytes written in
        // these rows, the ceiling's included. Three sizes: one chunk (cache-hot), the signal length
        // (in the last-level cache or just past it), and a buffer ten times that (main memory).
        let longSamples = Int(signalSeconds * 24_000)
        let chunkSamples = 480
        let program = Signals.program(sampleRate: 24_000, frames: longSamples, channel: 0).map(Float.init)
        let largeSamples = longSamples * 10
        let int16Playback = buffer(Int16.self, largeSamples)
        for i in 0..<largeSamples { int16Playback[i] = Int16(clamping: Int((program[i % longSamples] * 32768).rounded())) }
        let floatPlayback = buffer(Float.self, largeSamples)
        let int16Long = UnsafeBufferPointer(rebasing: int16Playback[0..<longSamples])

        let captureSamples = Int(signalSeconds * 16_000)
        let frameSamples = 320
        let capture = Signals.program(sampleRate: 16_000, frames: captureSamples, channel: 1).map(Float.init)
        let floatCapture = buffer(Float.self, captureSamples * 10)
        for i in 0..<captureSamples * 10 { floatCapture[i] = capture[i % captureSamples] }
        let int16Capture = buffer(Int16.self, captureSamples * 10)
        SampleConversion.int16(UnsafeBufferPointer(floatCapture), into: int16Capture)
        let int16Frame = UnsafeMutableBufferPointer(rebasing: int16Capture[0..<frameSamples])

        let copyTarget = buffer(UInt8.self, largeSamples * 3)
        let copySource = buffer(UInt8.self, largeSamples * 3)
        let sizes: [(label: String, playback: Int, capture: Int, what: String)] = [
            ("chunk", chunkSamples, frameSamples, "one 20 ms chunk, cache-hot"),
            ("long", longSamples, captureSamples, "\(Format.seconds(signalSeconds)) buffer"),
            ("large", largeSamples, captureSamples * 10, "\(Format.seconds(signalSeconds * 10)) buffer (main memory)"),
        ]
        /// The same-traffic memcpy row for `samples` mono samples at `rate`: its name and data label.
        func addCeiling(rate: Int, samples: Int, operations: Int, size: String, what: String) -> (name: String, data: String) {
            let name = "kernel/memcpy/traffic-\(rate / 1000)k-\(size)"
            let data = "\(rate / 1000) kHz mono, \(what): \(Format.bytes(samples * 6)) moved"
            let copyBytes = samples * 3
            add(name, kernel: "memcpy (ceiling)", implementation: "memcpy of 3 bytes a sample (the same traffic)", data: data,
                bytes: samples * 6, samples: samples, rate: rate, operations: operations) { n in
                for _ in 0..<n { UnsafeMutableRawPointer(copyTarget.baseAddress!).copyMemory(from: copySource.baseAddress!, byteCount: copyBytes) }
                BlackHole.consume(Int(copyTarget[0]))
            }
            return (name, data)
        }
        for size in sizes {
            let operations = max(longSamples / size.playback, 1)
            let (ceiling, traffic) = addCeiling(rate: 24_000, samples: size.playback, operations: operations, size: size.label, what: size.what)
            let source = UnsafeBufferPointer(rebasing: int16Playback[0..<size.playback])
            let target = UnsafeMutableBufferPointer(rebasing: floatPlayback[0..<size.playback])
            add("kernel/int16-to-float/sampleconversion-\(size.label)", kernel: "Int16 → Float32", implementation: "VoicePipe SampleConversion.float(_:into:)", data: traffic,
                bytes: size.playback * 6, samples: size.playback, rate: 24_000, operations: operations, reference: ceiling) { n in
                for _ in 0..<n { SampleConversion.float(source, into: target) }
                BlackHole.consume(target[1])
            }
            let playback = try! PlaybackConverter()
            keep.append(playback)
            add("kernel/int16-to-float/playbackconverter-\(size.label)", kernel: "Int16 → deinterleaved Float32", implementation: "VoicePipe PlaybackConverter() (24 kHz → 24 kHz)", data: traffic,
                bytes: size.playback * 6, samples: size.playback, rate: 24_000, operations: operations, reference: ceiling) { n in
                for _ in 0..<n { try! playback.process(source) { BlackHole.consume($0.frameCount) } }
            }

            let captureOperations = max(captureSamples / size.capture, 1)
            let (captureCeiling, captureTraffic) = addCeiling(rate: 16_000, samples: size.capture, operations: captureOperations, size: size.label, what: size.what)
            let floats = UnsafeBufferPointer(rebasing: floatCapture[0..<size.capture])
            let ints = UnsafeMutableBufferPointer(rebasing: int16Capture[0..<size.capture])
            add("kernel/float-to-int16/sampleconversion-\(size.label)", kernel: "Float32 → Int16", implementation: "VoicePipe SampleConversion.int16(_:into:)", data: captureTraffic,
                bytes: size.capture * 6, samples: size.capture, rate: 16_000, operations: captureOperations, reference: captureCeiling) { n in
                for _ in 0..<n { SampleConversion.int16(floats, into: ints) }
                BlackHole.consume(Int(ints[1]))
            }
            add("kernel/float-to-int16/measuring-\(size.label)", kernel: "Float32 → Int16 + peaks", implementation: "VoicePipe SampleConversion.int16(_:into:) measuring peaks (the capture path)", data: captureTraffic,
                bytes: size.capture * 6, samples: size.capture, rate: 16_000, operations: captureOperations, reference: captureCeiling) { n in
                for _ in 0..<n { BlackHole.consume(SampleConversion.int16Measuring(floats, into: ints).int16Peak) }
            }
            let readOnly = UnsafeBufferPointer(ints)
            add("kernel/peak/peaklevel-\(size.label)", kernel: "peak meter", implementation: "VoicePipe PeakLevel(float:int16:) (reads both, writes nothing)", data: captureTraffic,
                bytes: size.capture * 6, samples: size.capture, rate: 16_000, operations: captureOperations, reference: captureCeiling) { n in
                for _ in 0..<n { BlackHole.consume(PeakLevel(float: floats, int16: readOnly).peak) }
            }
        }

        // The voice gate's speech-band filter (two Double biquads and the sum of squares) over one
        // 32 ms capture frame, which a session runs on every frame: one sample a step, and eight
        // a step where the CPU has AVX2 and FMA.
        let meterFrame = UnsafeBufferPointer(rebasing: int16Capture[0..<512])
        let high = BiquadPair.Section.butterworth(highPass: true, cutoff: 300, sampleRate: 16_000)
        let low = BiquadPair.Section.butterworth(highPass: false, cutoff: 3_400, sampleRate: 16_000)
        for block in [false, true] where !block || BiquadPair.blockKernelAvailable {
            var pair = BiquadPair(high, low, usesBlockKernel: block)
            add("kernel/speech-band/\(block ? "eight-a-step" : "one-a-step")", kernel: "speech-band filter + Σ y²",
                implementation: block ? "VoicePipe BiquadPair, eight samples a step (AVX2 + FMA)" : "VoicePipe BiquadPair, one sample a step",
                data: "one 32 ms frame at 16 kHz, cache-hot", bytes: 1_024, samples: 512, rate: 16_000,
                operations: max(captureSamples / 512, 1), reference: block ? "kernel/speech-band/one-a-step" : nil) { n in
                for _ in 0..<n { BlackHole.consume(Float(pair.sumOfSquares(meterFrame))) }
            }
        }

        // Base64: VoicePipe (buffer API and String/array API) against Foundation.
        var generator = SplitMix64(seed: 64)
        for (label, size) in [("640B", 640), ("1MiB", 1 << 20)] {
            let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next() >> 33) }
            let data = Data(bytes)
            let text = data.base64EncodedString()
            let textBytes = Array(text.utf8)
            let encoded = buffer(UInt8.self, Base64.encodedCount(forByteCount: size))
            let decoded = buffer(UInt8.self, size)
            let operations = max(1, (1 << 20) / size)
            let what = size == 640 ? "640 B (20 ms of 16 kHz Int16)" : "1 MiB"
            let input = buffer(UInt8.self, size)
            _ = input.initialize(from: bytes)
            let textInput = buffer(UInt8.self, textBytes.count)
            _ = textInput.initialize(from: textBytes)
            add("kernel/base64-encode/foundation-\(label)", kernel: "base64 encode", implementation: "Foundation Data.base64EncodedString()", data: what,
                bytes: size, operations: operations) { n in
                for _ in 0..<n { BlackHole.consume(data.base64EncodedString().utf8.count) }
            }
            add("kernel/base64-encode/voicepipe-buffer-\(label)", kernel: "base64 encode", implementation: "VoicePipe Base64.encode(_:into:)", data: what,
                bytes: size, operations: operations, reference: "kernel/base64-encode/foundation-\(label)") { n in
                let source = UnsafeRawBufferPointer(input), target = UnsafeMutableRawBufferPointer(encoded)
                for _ in 0..<n { BlackHole.consume(Base64.encode(source, into: target)) }
            }
            add("kernel/base64-encode/voicepipe-string-\(label)", kernel: "base64 encode", implementation: "VoicePipe Base64.encode(_:) → String", data: what,
                bytes: size, operations: operations, reference: "kernel/base64-encode/foundation-\(label)") { n in
                for _ in 0..<n { BlackHole.consume(Base64.encode(bytes).utf8.count) }
            }
            add("kernel/base64-decode/foundation-\(label)", kernel: "base64 decode", implementation: "Foundation Data(base64Encoded:)", data: what,
                bytes: size, operations: operations) { n in
                for _ in 0..<n { BlackHole.consume(Data(base64Encoded: text)!.count) }
            }
            add("kernel/base64-decode/voicepipe-buffer-\(label)", kernel: "base64 decode", implementation: "VoicePipe Base64.decode(_:into:)", data: what,
                bytes: size, operations: operations, reference: "kernel/base64-decode/foundation-\(label)") { n in
                let source = UnsafeRawBufferPointer(textInput), target = UnsafeMutableRawBufferPointer(decoded)
                for _ in 0..<n { BlackHole.consume(try! Base64.decode(source, into: target)) }
            }
            add("kernel/base64-decode/voicepipe-array-\(label)", kernel: "base64 decode", implementation: "VoicePipe Base64.decode(_:) String → [UInt8]", data: what,
                bytes: size, operations: operations, reference: "kernel/base64-decode/foundation-\(label)") { n in
                for _ in 0..<n { BlackHole.consume(try! Base64.decode(text).count) }
            }
        }

        // audio.chunk JSON: encode 20 ms of 16 kHz capture, decode 20 ms of 24 kHz reply audio.
        let captureFrame = UnsafeBufferPointer(int16Frame)
        let messageCount = AudioChunkJSON.encodedCount(sampleCount: frameSamples, sampleRate: 16_000)
        let message = buffer(UInt8.self, messageCount)
        let encodeOps = max(1, (1 << 20) / messageCount)
        let encodeWhat = "20 ms of 16 kHz Int16 → \(messageCount) B of JSON"
        let frameData = Data(UnsafeRawBufferPointer(captureFrame))
        add("kernel/audio.chunk-encode/foundation-jsonserialization", kernel: "audio.chunk JSON encode", implementation: "Foundation base64EncodedString + JSONSerialization", data: encodeWhat,
            bytes: messageCount, samples: frameSamples, rate: 16_000, operations: encodeOps) { n in
            for _ in 0..<n {
                let object: [String: Any] = ["type": "audio.chunk", "data": frameData.base64EncodedString(), "sampleRate": 16_000]
                BlackHole.consume(try! JSONSerialization.data(withJSONObject: object).count)
            }
        }
        add("kernel/audio.chunk-encode/voicepipe-buffer", kernel: "audio.chunk JSON encode", implementation: "VoicePipe AudioChunkJSON.encode(_:sampleRate:into:)", data: encodeWhat,
            bytes: messageCount, samples: frameSamples, rate: 16_000, operations: encodeOps, reference: "kernel/audio.chunk-encode/foundation-jsonserialization") { n in
            let target = UnsafeMutableRawBufferPointer(message)
            for _ in 0..<n { BlackHole.consume(AudioChunkJSON.encode(captureFrame, sampleRate: 16_000, into: target)) }
        }
        add("kernel/audio.chunk-encode/voicepipe-string", kernel: "audio.chunk JSON encode", implementation: "VoicePipe AudioChunkJSON.encode(_:sampleRate:) → String", data: encodeWhat,
            bytes: messageCount, samples: frameSamples, rate: 16_000, operations: encodeOps, reference: "kernel/audio.chunk-encode/foundation-jsonserialization") { n in
            for _ in 0..<n { BlackHole.consume(AudioChunkJSON.encode(captureFrame, sampleRate: 16_000).utf8.count) }
        }
        let reply = UnsafeBufferPointer(rebasing: int16Long[0..<chunkSamples])
        let replyText = AudioChunkJSON.encode(reply, sampleRate: 24_000)
        let replyBytes = buffer(UInt8.self, replyText.utf8.count)
        _ = replyBytes.initialize(from: replyText.utf8)
        let replyData = Data(replyText.utf8)
        let replySamples = buffer(Int16.self, chunkSamples)
        let decodeOps = max(1, (1 << 20) / replyBytes.count)
        let decodeWhat = "\(replyBytes.count) B of JSON → 20 ms of 24 kHz Int16"
        add("kernel/audio.chunk-decode/foundation-jsonserialization", kernel: "audio.chunk JSON decode", implementation: "Foundation JSONSerialization + Data(base64Encoded:)", data: decodeWhat,
            bytes: replyBytes.count, samples: chunkSamples, rate: 24_000, operations: decodeOps) { n in
            for _ in 0..<n {
                let object = try! JSONSerialization.jsonObject(with: replyData) as! [String: Any]
                BlackHole.consume(Data(base64Encoded: object["data"] as! String)!.count + (object["sampleRate"] as! Int))
            }
        }
        add("kernel/audio.chunk-decode/voicepipe-buffer", kernel: "audio.chunk JSON decode", implementation: "VoicePipe AudioChunkJSON.parse + decodeSamples(of:in:into:)", data: decodeWhat,
            bytes: replyBytes.count, samples: chunkSamples, rate: 24_000, operations: decodeOps, reference: "kernel/audio.chunk-decode/foundation-jsonserialization") { n in
            let source = UnsafeRawBufferPointer(replyBytes)
            for _ in 0..<n {
                guard case .chunk(let header) = AudioChunkJSON.parse(source) else { fatalError("not an audio.chunk") }
                BlackHole.consume(try! AudioChunkJSON.decodeSamples(of: header, in: source, into: replySamples))
            }
        }
        add("kernel/audio.chunk-decode/voicepipe-string", kernel: "audio.chunk JSON decode", implementation: "VoicePipe AudioChunkJSON.decode(_:) String → AudioChunk", data: decodeWhat,
            bytes: replyBytes.count, samples: chunkSamples, rate: 24_000, operations: decodeOps, reference: "kernel/audio.chunk-decode/foundation-jsonserialization") { n in
            for _ in 0..<n {
                guard case .chunk(let chunk) = AudioChunkJSON.decode(replyText) else { fatalError("not an audio.chunk") }
                BlackHole.consume(chunk.samples.count)
            }
        }
    }

    func run(_ schedule: RoundRobin, progress: Progress) {
        schedule.run(timed, label: "kernels", progress: progress)
    }

    func rows() -> [KernelRow] {
        var rows: [KernelRow] = zip(cases, timed).map { kase, cell in
            let cpu = cell.cpuPerPass
            let bytes = Double(kase.bytesPerOperation * kase.operationsPerPass)
            let samples = kase.samplesPerOperation.map { Double($0 * kase.operationsPerPass) / cpu.median }
            // Allocations per operation, counted over a batch after the timed repetitions.
            let batch = min(kase.operationsPerPass, 1_000)
            let allocations = countAllocations { kase.run(batch) }
            return KernelRow(
                name: kase.name, kernel: kase.kernel, implementation: kase.implementation, data: kase.data,
                bytesPerOperation: kase.bytesPerOperation, operationsPerPass: kase.operationsPerPass,
                passesPerRepetition: cell.passes, repetitions: cell.cpuTimes.count,
                gigabytesPerSecond: cpu.rate(work: bytes / 1e9),
                megaSamplesPerSecond: samples.map { $0 / 1e6 },
                xRealTime: samples.flatMap { perSecond in kase.sampleRate.map { perSecond / Double($0) } },
                reference: kase.reference, ratioToReference: nil,
                allocationsPerOperation: Double(allocations) / Double(batch), wallOverCPU: cell.wallOverCPU)
        }
        for i in rows.indices {
            if let reference = rows[i].reference, let other = rows.first(where: { $0.name == reference }) {
                rows[i].ratioToReference = rows[i].gigabytesPerSecond.median / other.gigabytesPerSecond.median
            }
        }
        return rows
    }
}
