import CWebSockets
import Glibc
import Synchronization
import VoicePipeCore
import VoicePipeIO
import VoicePipeProtocols
import VoicePipeSession

/// A session transport over a WebSocket (`ws://` or `wss://`), on libwebsockets: one JSON text
/// message per WebSocket text message.
///
/// ```
///  send ─▶ backlog (bounded) ─▶ lws_cancel_service ─▶ service thread ─▶ lws_write ─▶ socket
///  events ◀─ TransportEventQueue ◀─ service thread (messages reassembled from fragments) ◀─ socket
/// ```
///
/// One thread of its own runs the lws context and makes every lws call; other threads only queue
/// messages and wake it with `lws_cancel_service`, the one call lws allows from anywhere. Capture
/// never waits on the network: ``send(_:)`` queues up to ``backlogLimit`` bytes and then throws
/// ``TransportError/backlogFull(bytes:limit:)``.
///
/// TLS verifies the certificate chain (against the system's trust store, or only the CA file of
/// ``WebSocketConfiguration/caFile``) and the host name or address. The opening request carries
/// the configured headers (and HTTP Basic authorization for a URL's user information); a refusal
/// reports its HTTP status. Received fragments are reassembled up to
/// ``WebSocketConfiguration/maximumMessageLength``; a longer message is skipped without being
/// buffered. A text message that is not UTF-8 or a binary message ends the connection (1007,
/// 1003): the protocol is JSON text. A frame lws itself refuses (a control frame over 125 bytes)
/// ends the connection with lws' own words for it.
///
/// It ends once, with one ``TransportEvent/closed(_:)``: ``TransportCloseReason/closedByClient``
/// after ``close()`` (the backlog sent for at most ``WebSocketConfiguration/flushTimeout`` seconds,
/// then the close handshake); ``TransportCloseReason/closedByRuntime(_:)`` for a close frame with
/// 1000 or 1001; ``TransportCloseReason/failed(_:code:)`` for anything else, in a sentence that
/// keeps libwebsockets' own reason. Nothing in a sentence repeats a header value or the URL's
/// query or user information.
public final class WebSocketTransport: SessionTransport {
    public let configuration: WebSocketConfiguration
    private let engine: WebSocketEngine

    public init(_ configuration: WebSocketConfiguration) {
        self.configuration = configuration
        engine = WebSocketEngine(configuration)
    }

    deinit { close() }

    public var events: AsyncStream<TransportEvent> { engine.incoming.stream }

    public func receive(_ handler: @escaping @Sendable (TransportEvent) -> Void) {
        engine.incoming.setHandler(handler)
    }

    /// Starts the service thread, which connects; ``TransportEvent/opened`` follows once the
    /// handshake is complete. Calling it again does nothing.
    public func open() {
        engine.start()
    }

    public func send(_ message: String, tag: Int?) throws(TransportError) {
        try engine.enqueue(message, tag: tag)
    }

    /// Bytes queued by ``send(_:)`` and not yet handed to the socket.
    public var backlogBytes: Int { engine.shared.withLock { $0.backlogBytes } }

    public var backlogLimit: Int { configuration.backlogLimit }

    /// What was still in the backlog when the connection ended: never handed to the socket.
    /// (A message handed to the socket counts as written, even if the connection broke before
    /// all of it left: the runtime received it whole or not at all, and cannot tell the client.)
    public func takeUnwrittenMessages() -> [OutboundMessage] {
        engine.takeUnwritten()
    }

    /// The subprotocol the server chose, once open; nil when it chose none.
    public var selectedSubprotocol: String? { engine.shared.withLock { $0.selectedSubprotocol } }

    /// The name of the transport's service thread (`vp-ws-N`, N counting the transports of the
    /// process from 1), as `/proc/self/task/*/comm`, `top -H` and debuggers show it: what tells
    /// whether the thread is still there after the transport ended.
    public var serviceThreadName: String { engine.threadName }

    /// Sends what is queued (for at most the flush timeout), then the close handshake (1000); returns at
    /// once, and ``TransportCloseReason/closedByClient`` arrives when the connection is gone.
    public func close() {
        engine.requestClose()
    }
}

/// What the transport and its service thread share, and the service thread's own state.
///
/// `shared` is read and written under its lock from any thread. Everything else is touched only
/// by the service thread (inside lws callbacks, which lws calls on the thread that services the
/// context), which is why the class can be `@unchecked Sendable`.
final class WebSocketEngine: @unchecked Sendable {
    enum Phase {
        case idle, connecting, open, closing, ended(TransportCloseReason)
    }

