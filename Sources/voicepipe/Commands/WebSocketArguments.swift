import Foundation
import VoicePipeClient

/// `voicepipe session --url …` and its companions: the WebSocket runtime, its TLS trust, its
/// handshake (headers, subprotocols, SigV4) and rotation, each option bound to a field.
struct WebSocketArguments: Sendable {
    static var urlOption: OptionBinding<Self> {
        .option("url", "ws(s)://host[:port]/path", \.url, urlValue, help: "Talk to the runtime at this WebSocket URL (TLS verified for wss).")
    }
    static var caFileOption: OptionBinding<Self> {
        .option("ca-file", "file.pem", \.caFile, .text, help: "Trust the CA certificates in this PEM file instead of the system's.")
    }
    static var signingOption: OptionBinding<Self> {
        .option("aws-sigv4", "presign|header", \.placement, placementValue, help: "Sign the handshake with AWS SigV4, in the query string or in headers.")
    }
    static var regionOption: OptionBinding<Self> {
        .option("aws-region", "region", \.region, .text, help: "The region to sign for (default: AWS_REGION, then AWS_DEFAULT_REGION).")
    }
    static var serviceOption: OptionBinding<Self> {
        .option("aws-service", "name", \.service, .text, help: "The service to sign for (default bedrock-agentcore).")
    }
    static var expiresOption: OptionBinding<Self> {
        .option("aws-expires", "seconds", \.expires, .integer(in: 1...SigV4Signer.maximumExpires), help: "How long a presigned handshake stays valid (default 300).")
    }
    static var agentCoreOption: OptionBinding<Self> {
        .option("agentcore-runtime", "ARN", \.agentCoreARN, .text,
                help: "Talk to this Amazon Bedrock AgentCore runtime (its WebSocket URL from the ARN, SigV4-signed, presigned unless '--aws-sigv4 header').")
    }
    static var qualifierOption: OptionBinding<Self> {
        .option("qualifier", "name", \.qualifier, .text, help: "The AgentCore runtime endpoint to reach (the qualifier query parameter; default: the service's DEFAULT).")
    }
    static var agentCoreRegionOption: OptionBinding<Self> {
        .option("region", "region", \.agentCoreRegion, .text, help: "The AgentCore runtime's region, checked against its ARN (default: the ARN's).")
    }
    static var endpointURLOption: OptionBinding<Self> {
        .option("endpoint-url", "URL", \.endpointURL, .text,
                help: "Reach the AgentCore runtime at this endpoint instead (default: AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, then AWS_ENDPOINT_URL).")
    }
    /// The AgentCore options, each only with `--agentcore-runtime`.
    static var agentCoreBindings: [OptionBinding<Self>] {
        let sentence = "applies to an AgentCore runtime: give '\(agentCoreOption.flag) <ARN>' too"
        return [qualifierOption, agentCoreRegionOption, endpointURLOption].map { $0.requiring(agentCoreOption, sentence) }
    }
    static var bindings: [OptionBinding<Self>] {
        // Every option but --url only means something with it (or with --agentcore-runtime), and
        // the signing details only with --aws-sigv4 (which AgentCore implies); both are checked
        // before any value is read.
        let needsURL = { (binding: OptionBinding<Self>) in
            binding.requiring(anyOf: [urlOption, agentCoreOption], "applies to a WebSocket runtime: give '\(urlOption.flag)' or '\(agentCoreOption.flag)' too")
        }
        let needsSigning = { (binding: OptionBinding<Self>) in
            needsURL(binding).requiring(anyOf: [signingOption, agentCoreOption],
                                        "applies to a signed handshake: give '\(signingOption.flag) presign' or '\(signingOption.flag) header' too")
        }
        return [
            urlOption,
            agentCoreOption,
        ] + agentCoreBindings + [
            needsURL(.repeated("header", "'Name: value'|@file", \.headers, headerValue,
                               help: "Add a header to the WebSocket handshake, or every 'Name: value' line of a file (repeatable; never printed or logged).")),
            needsURL(.repeated("header-env", "NAME", \.headers, headerVariableValue,
                               help: "Add the 'Name: value' lines held in environment variable NAME (repeatable), keeping secrets off the command line.")),
            needsURL(.repeated("subprotocol", "name", \.subprotocols, subprotocolValue, help: "Offer this WebSocket subprotocol (repeatable, in order of preference).")),
            needsURL(caFileOption),
            needsURL(.option("connect-timeout", "seconds", \.connectTimeout, .decimal(in: 0.1...600), help: "Longest wait for the connection and handshake (default 10).")),
            needsURL(.option("read-timeout", "seconds", \.readTimeout, .integer(in: 2...3_600), help: "Silence after which the runtime counts as gone: a ping at half of it, then the close (default 30).")),
            needsURL(signingOption),
            needsSigning(regionOption),
            needsSigning(serviceOption),
            needsSigning(expiresOption),
            needsURL(.option("rotate-after", "seconds", \.rotateAfter, .decimal(in: 1...86_400), help: "Open a fresh, re-signed connection at the first ready moment after this long (default off).")),
        ]
    }

