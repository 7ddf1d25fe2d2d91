/// Whether a FLAC or Ogg file's last bytes end its stream properly, read by hand.
///
/// libsndfile cannot say whether a stream ends early: a FLAC file cut short makes libFLAC stop with
/// the same "lost sync" error as a frame damaged in the middle, and an Ogg file cut short simply
/// ends (libsndfile then reports its length as unknown). The container itself can tell:
/// - every FLAC frame ends with a CRC-16 of the whole frame, so a file whose last frame is complete
///   ends with two bytes that match the CRC of the bytes since that frame's header;
/// - every Ogg page states its length and carries a CRC-32, and the last page of a stream is marked
///   end-of-stream, so a complete file ends with a whole, marked page.
///
/// Implementation notes: only the tail is read (at most one frame or two pages, growing the window
/// when a FLAC frame is longer than the first window), and the audio is never decoded.
enum StreamEndProbe {
    enum Verdict: Equatable {
        /// The stream's last frame or page is whole (and, for Ogg, marked as the end).
        case complete
        /// The file stops inside a frame or page, or after a page not marked as the end: the data
        /// ends early.
        case cutShort
        /// Neither could be shown: no frame or page was found in the tail, or something other than
        /// a frame or page follows the last one (a tag, junk, damage).
        case unknown
    }

    typealias ByteReader = AudioHeaderProbe.ByteReader

    /// Probes a file of `size` bytes whose first bytes say which container it is; `.unknown` for
    /// anything but FLAC and Ogg.
    static func probe(_ read: ByteReader, size: Int) -> Verdict {
        let magic = read(0, 4)
        if magic == Array("fLaC".utf8) { return flac(read, size: size) }
        if magic == Array("OggS".utf8) { return ogg(read, size: size) }
        return .unknown
    }

    // MARK: FLAC

    /// Tail windows tried in turn: a FLAC frame is rarely longer than 64 KiB, but may be.
    private static let flacWindows = [1 << 16, 1 << 20, 1 << 24]
    /// An ID3v1 tag some tools append after the last frame.
    private static let id3v1Length = 128

    static func flac(_ read: ByteReader, size: Int) -> Verdict {
        var end = size
        if size >= id3v1Length, read(size - id3v1Length, 3) == Array("TAG".utf8) { end -= id3v1Length }
        for window in flacWindows {
            let start = max(0, end - window)
            let bytes = read(start, end - start)
            guard bytes.count == end - start else { return .unknown }
            var sawFrame = false
            // The last frame starts at the last valid header whose frame CRC matches the file's last
            // two bytes; try headers from the end backwards (a spurious sync inside the last frame
            // simply fails the CRC).
            var position = bytes.count - 2
            while position >= 0 {
                defer { position -= 1 }
                guard bytes[position] == 0xFF, bytes[position + 1] & 0xFE == 0xF8, isFLACFrameHeader(bytes, at: position) else { continue }
                sawFrame = true
                if bytes.count - position >= 4, crc16(bytes[position..<(bytes.count - 2)]) == UInt16(bytes[bytes.count - 2]) << 8 | UInt16(bytes[bytes.count - 1]) {
                    return .complete
                }
            }
            if start == 0 { return sawFrame ? .cutShort : .unknown }
            // A frame longer than the window, or no frame: look further back.
            if !sawFrame { continue }
            // Frames were found but none ends at the file's end; a frame that started before the window
            // could still, so only a window that holds two headers decides.
            if headerCount(bytes) >= 2 { return .cutShort }
        }
        return .unknown
    }

    private static func headerCount(_ bytes: [UInt8]) -> Int {
        var count = 0
        var position = 0
        while position + 1 < bytes.count {
            if bytes[position] == 0xFF, bytes[position + 1] & 0xFE == 0xF8, isFLACFrameHeader(bytes, at: position) { count += 1 }
            position += 1
        }
        return count
    }

    /// Whether a valid FLAC frame header (sync code, no reserved values, matching CRC-8) starts at `at`.
    ///
    /// ```
    ///  0-1  sync 0xFFF8 | blocking strategy bit
    ///  2    block size code (4 bits) | sample rate code (4 bits)
    ///  3    channel assignment (4) | sample size (3) | reserved 0 (1)
    ///  4…   frame or sample number, UTF-8-style (1–7 bytes)
    ///       block size (0, 1 or 2 bytes), sample rate (0, 1 or 2 bytes), then CRC-8 of all before it
    /// ```
    static func isFLACFrameHeader(_ bytes: [UInt8], at start: Int) -> Bool {
        guard start + 5 <= bytes.count else { return false }
        let blockSizeCode = bytes[start + 2] >> 4
        let rateCode = bytes[start + 2] & 0x0F
        let channelCode = bytes[start + 3] >> 4
        guard blockSizeCode != 0, rateCode != 15, channelCode <= 10, bytes[start + 3] & 1 == 0 else { return false }
        // The coded number: a leading byte whose high ones count its length, then 10xxxxxx bytes.
        let lead = bytes[start + 4]
        let numberLength: Int
        switch lead {
        case 0x00...0x7F: numberLength = 1
        case 0xC0...0xDF: numberLength = 2
        case 0xE0...0xEF: numberLength = 3
        case 0xF0...0xF7: numberLength = 4
        case 0xF8...0xFB: numberLength = 5
        case 0xFC...0xFD: numberLength = 6
        case 0xFE: numberLength = 7
        default: return false
        }
        var length = 4 + numberLength
        guard start + length <= bytes.count else { return false }
        for index in (start + 5)..<(start + length) where bytes[index] & 0xC0 != 0x80 { return false }
        length += blockSizeCode == 6 ? 1 : blockSizeCode == 7 ? 2 : 0
        length += rateCode == 12 ? 1 : (rateCode == 13 || rateCode == 14) ? 2 : 0
        guard start + length < bytes.count else { return false }
        return crc8(bytes[start..<(start + length)]) == bytes[start + length]
    }

