import Foundation
import VoicePipeClient

/// `voicepipe session --url …` and its companions: the WebSocket runtime, its TLS trust, its
/// handshake (headers, subprotocols, SigV4) and rotation.
enum WebSocketArguments {
    static let options: [Arguments.Option] = [
        Arguments.Option(name: "url", valueName: "ws(s)://host[:port]/path", help: "Talk to the runtime at this WebSocket URL (TLS verified for wss)."),
        Arguments.Option(name: "header", valueName: "'Name: value'", help: "Add a header to the WebSocket handshake (repeatable; never printed or logged).", repeatable: true),
        Arguments.Option(name: "subprotocol", valueName: "name", help: "Offer this WebSocket subprotocol (repeatable, in order of preference).", repeatable: true),
        Arguments.Option(name: "ca-file", valueName: "file.pem", help: "Trust the CA certificates in this PEM file instead of the system's."),
        Arguments.Option(name: "connect-timeout", valueName: "seconds", help: "Longest wait for the connection and handshake (default 10)."),
        Arguments.Option(name: "read-timeout", valueName: "seconds", help: "Silence after which the runtime counts as gone: a ping at half of it, then the close (default 30)."),
        Arguments.Option(name: "aws-sigv4", valueName: "presign|header", help: "Sign the handshake with AWS SigV4, in the query string or in headers."),
        Arguments.Option(name: "aws-region", valueName: "region", help: "The region to sign for (default: AWS_REGION, then AWS_DEFAULT_REGION)."),
        Arguments.Option(name: "aws-service", valueName: "name", help: "The service to sign for (default bedrock-agentcore)."),
        Arguments.Option(name: "aws-expires", valueName: "seconds", help: "How long a presigned handshake stays valid (default 300)."),
        Arguments.Option(name: "rotate-after", valueName: "seconds", help: "Open a fresh, re-signed connection at the first ready moment after this long (default off)."),
    ]

    /// The options that only mean something with `--url`.
    private static let urlCompanions = options.map(\.name).filter { $0 != "url" }

    /// The connector for `--url`, or nil when it is not given.
    static func connector(_ arguments: Arguments, environment: [String: String], homeDirectory: String,
                          command: String) throws(CommandFailure) -> WebSocketConnector? {
        guard let text = arguments.value("url") else {
            if let stray = urlCompanions.first(where: { arguments.value($0) != nil || !arguments.values($0).isEmpty }) {
                throw .usage("'--\(stray)' applies to a WebSocket runtime: give '--url' too", command: command)
            }
            return nil
        }
        let url: WebSocketURL
        do {
            url = try WebSocketURL(parsing: text)
        } catch {
            throw .usage("'--url': \(error)", command: command)
        }
        var configuration = WebSocketConfiguration(url: url)
        for line in arguments.values("header") {
            do {
                configuration.headers.append(try HTTPHeaderField(parsing: line))
            } catch {
                throw .usage("'--header': \(error)", command: command)
            }
        }
        configuration.subprotocols = try subprotocols(arguments.values("subprotocol"), command: command)
        if let caFile = arguments.value("ca-file") {
            guard url.isSecure else { throw .usage("'--ca-file' applies to a wss:// URL", command: command) }
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                throw CommandFailure("cannot read the CA file '\(caFile)'", exitCode: .noInput)
            }
            configuration.caFile = caFile
        }
        configuration.connectTimeout = try arguments.decimal("connect-timeout", in: 0.1...600, command: command) ?? configuration.connectTimeout
        configuration.readTimeout = try arguments.integer("read-timeout", in: 2...3_600, default: configuration.readTimeout, command: command)
        let signing = try self.signing(arguments, environment: environment, homeDirectory: homeDirectory, command: command)
        return WebSocketConnector(configuration, signing: signing)
    }

    /// `--rotate-after`, in seconds, when given.
    static func rotation(_ arguments: Arguments, command: String) throws(CommandFailure) -> Double? {
        try arguments.decimal("rotate-after", in: 1...86_400, command: command)
    }

    private static func subprotocols(_ names: [String], command: String) throws(CommandFailure) -> [String] {
        let tokenPunctuation = Set("!#$%&'*+-.^_`|~")
        for name in names where name.isEmpty || !name.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || tokenPunctuation.contains($0) }) {
            throw .usage("'--subprotocol' takes a token (letters, digits and !#$%&'*+-.^_`|~), not '\(name)'", command: command)
        }
        return names
    }

    private static func signing(_ arguments: Arguments, environment: [String: String], homeDirectory: String,
                                command: String) throws(CommandFailure) -> HandshakeSigning? {
        guard let placementName = arguments.value("aws-sigv4") else {
            if let stray = ["aws-region", "aws-service", "aws-expires"].first(where: { arguments.value($0) != nil }) {
                throw .usage("'--\(stray)' applies to a signed handshake: give '--aws-sigv4 presign' or '--aws-sigv4 header' too", command: command)
            }
            return nil
        }
        guard let placement = HandshakeSigning.Placement(rawValue: placementName) else {
            throw .usage("'--aws-sigv4' must be presign or header, not '\(placementName)'", command: command)
        }
        let expires = try arguments.integer("aws-expires", in: 1...SigV4Signer.maximumExpires, default: SigV4Signer.defaultExpires, command: command)
        if placement == .header && arguments.value("aws-expires") != nil {
            throw .usage("'--aws-expires' applies to '--aws-sigv4 presign'; a handshake signed in headers does not expire that way", command: command)
        }
        do {
            let region = try AWSRegion.resolve(explicit: arguments.value("aws-region"), environment: environment)
            let signer = try SigV4Signer(region: region, service: arguments.value("aws-service") ?? SigV4Signer.defaultService)
            let credentials = try AWSCredentials.resolve(environment: environment, homeDirectory: homeDirectory)
            return HandshakeSigning(placement: placement, signer: signer, credentials: credentials, expires: expires)
        } catch {
            if case .unreadableFile = error { throw CommandFailure(error.message, exitCode: .noInput) }
            throw .usage(error.message, command: command)
        }
    }
}
