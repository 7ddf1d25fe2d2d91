/// Whether an MP3 file states its length: a Xing/Info or VBRI header in its first frame, written by
/// LAME, libsndfile and most encoders, gives the exact frame count that a decoder then delivers.
///
/// libsndfile reports that count when the header is there and an estimate from the file's size
/// when it is not. Only a stated count can show that the file was cut short (the decoder then
/// stops before it); an estimate cannot, so truncation is judged only when this says yes.
enum MPEGLengthProbe {
    /// Whether the first MPEG audio frame (after an ID3v2 tag, if any) carries a frame count.
    static func statesFrameCount(_ read: AudioHeaderProbe.ByteReader) -> Bool {
        var offset = 0
        let id3 = read(0, 10)
        if id3.count == 10, id3[0] == 0x49, id3[1] == 0x44, id3[2] == 0x33 {
            // ID3v2: a 10-byte header, a synchsafe size, and a 10-byte footer when flag 4 is set.
            let size = id3[6...9].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
            offset = 10 + size + (id3[5] & 0x10 != 0 ? 10 : 0)
        }
        let window = read(offset, 4_096 + 200)
        guard let start = (0..<max(window.count - 4, 0)).first(where: { window[$0] == 0xFF && window[$0 + 1] & 0xE0 == 0xE0 }) else {
            return false
        }
        let header = window[(start + 1)...(start + 3)]
        let version = (header[header.startIndex] >> 3) & 0x3      // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
        let mono = (header[header.startIndex + 2] >> 6) & 0x3 == 3
        let sideInformation = version == 3 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        let xing = start + 4 + sideInformation
        if window.count >= xing + 8 {
            let tag = String(decoding: window[xing..<(xing + 4)], as: UTF8.self)
            if tag == "Xing" || tag == "Info" {
                // Flag bit 0: the frame count is present.
                return window[xing + 7] & 0x01 != 0
            }
        }
        let vbri = start + 4 + 32
        return window.count >= vbri + 4 && String(decoding: window[vbri..<(vbri + 4)], as: UTF8.self) == "VBRI"
    }
}
