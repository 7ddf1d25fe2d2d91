import Testing
import VoicePipeProtocols

/// The AgentCore runtime's ARN, URL and session id rules, as the service and AWS's SDK have them.
struct AgentCoreRuntimeTests {
    static let arn = "arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/my_agent-abc123"

    @Test func theURLIsTheServicesWithTheARNPercentEncoded() throws {
        let runtime = try AgentCoreRuntime(arn: Self.arn)
        #expect(runtime.region == "us-west-2")
        #expect(runtime.account == "123456789012")
        #expect(runtime.runtimeID == "my_agent-abc123")
        #expect(try runtime.webSocketURL()
            == "wss://bedrock-agentcore.us-west-2.amazonaws.com/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aus-west-2%3A123456789012%3Aruntime%2Fmy_agent-abc123/ws")
    }

    @Test func theQualifierIsAQueryParameter() throws {
        let runtime = try AgentCoreRuntime(arn: Self.arn, qualifier: "DEFAULT", region: "us-west-2")
        #expect(try runtime.webSocketURL().hasSuffix("%2Fmy_agent-abc123/ws?qualifier=DEFAULT"))
    }

    @Test func chinaHasItsOwnDomainAndGovCloudTheCommercialOne() throws {
        #expect(try AgentCoreRuntime(arn: "arn:aws-cn:bedrock-agentcore:cn-north-1:123456789012:runtime/a-1").host == "bedrock-agentcore.cn-north-1.amazonaws.com.cn")
        #expect(try AgentCoreRuntime(arn: "arn:aws-us-gov:bedrock-agentcore:us-gov-west-1:123456789012:runtime/a-1").host == "bedrock-agentcore.us-gov-west-1.amazonaws.com")
    }

    @Test func anEndpointOverrideKeepsThePathAndQuery() throws {
        let runtime = try AgentCoreRuntime(arn: Self.arn, qualifier: "prod")
        #expect(try runtime.webSocketURL(endpoint: "http://127.0.0.1:8080/")
            == "ws://127.0.0.1:8080/runtimes/arn%3Aaws%3Abedrock-agentcore%3Aus-west-2%3A123456789012%3Aruntime%2Fmy_agent-abc123/ws?qualifier=prod")
        #expect(try runtime.webSocketURL(endpoint: "https://proxy.example.com/agentcore").hasPrefix("wss://proxy.example.com/agentcore/runtimes/arn%3Aaws%3A"))
        #expect(throws: AgentCoreError.invalidEndpoint("ftp://example.com")) { try runtime.webSocketURL(endpoint: "ftp://example.com") }
        #expect(throws: AgentCoreError.invalidEndpoint("https://example.com?a=1")) { try runtime.webSocketURL(endpoint: "https://example.com?a=1") }
    }

    @Test(arguments: [
        "arn:aws:bedrock:us-west-2:123456789012:runtime/a",
        "arn:aws:bedrock-agentcore:us-west-2:123456789012:agent/a",
        "arn:aws:bedrock-agentcore:us-west-2:1234:runtime/a",
        "arn:aws:bedrock-agentcore::123456789012:runtime/a",
        "arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/",
        "arn:aws-iso:bedrock-agentcore:us-west-2:123456789012:runtime/a",
        "arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/a/b",
        "my_agent-abc123",
    ])
    func whatIsNotARuntimeARNIsRefused(_ text: String) {
        #expect(throws: AgentCoreError.notARuntimeARN(text)) { try AgentCoreRuntime(arn: text) }
    }

    @Test func aRegionOtherThanTheARNsIsRefusedWithBoth() {
        #expect(throws: AgentCoreError.regionMismatch(given: "eu-west-1", arn: "us-west-2")) { try AgentCoreRuntime(arn: Self.arn, region: "eu-west-1") }
        #expect(AgentCoreError.regionMismatch(given: "eu-west-1", arn: "us-west-2").message
            == "the region 'eu-west-1' does not match the runtime ARN's region 'us-west-2': the runtime is reached and signed in its own region; drop the region or give 'us-west-2'")
    }

    @Test func aQualifierWithOtherCharactersIsRefused() {
        #expect(throws: AgentCoreError.invalidQualifier("a b")) { try AgentCoreRuntime(arn: Self.arn, qualifier: "a b") }
    }

    @Test func sessionIdsOf33To256VisibleASCIICharactersPass() throws {
        try AgentCoreRuntime.validateSessionId(String(repeating: "a", count: 33))
        try AgentCoreRuntime.validateSessionId("user:42/" + String(repeating: "-_Z9.~", count: 41))
        #expect(throws: AgentCoreError.invalidSessionId(String(repeating: "a", count: 32), reason: "it has 32 characters, fewer than 33")) {
            try AgentCoreRuntime.validateSessionId(String(repeating: "a", count: 32))
        }
        #expect(throws: AgentCoreError.invalidSessionId(String(repeating: "a", count: 257), reason: "it has 257 characters, more than 256")) {
            try AgentCoreRuntime.validateSessionId(String(repeating: "a", count: 257))
        }
        for bad in ["session " + String(repeating: "a", count: 30), "séance-" + String(repeating: "a", count: 30), "line\n" + String(repeating: "a", count: 30)] {
            #expect(throws: AgentCoreError.invalidSessionId(bad, reason: "it may hold only visible ASCII characters, without spaces")) { try AgentCoreRuntime.validateSessionId(bad) }
        }
    }

    @Test func generatedSessionIdsAreValidAndDiffer() throws {
        let first = AgentCoreRuntime.makeSessionId(), second = AgentCoreRuntime.makeSessionId()
        #expect(first.count == 42)
        #expect(first.hasPrefix("voicepipe-"))
        #expect(first != second)
        try AgentCoreRuntime.validateSessionId(first)
    }
}
