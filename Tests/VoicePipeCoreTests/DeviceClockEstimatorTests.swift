import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The device clock line when the stamps settle away from where they began, as a file plugin's
/// do while its buffers fill, and when they only jitter: the line starts again from the settled
/// stamps (no creep, no false drift), and jitter never makes it start again.
struct DeviceClockEstimatorTests {
    /// 10 ms stamps of a 48 kHz device for `seconds`, each `offset(t)` seconds late plus jitter.
    static func feed(_ clock: inout DeviceClockEstimator, seconds: Double, jitter: Double = 0, offset: (Double) -> Double) {
        let noise = Signals.noise(amplitude: jitter, frames: Int(seconds * 100) + 1, seed: 5)
        for period in 0..<Int(seconds * 100) {
            let time = Double(period) / 100
            let instant = (time + offset(time) + noise[period]) * 1e9
            clock.add(framePosition: period * 480, instant: Int64(instant.rounded()))
        }
    }

    @Test func stampsThatSettle35MillisecondsLateStartTheLineAgainAndReadNoDrift() {
        var clock = DeviceClockEstimator(nominalRate: 48_000)
        // 35 ms of settling over the first 0.5 s, then steady (and exact) for 20 s.
        Self.feed(&clock, seconds: 20) { min($0, 0.5) * 0.07 }
        #expect(clock.restarts >= 1)
        print("settling stamps, restarting: \(clock.offsetPPM()) ppm after \(clock.restarts) restarts")
        #expect(abs(clock.offsetPPM()) < 1, "\(clock.offsetPPM()) ppm")
        // Frame 48 000 * 10 was stamped at 10.035 s: the line says so to a tenth of a millisecond.
        #expect(abs(clock.instant(ofFrame: 480_000) / 1e9 - 10.035) < 0.000_1)
    }

    @Test func withoutRestartingTheSameStampsWouldCreepAndReadAsDrift() {
        var clock = DeviceClockEstimator(nominalRate: 48_000, restartResidualSeconds: 1)
        Self.feed(&clock, seconds: 20) { min($0, 0.5) * 0.07 }
        #expect(clock.restarts == 0)
        print("settling stamps, not restarting: \(clock.offsetPPM()) ppm")
        #expect(abs(clock.offsetPPM()) > 20, "\(clock.offsetPPM()) ppm")
    }

    @Test func jitterOfAMillisecondAndRealDriftNeverStartTheLineAgain() {
        var clock = DeviceClockEstimator(nominalRate: 48_000)
        // ±1 ms of jitter on every stamp and the device 100 ppm slow, for a minute.
        Self.feed(&clock, seconds: 60, jitter: 0.001) { $0 * 100e-6 }
        #expect(clock.restarts == 0)
        #expect(abs(clock.offsetPPM() + 100) < 1, "\(clock.offsetPPM()) ppm")
    }
}
