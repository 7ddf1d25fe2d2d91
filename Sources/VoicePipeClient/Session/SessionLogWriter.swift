import VoicePipeCore
import VoicePipeIO
import VoicePipeSession

/// Writes a session's traffic as JSON Lines: every message both ways, with its direction and the
/// session time, and transport openings and closings. Audio payloads are summarised (rate, sample
/// count, peak), never copied, so an hour of session makes a small file.
///
/// ```
/// {"at":0.002,"direction":"sent","message":{"type":"session.start","sessionId":"s-1","context":{}}}
/// {"at":0.034,"direction":"sent","message":{"type":"audio.chunk","sampleRate":16000,"samples":512,"peakDBFS":-8.1}}
/// {"at":1.871,"direction":"received","message":{"type":"transcript","role":"user","text":"…","final":true}}
/// ```
///
/// Sendable, so a driver's `@Sendable` observer can record into it: the writer and its first
/// failure live behind a lock.
public final class SessionLogWriter: Sendable {
    private struct Output {
        let writer: JSONLinesWriter
        var failure: JSONLinesError?
    }

    private let output: Guarded<Output>
    private let captureSampleRate: SampleRate

    /// The first write failure; the log stops there and the session goes on.
    public var failure: JSONLinesError? { output.withLock { $0.failure } }

    /// Creates (or truncates) `path`; captured frames are described at `captureSampleRate`.
    /// Each line is written out as it is recorded, so a session that hangs has its log so far.
    /// - Throws: ``JSONLinesError/cannotCreate(path:reason:code:)``.
    public init(path: String, captureSampleRate: SampleRate = .capture) throws(JSONLinesError) {
        output = Guarded(Output(writer: try JSONLinesWriter(path: path)))
        self.captureSampleRate = captureSampleRate
    }

    /// Records one driver event (notes and refusals are not traffic and are left out).
    public func record(_ event: SessionEvent, at instant: SessionInstant) {
        switch event {
        case .sent(let message):
            write(instant, ["direction": .string("sent"), "message": Self.summary(of: message)])
        case .frameSent(let count, let level):
            write(instant, ["direction": .string("sent"), "message": Self.audioSummary(sampleRate: captureSampleRate, sampleCount: count, peakDBFS: level.isDigitalSilence ? nil : level.dBFS)])
        case .received(let envelope):
            var message = Self.summary(of: envelope.message)
            if case .object(var object) = message {
                for (key, value) in envelope.extras where object[key] == nil { object[key] = value }
                message = .object(object)
            }
            write(instant, ["direction": .string("received"), "message": message])
        case .malformed(let reason):
            write(instant, ["direction": .string("received"), "malformed": .string(reason)])
        case .transport(.opened):
            write(instant, ["transport": .string("opened")])
        case .transport(.closed(let reason)):
            write(instant, ["transport": .string("closed"), "reason": .string(reason.description)])
        case .transport, .note, .refused, .playbackFailed, .captureProblem, .unknownContent, .fileFrameTaken:
            break
        }
    }

    /// Writes what is buffered; call when the session ends.
    public func finish() {
        output.withLock { output in
            guard output.failure == nil else { return }
            do throws(JSONLinesError) {
                try output.writer.flush()
            } catch {
                output.failure = error
            }
        }
    }

    private func write(_ instant: SessionInstant, _ fields: JSONObject) {
        var line: JSONObject = ["at": .number((instant.seconds * 1000).rounded() / 1000)]
        for (key, value) in fields { line[key] = value }
        let text = JSONWriter.string(.object(line))
        output.withLock { output in
            guard output.failure == nil else { return }
            do throws(JSONLinesError) {
                try output.writer.append(line: text)
                try output.writer.flush()
            } catch {
                output.failure = error
            }
        }
    }

    /// The message as JSON, with an `audio.chunk`'s samples replaced by their count and peak.
    static func summary(of message: WireMessage) -> JSONValue {
        if case .audioChunk(let chunk) = message {
            let peak = chunk.samples.reduce(0) { max($0, abs(Int($1))) }
            return audioSummary(sampleRate: chunk.sampleRate, sampleCount: chunk.samples.count, peakDBFS: peak == 0 ? nil : Elementary.decibels(amplitudeRatio: Double(peak) / 32_768))
        }
        return (try? JSONParser.parse(WireCodec.encode(message))) ?? .string(WireCodec.encode(message))
    }

    static func audioSummary(sampleRate: SampleRate, sampleCount: Int, peakDBFS: Double?) -> JSONValue {
        .object([
            "type": .string(MessageType.audioChunk.rawValue), "sampleRate": .integer(sampleRate.roundedHertz), "samples": .integer(sampleCount),
            "peakDBFS": peakDBFS.map { .number(($0 * 10).rounded() / 10) } ?? .null,
        ])
    }
}
