// The C interface of CWebRTCShim.h over webrtc::AudioProcessing (0.3). No exception leaves this
// file: allocation uses nothrow new, and the library reports failures through return codes. The
// library is opened at run time: AudioProcessing::Create is called through its resolved address,
// every other call is virtual, and the options are keyed by the library's own keys (below).
#include "CWebRTCShim.h"

#include <new>

// The defines of webrtc-audio-processing.pc, restated: the shim finds the headers through
// include/webrtc rather than pkg-config, whose -D flags SwiftPM refuses with a warning.
#ifndef WEBRTC_POSIX
#define WEBRTC_POSIX
#endif
#ifndef WEBRTC_AUDIO_PROCESSING_ONLY_BUILD
#define WEBRTC_AUDIO_PROCESSING_ONLY_BUILD
#endif
#include <webrtc/modules/audio_processing/include/audio_processing.h>

namespace {

// The entry points of the vp_webrtc_create running on this thread, for the option keys below.
thread_local const VPWebRTCEntryPoints *creating = nullptr;

void *libraryKey(VPWebRTCSymbol symbol) {
    return const_cast<void *>(creating->addresses[symbol]);
}

}  // namespace

// Config::Set<T> keys an option by identifier<T>(), the address of a static in an inline template:
// the library's copy, not this file's, is what AudioProcessing::Create looks up.
namespace webrtc {
template <> void *Config::identifier<ExtendedFilter>() { return libraryKey(VPWebRTCSymbolExtendedFilterKey); }
template <> void *Config::identifier<DelayAgnostic>() { return libraryKey(VPWebRTCSymbolDelayAgnosticKey); }
template <> void *Config::identifier<ExperimentalAgc>() { return libraryKey(VPWebRTCSymbolExperimentalAgcKey); }
}  // namespace webrtc

struct VPWebRTCProcessor {
    webrtc::AudioProcessing *apm;
    webrtc::StreamConfig stream;
};

namespace {

// webrtc::AudioProcessing::Create(const webrtc::Config &), a static member: a plain function.
using CreateFunction = webrtc::AudioProcessing *(*)(const webrtc::Config &);

webrtc::EchoCancellation::SuppressionLevel suppressionLevel(int level) {
    switch (level) {
    case 0: return webrtc::EchoCancellation::kLowSuppression;
    case 1: return webrtc::EchoCancellation::kModerateSuppression;
    default: return webrtc::EchoCancellation::kHighSuppression;
    }
}

webrtc::NoiseSuppression::Level noiseLevel(int level) {
    switch (level) {
    case 0: return webrtc::NoiseSuppression::kLow;
    case 1: return webrtc::NoiseSuppression::kModerate;
    case 2: return webrtc::NoiseSuppression::kHigh;
    default: return webrtc::NoiseSuppression::kVeryHigh;
    }
}

int configure(webrtc::AudioProcessing *apm, const VPWebRTCConfig *config, VPWebRTCStep *step) {
    int status;
    *step = VPWebRTCStepHighPassFilter;
    if ((status = apm->high_pass_filter()->Enable(config->high_pass_filter != 0)) != 0) return status;
    *step = VPWebRTCStepDriftCompensation;
    if ((status = apm->echo_cancellation()->enable_drift_compensation(false)) != 0) return status;
    *step = VPWebRTCStepSuppressionLevel;
    if ((status = apm->echo_cancellation()->set_suppression_level(suppressionLevel(config->suppression_level))) != 0) return status;
    *step = VPWebRTCStepEchoCancellation;
    if ((status = apm->echo_cancellation()->Enable(true)) != 0) return status;
    *step = VPWebRTCStepNoiseSuppression;
    if ((status = apm->noise_suppression()->set_level(noiseLevel(config->noise_suppression_level))) != 0) return status;
    if ((status = apm->noise_suppression()->Enable(config->noise_suppression != 0)) != 0) return status;
    *step = VPWebRTCStepGainControl;
    if ((status = apm->gain_control()->set_mode(webrtc::GainControl::kAdaptiveDigital)) != 0) return status;
    if ((status = apm->gain_control()->Enable(config->gain_control != 0)) != 0) return status;
    *step = VPWebRTCStepNone;
    return 0;
}

}  // namespace

extern "C" const char *vp_webrtc_library_file(void) { return "libwebrtc_audio_processing.so.1"; }

