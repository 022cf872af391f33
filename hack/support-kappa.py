#!/usr/bin/env python3
"""Agreement between the support labels and a blind second reading.

test/eval/support/second-reading.jsonl holds a second reader's labels of a
random draw of labels.jsonl's sentences, made without seeing them (the
reader saw each turn's question, fragments, answer and the sentences, and
the labelling rule). Prints raw agreement and Cohen's kappa: the three-way
label, supported against unsupported where both readers see a claim, and
the misapplied flag.  Usage: hack/support-kappa.py [test/eval/support]
"""
import collections
import json
import os
import sys


def kappa(pairs, categories):
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    expected = sum((sum(a == c for a, _ in pairs) / n) * (sum(b == c for _, b in pairs) / n) for c in categories)
    return observed, (observed - expected) / (1 - expected)


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "test", "eval", "support")
    first = {}
    with open(os.path.join(folder, "labels.jsonl")) as f:
        for line in f:
            x = json.loads(line)
            first[f"{x['turn']}#{x['index']}"] = x
    with open(os.path.join(folder, "second-reading.jsonl")) as f:
        second = [json.loads(line) for line in f]
    unknown = [s["id"] for s in second if s["id"] not in first]
    if unknown:
        sys.exit(f"second-reading.jsonl: sentences labels.jsonl lacks: {unknown}")
    labels = [(first[s["id"]]["label"], s["label"]) for s in second]
    claims = [(a, b) for a, b in labels if "no_claim" not in (a, b)]
    misapplied = [(first[s["id"]]["misapplied"], s["misapplied"]) for s in second]
    for name, pairs, categories in [("label (3-way)", labels, ["supported", "unsupported", "no_claim"]),
                                    ("supported vs unsupported", claims, ["supported", "unsupported"]),
                                    ("misapplied", misapplied, [True, False])]:
        observed, k = kappa(pairs, categories)
        print(f"{name:26s} n={len(pairs):3d}  agreement {observed:.3f}  kappa {k:.3f}")
    print("disagreements:", dict(collections.Counter(p for p in labels if p[0] != p[1])))


if __name__ == "__main__":
    main()
