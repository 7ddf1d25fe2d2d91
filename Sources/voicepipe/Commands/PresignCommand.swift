import Foundation
import VoicePipeClient

/// `voicepipe presign`: an AgentCore runtime's presigned WebSocket URL, printed alone (as
/// `aws s3 presign` prints one), for a browser or phone to open without AWS credentials.
struct PresignCommand: Command {
    static let name = "presign"
    static let abstract = "Print a presigned WebSocket URL for an Amazon Bedrock AgentCore runtime."

    struct Options: CommandOptions {
        var arn: String?
        var qualifier: String?
        var region: String?
        var sessionId: String?
        var expires: Int?
        var endpointURL: String?

        static var arnOption: OptionBinding<Self> {
            .option("agentcore-runtime", "ARN", \.arn, .text, help: "The AgentCore runtime to presign for (required).")
        }
        static var bindings: [OptionBinding<Self>] {
            [
                arnOption,
                .option("qualifier", "name", \.qualifier, .text, help: "The runtime endpoint to reach (the qualifier query parameter)."),
                .option("region", "region", \.region, .text, help: "The runtime's region, checked against its ARN (default: the ARN's)."),
                .option("session-id", "id", \.sessionId, .text, help: "The session id the URL carries: 33 to 256 visible ASCII characters (default: a fresh random one)."),
                .option("aws-expires", "seconds", \.expires, .integer(in: 1...SigV4Signer.maximumExpires), help: "How long the URL stays valid, at most 300 (default 300)."),
                .option("endpoint-url", "URL", \.endpointURL, .text, help: "Presign for this endpoint instead (default: AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, then AWS_ENDPOINT_URL)."),
            ]
        }
    }

    static var help: String {
        HelpText.make(
            usage: "voicepipe presign --agentcore-runtime <ARN> [--qualifier <name>] [--region <region>] [--session-id <id>] [--aws-expires <seconds>] [--endpoint-url <URL>]",
            abstract: abstract,
            discussion: """
            Prints the URL and nothing else: wss://bedrock-agentcore.<region>.amazonaws.com/runtimes/<ARN>/ws
            with the qualifier, the session id (X-Amzn-Bedrock-AgentCore-Runtime-Session-Id) and the SigV4
            query parameters, signed for the ARN's region and bedrock-agentcore with the credentials AWS tools
            read (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, else AWS_PROFILE's keys in
            ~/.aws/credentials, its credential_process, refreshed before expiry, or its keys in ~/.aws/config), as AWS's bedrock-agentcore SDK's generate_presigned_url builds it. Anyone holding
            the URL can open the session until it expires, so hand it only to the client that needs it.
            """,
            examples: [
                "voicepipe presign --agentcore-runtime arn:aws:bedrock-agentcore:us-west-2:123456789012:runtime/my_agent-abc123",
                "voicepipe presign --agentcore-runtime \"$ARN\" --qualifier DEFAULT --session-id \"$SESSION\" --aws-expires 60",
            ],
            bindings: Options.bindings)
    }

    let options: Options

    init(options: Options, positionals: [String]) throws(CommandFailure) {
        _ = try Positionals.exactly(positionals, named: [], command: Self.name)
        guard options.arn != nil else {
            throw .usage("say which runtime: '\(Options.arnOption.flag) <ARN>'", command: Self.name)
        }
        try WebSocketArguments.checkAgentCoreExpires(options.expires, command: Self.name)
        self.options = options
    }

    func run() throws(CommandFailure) -> ExitCode {
        let environment = ProcessInfo.processInfo.environment
        let runtime = try WebSocketArguments.agentCoreRuntime(arn: options.arn ?? "", qualifier: options.qualifier, region: options.region, command: Self.name)
        let (signer, provider) = try WebSocketArguments.signer(region: runtime.region, service: AgentCoreRuntime.service, environment: environment,
                                                                  homeDirectory: NSHomeDirectory(), command: Self.name)
        do {
            let now = time(nil)
            let credentials = try provider.credentials(at: now)
            let url = try runtime.presignedURL(sessionId: options.sessionId ?? AgentCoreRuntime.makeSessionId(),
                                               endpoint: WebSocketArguments.endpoint(options.endpointURL, environment: environment),
                                               signer: signer, credentials: credentials, at: try SigV4Timestamp(unixSeconds: Int64(now)),
                                               expires: options.expires ?? SigV4Signer.defaultExpires)
            print(url)
            return .success
        } catch let error as AgentCoreError {
            throw .usage(error.message, command: Self.name)
        } catch {
            throw CommandFailure("cannot sign the URL: \(error)", exitCode: .software)
        }
    }
}