    /// FLAC's header CRC: polynomial x^8 + x^2 + x + 1, initial 0, not reflected.
    static func crc8(_ bytes: ArraySlice<UInt8>) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }

    /// FLAC's frame CRC: polynomial x^16 + x^15 + x^2 + 1, initial 0, not reflected.
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc = (crc << 8) ^ crc16Table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
        }
        return crc
    }

    private static let crc16Table: [UInt16] = (0..<256).map { value in
        var crc = UInt16(value) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x8005 : crc << 1 }
        return crc
    }

    // MARK: Ogg

    /// The largest page: a 27-byte header, 255 lacing values, 255 × 255 bytes of body.
    private static let maximumPageBytes = 27 + 255 + 255 * 255

    /// A page header: `OggS`, version 0, flags, granule position, serial, sequence, CRC-32, lacing.
    ///
    /// ```
    ///  0-3 "OggS"  4 version  5 flags (0x04 end of stream)  6-13 granule  14-17 serial
    ///  18-21 sequence  22-25 CRC-32 (of the page with these 4 bytes zero)  26 segments  27… lacing
    /// ```
    static func ogg(_ read: ByteReader, size: Int) -> Verdict {
        let start = max(0, size - 2 * maximumPageBytes)
        let bytes = read(start, size - start)
        guard bytes.count == size - start else { return .unknown }
        let capture = Array("OggS".utf8)
        // The end of the last whole page with a good CRC, and whether it ended the stream.
        var lastPage: (end: Int, endsStream: Bool)?
        var position = 0
        while position + 4 <= bytes.count {
            guard bytes[position..<(position + 4)].elementsEqual(capture) else {
                position += 1
                continue
            }
            guard let length = oggPageLength(bytes, at: position) else {
                // A header cut off by the end of the file, right after a whole page: the data ends early.
                if let lastPage, lastPage.end == position { return .cutShort }
                position += 1
                continue
            }
            if position + length > bytes.count {
                // A page that runs past the end of the file.
                if let lastPage, lastPage.end == position { return .cutShort }
                position += 1
                continue
            }
            if oggPageCRCMatches(bytes, at: position, length: length) {
                lastPage = (position + length, bytes[position + 5] & 0x04 != 0)
                position += length
            } else {
                position += 1
            }
        }
        guard let lastPage else { return .unknown }
        if lastPage.end == bytes.count { return lastPage.endsStream ? .complete : .cutShort }
        // Fewer than four bytes of a capture pattern after the last page: a header cut off.
        let rest = bytes[lastPage.end...]
        if rest.count < 4, capture.starts(with: rest) { return .cutShort }
        return lastPage.endsStream ? .complete : .unknown
    }

    /// The whole page's length from its header, or nil when the header runs past the bytes or is
    /// not version 0.
    private static func oggPageLength(_ bytes: [UInt8], at start: Int) -> Int? {
        guard start + 27 <= bytes.count, bytes[start + 4] == 0 else { return nil }
        let segments = Int(bytes[start + 26])
        guard start + 27 + segments <= bytes.count else { return nil }
        var body = 0
        for index in (start + 27)..<(start + 27 + segments) { body += Int(bytes[index]) }
        return 27 + segments + body
    }

    private static func oggPageCRCMatches(_ bytes: [UInt8], at start: Int, length: Int) -> Bool {
        var crc: UInt32 = 0
        for index in start..<(start + length) {
            let byte = (22..<26).contains(index - start) ? 0 : bytes[index]
            crc = (crc << 8) ^ oggCRCTable[Int(UInt8(truncatingIfNeeded: crc >> 24) ^ byte)]
        }
        let stored = UInt32(bytes[start + 22]) | UInt32(bytes[start + 23]) << 8 | UInt32(bytes[start + 24]) << 16 | UInt32(bytes[start + 25]) << 24
        return crc == stored
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, initial 0, not reflected, no final XOR.
    private static let oggCRCTable: [UInt32] = (0..<256).map { value in
        var crc = UInt32(value) << 24
        for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        return crc
    }
}
