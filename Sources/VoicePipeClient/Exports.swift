/// The pure protocol halves (the embedded runtime's core, SigV4 request building, WebSocket
/// message assembly) lived in this module before they moved to `VoicePipeProtocols`; importing
/// `VoicePipeClient` keeps bringing them, so code written against it needs no new import.
@_exported import VoicePipeProtocols