    struct Shared {
        var phase = Phase.idle
        var outgoing = FIFOQueue<Outgoing>()
        var backlogBytes = 0
        /// A message taken from the backlog whose write failed: unwritten, ahead of the backlog.
        var failedWrite: Outgoing?
        /// The lws context while the service thread runs it: what `lws_cancel_service` wakes.
        var context: ContextHandle?
        var selectedSubprotocol: String?

        mutating func popOutgoing() -> Outgoing? {
            guard let message = outgoing.popFirst() else { return nil }
            backlogBytes -= message.bytes.count
            return message
        }
    }

    /// A queued message's bytes, and the identity its sender gave it.
    struct Outgoing {
        let bytes: [UInt8]
        let tag: Int?

        var unwritten: OutboundMessage { OutboundMessage(text: String(decoding: bytes, as: UTF8.self), tag: tag) }
    }

    /// An lws context pointer, passed between threads only to wake the context's thread.
    struct ContextHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    let configuration: WebSocketConfiguration
    let shared = Guarded(Shared())
    let incoming = TransportEventQueue()
    /// The service thread's name, unique in the process (15 bytes at most, the kernel's limit).
    let threadName: String
    private static let engines = Atomic<Int>(0)

    // The service thread's own state.
    /// Where lws stores the client connection as soon as it exists (before connecting returns).
    private let connectionSlot: UnsafeMutablePointer<OpaquePointer?>
    private var connection: OpaquePointer? {
        get { connectionSlot.pointee }
        set { connectionSlot.pointee = newValue }
    }
    private var established = false
    private var finished = false
    private var closing = false
    private var closeFrameRequested = false
    private var failure: TransportCloseReason?
    private var peerClose: (code: Int, reason: String)?
    /// Joins incoming fragments into messages under the length limit.
    private var assembler: WebSocketMessageAssembler
    private var sendBuffer: UnsafeMutablePointer<UInt8>?
    private var sendBufferCapacity = 0
    private var lastReceived = ContinuousClock.now
    private let connectTimer: UnsafeMutablePointer<voicepipe_lws_timer>
    private let flushTimer: UnsafeMutablePointer<voicepipe_lws_timer>
    private let readTimer: UnsafeMutablePointer<voicepipe_lws_timer>
    /// C strings lws keeps pointers to, freed when the context is gone.
    private var cStrings: [UnsafeMutablePointer<CChar>] = []

    init(_ configuration: WebSocketConfiguration) {
        self.configuration = configuration
        threadName = "vp-ws-\(Self.engines.add(1, ordering: .relaxed).newValue % 1_000_000_000)"
        assembler = WebSocketMessageAssembler(limit: configuration.maximumMessageLength)
        connectTimer = .allocate(capacity: 1)
        flushTimer = .allocate(capacity: 1)
        readTimer = .allocate(capacity: 1)
        connectionSlot = .allocate(capacity: 1)
        connectionSlot.initialize(to: nil)
        for timer in [connectTimer, flushTimer, readTimer] {
            timer.initialize(to: voicepipe_lws_timer())
        }
    }

    deinit {
        connectTimer.deallocate()
        flushTimer.deallocate()
        readTimer.deallocate()
        connectionSlot.deallocate()
        retryPolicy?.deallocate()
        sendBuffer?.deallocate()
    }

    // MARK: Any thread

    func start() {
        let starting = shared.withLock { state -> Bool in
            guard case .idle = state.phase else { return false }
            state.phase = .connecting
            return true
        }
        guard starting else { return }
        let thread = ServiceThread(engine: self)
        if let failure = thread.start() {
            finish(with: failure)
        }
    }

    func enqueue(_ message: String, tag: Int?) throws(TransportError) {
        let bytes = Array(message.utf8)
        let refusal = shared.withLock { state -> TransportError? in
            switch state.phase {
            case .idle, .connecting: return .notOpen
            case .closing: return .closed(.closedByClient)
            case .ended(let reason): return .closed(reason)
            case .open: break
            }
            guard state.backlogBytes + bytes.count <= configuration.backlogLimit else {
                return .backlogFull(bytes: state.backlogBytes, limit: configuration.backlogLimit)
            }
            state.outgoing.append(Outgoing(bytes: bytes, tag: tag))
            state.backlogBytes += bytes.count
            if let context = state.context { lws_cancel_service(context.pointer) }
            return nil
        }
        if let refusal { throw refusal }
    }

