// swift-tools-version:6.0
// The VoicePipe fuzz targets: their own SwiftPM package, so the root package's build never sees
// libFuzzer. Build and run them with `Fuzz/run` (see Fuzz/README.md), which passes
// `-sanitize=fuzzer,address` and `-enable-testing` to this package's build only: every module is
// instrumented for coverage and checked by AddressSanitizer, and the targets can reach the
// internal references they compare against (`Base64Reference`, the general JSON path).
import PackageDescription

/// A fuzz target: one file exporting `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.
func fuzzTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport"] + products.map { .product(name: $0, package: "VoicePipe") },
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    )
}

let package = Package(
    name: "VoicePipeFuzz",
    dependencies: [
        // Named explicitly: a path dependency is otherwise identified by its folder name.
        .package(name: "VoicePipe", path: ".."),
    ],
    targets: [
        // Reading typed values out of the fuzzer's bytes, and the check that stops on a broken property.
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"]),
        // libFuzzer's driver entry point, declared for Swift.
        .target(name: "CFuzzDriver"),
        fuzzTarget("fuzz-base64", ["VoicePipeCore"]),
        fuzzTarget("fuzz-wire", ["VoicePipeSession"]),
        fuzzTarget("fuzz-audio-chunk", ["VoicePipeCore", "VoicePipeSession"]),
        fuzzTarget("fuzz-websocket-assembly", ["VoicePipeClient"]),
        fuzzTarget("fuzz-audio-file", ["VoicePipeCore", "VoicePipeIO"]),
        fuzzTarget("fuzz-capture-converter", ["VoicePipeCore"]),
    ]
)
