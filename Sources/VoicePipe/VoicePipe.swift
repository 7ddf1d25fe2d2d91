// The one module an integrator depends on: every layer of VoicePipe under one product, so a
// program needs one line in its manifest and may import this module or the layers by name.
@_exported import VoicePipeClient
@_exported import VoicePipeCore
@_exported import VoicePipeIO
@_exported import VoicePipeProtocols
@_exported import VoicePipeSession
