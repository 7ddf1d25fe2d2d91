// swift-tools-version:6.0
// The VoicePipe benchmark package: its own SwiftPM package so that `swift build` at the root never
// needs the peer libraries (libsoxr, speexdsp) it measures against. Install them with
// `scripts/install-peers`, then run `swift run -c release voicepipe-bench --help`.
import PackageDescription

let package = Package(
    name: "VoicePipeBenchmarks",
    dependencies: [
        // Named explicitly: a path dependency is otherwise identified by its folder name.
        .package(name: "VoicePipe", path: ".."),
    ],
    targets: [
        // Peer resamplers, reached through pkg-config; `providers` names the Debian package.
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        // speexdsp under a name that does not clash with the root package's `CSpeexDSP` (its echo canceller).
        .systemLibrary(name: "CBenchSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        // libsamplerate again, under a name that does not clash with the root package's `CSampleRate`.
        .systemLibrary(name: "CBenchSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        // The root package's allocation counter (it interposes malloc, so the root offers it as no
        // product): Sources/CBenchAllocationCounter is a link to ../../Sources/CAllocationCounter.
        .target(name: "CBenchAllocationCounter"),
        // Independent FMA chains: the core's multiply-add peak the resampler's arithmetic is set against.
        .target(name: "CBenchFMAPeak"),
        // malloc.h's mallinfo2, for the heap a decoded hostile message holds.
        .systemLibrary(name: "CBenchMalloc"),

        .executableTarget(
            name: "voicepipe-bench",
            dependencies: [
                .product(name: "VoicePipeCore", package: "VoicePipe"),
                .product(name: "VoicePipeIO", package: "VoicePipe"),
                // Signal generators and tone fits: the tests' own maths.
                .product(name: "VoicePipeTestSupport", package: "VoicePipe"),
                .product(name: "VoicePipeSession", package: "VoicePipe"),
                "CSoxr", "CBenchSpeexDSP", "CBenchSampleRate", "CBenchAllocationCounter", "CBenchMalloc", "CBenchFMAPeak",
            ],
            // Swift 6 mode rejects plain references to C globals (stdout, stderr) and top-level
            // benchmark state; the benchmark is single-threaded, so language mode 5 is enough.
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
