#!/usr/bin/env python3
"""STOI and wideband PESQ of signals against a clean reference, for the echo-control tests.

Usage: speech_scores.py RATE START END REFERENCE NAME=FILE[@LAG] ...
Each file is raw little-endian Float32 mono; START and END are the reference's sample range, and a
signal with @LAG is read LAG samples later (a canceller's latency). Prints one JSON object:
{"NAME": {"stoi": …, "pesq": …}, …}. Exits 3 with a sentence when pystoi or pesq is missing.
"""
import json
import sys

try:
    import numpy as np
    from pesq import pesq
    from pystoi import stoi
except ImportError as error:
    print(f"speech_scores.py needs pystoi and pesq ({error}); pip install -r {sys.path[0]}/requirements.txt", file=sys.stderr)
    sys.exit(3)


def main():
    rate, start, end = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    reference = np.fromfile(sys.argv[4], dtype="<f4").astype(np.float64)[start:end]
    scores = {}
    for argument in sys.argv[5:]:
        name, spec = argument.split("=", 1)
        path, _, lag = spec.partition("@")
        lag = int(lag or 0)
        signal = np.fromfile(path, dtype="<f4").astype(np.float64)[start + lag:end + lag]
        scores[name] = {"stoi": float(stoi(reference, signal, rate, extended=False)),
                        "pesq": float(pesq(rate, reference, signal, "wb"))}
    print(json.dumps(scores))


if __name__ == "__main__":
    main()
