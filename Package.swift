// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "VoicePipe",
    products: [
        // Every layer under one product, for integrators; the layers stay products of their own.
        .library(name: "VoicePipe", targets: ["VoicePipe"]),
        .library(name: "VoicePipeCore", targets: ["VoicePipeCore"]),
        .library(name: "VoicePipeIO", targets: ["VoicePipeIO"]),
        .library(name: "VoicePipeSession", targets: ["VoicePipeSession"]),
        .library(name: "VoicePipeProtocols", targets: ["VoicePipeProtocols"]),
        .library(name: "VoicePipeClient", targets: ["VoicePipeClient"]),
        .executable(name: "voicepipe", targets: ["voicepipe"]),
        // For tests and the benchmark package: signal generators, dB measurement, fakes. (The
        // allocation counter, which interposes malloc, is no product: see AllocationCounting.)
        .library(name: "VoicePipeTestSupport", targets: ["VoicePipeTestSupport"]),
    ],
    targets: [
        // Formats, the format guard, DSP (with the kernel set chosen once for the CPU), the
        // converters, base64 and audio.chunk, the playback pipeline, the device contracts.
        // No Foundation, no I/O. The standard library's rounding and square root lower to libm
        // calls in debug builds.
        .target(name: "VoicePipeCore", dependencies: ["CVoicePipeKernels"], linkerSettings: [.linkedLibrary("m")]),
        // Lock annotations for ThreadSanitizer (empty unless built with --sanitize=thread).
        .target(name: "CThreadAnnotations"),

        // System C libraries, found with pkg-config; `providers` names the Debian package to install.
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        // The WebSocket client (TLS through OpenSSL), and libcrypto's SHA-256 and HMAC for SigV4.
        .systemLibrary(name: "CWebSockets", pkgConfig: "libwebsockets", providers: [.apt(["libwebsockets-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // Echo control: speexdsp's canceller and preprocessor (C), and WebRTC's audio processing
        // module 0.3 (C++) behind CWebRTCShim, the C interface Swift calls. The shim reaches the
        // library's headers through include/webrtc, a link to where Debian's
        // libwebrtc-audio-processing-dev puts them: their pkg-config file also carries -D flags,
        // which SwiftPM refuses with a warning on every build, and the shim restates those.
        // Neither library is linked: VoicePipeIO opens both at run time (EchoLibrary), so a machine
        // without one runs everything but that backend. The -dev packages are for the headers;
        // speexdsp's are in /usr/include, and its pkg-config file would only add -lspeexdsp.
        .systemLibrary(name: "CSpeexDSP"),
        .target(name: "CWebRTCShim"),

        // Resampler and conversion inner loops for AVX2 + FMA (per-function target attributes),
        // their plain C references, and the CPU check that chooses them. Pure computation.
        .target(name: "CVoicePipeKernels", linkerSettings: [.linkedLibrary("m")]),

        // Files (libsndfile), devices (ALSA), the libsamplerate backend, the echo-control backends.
        .target(name: "VoicePipeIO", dependencies: ["VoicePipeCore", "CSampleRate", "CSndFile", "CALSA", "CThreadAnnotations", "CSpeexDSP", "CWebRTCShim"]),

        // The pure half of a session: the wire protocol (every message type), and the session's
        // state machine. Core only: no Foundation, no clock, no I/O.
        .target(name: "VoicePipeSession", dependencies: ["VoicePipeCore"]),

        // The pure halves of the protocols the client speaks: the embedded runtime's state machine,
        // joining WebSocket fragments, and SigV4's request building (the hashes are passed in).
        // Core and Session only: no Foundation, no C modules, no clock, no I/O.
        .target(name: "VoicePipeProtocols", dependencies: ["VoicePipeCore", "VoicePipeSession"]),

        // The effectful half: the capture pump (device tap -> ring -> converter thread), JSON Lines
        // on descriptors, the transports (JSON Lines, WebSocket), SigV4's hashes through libcrypto,
        // credentials and the clock, and the session driver built on them.
        .target(name: "VoicePipeClient", dependencies: ["VoicePipeCore", "VoicePipeIO", "VoicePipeSession", "VoicePipeProtocols", "CWebSockets", "CCrypto"]),

        // Re-exports the four layers above, so an integrator's manifest names one product.
        .target(name: "VoicePipe", dependencies: ["VoicePipeCore", "VoicePipeIO", "VoicePipeSession", "VoicePipeProtocols", "VoicePipeClient"]),

        // The command-line tool: argument handling and printing over the modules above.
        .executableTarget(name: "voicepipe", dependencies: ["VoicePipeCore", "VoicePipeIO", "VoicePipeSession", "VoicePipeClient"]),

        // Sample programs over the public API (kept compiling by every build); the second links
        // VoicePipeCore alone, and a test checks that it needs none of the system audio libraries.
        .executableTarget(name: "sample-convert-file", dependencies: ["VoicePipeCore", "VoicePipeIO"], path: "Samples/ConvertFile"),
        .executableTarget(name: "sample-capture-tone", dependencies: ["VoicePipeCore"], path: "Samples/CaptureTone"),
        // A session with a WAV file and the embedded runtime; runtime messages decoded into the
        // Float32 buffers a player takes; and, as a tester would write it, the playback format pinned.
        .executableTarget(name: "sample-session-file", dependencies: ["VoicePipeCore", "VoicePipeIO", "VoicePipeSession", "VoicePipeClient"], path: "Samples/SessionFile"),
        .executableTarget(name: "sample-decode-reply", dependencies: ["VoicePipeCore", "VoicePipeSession", "VoicePipeClient"], path: "Samples/DecodeReply"),
        // The load run of RELIABILITY.md: generated speech streamed at full speed through a runtime
        // that replies and is interrupted, audio counted and checksummed at both ends, memory sampled.
        // Its own process, so the memory it samples is the session's alone; a test runs a short one.
        .executableTarget(name: "voicepipe-load", dependencies: ["VoicePipeClient", "VoicePipeTestSupport"]),
        .testTarget(name: "PlaybackFormatTests", dependencies: ["VoicePipeCore", "VoicePipeSession"], path: "Samples/PlaybackFormatTests"),

        // Counts heap allocations per thread by interposing malloc, so only test targets link it
        // (no product offers it); the benchmark package builds the same C file through a link in
        // Benchmarks/Sources.
        .target(name: "CAllocationCounter"),
        .target(name: "AllocationCounting", dependencies: ["CAllocationCounter"]),

        // Signal generators, dB measurement, fakes (audio devices, a manual session clock), a
        // whole-file reader and libsndfile-written fixtures, shared by the tests and the benchmark package.
        .target(name: "VoicePipeTestSupport", dependencies: ["VoicePipeCore", "VoicePipeIO", "VoicePipeSession", "VoicePipeClient", "CSndFile", "CThreadAnnotations"]),

        .testTarget(name: "VoicePipeCoreTests", dependencies: ["VoicePipeCore", "VoicePipeTestSupport", "AllocationCounting"]),
        // CSndFile lets the tests write AIFF, FLAC and Ogg fixtures with libsndfile itself; Scripts
        // holds the echo tests' Python speech scorer (STOI, PESQ), run from the source tree.
        .testTarget(name: "VoicePipeIOTests", dependencies: ["VoicePipeIO", "VoicePipeCore", "VoicePipeTestSupport", "AllocationCounting", "CSndFile"],
                    exclude: ["Scripts"]),
        .testTarget(name: "VoicePipeSessionTests", dependencies: ["VoicePipeSession", "VoicePipeCore", "VoicePipeTestSupport"]),
        .testTarget(name: "VoicePipeProtocolsTests", dependencies: ["VoicePipeProtocols", "VoicePipeSession", "VoicePipeCore", "VoicePipeTestSupport"]),
        // Fixtures: the AWS SigV4 test suite's vectors. Scripts run from the source tree (the
        // botocore agreement test), so they are no resources.
        .testTarget(name: "VoicePipeClientTests", dependencies: ["VoicePipeClient", "VoicePipeProtocols", "VoicePipeIO", "VoicePipeCore", "VoicePipeTestSupport"],
                    exclude: ["Scripts"], resources: [.copy("Fixtures")]),
        // Runs the built `voicepipe` binary; depending on the executable makes `swift test` build it.
        // CSndFile names the formats of the libsndfile-written fixtures.
        .testTarget(name: "VoicePipeCLITests", dependencies: ["voicepipe", "voicepipe-load", "sample-capture-tone", "sample-convert-file", "sample-session-file", "sample-decode-reply", "VoicePipeIO", "VoicePipeCore", "VoicePipeTestSupport", "CSndFile"]),
    ],
    // The WebRTC shim's C++ (the library's 0.3 headers need C++11).
    cxxLanguageStandard: .cxx14
)