    func takeUnwritten() -> [OutboundMessage] {
        shared.withLock { state in
            guard case .ended = state.phase else { return [] }
            var messages = state.failedWrite.map { [$0.unwritten] } ?? []
            state.failedWrite = nil
            while let message = state.popOutgoing() {
                messages.append(message.unwritten)
            }
            return messages
        }
    }

    func requestClose() {
        let endsNow = shared.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .ended(.closedByClient)
                return true
            case .connecting, .open:
                state.phase = .closing
                if let context = state.context { lws_cancel_service(context.pointer) }
                return false
            case .closing, .ended:
                return false
            }
        }
        if endsNow { incoming.push(.closed(.closedByClient)) }
    }

    private func finish(with reason: TransportCloseReason) {
        let final = shared.withLock { state -> TransportCloseReason in
            if case .closing = state.phase, reason.isOrderly { state.phase = .ended(.closedByClient) } else { state.phase = .ended(reason) }
            if case .ended(let final) = state.phase { return final }
            return reason
        }
        incoming.push(.closed(final))
    }

    // MARK: The service thread

    /// Creates the context, connects, services it until the connection is gone, tears it down.
    fileprivate func serve() {
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(keep("voicepipe"))
        protocols[0].callback = webSocketCallback
        defer {
            protocols.deinitialize(count: 2)
            protocols.deallocate()
            cStrings.forEach { $0.deallocate() }
            cStrings.removeAll()
        }

        if let caFile = configuration.caFile, let problem = Self.problem(withCAFile: caFile) {
            finish(with: problem)
            return
        }
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
        info.gid = -1
        info.uid = -1
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.timeout_secs = UInt32(max(1, configuration.connectTimeout.rounded(.up)))
        if let caFile = configuration.caFile { info.client_ssl_ca_filepath = UnsafePointer(keep(caFile)) }
        WebSocketLog.install()

        guard let context = lws_create_context(&info) else {
            finish(with: .failed("could not set up the WebSocket client\(WebSocketLog.lastError().map { ": \($0)" } ?? "")", code: nil))
            return
        }
        let alreadyClosing = shared.withLock { state -> Bool in
            state.context = ContextHandle(pointer: context)
            if case .closing = state.phase { return true }
            return false
        }
        if alreadyClosing {
            failure = .closedByClient
            finished = true
        } else {
            connect(context)
        }
        while !finished {
            if lws_service(context, 0) < 0 { break }
        }
        shared.withLock { $0.context = nil }
        lws_context_destroy(context)
        WebSocketLog.forgetThisThread()
        finish(with: failure ?? .failed("the WebSocket connection ended for no reason libwebsockets gave", code: nil))
    }

    /// Why `path` cannot serve as the CA file, checked before lws would only log it.
    static func problem(withCAFile path: String) -> TransportCloseReason? {
        if access(path, R_OK) != 0 {
            return .failed("cannot read the CA file \(path)", code: .posix(errno))
        }
        if voicepipe_ca_file_loads(path) == 0 {
            return .failed("the CA file \(path) holds no certificate in PEM form", code: nil)
        }
        return nil
    }

    private func connect(_ context: OpaquePointer) {
        let url = configuration.url
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(keep(url.host))
        info.port = Int32(url.port)
        info.ssl_connection = url.isSecure ? Int32(LCCSCF_USE_SSL.rawValue) : 0
        info.path = UnsafePointer(keep(url.requestTarget))
        info.host = UnsafePointer(keep(url.hostHeader))
        info.origin = UnsafePointer(keep(url.hostHeader))
        info.local_protocol_name = UnsafePointer(keep("voicepipe"))
        if !configuration.subprotocols.isEmpty {
            info.protocol = UnsafePointer(keep(configuration.subprotocols.joined(separator: ",")))
        }
        // lws pings after half the read timeout without traffic; the read timer, not lws' own
        // hang-up (which would wait for the peer to finish the TCP connection), ends a silent one.
        let policy = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
        let readTimeout = UInt16(clamping: max(configuration.readTimeout, 2))
        policy.initialize(to: lws_retry_bo_t(retry_ms_table: nil, retry_ms_table_count: 0, conceal_count: 0,
                                             secs_since_valid_ping: readTimeout / 2, secs_since_valid_hangup: readTimeout &* 4,
                                             jitter_percent: 0))
        retryPolicy = policy
        info.retry_and_idle_policy = UnsafePointer(policy)
        info.pwsi = connectionSlot
        schedule(connectTimer, after: configuration.connectTimeout)
        if lws_client_connect_via_info(&info) == nil, failure == nil {
            failure = .failed("could not start connecting to \(url)\(WebSocketLog.lastError().map { ": \($0)" } ?? "")", code: nil)
            finished = true
        }
    }

    /// The idle policy lws keeps a pointer to (pings and the read timeout).
    private var retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>?

    /// Handles one lws callback for the client connection (or the context).
    fileprivate func handle(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            return appendHeaders(input, room: length)
        case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
            noteSubprotocol(wsi)
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            established(wsi)
        case LWS_CALLBACK_CLIENT_RECEIVE:
            return received(wsi, input, length)
        case LWS_CALLBACK_CLIENT_RECEIVE_PONG:
            lastReceived = .now
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            return writeNext(wsi)
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            woken()
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            peerClosed(input, length)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            connectionFailed(wsi, input, length)
        case LWS_CALLBACK_CLIENT_CLOSED:
            closed()
        case LWS_CALLBACK_WSI_DESTROY:
            if wsi == connection { connection = nil; finished = true }
        default:
            break
        }
        return lws_callback_http_dummy(wsi, reason, nil, input, length)
    }

    private func appendHeaders(_ input: UnsafeMutableRawPointer?, room: Int) -> Int32 {
        guard let cursor = input?.assumingMemoryBound(to: UnsafeMutablePointer<CChar>.self) else { return 0 }
        var fields = configuration.headers
        if let userInfo = configuration.url.userInfo {
            fields.insert(HTTPHeaderField(basicAuthorization: userInfo), at: 0)
        }
        var text = ""
        for field in fields { text += "\(field.name): \(field.value)\r\n" }
        let bytes = Array(text.utf8)
        guard bytes.count < room else {
            failure = .failed("the handshake's header fields (\(bytes.count) bytes) do not fit libwebsockets' \(room)-byte buffer", code: nil)
            return -1
        }
        bytes.withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(start: cursor.pointee, count: source.count).copyMemory(from: source)
        }
        cursor.pointee += bytes.count
        return 0
    }

    private func established(_ wsi: OpaquePointer) {
        established = true
        WebSocketLog.forgetThisThread()
        lastReceived = .now
        cancel(connectTimer)
        schedule(readTimer, after: Double(configuration.readTimeout))
        let closingAlready = shared.withLock { state -> Bool in
            if case .connecting = state.phase {
                state.phase = .open
                return false
            }
            return true
        }
        if closingAlready {
            beginClosing(wsi)
        } else {
            incoming.push(.opened)
        }
    }

    /// Keeps the subprotocol the server chose, while the response's headers are still at hand.
    private func noteSubprotocol(_ wsi: OpaquePointer) {
        var chosen = [CChar](repeating: 0, count: 256)
        let length = lws_hdr_copy(wsi, &chosen, Int32(chosen.count), WSI_TOKEN_PROTOCOL)
        guard length > 0 else { return }
        let subprotocol = String(decoding: chosen.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        shared.withLock { $0.selectedSubprotocol = subprotocol }
    }

    private func received(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        lastReceived = .now
        let piece = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        let isFinal = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        switch assembler.take(piece, isFinal: isFinal, isBinary: lws_frame_is_binary(wsi) != 0) {
        case nil:
            return 0
        case .binary:
            return refuse(wsi, status: LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE,
                          "the runtime sent a binary message; the protocol has only JSON text messages")
        case .oversized(let bytes, let limit):
            incoming.push(.oversizedMessage(bytes: bytes, limit: limit))
            return 0
        case .notUTF8(let bytes):
            return refuse(wsi, status: LWS_CLOSE_STATUS_INVALID_PAYLOAD,
                          "the runtime sent a text message that is not UTF-8 (\(bytes) bytes)")
        case .message(let text):
            incoming.push(.message(text))
            return 0
        }
    }

    /// Ends the connection from inside a callback with a close frame, for a protocol violation.
    private func refuse(_ wsi: OpaquePointer, status: lws_close_status, _ sentence: String) -> Int32 {
        failure = .failed(sentence, code: nil)
        var reason = Array("protocol violation".utf8)
        lws_close_reason(wsi, status, &reason, reason.count)
        return -1
    }

    private func writeNext(_ wsi: OpaquePointer) -> Int32 {
        // After the close frame was asked for, lws sends it and waits for the server's answer;
        // closing again from here would cut that wait short (and reset the connection).
        guard !closeFrameRequested else { return 0 }
        guard let outgoing = shared.withLock({ $0.popOutgoing() }) else {
            if closing {
                closeFrameRequested = true
                var reason = Array("session over".utf8)
                lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, &reason, reason.count)
                return -1
            }
            return 0
        }
        let message = outgoing.bytes
        let pre = voicepipe_lws_pre()
        if sendBufferCapacity < pre + message.count {
            sendBuffer?.deallocate()
            sendBufferCapacity = max(pre + message.count, 2 * sendBufferCapacity, 4096)
            sendBuffer = .allocate(capacity: sendBufferCapacity)
        }
        guard let buffer = sendBuffer else { return -1 }
        message.withUnsafeBytes { source in
            UnsafeMutableRawBufferPointer(start: buffer + pre, count: source.count).copyMemory(from: source)
        }
        let written = lws_write(wsi, buffer + pre, message.count, LWS_WRITE_TEXT)
        guard written >= message.count else {
            failure = .failed("sending a message of \(message.count) bytes failed", code: .posix(errno))
            shared.withLock { $0.failedWrite = outgoing }
            return -1
        }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// Another thread queued a message or asked to close.
    private func woken() {
        let wantsClose = shared.withLock { state -> Bool in
            if case .closing = state.phase { return true }
            return false
        }
        guard let wsi = connection else { return }
        if wantsClose && !closing {
            guard established else {
                failure = .closedByClient
                lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
                return
            }
            beginClosing(wsi)
        } else if established {
            lws_callback_on_writable(wsi)
        }
    }

    private func beginClosing(_ wsi: OpaquePointer) {
        closing = true
        failure = .closedByClient
        schedule(flushTimer, after: configuration.flushTimeout)
        lws_callback_on_writable(wsi)
    }

    private func peerClosed(_ input: UnsafeMutableRawPointer?, _ length: Int) {
        guard let input, length >= 2 else {
            peerClose = (1005, "")
            return
        }
        let bytes = UnsafeRawBufferPointer(start: input, count: length)
        let code = Int(bytes[0]) << 8 | Int(bytes[1])
        peerClose = (code, String(decoding: bytes.dropFirst(2), as: UTF8.self))
    }

    private func connectionFailed(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) {
        finished = true
        cancel(connectTimer)
        guard failure == nil else { return }
        let detail = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }?
            .trimmingLineEnds() ?? WebSocketLog.lastError() ?? "no reason given"
        let status = Int(lws_http_client_http_response(wsi))
        let url = configuration.url
        if let problem = voicepipe_lws_certificate_problem(wsi) {
            let trust = configuration.caFile.map { "the CA file \($0)" } ?? "the system's trusted CAs (give --ca-file for a private CA)"
            failure = .refused("\(url) is not trusted: \(String(cString: problem)), checked against \(trust)")
        } else if status > 0 && status != 101 {
            let sentence = "\(url) refused the WebSocket handshake with HTTP status \(status) (\(detail))"
            // A client error (bad credentials, no such runtime) stays one; a busy or failing server may recover.
            let lasting = (400..<500).contains(status) && status != 408 && status != 429
            failure = lasting ? .refused(sentence) : .failed(sentence, code: nil)
        } else {
            failure = .failed("could not connect to \(url): \(detail)", code: nil)
        }
    }

    private func closed() {
        finished = true
        cancel(flushTimer)
        cancel(readTimer)
        if let peerClose, failure == nil || failure == .closedByClient && !closing {
            failure = Self.reason(forPeerClose: peerClose)
        }
        guard failure == nil else { return }
        let silence = ContinuousClock.now - lastReceived
        if silence >= .seconds(configuration.readTimeout) {
            failure = .failed("the runtime sent nothing, and did not answer a ping, for \(configuration.readTimeout) s", code: nil)
        } else if established, let said = WebSocketLog.takeLastOfThisThread() {
            // lws ended the connection itself (a frame it refuses) without a callback saying why.
            failure = .failed("libwebsockets ended the connection to \(configuration.url): \(said)", code: nil)
        } else {
            failure = .failed("the connection to \(configuration.url) dropped without a close frame", code: nil)
        }
    }

    static func reason(forPeerClose close: (code: Int, reason: String)) -> TransportCloseReason {
        let said = close.reason.isEmpty ? "" : ": \(close.reason)"
        switch close.code {
        case 1000, 1001:
            return .closedByRuntime("the runtime closed the connection (\(close.code)\(said))")
        case 1005:
            return .closedByRuntime("the runtime closed the connection (no status)")
        default:
            return .failed("the runtime closed the connection with code \(close.code)\(said)", code: nil)
        }
    }

    // MARK: Timers

    private func schedule(_ timer: UnsafeMutablePointer<voicepipe_lws_timer>, after seconds: Double) {
        guard let context = shared.withLock({ $0.context?.pointer }) else { return }
        timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
        let microseconds = lws_usec_t(max(seconds, 0) * 1_000_000)
        withUnsafeMutablePointer(to: &timer.pointee.entry) { entry in
            lws_sul_schedule(context, 0, entry, timerFired, microseconds)
        }
    }

    private func cancel(_ timer: UnsafeMutablePointer<voicepipe_lws_timer>) {
        guard timer.pointee.owner != nil else { return }
        withUnsafeMutablePointer(to: &timer.pointee.entry) { lws_sul_cancel($0) }
    }

    /// A timer ran out. Ending the service loop destroys the context, which drops the connection
    /// at once: lws' own close would wait for a peer that has stopped reading.
    fileprivate func fired(_ timer: UnsafeMutablePointer<voicepipe_lws_timer>) {
        if timer == connectTimer {
            guard !established else { return }
            failure = .failed("could not connect to \(configuration.url) within \(configuration.connectTimeout) s", code: nil)
            stopServing()
        } else if timer == flushTimer {
            // What is still queued is dropped; the backlog then counts only what never went out.
            stopServing()
        } else if timer == readTimer {
            let silence = ContinuousClock.now - lastReceived
            let limit = Duration.seconds(configuration.readTimeout)
            if silence >= limit {
                failure = .failed("the runtime sent nothing, and did not answer a ping, for \(configuration.readTimeout) s", code: nil)
                stopServing()
            } else {
                let remaining = limit - silence
                schedule(readTimer, after: Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18)
            }
        }
    }

    /// Ends the service loop: lws runs timers inside its poll and would otherwise go back to
    /// waiting (for days) before the loop sees `finished`.
    private func stopServing() {
        finished = true
        shared.withLock { state in
            if let context = state.context { lws_cancel_service(context.pointer) }
        }
    }

    /// A C copy of `text` that lives as long as the context (lws keeps pointers to them).
    private func keep(_ text: String) -> UnsafeMutablePointer<CChar> {
        let copy = text.withCString { source in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: strlen(source) + 1)
            strcpy(copy, source)
            return copy
        }
        cStrings.append(copy)
        return copy
    }
}

