import Dispatch
import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// Options and helpers shared by the commands that use audio devices.
enum DeviceSupport {
    static let deviceOption = Arguments.Option(name: "device", valueName: "name", help: "The ALSA device (default 'default'; see 'voicepipe devices').")
    static let rateOption = Arguments.Option(name: "rate", valueName: "hz", help: "Insist on this device rate (default: the device's native rate).")
    static let channelsOption = Arguments.Option(name: "channels", valueName: "n", help: "Insist on this many device channels (default: the device's native count).")

    static func deviceName(_ arguments: Arguments) -> String {
        arguments.value("device") ?? "default"
    }

    /// "48000 Hz, 2 channels, Int16, interleaved": a device or file format as the device commands
    /// print it (the rate through Core's one rate formatter).
    static func describe(_ format: AudioFormat) -> String {
        let layout = format.channelCount > 1 ? (format.isInterleaved ? ", interleaved" : ", deinterleaved") : ""
        return "\(AudioFormat.describe(rate: format.sampleRate)), \(Console.count(format.channelCount, "channel")), \(format.sampleType)\(layout)"
    }

    /// The rate and channel preferences from the command line.
    static func preferences(_ arguments: Arguments, command: String) throws(CommandFailure) -> DevicePreferences {
        var preferences = DevicePreferences()
        if arguments.value("rate") != nil {
            preferences.sampleRate = Double(try arguments.integer("rate", in: 1_000...768_000, default: 48_000, command: command))
        }
        if arguments.value("channels") != nil {
            preferences.channelCount = try arguments.integer("channels", in: 1...64, default: 2, command: command)
        }
        return preferences
    }

}

/// Ctrl-C (SIGINT) and SIGTERM while it lives: the first `gentle` ones call `handler` (on a
/// dispatch queue) so the command can stop cleanly and keep what it has; one more quits at once,
/// with the usual status of a process killed by that signal, in case a device will not stop.
/// (libdispatch receives these signals itself, so restoring the default action would not be enough.)
final class StopSignals {
    private let sources: [any DispatchSourceSignal]
    private static let signals: [Int32] = [SIGINT, SIGTERM]

    init(gentle: Int = 1, _ handler: @escaping @Sendable () -> Void) {
        let received = Atomic<Int>(0)
        sources = Self.signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if received.add(1, ordering: .relaxed).newValue > gentle { _exit(128 + number) }
                handler()
            }
            source.resume()
            return source
        }
    }

    deinit {
        sources.forEach { $0.cancel() }
        Self.signals.forEach { signal($0, SIG_DFL) }
    }
}
