#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CFuzzDriver

/// The fuzzer's bytes read front to back as typed values. Reading past the end gives zeros (and
/// empty byte ranges), so every input, however short, is a valid description of a case.
public struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : max(size, 0))
    }

    /// Whether any bytes are left.
    public var isEmpty: Bool { offset >= bytes.count }

    /// The bytes not read yet.
    public var rest: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[min(offset, bytes.count)...]) }

    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    public mutating func uint32() -> UInt32 { UInt32(uint16()) | UInt32(uint16()) << 16 }

    public mutating func uint64() -> UInt64 { UInt64(uint32()) | UInt64(uint32()) << 32 }

    /// Up to `count` bytes (fewer at the end of the input).
    public mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer {
        let start = min(offset, bytes.count)
        let end = min(start + max(count, 0), bytes.count)
        offset = end
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// Every byte left.
    public mutating func remaining() -> UnsafeRawBufferPointer {
        bytes(bytes.count - min(offset, bytes.count))
    }
}

/// Stops the run when a property does not hold: prints what broke and aborts, so libFuzzer records
/// the input as a crash.
public func fuzzRequire(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    guard !condition else { return }
    let text = "property failed at \(file):\(line): \(message())\n"
    var bytes = Array(text.utf8)
    _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    abort()
}

/// The body of a fuzz target: one input, its bytes and count; returns 0.
public typealias FuzzBody = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer's loop over `body` with the command line's libFuzzer flags.
///
/// SwiftPM links an executable's entry point as `<module>_main`, so a fuzz target exports that
/// name (`@_cdecl`) and calls this, rather than relying on libFuzzer's own `main`.
public func runFuzzer(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ body: FuzzBody) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, body)
}
