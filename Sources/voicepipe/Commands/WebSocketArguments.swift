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
    static var bindings: [OptionBinding<Self>] {
        // Every option but --url only means something with it, and the signing details only
        // with --aws-sigv4; both are checked before any value is read.
        let needsURL = { (binding: OptionBinding<Self>) in
            binding.requiring(urlOption, "applies to a WebSocket runtime: give '\(urlOption.flag)' too")
        }
        let needsSigning = { (binding: OptionBinding<Self>) in
            needsURL(binding).requiring(signingOption, "applies to a signed handshake: give '\(signingOption.flag) presign' or '\(signingOption.flag) header' too")
        }
        return [
            urlOption,
            needsURL(.repeated("header", "'Name: value'", \.headers, headerValue, help: "Add a header to the WebSocket handshake (repeatable; never printed or logged).")),
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

    var url: WebSocketURL?
    var headers: [HTTPHeaderField] = []
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

    /// The connector for `--url`, or nil when it is not given.
    func connector(environment: [String: String], homeDirectory: String, command: String) throws(CommandFailure) -> WebSocketConnector? {
        guard let url else { return nil }
        var configuration = WebSocketConfiguration(url: url)
        configuration.headers = headers
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

    private static var headerValue: OptionValue<HTTPHeaderField> {
        OptionValue { text, flag, command throws(CommandFailure) in
            do {
                return try HTTPHeaderField(parsing: text)
            } catch {
                throw .usage("'\(flag)': \(error)", command: command)
            }
        }
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
        guard let placement else { return nil }
        if placement == .header && expires != nil {
            throw .usage("'\(Self.expiresOption.flag)' applies to '\(Self.signingOption.flag) presign'; a handshake signed in headers does not expire that way", command: command)
        }
        do {
            let region = try AWSRegion.resolve(explicit: self.region, environment: environment)
            let signer = try SigV4Signer(region: region, service: service ?? SigV4Signer.defaultService)
            let credentials = try AWSCredentials.resolve(environment: environment, homeDirectory: homeDirectory)
            return HandshakeSigning(placement: placement, signer: signer, credentials: credentials, expires: expires ?? SigV4Signer.defaultExpires)
        } catch {
            if case .unreadableFile = error { throw CommandFailure(error.message, exitCode: .noInput) }
            throw .usage(error.message, command: command)
        }
    }
}
