import Testing
import VoicePipeCore
import VoicePipeTestSupport

/// The audio tally load runs compare at both ends: zlib's CRC-32 exactly, chained across chunks,
/// and sensitive to every way audio can go wrong on the way.
struct AudioTallyTests {
    @Test func theCRCIsTheIEEEOneZlibAndPythonCompute() {
        let check = Array("123456789".utf8)
        #expect(check.withUnsafeBytes { CRC32.update(0, bytes: $0) } == 0xCBF4_3926)
        #expect([UInt8]().withUnsafeBytes { CRC32.update(0, bytes: $0) } == 0)
        // zlib.crc32(b"The quick brown fox jumps over the lazy dog")
        let fox = Array("The quick brown fox jumps over the lazy dog".utf8)
        #expect(fox.withUnsafeBytes { CRC32.update(0, bytes: $0) } == 0x414F_A339)
        // Every split point of the same bytes gives the same CRC (the 4-byte steps and the tail agree).
        for split in 0...fox.count {
            let first = fox[..<split].withUnsafeBytes { CRC32.update(0, bytes: $0) }
            #expect(fox[split...].withUnsafeBytes { CRC32.update(first, bytes: $0) } == 0x414F_A339)
        }
    }

    @Test func samplesAreChecksummedAsLittleEndianBytes() {
        // zlib.crc32(array.array("h", [1, -2, 32767, -32768]).tobytes()) on a little-endian host
        var tally = AudioTally()
        tally.add([1, -2, 32767, -32768])
        let bytes: [UInt8] = [0x01, 0x00, 0xFE, 0xFF, 0xFF, 0x7F, 0x00, 0x80]
        #expect(tally.crc32 == bytes.withUnsafeBytes { CRC32.update(0, bytes: $0) })
        #expect(tally.chunks == 1 && tally.samples == 4)
        #expect(CRC32.hex(0x0035_B8EE) == "0035b8ee")
    }

    @Test func chunkingDoesNotChangeTheChecksumButLossDuplicationAndOrderDo() {
        var random = SplitMix64(seed: 11)
        let samples = (0..<5_000).map { _ in Int16(truncatingIfNeeded: random.next()) }
        var whole = AudioTally()
        whole.add(samples)
        var chunked = AudioTally()
        for start in stride(from: 0, to: samples.count, by: 512) { chunked.add(Array(samples[start..<min(start + 512, samples.count)])) }
        #expect(chunked.crc32 == whole.crc32 && chunked.samples == whole.samples)
        #expect(chunked.chunks == 10 && whole.chunks == 1)

        var lost = samples
        lost.remove(at: 2_500)
        var duplicated = samples
        duplicated.insert(samples[2_500], at: 2_500)
        var swapped = samples
        swapped.swapAt(100, 101)
        var altered = samples
        altered[4_999] ^= 1
        for variant in [lost, duplicated, swapped, altered] {
            var tally = AudioTally()
            tally.add(variant)
            #expect(tally != whole)
            #expect(tally.crc32 != whole.crc32)
        }
        #expect(AudioTally(chunks: 1, samples: 5_000, crc32: whole.crc32) == whole)
    }
}
