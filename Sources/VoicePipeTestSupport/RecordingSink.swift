import VoicePipeCore

/// A player that records what it is given: the format it was connected with and every sample per channel.
public final class RecordingSink: PlayerSink {
    public private(set) var connectedFormat: PlayerFormat?
    public private(set) var channels: [[Float]] = []
    public private(set) var disconnected = false
    public private(set) var connectCalls = 0

    public init() {}

    public func connect(_ format: PlayerFormat) throws(PlayerSinkError) {
        connectCalls += 1
        connectedFormat = format
        disconnected = false
        channels = Array(repeating: [], count: format.channelCount)
    }

    public func play(_ buffer: borrowing PlaybackBuffer) throws(PlayerSinkError) {
        guard let format = connectedFormat, !disconnected else { throw .notConnected }
        guard buffer.channelCount == format.channelCount else {
            throw .channelCountMismatch(expected: format.channelCount, received: buffer.channelCount)
        }
        for c in 0..<buffer.channelCount { channels[c] += buffer.copyChannel(c) }
    }

    public func disconnect() throws(PlayerSinkError) {
        disconnected = true
    }
}
