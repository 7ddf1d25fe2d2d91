#!/usr/bin/env bash
#
# make-samples.sh - regenerate the speech samples in Samples/Audio/.
#
# Produces four short (~2.5-3 s) English speech clips that exercise a
# converter to 16 kHz mono Int16 from different rates, channel counts and
# sample formats:
#
#   speech-48k-stereo-f32.wav   48 kHz,    2 ch, 32-bit float WAV (R channel delayed 0.5 ms)
#   speech-44k1-stereo-s16.wav  44.1 kHz,  2 ch, 16-bit PCM WAV   (R channel 3 dB quieter)
#   speech-8k-mono-s16.wav      8 kHz,     1 ch, 16-bit PCM WAV
#   speech-22k05-mono-s16.wav   22.05 kHz, 1 ch, 16-bit PCM WAV   (espeak-ng's native rate)
#
# Pipeline per file:
#   espeak-ng (en-us, 170 wpm; 22.05 kHz mono s16)
#   -> sox: strip espeak's own leading/trailing zero samples (silence, threshold 0)
#   -> remix to the target channel count (optionally with a gain on one channel)
#   -> rate -v (very high quality) to the target rate
#   -> optional per-channel delay
#   -> gain -n -3 (normalise the peak to -3 dBFS)
#   -> pad 0.1 0.1 (100 ms of exact digital zeros at start and end; applied last,
#      so no filter ringing or gain can touch it)
#
# Determinism: espeak-ng is deterministic and sox is run with -D (no dither),
# so re-running this script produces byte-identical files.
#
# Idempotent: every file is rebuilt from scratch in a temporary directory and
# then moved into place; running the script again just overwrites them.
#
# Requirements (Debian/Ubuntu):  apt-get install -y espeak-ng sox
# Usage:                         Samples/Audio/make-samples.sh   (from any directory)

set -euo pipefail

OUT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

for tool in espeak-ng sox; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: '$tool' not found; install with: apt-get install -y espeak-ng sox" >&2
        exit 1
    fi
done

WORK_DIR="$(mktemp -d)"
trap 'rm -rf "$WORK_DIR"' EXIT

VOICE="en-us"
SPEED=170           # words per minute
PEAK_DB=-3          # normalisation target, dBFS
PAD_S=0.1           # digital silence at each end, seconds

# make_sample OUT_NAME "SENTENCE" OUTPUT_FORMAT_OPTIONS SOX_EFFECTS...
#   OUTPUT_FORMAT_OPTIONS: sox output options, e.g. "-e signed-integer -b 16"
#   SOX_EFFECTS: the channel/rate/delay effects for this file
make_sample() {
    local name="$1" text="$2" out_opts="$3"
    shift 3
    local raw="$WORK_DIR/${name%.wav}.espeak.wav"
    local tmp="$WORK_DIR/$name"

    espeak-ng -v "$VOICE" -s "$SPEED" -w "$raw" "$text"

    # shellcheck disable=SC2086  # out_opts is deliberately word-split
    sox -D -V2 "$raw" -t wav $out_opts "$tmp" \
        silence 1 1s 0 reverse silence 1 1s 0 reverse \
        "$@" \
        gain -n "$PEAK_DB" \
        pad "$PAD_S" "$PAD_S"

    mv -f "$tmp" "$OUT_DIR/$name"
    echo "wrote $OUT_DIR/$name"
}

# 1. 48 kHz stereo float; right channel delayed by 24 samples (0.5 ms).
make_sample speech-48k-stereo-f32.wav \
    "VoicePipe converts this stereo clip to mono." \
    "-e floating-point -b 32" \
    remix 1 1 rate -v 48000 delay 0 24s

# 2. 44.1 kHz stereo s16; right channel 3 dB quieter than the left.
make_sample speech-44k1-stereo-s16.wav \
    "VoicePipe mixes both channels down to one." \
    "-e signed-integer -b 16" \
    remix 1 1v0.7079 rate -v 44100

# 3. 8 kHz mono s16 (telephone band; the converter must upsample).
make_sample speech-8k-mono-s16.wav \
    "Telephone speech, upsampled by VoicePipe." \
    "-e signed-integer -b 16" \
    remix 1 rate -v 8000

# 4. 22.05 kHz mono s16 (espeak-ng's native rate; rate -v is a no-op here).
make_sample speech-22k05-mono-s16.wav \
    "VoicePipe resamples this to sixteen kilohertz." \
    "-e signed-integer -b 16" \
    remix 1 rate -v 22050

# 5. A person in a room who speaks over the reply once (for `voicepipe session --room`): sentence 4,
#    1.9 s of silence (the turn ends and the reply to it starts playing), then sentence 2 over that
#    reply (a barge-in), then 5 s of silence in which the second reply plays out. 16 kHz mono s16,
#    built from the two files above with sox alone, so it is as deterministic as they are.
sox -D -V2 "$OUT_DIR/speech-22k05-mono-s16.wav" -r 16000 -e signed-integer -b 16 "$WORK_DIR/first.wav" rate -v 16000
sox -D -V2 "$OUT_DIR/speech-44k1-stereo-s16.wav" -r 16000 -e signed-integer -b 16 "$WORK_DIR/second.wav" remix 1 rate -v 16000
sox -D -V2 "$WORK_DIR/first.wav" "$WORK_DIR/first-padded.wav" pad 0 1.9
sox -D -V2 "$WORK_DIR/second.wav" "$WORK_DIR/second-padded.wav" pad 0 5
sox -D -V2 "$WORK_DIR/first-padded.wav" "$WORK_DIR/second-padded.wav" "$WORK_DIR/room-barge-in-16k-mono-s16.wav"
mv -f "$WORK_DIR/room-barge-in-16k-mono-s16.wav" "$OUT_DIR/room-barge-in-16k-mono-s16.wav"
echo "wrote $OUT_DIR/room-barge-in-16k-mono-s16.wav"
