/* WebRTC's audio processing module has a C++ API only; CWebRTCShim includes its headers and gives
   Swift a C interface. This module exists so that pkg-config supplies the header path, the defines
   (WEBRTC_POSIX, WEBRTC_AUDIO_PROCESSING_ONLY_BUILD) and the library to its dependents. */
