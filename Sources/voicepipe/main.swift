import VoicePipeIO

print("voicepipe (\(LibraryVersions.sndfile), \(LibraryVersions.samplerate), alsa-lib \(LibraryVersions.alsa))")
