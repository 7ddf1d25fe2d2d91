#!/usr/bin/env python3
"""A near-end talker with known words, and a speech recogniser's reading of it, for the echo tests.

Usage:
  speech_words.py speak OUT
      Speaks the first ten Harvard sentences (list 1) with flite's rms voice, 0.5 s apart, and
      writes them to OUT as raw little-endian Float32 mono at 16 kHz. Prints one JSON object:
      {"rate": 16000, "sentences": [{"text": …, "start": …, "end": …}, …]} (sample positions).
  speech_words.py read SPEECH.json NAME=FILE ...
      SPEECH.json is what `speak` printed; each FILE is raw Float32 at 16 kHz aligned with OUT.
      Reads each sentence (its span and 0.25 s either side) with pocketsphinx 5's US English
      acoustic model, a trigram language model of the ten sentences and a dictionary of their
      62 words, and prints {"NAME": {"words": …, "right": …, "errors": …, "heard": [...]}, …}:
      `right` counts the words recognised (neither substituted nor deleted), `errors` counts
      substitutions, deletions and insertions (the word error rate's numerator).
Exits 3 with a sentence when flite or pocketsphinx is missing.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import wave

RATE = 16_000
VOICE = "rms"
GAP_SECONDS = 0.5
MARGIN_SECONDS = 0.25
SENTENCES = [
    "the birch canoe slid on the smooth planks",
    "glue the sheet to the dark blue background",
    "it is easy to tell the depth of a well",
    "these days a chicken leg is a rare dish",
    "rice is often served in round bowls",
    "the juice of lemons makes fine punch",
    "the box was thrown beside the parked truck",
    "the hogs were fed chopped corn and garbage",
    "four hours of steady work faced us",
    "a large size in stockings is hard to sell",
]

try:
    import numpy as np
except ImportError as error:
    print(f"speech_words.py needs numpy ({error}); pip install -r {sys.path[0]}/requirements.txt", file=sys.stderr)
    sys.exit(3)


def speak(out_path):
    """Synthesises the sentences with flite and writes them one after another with gaps."""
    flite = shutil.which("flite")
    if flite is None:
        print("speech_words.py needs flite to speak the near-end sentences: apt-get install flite (scripts/bootstrap does)", file=sys.stderr)
        sys.exit(3)
    gap = np.zeros(int(GAP_SECONDS * RATE), dtype=np.float32)
    pieces, sentences, position = [gap], [], len(gap)
    with tempfile.TemporaryDirectory() as directory:
        for index, text in enumerate(SENTENCES):
            path = os.path.join(directory, f"{index}.wav")
            subprocess.run([flite, "-voice", VOICE, "-t", text, "-o", path], check=True)
            with wave.open(path) as file:
                if file.getframerate() != RATE or file.getnchannels() != 1 or file.getsampwidth() != 2:
                    print(f"flite's {VOICE} voice gave {file.getframerate()} Hz, {file.getnchannels()} channels, "
                          f"{8 * file.getsampwidth()} bits; speech_words.py needs 16 kHz mono 16-bit", file=sys.stderr)
                    sys.exit(3)
                samples = np.frombuffer(file.readframes(file.getnframes()), dtype="<i2").astype(np.float32) / 32768
            sentences.append({"text": text, "start": position, "end": position + len(samples)})
            pieces += [samples, gap]
            position += len(samples) + len(gap)
    np.concatenate(pieces).astype("<f4").tofile(out_path)
    print(json.dumps({"rate": RATE, "sentences": sentences}))


def decoder(directory):
    """pocketsphinx 5's bundled US English model with a language model of the sentences alone."""
    try:
        from pocketsphinx import Decoder, get_model_path
        from pocketsphinx.lm import ArpaBoLM
    except ImportError as error:
        print(f"speech_words.py needs pocketsphinx 5 ({error}); pip install -r {sys.path[0]}/requirements.txt", file=sys.stderr)
        sys.exit(3)
    words = {word for text in SENTENCES for word in text.split()}
    dictionary = os.path.join(directory, "sentences.dict")
    with open(os.path.join(get_model_path(), "en-us", "cmudict-en-us.dict")) as full, open(dictionary, "w") as small:
        small.writelines(line for line in full if line.split()[0].split("(")[0] in words)
    language_model = os.path.join(directory, "sentences.arpa")
    model = ArpaBoLM(text="\n".join(SENTENCES), add_start=True)
    model.compute()
    model.write_file(language_model)
    return Decoder(samprate=RATE, lm=language_model, dict=dictionary, loglevel="FATAL")


def alignment(reference, hypothesis):
    """(right, errors): words matched, and substitutions + deletions + insertions, of the best alignment."""
    rows, columns = len(reference) + 1, len(hypothesis) + 1
    # cost[i][j] = (edit distance, -matches) so that ties prefer the alignment with more matches.
    cost = [[(0, 0)] * columns for _ in range(rows)]
    for i in range(1, rows):
        cost[i][0] = (i, 0)
    for j in range(1, columns):
        cost[0][j] = (j, 0)
    for i in range(1, rows):
        for j in range(1, columns):
            same = reference[i - 1] == hypothesis[j - 1]
            diagonal = cost[i - 1][j - 1]
            cost[i][j] = min((diagonal[0] + (0 if same else 1), diagonal[1] - (1 if same else 0)),
                             (cost[i - 1][j][0] + 1, cost[i - 1][j][1]),
                             (cost[i][j - 1][0] + 1, cost[i][j - 1][1]))
    errors, negative_matches = cost[-1][-1]
    return -negative_matches, errors


def read(speech_path, signals):
    with open(speech_path) as file:
        speech = json.load(file)
    margin = int(MARGIN_SECONDS * speech["rate"])
    results = {}
    with tempfile.TemporaryDirectory() as directory:
        recogniser = decoder(directory)
        for argument in signals:
            name, path = argument.split("=", 1)
            samples = np.fromfile(path, dtype="<f4")
            pcm = np.clip(np.round(samples * 32768), -32768, 32767).astype("<i2")
            words = right = errors = 0
            heard = []
            for sentence in speech["sentences"]:
                start, end = max(0, sentence["start"] - margin), min(len(pcm), sentence["end"] + margin)
                recogniser.start_utt()
                recogniser.process_raw(pcm[start:end].tobytes(), full_utt=True)
                recogniser.end_utt()
                hypothesis = recogniser.hyp().hypstr if recogniser.hyp() is not None else ""
                matched, wrong = alignment(sentence["text"].split(), hypothesis.split())
                words += len(sentence["text"].split())
                right += matched
                errors += wrong
                heard.append(hypothesis)
            results[name] = {"words": words, "right": right, "errors": errors, "heard": heard}
    print(json.dumps(results))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "speak":
        speak(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)


if __name__ == "__main__":
    main()