extern "C" const char *vp_webrtc_symbol_name(VPWebRTCSymbol symbol) {
    switch (symbol) {
    case VPWebRTCSymbolCreate: return "_ZN6webrtc15AudioProcessing6CreateERKNS_6ConfigE";
    case VPWebRTCSymbolExtendedFilterKey: return "_ZZN6webrtc6Config10identifierINS_14ExtendedFilterEEEPvvE14id_placeholder";
    case VPWebRTCSymbolDelayAgnosticKey: return "_ZZN6webrtc6Config10identifierINS_13DelayAgnosticEEEPvvE14id_placeholder";
    case VPWebRTCSymbolExperimentalAgcKey: return "_ZZN6webrtc6Config10identifierINS_15ExperimentalAgcEEEPvvE14id_placeholder";
    default: return nullptr;
    }
}

extern "C" int vp_webrtc_create(const VPWebRTCEntryPoints *entry_points, const VPWebRTCConfig *config, VPWebRTCProcessor **out, VPWebRTCStep *failed_step) {
    *out = nullptr;
    *failed_step = VPWebRTCStepCreate;
    if (entry_points == nullptr) return webrtc::AudioProcessing::kCreationFailedError;
    for (const void *address : entry_points->addresses) {
        if (address == nullptr) return webrtc::AudioProcessing::kCreationFailedError;
    }
    auto create = reinterpret_cast<CreateFunction>(const_cast<void *>(entry_points->addresses[VPWebRTCSymbolCreate]));
    auto *extended = new (std::nothrow) webrtc::ExtendedFilter(config->extended_filter != 0);
    auto *agnostic = new (std::nothrow) webrtc::DelayAgnostic(config->delay_agnostic != 0);
    // The experimental AGC is on by default in 0.3 and drives an analogue volume we do not have.
    auto *experimentalAgc = new (std::nothrow) webrtc::ExperimentalAgc(false);
    if (extended == nullptr || agnostic == nullptr || experimentalAgc == nullptr) {
        delete extended;
        delete agnostic;
        delete experimentalAgc;
        return webrtc::AudioProcessing::kCreationFailedError;
    }
    webrtc::AudioProcessing *apm;
    {
        creating = entry_points;
        webrtc::Config settings;
        settings.Set<webrtc::ExtendedFilter>(extended);
        settings.Set<webrtc::DelayAgnostic>(agnostic);
        settings.Set<webrtc::ExperimentalAgc>(experimentalAgc);
        apm = create(settings);
        creating = nullptr;
    }
    if (apm == nullptr) return webrtc::AudioProcessing::kCreationFailedError;

    webrtc::StreamConfig stream(config->sample_rate_hz, 1, false);
    webrtc::ProcessingConfig processing;
    processing.input_stream() = stream;
    processing.output_stream() = stream;
    processing.reverse_input_stream() = stream;
    processing.reverse_output_stream() = stream;
    *failed_step = VPWebRTCStepInitialize;
    int status = apm->Initialize(processing);
    if (status == 0) status = configure(apm, config, failed_step);
    if (status != 0) {
        delete apm;
        return status;
    }
    VPWebRTCProcessor *processor = new (std::nothrow) VPWebRTCProcessor{apm, stream};
    if (processor == nullptr) {
        delete apm;
        *failed_step = VPWebRTCStepCreate;
        return webrtc::AudioProcessing::kCreationFailedError;
    }
    *failed_step = VPWebRTCStepNone;
    *out = processor;
    return 0;
}

extern "C" void vp_webrtc_destroy(VPWebRTCProcessor *processor) {
    if (processor == nullptr) return;
    delete processor->apm;
    delete processor;
}

extern "C" int vp_webrtc_process_reverse(VPWebRTCProcessor *processor, const float *far, int frames) {
    if (static_cast<size_t>(frames) != processor->stream.num_frames()) return webrtc::AudioProcessing::kBadDataLengthError;
    const float *source[1] = {far};
    // The reverse output is unused without intelligibility enhancement, but the API wants one.
    float scratch[480];
    float *destination[1] = {scratch};
    return processor->apm->ProcessReverseStream(source, processor->stream, processor->stream, destination);
}

extern "C" int vp_webrtc_set_stream_delay(VPWebRTCProcessor *processor, int milliseconds) {
    return processor->apm->set_stream_delay_ms(milliseconds);
}

extern "C" int vp_webrtc_process(VPWebRTCProcessor *processor, const float *near, float *output, int frames) {
    if (static_cast<size_t>(frames) != processor->stream.num_frames()) return webrtc::AudioProcessing::kBadDataLengthError;
    const float *source[1] = {near};
    float *destination[1] = {output};
    return processor->apm->ProcessStream(source, processor->stream, processor->stream, destination);
}

extern "C" int vp_webrtc_reset(VPWebRTCProcessor *processor) {
    return processor->apm->Initialize();
}
