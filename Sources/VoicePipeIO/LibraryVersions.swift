@preconcurrency import CALSA
import CSampleRate
import CSndFile

/// Versions of the system C libraries VoicePipe is linked against, as they report themselves.
public enum LibraryVersions {
    /// libsndfile's version string, e.g. "libsndfile-1.2.0".
    public static var sndfile: String { String(cString: sf_version_string()) }
    /// libsamplerate's version string, e.g. "libsamplerate-0.2.2 (c) 2002-2008 Erik de Castro Lopo".
    public static var samplerate: String { String(cString: src_get_version()) }
    /// alsa-lib's version, e.g. "1.2.8".
    public static var alsa: String { String(cString: snd_asoundlib_version()) }
}
