"""LlamaIndex's streaming query engine behind an OpenAI-style endpoint, for `make compare-perf`.

Ingests the corpus into Milvus (Lite) as llamaindex_retrieve.py does for
one configuration (SentenceSplitter dense, or SentenceSplitter + Milvus
BM25 hybrid), then serves, on 127.0.0.1:--port,

  GET  /health                 200 once the index is built
  POST /v1/chat/completions    {"messages": [...], "stream": true}: the last
                               user message goes to
                               index.as_query_engine(streaming=True); its
                               response_gen streams back as OpenAI chunks,
                               then a finishing chunk and [DONE]

so that hack/perf asks LlamaIndex exactly as it asks a route. The LLM is a
minimal CustomLLM streaming from --model-url (hack/perf's instant scripted
model, the one the route calls): llama-index-llms-openai pins an openai
client older than the one llama-index-embeddings-openai-like brings. The
server is the standard library's ThreadingHTTPServer: a thread per
request, LlamaIndex's synchronous query engine in each.
"""

import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llamaindex_retrieve as li  # noqa: E402


def make_llm(model_url):
    import httpx
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback

    http = httpx.Client(base_url=model_url.rstrip("/"), timeout=60)

    def chunks(prompt):
        body = {"model": "scripted", "stream": True, "messages": [{"role": "user", "content": prompt}]}
        with http.stream("POST", "/chat/completions", json=body) as resp:
            resp.raise_for_status()
            for line in resp.iter_lines():
                if not line.startswith("data: "):
                    continue
                data = line[len("data: "):]
                if data == "[DONE]":
                    return
                for choice in json.loads(data).get("choices", []):
                    text = choice.get("delta", {}).get("content")
                    if text:
                        yield text

    class ScriptedLLM(CustomLLM):
        @property
        def metadata(self):
            return LLMMetadata(context_window=8192, num_output=1024, model_name="scripted")

        @llm_completion_callback()
        def complete(self, prompt, formatted=False, **kwargs):
            return CompletionResponse(text="".join(chunks(prompt)))

        @llm_completion_callback()
        def stream_complete(self, prompt, formatted=False, **kwargs):
            text = ""
            for delta in chunks(prompt):
                text += delta
                yield CompletionResponse(text=text, delta=delta)

    return ScriptedLLM()


def build_index(args, embed_model):
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.core.node_parser import SentenceSplitter

    hybrid = args.config.endswith("-hybrid")
    started = time.perf_counter()
    nodes = SentenceSplitter().get_nodes_from_documents(li.load_documents(args.corpus))
    store = li.milvus_store(args.milvus_uri, "perf_" + args.config.replace("-", "_"), args.dimensions, hybrid)
    index = VectorStoreIndex(nodes, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed_model)
    print(f"llamaindex: {args.config}: {len(nodes)} chunks, ingest {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return index, hybrid


def serve(args, engine):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            if self.path != "/health":
                self.send_error(404)
                return
            self._send(200, b"ok\n", "text/plain")

        def do_POST(self):
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            question = next((m.get("content", "") for m in reversed(body.get("messages", [])) if m.get("role") == "user"), "")
            if not question:
                self._send(400, b'{"error":{"message":"no user message"}}', "application/json")
                return
            response = engine.query(question)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for delta in response.response_gen:
                self._chunk({"choices": [{"index": 0, "delta": {"content": delta}, "finish_reason": None}]})
            self._chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            self._write(b"data: [DONE]\n\n")
            self._write(b"")

        def _chunk(self, obj):
            obj.update({"id": "chatcmpl-llamaindex", "object": "chat.completion.chunk", "model": "llamaindex"})
            self._write(b"data: " + json.dumps(obj).encode() + b"\n\n")

        def _write(self, data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _send(self, status, data, content_type):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"llamaindex: {args.config}: serving on 127.0.0.1:{args.port}", file=sys.stderr)
    server.serve_forever()


def main():
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--config", required=True, choices=["llamaindex-sentence-dense", "llamaindex-sentence-hybrid"])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--milvus-uri", required=True)
    ap.add_argument("--embedding-base-url", required=True)
    ap.add_argument("--embedding-model", required=True)
    ap.add_argument("--dimensions", type=int, default=384)
    ap.add_argument("--max-input-tokens", type=int, default=256)
    ap.add_argument("--vocab", default=str(here.parent.parent / "internal/tokenize/vocab-bert-uncased.txt"))
    ap.add_argument("--top-k", type=int, default=6)
    ap.add_argument("--model-url", required=True, help="the scripted chat model's OpenAI-compatible base URL (…/v1)")
    args = ap.parse_args()

    li._check_offline_data()
    import logging

    logging.getLogger("llama_index.core.readers.file.base").setLevel(logging.ERROR)
    from llama_index.core import Settings

    embed_model = li.make_embedder(args.embedding_base_url, args.embedding_model, args.dimensions,
                                   li.WordPiece(args.vocab), args.max_input_tokens)
    Settings.embed_model = embed_model
    llm = make_llm(args.model_url)
    Settings.llm = llm
    index, hybrid = build_index(args, embed_model)
    engine = index.as_query_engine(streaming=True, llm=llm, similarity_top_k=args.top_k,
                                   vector_store_query_mode="hybrid" if hybrid else "default")
    engine.query("warm-up").get_response()
    serve(args, engine)


if __name__ == "__main__":
    main()