/// The one callback lws calls for the transport's protocol: hands over to the engine named by the
/// context's user pointer.
private func webSocketCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                               _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    return Unmanaged<WebSocketEngine>.fromOpaque(owner).takeUnretainedValue().handle(wsi, reason, input, length)
}

private func timerFired(_ entry: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let entry, let timer = voicepipe_lws_timer_of(entry), let owner = timer.pointee.owner else { return }
    Unmanaged<WebSocketEngine>.fromOpaque(owner).takeUnretainedValue().fired(timer)
}

/// The service thread: keeps the engine alive until it has finished.
private final class ServiceThread: Sendable {
    let engine: WebSocketEngine

    init(engine: WebSocketEngine) {
        self.engine = engine
    }

    /// Starts the thread; a reason when it could not be started.
    func start() -> TransportCloseReason? {
        let retained = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let service = Unmanaged<ServiceThread>.fromOpaque(argument).takeRetainedValue()
            _ = voicepipe_name_this_thread(service.engine.threadName)
            service.engine.serve()
            return nil
        }, retained.toOpaque())
        guard status == 0 else {
            retained.release()
            return .failed("could not start the WebSocket service thread", code: .posix(status))
        }
        pthread_detach(thread)
        return nil
    }
}

extension HTTPHeaderField {
    /// `Authorization: Basic …` for a URL's `user:password`.
    init(basicAuthorization userInfo: String) {
        self.init(validName: "Authorization", value: "Basic " + Base64.encode(SigV4Encoding.percentDecoded(userInfo, plusIsSpace: false)))
    }
}

extension String {
    /// Without the spaces and line ends lws puts after its reasons.
    fileprivate func trimmingLineEnds() -> String {
        var text = Substring(self)
        while let last = text.last, last == " " || last == "\n" || last == "\r" { text = text.dropLast() }
        return String(text)
    }
}
