import Dispatch
import Foundation
import Synchronization
import VoicePipeCore
import VoicePipeIO

/// `--device`, `--rate` and `--channels`, declared once for the commands that open an audio device.
struct DeviceOptions: Sendable {
    static var deviceOption: OptionBinding<Self> {
        .option("device", "name", \.device, .text, help: "The ALSA device (default 'default'; see 'voicepipe devices').")
    }
    static func rateOption(help: String = "Insist on this device rate (default: the device's native rate).") -> OptionBinding<Self> {
        .option("rate", "hz", \.rate, .integer(in: 1_000...768_000), help: help)
    }
    static func channelsOption(help: String = "Insist on this many device channels (default: the device's native count).") -> OptionBinding<Self> {
        .option("channels", "n", \.channels, .integer(in: 1...64), help: help)
    }

    /// The ALSA device named; nil for 'default'.
    var device: String?
    /// A device rate to insist on, in hertz.
    var rate: Int?
    /// A device channel count to insist on.
    var channels: Int?

    /// The device's name: `--device`, else ALSA's 'default'.
    var name: String { device ?? "default" }

    /// The rate and channel preferences from the command line.
    var preferences: DevicePreferences {
        var preferences = DevicePreferences()
        preferences.sampleRate = rate.map { SampleRate(hertz: Double($0)) }
        preferences.channelCount = channels
        return preferences
    }
}

/// Helpers shared by the commands that use audio devices.
enum DeviceSupport {
    /// "48000 Hz, 2 channels, Int16, interleaved": a device or file format as the device commands
    /// print it (the rate through Core's one rate formatter).
    static func describe(_ format: AudioFormat) -> String {
        let layout = format.channelCount > 1 ? (format.isInterleaved ? ", interleaved" : ", deinterleaved") : ""
        return "\(format.sampleRate), \(Console.count(format.channelCount, "channel")), \(format.sampleType)\(layout)"
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
