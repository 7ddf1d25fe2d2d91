import Testing
import VoicePipeCore

struct AudioRingTests {
    @Test func bytesComeOutInOrderAcrossTheWrapAndWholeBuffersOnly() {
        let ring = AudioRing(capacity: 10)
        var source: UInt8 = 0
        var received: [UInt8] = []
        var refused = 0
        // Buffers of 4 bytes in, reads of up to 4 bytes on two rounds in three (granularity 2) out: the ring wraps many times.
        for round in 0..<50 {
            let buffer = (0..<4).map { _ -> UInt8 in defer { source &+= 1 }; return source }
            if !buffer.withUnsafeBytes({ ring.write($0) }) {
                refused += 1
                source &-= 4
            }
            if round % 3 != 0 {
                var out = [UInt8](repeating: 0, count: 4)
                let count = out.withUnsafeMutableBytes { ring.read(into: $0, granularity: 2) }
                #expect(count % 2 == 0)
                received += out[0..<count]
            }
        }
        var rest = [UInt8](repeating: 0, count: 10)
        let count = rest.withUnsafeMutableBytes { ring.read(into: $0) }
        received += rest[0..<count]
        #expect(refused > 0)
        #expect(received == (0..<received.count).map { UInt8(truncatingIfNeeded: $0) })
        #expect(ring.availableBytes == 0)
    }

    @Test func aBufferLargerThanTheFreeSpaceIsRefusedWhole() {
        let ring = AudioRing(capacity: 8)
        #expect([UInt8](repeating: 1, count: 6).withUnsafeBytes { ring.write($0) })
        #expect(![UInt8](repeating: 2, count: 3).withUnsafeBytes { ring.write($0) })
        #expect(ring.availableBytes == 6)
        #expect([UInt8](repeating: 3, count: 2).withUnsafeBytes { ring.write($0) })
        var out = [UInt8](repeating: 0, count: 8)
        #expect(out.withUnsafeMutableBytes { ring.read(into: $0, granularity: 3) } == 6)
        #expect(out[0..<6] == [1, 1, 1, 1, 1, 1])
    }

    @Test func aProducerAndAConsumerOnTwoThreadsLoseAndReorderNothing() async throws {
        // A capacity that does not divide the buffer sizes, so the wrap falls everywhere.
        let ring = AudioRing(capacity: 1_000)
        let total = 2_000_000
        let producer = Task.detached {
            var next = 0
            var refused = 0
            while next < total {
                let count = min(1 + next % 97, total - next)
                let buffer = (next..<(next + count)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
                if buffer.withUnsafeBytes({ ring.write($0) }) { next += count } else { refused += 1 }
            }
            return refused
        }
        var received = 0
        var mismatches = 0
        var out = [UInt8](repeating: 0, count: 333)
        while received < total {
            let count = out.withUnsafeMutableBytes { ring.read(into: $0) }
            for i in 0..<count where out[i] != UInt8(truncatingIfNeeded: (received + i) &* 31) { mismatches += 1 }
            received += count
        }
        _ = await producer.value
        #expect(mismatches == 0)
        #expect(received == total && ring.availableBytes == 0)
    }
}
