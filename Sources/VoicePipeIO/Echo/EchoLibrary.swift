import CSpeexDSP
import CWebRTCShim
import Glibc
import VoicePipeCore

/// A shared library an echo backend opens at run time (`dlopen`, never closed), so that a machine
/// without it still starts `voicepipe`: only the backends on it are unavailable, with
/// ``EchoLibraryUnavailable`` saying which file is missing and what to install.
struct EchoLibrary: @unchecked Sendable {
    /// A library file by its soname, and the Debian package that installs it.
    struct File: Sendable, Hashable {
        let name: String
        let package: String

        static let speexDSP = File(name: "libspeexdsp.so.1", package: "libspeexdsp1")
        static let webRTC = File(name: String(cString: vp_webrtc_library_file()), package: "libwebrtc-audio-processing1")
    }

    let file: File
    /// The backend named in the errors.
    let backend: EchoBackend
    // Safety: the handle of a library that is never closed; dlsym on it is thread-safe.
    private let handle: UnsafeMutableRawPointer

    /// Opens `file` with every symbol bound at once (`RTLD_NOW`), kept out of the global namespace.
    /// - Throws: ``EchoLibraryUnavailable`` with ``EchoLibraryUnavailable/Missing/library`` and
    ///   `dlerror()`'s text when the loader cannot open it.
    static func open(_ file: File, for backend: EchoBackend) throws(EchoLibraryUnavailable) -> EchoLibrary {
        _ = dlerror()
        guard let handle = dlopen(file.name, RTLD_NOW | RTLD_LOCAL) else {
            throw EchoLibraryUnavailable(backend: backend, library: file.name, package: file.package, missing: .library, loaderMessage: loaderMessage())
        }
        return EchoLibrary(file: file, backend: backend, handle: handle)
    }

    /// The function `symbol`, as the C type `type` its header declares.
    /// - Throws: ``EchoLibraryUnavailable`` with ``EchoLibraryUnavailable/Missing/symbol(_:)``
    ///   when the library has no such symbol (another version of it).
    func function<Function>(_ symbol: String, as type: Function.Type) throws(EchoLibraryUnavailable) -> Function {
        unsafeBitCast(try address(of: symbol), to: Function.self)
    }

    /// The address of `symbol` in the library.
    /// - Throws: ``EchoLibraryUnavailable`` with ``EchoLibraryUnavailable/Missing/symbol(_:)``.
    func address(of symbol: String) throws(EchoLibraryUnavailable) -> UnsafeMutableRawPointer {
        _ = dlerror()
        guard let address = dlsym(handle, symbol) else {
            throw EchoLibraryUnavailable(backend: backend, library: file.name, package: file.package, missing: .symbol(symbol), loaderMessage: Self.loaderMessage())
        }
        return address
    }

    private static func loaderMessage() -> String {
        guard let message = dlerror() else { return "no reason given" }
        return String(cString: message)
    }
}

/// The speexdsp functions the speex backends call, resolved from `libspeexdsp.so.1`; their types
/// come from speexdsp's headers (CSpeexDSP).
struct SpeexDSP: @unchecked Sendable {
    // Safety: addresses of functions in a library that is never closed; speexdsp's functions keep
    // no global state, each call works on the state it is given.
    let echoStateInit: vp_speex_echo_state_init_fn
    let echoStateDestroy: vp_speex_echo_state_destroy_fn
    let echoCancellation: vp_speex_echo_cancellation_fn
    let echoStateReset: vp_speex_echo_state_reset_fn
    let echoControl: vp_speex_echo_ctl_fn
    let preprocessStateInit: vp_speex_preprocess_state_init_fn
    let preprocessStateDestroy: vp_speex_preprocess_state_destroy_fn
    let preprocessRun: vp_speex_preprocess_run_fn
    let preprocessControl: vp_speex_preprocess_ctl_fn

