import VoicePipeCore
import VoicePipeIO

extension RoomTalker {
    /// The person speaking into a room, from an audio file any format libsndfile reads: its
    /// channels averaged and resampled to the microphone's rate with Core's resampler.
    /// - Parameters:
    ///   - path: the file.
    ///   - sampleRate: the room's microphone rate.
    ///   - startSeconds: when on the room's timeline the talker starts (0 ... 3600).
    ///   - gainDB: a gain on the talker (−80 ... 40 dB).
    /// - Throws: ``FIFORoomError/talker(_:)`` naming why the file is not usable audio, or the
    ///   start or gain out of range.
    public static func load(path: String, sampleRate: SampleRate, startSeconds: Double = 0, gainDB: Double = 0) throws(FIFORoomError) -> RoomTalker {
        guard startSeconds.isFinite, (0...3_600).contains(startSeconds) else {
            throw .room(.outOfRange(option: "talker start (s)", value: startSeconds, range: 0...3_600))
        }
        guard gainDB.isFinite, (-80...40).contains(gainDB) else {
            throw .room(.outOfRange(option: "talker gain (dB)", value: gainDB, range: -80...40))
        }
        let file: (samples: [Float], sampleRate: SampleRate)
        do throws(AudioFileError) {
            file = try MonoAudioFile.read(path: path)
        } catch {
            throw .talker(error.message)
        }
        guard !file.samples.isEmpty else { throw .talker("'\(path)' holds no audio") }
        let resampled = try resample(file.samples, from: file.sampleRate, to: sampleRate)
        return RoomTalker(samples: resampled, startFrame: Int((startSeconds * sampleRate.hertz).rounded()), gainDB: gainDB)
    }

    /// `samples` at `output`'s rate, the whole stream (flushed).
    private static func resample(_ samples: [Float], from input: SampleRate, to output: SampleRate) throws(FIFORoomError) -> [Float] {
        guard input != output else { return samples }
        do throws(ResamplerError) {
            let resampler = try BuiltInResampler(inputRate: input, outputRate: output)
            var result = [Float]()
            let blockFrames = 4_096
            var out = [Float](repeating: 0, count: max(resampler.maxOutputFrames(forInputFrames: blockFrames), resampler.maxFlushFrames))
            var start = 0
            while start < samples.count {
                let end = min(start + blockFrames, samples.count)
                let produced = try samples.withUnsafeBufferPointer { all throws(ResamplerError) in
                    try out.withUnsafeMutableBufferPointer { buffer throws(ResamplerError) in
                        try resampler.process(UnsafeBufferPointer(rebasing: all[start..<end]), into: buffer)
                    }
                }
                result.append(contentsOf: out[0..<produced])
                start = end
            }
            let tail = try out.withUnsafeMutableBufferPointer { buffer throws(ResamplerError) in try resampler.flush(into: buffer) }
            result.append(contentsOf: out[0..<tail])
            return result
        } catch {
            throw .talker("it cannot be resampled from \(input) to \(output): \(error)")
        }
    }
}

/// A whole audio file as mono Float32: any sample type libsndfile reads, channels averaged,
/// non-finite samples as silence. For a room's talker, impulse response and noise recording.
enum MonoAudioFile {
    /// - Throws: ``AudioFileError`` when the file cannot be opened or read.
    static func read(path: String) throws(AudioFileError) -> (samples: [Float], sampleRate: SampleRate) {
        let reader = try AudioFileReader(path: path)
        let channels = reader.format.channelCount
        var samples = [Float]()
        switch reader.format.sampleType {
        case .float32:
            var block = [Float](repeating: 0, count: 4_096 * channels)
            while true {
                let frames = try block.withUnsafeMutableBufferPointer { buffer throws(AudioFileError) in try reader.read(into: buffer) }
                if frames == 0 { break }
                samples.append(contentsOf: block[0..<frames * channels])
            }
        case let type:
            // Any other type is read as raw bytes and widened here (Int16, Int32, Float64).
            let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 4_096 * reader.format.bytesPerFrame, alignment: 16)
            defer { bytes.deallocate() }
            while true {
                let frames = try reader.read(into: bytes)
                if frames == 0 { break }
                do {
                    let raw = UnsafeRawBufferPointer(bytes)
                    for index in 0..<frames * channels {
                        switch type {
                        case .int16: samples.append(SampleConversion.float(raw.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)))
                        case .int32: samples.append(Float(Double(raw.loadUnaligned(fromByteOffset: index * 4, as: Int32.self)) / 2_147_483_648))
                        case .float64: samples.append(Float(raw.loadUnaligned(fromByteOffset: index * 8, as: Double.self)))
                        case .float32: samples.append(raw.loadUnaligned(fromByteOffset: index * 4, as: Float.self))
                        }
                    }
                }
            }
        }
        var mono = [Float]()
        mono.reserveCapacity(samples.count / channels)
        for frame in 0..<samples.count / channels {
            var sum: Float = 0
            for channel in 0..<channels { sum += samples[frame * channels + channel] }
            let value = sum / Float(channels)
            mono.append(value.isFinite ? value : 0)
        }
        return (mono, reader.format.sampleRate)
    }
}
