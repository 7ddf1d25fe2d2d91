import Testing
import VoicePipeClient

/// The header lists `--header @file` and `--header-env` read: every field in order, the first
/// bad line named by number.
struct HTTPHeaderListTests {
    @Test func everyFieldComesOutInOrderWithCommentsBlankLinesAndCRLFSkipped() throws {
        let text = "# runtime credentials\r\nAuthorization: Bearer abc.def\r\n\r\n  X-Tenant:  acme  \n#X-Off: 1\nX-Empty:\n"
        let fields = try HTTPHeaderField.parseList(text)
        #expect(fields.map(\.name) == ["Authorization", "X-Tenant", "X-Empty"])
        #expect(fields.map(\.value) == ["Bearer abc.def", "acme", ""])
    }

    @Test(arguments: [
        ("X-A: 1\nnot a header\n", HTTPHeaderListError.badLine(2, .missingColon), "line 2: a header must be given as 'Name: value'"),
        ("\n\nBad Name: 1", HTTPHeaderListError.badLine(3, .badName("Bad Name")), "line 3: 'Bad Name' is not a header name"),
        ("X-A: 1\rX-B: 2", HTTPHeaderListError.badLine(1, .controlCharacterInValue(name: "X-A")), "line 1: the value of header 'X-A' contains a line break"),
        ("# only a comment\n\n", HTTPHeaderListError.empty, "it holds no 'Name: value' line"),
        ("", HTTPHeaderListError.empty, "it holds no 'Name: value' line"),
    ] as [(String, HTTPHeaderListError, String)])
    func aBadListIsRefusedNamingItsLine(text: String, error: HTTPHeaderListError, message: String) {
        #expect(throws: error) { try HTTPHeaderField.parseList(text) }
        #expect(error.description.hasPrefix(message))
    }
}
