"""A cross-encoder on loopback in the /rerank shape ragroute's
rerank.mode crossEncoder speaks (Cohere, Jina, vLLM):

    POST /rerank (or /v1/rerank) {"model", "query", "documents", "top_n"}
      -> {"model", "results": [{"index", "relevance_score"}]}, best first
    GET /health -> {"status": "ok"}

The model is cross-encoder/ms-marco-MiniLM-L-12-v2 as an INT8 ONNX export
(hack/models.sh fetches and checks it), run by onnxruntime; the pair is
tokenized by the model's own tokenizer.json (Hugging Face tokenizers), so
the passage's segment gets token type 1 as in training (llama.cpp's BERT
graph gives every token type 0, which moved 7 of 40 top-10 places on this
corpus: see README.md). The relevance is the sigmoid of the model's logit,
the probability it was trained to give that the passage answers the query,
in [0, 1] as Cohere's, TEI's and vLLM's rerank APIs return it, so a
route's strictFloor reads the same for any of them.

    python rerank.py MODEL_DIR PORT
"""

import json
import math
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime
import tokenizers

MAX_BODY = 4 << 20
MAX_DOCUMENTS = 256
# Pairs scored per forward pass: longer batches pad more and gain little on
# two cores.
BATCH = 8


class CrossEncoder:
    def __init__(self, folder, threads):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            os.path.join(folder, "model.onnx"), options, providers=["CPUExecutionProvider"])
        self.tokenizer = tokenizers.Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        # Query and passage share 512 positions; the passage is cut first.
        self.tokenizer.enable_truncation(512, strategy="only_second")
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.inputs = {i.name for i in self.session.get_inputs()}

    def scores(self, query, documents):
        out = []
        for start in range(0, len(documents), BATCH):
            batch = self.tokenizer.encode_batch([(query, d) for d in documents[start:start + BATCH]])
            feed = {
                "input_ids": np.array([e.ids for e in batch], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in batch], dtype=np.int64),
            }
            logits = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            out.extend(float(x) for x in logits[:, 0])
        return out

    def relevance(self, query, documents):
        return [1 / (1 + math.exp(-x)) for x in self.scores(query, documents)]


class BadRequest(Exception):
    pass


def parse(body):
    try:
        req = json.loads(body)
    except ValueError as e:
        raise BadRequest(f"body is not JSON: {e}")
    if not isinstance(req, dict):
        raise BadRequest("body must be a JSON object")
    query, documents = req.get("query"), req.get("documents")
    if not isinstance(query, str) or not query.strip():
        raise BadRequest("query must be a non-empty string")
    if not isinstance(documents, list) or not all(isinstance(d, str) for d in documents):
        raise BadRequest("documents must be a list of strings")
    if len(documents) > MAX_DOCUMENTS:
        raise BadRequest(f"at most {MAX_DOCUMENTS} documents per request, got {len(documents)}")
    top_n = req.get("top_n", len(documents))
    if not isinstance(top_n, int) or top_n < 0:
        raise BadRequest("top_n must be a non-negative integer")
    return req.get("model", ""), query, documents, top_n


def handler(model, name):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/health":
                return self.reply(200, {"status": "ok"})
            self.reply(404, {"error": f"no route {self.path}"})

        def do_POST(self):
            if self.path not in ("/rerank", "/v1/rerank"):
                return self.reply(404, {"error": f"no route {self.path}"})
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                return self.reply(413, {"error": f"body over {MAX_BODY} bytes"})
            try:
                _, query, documents, top_n = parse(self.rfile.read(length))
            except BadRequest as e:
                return self.reply(400, {"error": str(e)})
            began = time.perf_counter()
            scores = model.relevance(query, documents)
            order = sorted(range(len(scores)), key=lambda i: -scores[i])[:top_n]
            self.reply(200, {"model": name, "results": [{"index": i, "relevance_score": scores[i]} for i in order]},
                       {"X-Rerank-Seconds": f"{time.perf_counter() - began:.4f}"})

        def reply(self, status, obj, headers=None):
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    return Handler


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: rerank.py MODEL_DIR PORT")
    threads = int(os.environ.get("MODEL_THREADS") or os.cpu_count() or 1)
    name = os.environ.get("RERANK_MODEL_NAME", "ms-marco-MiniLM-L-12-v2")
    model = CrossEncoder(sys.argv[1], threads)
    host = os.environ.get("MODEL_HOST", "127.0.0.1")
    server = ThreadingHTTPServer((host, int(sys.argv[2])), handler(model, name))
    print(f"reranker {name} on {host}:{sys.argv[2]} ({threads} threads)", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
