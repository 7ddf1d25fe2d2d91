import Glibc

/// The clock every device stamp is on: `CLOCK_MONOTONIC` in nanoseconds, the clock ALSA's own
/// timestamps use, so capture and playback stamps from different devices share one timeline.
public enum MonotonicClock {
    /// Nanoseconds on `CLOCK_MONOTONIC` now.
    public static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
