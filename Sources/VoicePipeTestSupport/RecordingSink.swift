import VoicePipeCore

/// A player that records what it is given: the format it was opened with and every sample per channel.
public final class RecordingSink: PlayerSink {
    public private(set) var openedFormat: PlayerFormat?
    public private(set) var channels: [[Float]] = []
    public private(set) var closed = false
    public private(set) var openCalls = 0

    public init() {}

    public func open(_ format: PlayerFormat) throws(PlayerSinkError) {
        openCalls += 1
        openedFormat = format
        channels = Array(repeating: [], count: format.channelCount)
    }

    public func play(_ buffer: PlaybackBuffer) throws(PlayerSinkError) {
        guard let format = openedFormat, !closed else { throw .notConnected }
        guard buffer.channelCount == format.channelCount else {
            throw .channelCountMismatch(expected: format.channelCount, received: buffer.channelCount)
        }
        for c in 0..<buffer.channelCount { channels[c] += buffer.channel(c) }
    }

    public func close() throws(PlayerSinkError) {
        closed = true
    }
}
