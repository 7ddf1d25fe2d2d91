// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "VoicePipe",
    products: [
        .library(name: "VoicePipeCore", targets: ["VoicePipeCore"]),
        .library(name: "VoicePipeIO", targets: ["VoicePipeIO"]),
        .library(name: "VoicePipeSession", targets: ["VoicePipeSession"]),
        .executable(name: "voicepipe", targets: ["voicepipe"]),
        // Per-thread heap allocation counting (interposes malloc) for tests and the benchmark package.
        .library(name: "AllocationCounter", targets: ["CAllocationCounter"]),
    ],
    targets: [
        // Pure Swift: formats, the format guard, DSP kernels, the converters. No Foundation, no I/O.
        // The standard library's rounding and square root lower to libm calls in debug builds.
        .target(name: "VoicePipeCore", linkerSettings: [.linkedLibrary("m")]),

        // System C libraries, found with pkg-config; `providers` names the Debian package to install.
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),

        // Resampler inner loops for AVX2 + FMA (per-function target attributes, chosen at run time),
        // with plain C references; installed into Core by VoicePipeIO's Acceleration.
        .target(name: "CVoicePipeKernels", linkerSettings: [.linkedLibrary("m")]),

        // Files (libsndfile), devices (ALSA), the libsamplerate backend, the accelerated kernels.
        .target(name: "VoicePipeIO", dependencies: ["VoicePipeCore", "CSampleRate", "CSndFile", "CALSA", "CVoicePipeKernels"]),

        // The wire protocol (every message type), and later the session layer and its transports.
        .target(name: "VoicePipeSession", dependencies: ["VoicePipeCore"]),

        // The command-line tool: argument handling over the modules above.
        .executableTarget(name: "voicepipe", dependencies: ["VoicePipeCore", "VoicePipeIO", "VoicePipeSession"]),

        // A sample program over the public API (kept compiling by every build).
        .executableTarget(name: "sample-convert-file", dependencies: ["VoicePipeCore", "VoicePipeIO"], path: "Samples/ConvertFile"),

        // Counts heap allocations per thread (interposes malloc); linked only into tests and benchmarks.
        .target(name: "CAllocationCounter"),

        // Signal generators and dB measurement shared by the test targets.
        .target(name: "VoicePipeTestSupport", dependencies: ["VoicePipeCore", "CAllocationCounter"]),

        .testTarget(name: "VoicePipeCoreTests", dependencies: ["VoicePipeCore", "VoicePipeTestSupport"]),
        // CSndFile lets the tests write AIFF, FLAC and Ogg fixtures with libsndfile itself.
        .testTarget(name: "VoicePipeIOTests", dependencies: ["VoicePipeIO", "VoicePipeCore", "VoicePipeTestSupport", "CSndFile"]),
        .testTarget(name: "VoicePipeSessionTests", dependencies: ["VoicePipeSession", "VoicePipeCore", "VoicePipeTestSupport"]),
        // Runs the built `voicepipe` binary; depending on the executable makes `swift test` build it.
        .testTarget(name: "VoicePipeCLITests", dependencies: ["voicepipe", "VoicePipeIO", "VoicePipeCore", "VoicePipeTestSupport"]),
    ]
)
