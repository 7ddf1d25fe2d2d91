import VoicePipeCore

/// An echo backend's shared library that could not be opened at run time, or that lacks a
/// function the backend calls (a version VoicePipe was not built for). The sentence names the
/// backend, the library file, the loader's own message, and what to do about it.
public struct EchoLibraryUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the loader could not find.
    public enum Missing: Sendable, Hashable {
        /// The library file itself (absent, unreadable, or not a shared object).
        case library
        /// One function, by its symbol name, in a library that did open.
        case symbol(String)
    }

    /// The backend the user chose (`speex`, `webrtc`, …).
    public let backend: EchoBackend
    /// The library file the backend opens (its soname, `libspeexdsp.so.1`).
    public let library: String
    /// The Debian package that installs it (`libspeexdsp1`).
    public let package: String
    /// The library, or the symbol in it, that was not found.
    public let missing: Missing
    /// `dlerror()`'s text, as the dynamic loader said it.
    public let loaderMessage: String

    public init(backend: EchoBackend, library: String, package: String, missing: Missing, loaderMessage: String) {
        self.backend = backend
        self.library = library
        self.package = package
        self.missing = missing
        self.loaderMessage = loaderMessage
    }

    /// The same failure, told of another backend on the same library (speexdsp's three).
    func naming(_ backend: EchoBackend) -> EchoLibraryUnavailable {
        EchoLibraryUnavailable(backend: backend, library: library, package: package, missing: missing, loaderMessage: loaderMessage)
    }

    /// What went wrong and what to do, without the backend's name: the reason of
    /// ``EchoControlError/backendUnavailable(backend:reason:)``, so both errors read the same.
    public var reason: String {
        let found = switch missing {
        case .library: "\(library) could not be loaded (\(loaderMessage))"
        case .symbol(let symbol): "\(library) has no \(symbol) (\(loaderMessage)), so it is not the version VoicePipe was built for"
        }
        return "\(found); install it with 'apt-get install \(package)', or choose '--echo \(alternative.rawValue)' or '--echo off'"
    }

    public var description: String { echoControlError.description }

    /// As the error the cancellers' initialisers throw.
    public var echoControlError: EchoControlError { .backendUnavailable(backend: backend.rawValue, reason: reason) }

    /// The backend to suggest instead: one on the other library.
    private var alternative: EchoBackend { backend == .webrtc ? .speex : .webrtc }
}
