/// Audio counted as it passes a point: chunks, samples, and a CRC-32 over the samples as Int16
/// little-endian bytes, in order. Two points that saw the same audio have equal tallies; a lost,
/// repeated, reordered or altered sample makes them differ (the count, or the checksum).
///
/// The CRC is the IEEE one (zlib's `crc32`, Python's `zlib.crc32`, reflected polynomial
/// 0xEDB88320, initial and final value inverted), chained across chunks, so a tally can be
/// compared with one a runtime written in another language keeps.
public struct AudioTally: Sendable, Hashable, CustomStringConvertible {
    /// Chunks added.
    public private(set) var chunks = 0
    /// Samples added.
    public private(set) var samples = 0
    /// CRC-32 of every sample added so far, as Int16 little-endian bytes; 0 when none.
    public private(set) var crc32: UInt32 = 0

    public init() {}

    /// A tally with these figures (one a runtime reported, to compare with).
    public init(chunks: Int, samples: Int, crc32: UInt32) {
        self.chunks = chunks
        self.samples = samples
        self.crc32 = crc32
    }

    /// Adds one chunk of samples.
    public mutating func add(_ chunk: UnsafeBufferPointer<Int16>) {
        chunks += 1
        samples += chunk.count
        crc32 = CRC32.update(crc32, samples: chunk)
    }

    /// Adds one chunk of samples.
    public mutating func add(_ chunk: [Int16]) {
        chunk.withUnsafeBufferPointer { add($0) }
    }

    public var description: String {
        "\(chunks) chunks, \(samples) samples, CRC-32 \(CRC32.hex(crc32))"
    }
}

/// The IEEE CRC-32, slicing by four bytes.
public enum CRC32 {
    /// `tables[k][b]`: the CRC of byte b followed by k zero bytes.
    private static let tables: [[UInt32]] = {
        var first = [UInt32](repeating: 0, count: 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            first[byte] = crc
        }
        var tables = [first]
        for k in 1..<4 {
            let previous = tables[k - 1]
            tables.append((0..<256).map { (previous[$0] >> 8) ^ first[Int(previous[$0] & 0xFF)] })
        }
        return tables
    }()

    /// The CRC-32 of `bytes`, continuing from `crc` (0 to start).
    public static func update(_ crc: UInt32, bytes: UnsafeRawBufferPointer) -> UInt32 {
        let (t0, t1, t2, t3) = (tables[0], tables[1], tables[2], tables[3])
        var value = ~crc
        var index = 0
        let count = bytes.count
        while index + 4 <= count {
            value ^= UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24
            value = t3[Int(value & 0xFF)] ^ t2[Int((value >> 8) & 0xFF)] ^ t1[Int((value >> 16) & 0xFF)] ^ t0[Int(value >> 24)]
            index += 4
        }
        while index < count {
            value = t0[Int((value ^ UInt32(bytes[index])) & 0xFF)] ^ (value >> 8)
            index += 1
        }
        return ~value
    }

    /// The CRC-32 of `samples` as Int16 little-endian bytes, continuing from `crc`.
    public static func update(_ crc: UInt32, samples: UnsafeBufferPointer<Int16>) -> UInt32 {
        #if _endian(little)
        return update(crc, bytes: UnsafeRawBufferPointer(samples))
        #else
        var value = crc
        // Little-endian bytes on any host: swap each sample on a big-endian one, a block at a time.
        var block = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let blockSamples = MemoryLayout.size(ofValue: block) / 2
        var start = 0
        while start < samples.count {
            let count = min(blockSamples, samples.count - start)
            value = withUnsafeMutableBytes(of: &block) { raw in
                let words = raw.bindMemory(to: Int16.self)
                for i in 0..<count { words[i] = samples[start + i].littleEndian }
                return update(value, bytes: UnsafeRawBufferPointer(rebasing: raw[0..<(count * 2)]))
            }
            start += count
        }
        return value
        #endif
    }

    /// Eight hexadecimal digits.
    public static func hex(_ crc: UInt32) -> String {
        let digits = String(crc, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