    /// Resolves every function in `library`.
    /// - Throws: ``EchoLibraryUnavailable`` naming the first symbol it lacks.
    init(_ library: EchoLibrary) throws(EchoLibraryUnavailable) {
        echoStateInit = try library.function("speex_echo_state_init", as: vp_speex_echo_state_init_fn.self)
        echoStateDestroy = try library.function("speex_echo_state_destroy", as: vp_speex_echo_state_destroy_fn.self)
        echoCancellation = try library.function("speex_echo_cancellation", as: vp_speex_echo_cancellation_fn.self)
        echoStateReset = try library.function("speex_echo_state_reset", as: vp_speex_echo_state_reset_fn.self)
        echoControl = try library.function("speex_echo_ctl", as: vp_speex_echo_ctl_fn.self)
        preprocessStateInit = try library.function("speex_preprocess_state_init", as: vp_speex_preprocess_state_init_fn.self)
        preprocessStateDestroy = try library.function("speex_preprocess_state_destroy", as: vp_speex_preprocess_state_destroy_fn.self)
        preprocessRun = try library.function("speex_preprocess_run", as: vp_speex_preprocess_run_fn.self)
        preprocessControl = try library.function("speex_preprocess_ctl", as: vp_speex_preprocess_ctl_fn.self)
    }

    /// The process's one load of speexdsp: Swift runs a static's initialiser once, under a lock,
    /// so concurrent first uses open the library once and all see the same outcome.
    private static let process = Result { () throws(EchoLibraryUnavailable) in try SpeexDSP(EchoLibrary.open(.speexDSP, for: .speex)) }

    /// speexdsp's functions, loading the library on first use.
    /// - Parameter backend: the backend to name if it is missing.
    /// - Throws: ``EchoLibraryUnavailable`` when the library or one of its functions is missing.
    static func load(for backend: EchoBackend) throws(EchoLibraryUnavailable) -> SpeexDSP {
        do {
            return try process.get()
        } catch {
            throw error.naming(backend)
        }
    }
}

/// What the WebRTC shim needs from `libwebrtc_audio_processing.so.1`, resolved by the names the
/// shim gives (`vp_webrtc_symbol_name`): `webrtc::AudioProcessing::Create`, and the library's keys
/// for the options it is created with.
struct WebRTCAudioProcessing: @unchecked Sendable {
    // Safety: addresses in a library that is never closed, only read.
    let entryPoints: VPWebRTCEntryPoints

    /// Resolves every symbol the shim names in `library`.
    /// - Throws: ``EchoLibraryUnavailable`` naming the first symbol the library lacks.
    init(_ library: EchoLibrary) throws(EchoLibraryUnavailable) {
        func resolve(_ symbol: VPWebRTCSymbol) throws(EchoLibraryUnavailable) -> UnsafeRawPointer {
            // Every symbol below VPWebRTCSymbolCount has a name; an empty one resolves to nothing.
            UnsafeRawPointer(try library.address(of: vp_webrtc_symbol_name(symbol).map { String(cString: $0) } ?? ""))
        }
        // One per VPWebRTCSymbol: the tuple's arity is the C array's, so a new symbol fails to compile here.
        entryPoints = VPWebRTCEntryPoints(addresses: (try resolve(VPWebRTCSymbolCreate), try resolve(VPWebRTCSymbolExtendedFilterKey),
                                                      try resolve(VPWebRTCSymbolDelayAgnosticKey), try resolve(VPWebRTCSymbolExperimentalAgcKey)))
    }

    /// The process's one load of the library (a static's initialiser runs once, under a lock).
    private static let process = Result { () throws(EchoLibraryUnavailable) in try WebRTCAudioProcessing(EchoLibrary.open(.webRTC, for: .webrtc)) }

    /// The entry point, loading the library on first use.
    /// - Throws: ``EchoLibraryUnavailable`` when the library or its entry point is missing.
    static func load() throws(EchoLibraryUnavailable) -> WebRTCAudioProcessing { try process.get() }
}