    /// Where `--header` and `--header-env` take their fields from, resolved when connecting.
    enum HeaderSource: Sendable {
        case field(HTTPHeaderField)
        case file(String)
        case variable(String)
    }

    var url: WebSocketURL?
    var headers: [HeaderSource] = []
    var subprotocols: [String] = []
    var caFile: String?
    var connectTimeout: Double?
    var readTimeout: Int?
    var placement: HandshakeSigning.Placement?
    var region: String?
    var service: String?
    var expires: Int?
    /// `--rotate-after`, in seconds, when given.
    var rotateAfter: Double?
    var agentCoreARN: String?
    var qualifier: String?
    var agentCoreRegion: String?
    var endpointURL: String?

    /// The connector for `--url` or `--agentcore-runtime`, or nil when neither is given. An
    /// AgentCore runtime's handshakes all carry `sessionId`, the session's own.
    func connector(environment: [String: String], homeDirectory: String, command: String, sessionId: String) throws(CommandFailure) -> WebSocketConnector? {
        var agentCoreHeaders = [HTTPHeaderField]()
        let url: WebSocketURL
        if let agentCoreARN {
            if self.url != nil {
                throw .usage("give '\(Self.urlOption.flag)' or '\(Self.agentCoreOption.flag)', not both: the ARN names the URL", command: command)
            }
            let runtime = try Self.agentCoreRuntime(arn: agentCoreARN, qualifier: qualifier, region: agentCoreRegion, command: command)
            let presigned = (placement ?? .presign) == .presign
            if presigned { try Self.checkAgentCoreExpires(expires, command: command) }
            do {
                let handshake = try runtime.handshake(sessionId: sessionId, presigned: presigned, endpoint: Self.endpoint(endpointURL, environment: environment))
                url = try WebSocketURL(parsing: handshake.url)
                for header in handshake.headers { agentCoreHeaders.append(try HTTPHeaderField(name: header.name, value: header.value)) }
            } catch let error as AgentCoreError {
                throw .usage(error.message, command: command)
            } catch {
                throw .usage("the AgentCore runtime's URL cannot be used: \(error)", command: command)
            }
        } else if let given = self.url {
            url = given
        } else {
            return nil
        }
        var configuration = WebSocketConfiguration(url: url)
        configuration.headers = try Self.resolve(headers, environment: environment, command: command) + agentCoreHeaders
        configuration.subprotocols = subprotocols
        if let caFile {
            guard url.isSecure else { throw .usage("'\(Self.caFileOption.flag)' applies to a wss:// URL", command: command) }
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw CommandFailure("cannot read the CA file '\(caFile)'", exitCode: .noInput)
            }
            configuration.caFile = caFile
        }
        configuration.connectTimeout = connectTimeout ?? configuration.connectTimeout
        configuration.readTimeout = readTimeout ?? configuration.readTimeout
        let signing = try self.signing(environment: environment, homeDirectory: homeDirectory, command: command)
        return WebSocketConnector(configuration, signing: signing)
    }

    private static var urlValue: OptionValue<WebSocketURL> {
        OptionValue { text, flag, command throws(CommandFailure) in
            do {
                return try WebSocketURL(parsing: text)
            } catch {
                throw .usage("'\(flag)': \(error)", command: command)
            }
        }
    }

    private static var headerValue: OptionValue<HeaderSource> {
        OptionValue { text, flag, command throws(CommandFailure) in
            if text.hasPrefix("@") {
                guard text.count > 1 else { throw .usage("'\(flag) @' needs a file name after the '@'", command: command) }
                return .file(String(text.dropFirst()))
            }
            do {
                return .field(try HTTPHeaderField(parsing: text))
            } catch {
                throw .usage("'\(flag)': \(error)", command: command)
            }
        }
    }

    private static var headerVariableValue: OptionValue<HeaderSource> {
        OptionValue { name, flag, command throws(CommandFailure) in
            let isLetter = { (scalar: Unicode.Scalar) in scalar == "_" || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }
            guard let first = name.unicodeScalars.first, isLetter(first),
                  name.unicodeScalars.allSatisfy({ isLetter($0) || ("0"..."9").contains($0) }) else {
                throw .usage("'\(flag)' takes the name of an environment variable (letters, digits and _, not starting with a digit), not '\(name)'", command: command)
            }
            return .variable(name)
        }
    }

    /// The largest header file read; a bigger one is not a list of headers.
    static let maximumHeaderFileSize = 64 << 10

    /// The header fields, in the order given: files read and variables looked up now, so a
    /// missing one is refused before connecting (a file that cannot be read is exit 66).
    static func resolve(_ sources: [HeaderSource], environment: [String: String], command: String) throws(CommandFailure) -> [HTTPHeaderField] {
        var fields = [HTTPHeaderField]()
        for source in sources {
            switch source {
            case .field(let field):
                fields.append(field)
            case .file(let path):
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw CommandFailure("cannot read the header file '\(path)'", exitCode: .noInput)
                }
                guard data.count <= maximumHeaderFileSize else {
                    throw .usage("the header file '\(path)' is larger than 64 KiB, which no list of headers is; check the path", command: command)
                }
                do {
                    fields += try HTTPHeaderField.parseList(String(decoding: data, as: UTF8.self))
                } catch {
                    throw .usage("the header file '\(path)', \(error)", command: command)
                }
            case .variable(let name):
                guard let text = environment[name], !text.isEmpty else {
                    throw .usage("'--header-env \(name)': the environment variable \(name) is not set or empty", command: command)
                }
                do {
                    fields += try HTTPHeaderField.parseList(text)
                } catch {
                    throw .usage("'--header-env \(name)', \(error)", command: command)
                }
            }
        }
        return fields
    }

    private static var subprotocolValue: OptionValue<String> {
        OptionValue { name, flag, command throws(CommandFailure) in
            let tokenPunctuation = Set("!#$%&'*+-.^_`|~")
            guard !name.isEmpty, name.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || tokenPunctuation.contains($0) }) else {
                throw .usage("'\(flag)' takes a token (letters, digits and !#$%&'*+-.^_`|~), not '\(name)'", command: command)
            }
            return name
        }
    }

    private static var placementValue: OptionValue<HandshakeSigning.Placement> {
        OptionValue { text, flag, command throws(CommandFailure) in
            guard let placement = HandshakeSigning.Placement(rawValue: text) else {
                throw .usage("'\(flag)' must be presign or header, not '\(text)'", command: command)
            }
            return placement
        }
    }

    private func signing(environment: [String: String], homeDirectory: String, command: String) throws(CommandFailure) -> HandshakeSigning? {
        guard let placement = placement ?? (agentCoreARN != nil ? .presign : nil) else { return nil }
        if placement == .header && expires != nil {
            throw .usage("'\(Self.expiresOption.flag)' applies to '\(Self.signingOption.flag) presign'; a handshake signed in headers does not expire that way", command: command)
        }
        var region = self.region, service = self.service
        if let agentCoreARN {
            for (flag, given) in [(Self.regionOption.flag, region), (Self.serviceOption.flag, service)] where given != nil {
                throw .usage("'\(flag)' does not apply to an AgentCore runtime: it is signed for its ARN's region and bedrock-agentcore (use '\(Self.agentCoreRegionOption.flag)' to check the region)", command: command)
            }
            region = try Self.agentCoreRuntime(arn: agentCoreARN, qualifier: qualifier, region: agentCoreRegion, command: command).region
            service = AgentCoreRuntime.service
        }
        let (signer, credentials) = try Self.signer(region: region, service: service, environment: environment, homeDirectory: homeDirectory, command: command)
        return HandshakeSigning(placement: placement, signer: signer, credentials: credentials, expires: expires ?? SigV4Signer.defaultExpires)
    }

    /// The signer for `region` (else AWS_REGION, AWS_DEFAULT_REGION) and `service` and the
    /// credentials AWS tools read, fetched once now so a failing `credential_process` is heard
    /// before connecting; a credentials file that cannot be read is exit 66, the rest usage.
    static func signer(region: String?, service: String?, environment: [String: String], homeDirectory: String,
                       command: String) throws(CommandFailure) -> (SigV4Signer, AWSCredentialsProvider) {
        do {
            let region = try AWSRegion.resolve(explicit: region, environment: environment)
            let signer = try SigV4Signer(region: region, service: service ?? SigV4Signer.defaultService)
            let provider = try AWSCredentialsProvider.resolve(environment: environment, homeDirectory: homeDirectory)
            _ = try provider.credentials(at: time(nil))
            return (signer, provider)
        } catch {
            if case .unreadableFile = error { throw CommandFailure(error.message, exitCode: .noInput) }
            throw .usage(error.message, command: command)
        }
    }

    /// The runtime an ARN names, its errors as usage errors.
    static func agentCoreRuntime(arn: String, qualifier: String?, region: String?, command: String) throws(CommandFailure) -> AgentCoreRuntime {
        do {
            return try AgentCoreRuntime(arn: arn, qualifier: qualifier, region: region)
        } catch {
            throw .usage(error.message, command: command)
        }
    }

    /// Refuses a presigned lifetime AgentCore does not take (over 300 s).
    static func checkAgentCoreExpires(_ seconds: Int?, command: String) throws(CommandFailure) {
        do {
            try AgentCoreRuntime.checkExpires(seconds ?? SigV4Signer.defaultExpires)
        } catch {
            throw .usage("'\(expiresOption.flag)': " + error.message, command: command)
        }
    }

    /// `--endpoint-url`, else AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, else AWS_ENDPOINT_URL, as AWS tools read them.
    static func endpoint(_ given: String?, environment: [String: String]) -> String? {
        given ?? [environment["AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"], environment["AWS_ENDPOINT_URL"]].compactMap { $0 }.first { !$0.isEmpty }
    }
}
