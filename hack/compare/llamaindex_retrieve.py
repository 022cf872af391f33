"""LlamaIndex's default retrieval pipelines on the eval corpus, for `make compare`.

Ingests the corpus into a Milvus (Lite) server with an OpenAI-compatible
embedder, in four configurations, one collection each:

  llamaindex-sentence-dense    SentenceSplitter() defaults (chunk_size 1024,
                               chunk_overlap 200), dense search only
  llamaindex-sentence-hybrid   the same chunks, dense + Milvus BM25 built-in
                               function, fused by RRF (k 60)
  llamaindex-markdown-hybrid   MarkdownNodeParser(), dense + BM25, RRF
  llamaindex-markdown-sentence-hybrid
                               MarkdownNodeParser() then SentenceSplitter()
                               (LlamaIndex's remedy for a section too long
                               for one node), dense + BM25, RRF

then retrieves the top k (10) for every question and writes one JSON file
that `ragroute eval --peer` scores with ragroute's own scorer:

  {"embedder": "all-MiniLM-L6-v2/384",
   "configs": {"llamaindex-sentence-dense": {
       "chunks": 508, "largest_chunk_bytes": 5012, "ingest_seconds": 52.9,
       "questions": {"q003": {"ms": 38.8, "results": [
           {"source": "argocd/faq.md", "text": "...", "score": 0.61,
            "heading_path": ["FAQ", "..."]}]}}}}}

A configuration whose ingestion fails (MarkdownNodeParser makes one node of
a long section, and Milvus refuses a text over its 65,535-byte VARCHAR
limit) is a result too: "failure" says why, "questions" is empty, and the
other configurations still run; the script fails only when all do. Without
--questions (a corpus without a question set) only ingestion is measured.

- source is "<corpus folder name>/<path relative to it>", as ragroute names
  a document; text is node.get_content() (the chunk without metadata);
  heading_path only for the Markdown parser: the node's header_path
  metadata split into headings, plus the node's own heading (LlamaIndex's
  header_path holds the parents only), worked out before a SentenceSplitter
  cuts the node, so every part keeps its section's path (kept in metadata
  left out of the embedded text); score is what Milvus returned (the inner
  product for dense, the RRF score for hybrid).
- ms is the wall time of retriever.retrieve(question): query embedding,
  the Milvus search and LlamaIndex's node rebuilding. One untimed retrieval
  warms each configuration up first.
- ingest_seconds: node parsing, embedding and insertion into Milvus.

Everything is LlamaIndex's defaults except, on purpose:
- Documents are read by SimpleDirectoryReader from the sorted list of
  Markdown files (SOURCE.md left out, as ragroute does), with file_path
  metadata set to the source name instead of the absolute path: LlamaIndex
  puts "file_path: ..." into every embedded text, and an absolute path would
  make results depend on where the corpus lies.
- Embedder inputs are cut client-side at --max-input-tokens (256) BERT
  WordPiece tokens, at a word boundary, exactly as ragroute's embeddings
  client does (internal/tokenize.Truncate with the same vocabulary): llama.cpp
  refuses inputs longer than its context, and sentence-transformers (and so
  LlamaIndex's HuggingFaceEmbedding) would cut MiniLM's inputs at 256 too.
  The full chunk is still stored and BM25-indexed.
- No network besides the given servers: SentenceSplitter's default tokenizer
  is tiktoken's cl100k_base and its sentence splitter NLTK's punkt_tab, and
  llama-index-core ships both files (llama_index/core/_static), so nothing
  is downloaded; this script fails rather than fetch them (see
  _check_offline_data).
"""

import argparse
import functools
import json
import os
import re
import sys
import time
import unicodedata
from pathlib import Path

CONFIGS = (
    "llamaindex-sentence-dense",
    "llamaindex-sentence-hybrid",
    "llamaindex-markdown-hybrid",
    "llamaindex-markdown-sentence-hybrid",
)

# PATH_KEY is the metadata key that carries a Markdown node's heading path
# (JSON) to its SentenceSplitter parts; it is never embedded.
PATH_KEY = "compare_heading_path"


class WordPiece:
    """Counts BERT-uncased WordPiece tokens, as ragroute's internal/tokenize does.

    Counts add up across whitespace, so a text is counted word by word.
    """

    MAX_WORD_CHARS = 100

    def __init__(self, vocab_path):
        self.starts, self.continues = set(), set()
        for line in Path(vocab_path).read_text(encoding="utf-8").split("\n"):
            piece = line.rstrip("\r")
            if piece in ("", "##"):
                continue
            if piece.startswith("##"):
                self.continues.add(piece[2:])
            else:
                self.starts.add(piece)
        self.longest = max(len(p) for p in self.starts | self.continues)

    @staticmethod
    def _is_punct(ch):
        c = ord(ch)
        if 33 <= c <= 47 or 58 <= c <= 64 or 91 <= c <= 96 or 123 <= c <= 126:
            return True
        return unicodedata.category(ch).startswith("P")

    @staticmethod
    def _is_cjk(ch):
        c = ord(ch)
        return (
            0x4E00 <= c <= 0x9FFF
            or 0x3400 <= c <= 0x4DBF
            or 0x20000 <= c <= 0x2A6DF
            or 0x2A700 <= c <= 0x2B73F
            or 0x2B740 <= c <= 0x2B81F
            or 0x2B820 <= c <= 0x2CEAF
            or 0xF900 <= c <= 0xFAFF
            or 0x2F800 <= c <= 0x2FA1F
        )

    def _pieces(self, word):
        if not word:
            return 0
        if len(word) > self.MAX_WORD_CHARS:
            return 1
        n, start, vocab = 0, 0, self.starts
        while start < len(word):
            for end in range(min(len(word), start + self.longest), start, -1):
                if word[start:end] in vocab:
                    break
            else:
                return 1  # the whole word is [UNK]
            n += 1
            start, vocab = end, self.continues
        return n

    @functools.lru_cache(maxsize=1 << 17)
    def count_word(self, word):
        """Tokens of one whitespace-free word: BERT's basic tokenization, then WordPiece."""
        n, buf = 0, []
        for ch in unicodedata.normalize("NFD", word.lower()):
            cat = unicodedata.category(ch)
            if ch == "\0" or ch == "\ufffd" or cat == "Cf" or (cat == "Cc" and not ch.isspace()):
                continue
            if cat == "Mn":
                continue
            if ch.isspace():
                n += self._pieces("".join(buf))
                buf = []
            elif self._is_punct(ch) or self._is_cjk(ch):
                n += self._pieces("".join(buf)) + 1
                buf = []
            else:
                buf.append(ch)
        return n + self._pieces("".join(buf))

    def count(self, text):
        return sum(self.count_word(w) for w in text.split())

    def truncate(self, text, limit):
        """The longest prefix of text, ending at a word, of at most limit tokens."""
        if limit <= 0 or self.count(text) <= limit:
            return text
        used, end = 0, 0
        for m in re.finditer(r"\S+", text):
            n = self.count_word(m.group())
            if used + n > limit:
                break
            used, end = used + n, m.end()
        return text[:end]


def _check_offline_data():
    """Fail if LlamaIndex would download tiktoken's or NLTK's data."""
    import llama_index.core

    static = Path(llama_index.core.__file__).parent / "_static"
    need = [
        # sha1 of tiktoken's cl100k_base URL: the name of its cache file
        static / "tiktoken_cache" / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
        static / "nltk_cache" / "tokenizers" / "punkt_tab",
        static / "nltk_cache" / "corpora" / "stopwords",
    ]
    missing = [str(p) for p in need if not p.exists()]
    if missing:
        sys.exit("llamaindex_retrieve: llama-index-core ships no " + ", ".join(missing) + "; it would download them")


def make_embedder(base_url, model, dims, wordpiece, max_tokens, query_prefix="", document_prefix=""):
    from llama_index.embeddings.openai_like import OpenAILikeEmbedding

    def cutter(prefix):
        # As ragroute's model.WithPrefix: the text is cut so that prefix and
        # text together fit in max_tokens, then the prefix goes in front.
        if max_tokens <= 0:
            return lambda t: prefix + t
        budget = max_tokens - wordpiece.count(prefix)
        if budget < 1:
            sys.exit(f"llamaindex_retrieve: prefix {prefix!r} leaves nothing of {max_tokens} input tokens")
        return lambda t: prefix + wordpiece.truncate(t, budget)

    cut, qcut = cutter(document_prefix), cutter(query_prefix)

    class TruncatingEmbedding(OpenAILikeEmbedding):
        """OpenAILikeEmbedding that cuts and prefixes its inputs as ragroute's client does."""

        def _get_query_embedding(self, query):
            return self._checked(super()._get_query_embedding(qcut(query)))

        async def _aget_query_embedding(self, query):
            return self._checked(await super()._aget_query_embedding(qcut(query)))

        def _get_text_embedding(self, text):
            return self._checked(super()._get_text_embedding(cut(text)))

        async def _aget_text_embedding(self, text):
            return self._checked(await super()._aget_text_embedding(cut(text)))

        def _get_text_embeddings(self, texts):
            return [self._checked(v) for v in super()._get_text_embeddings([cut(t) for t in texts])]

        async def _aget_text_embeddings(self, texts):
            return [self._checked(v) for v in await super()._aget_text_embeddings([cut(t) for t in texts])]

        @staticmethod
        def _checked(v):
            if len(v) != dims:
                raise ValueError(f"embedder returned {len(v)} dimensions, want {dims}")
            return v

    # dimensions is not sent (ragroute does not send it either: llama.cpp
    # serves the model's own size); the vectors are checked instead.
    return TruncatingEmbedding(model_name=model, api_base=base_url, api_key=os.environ.get("EMBEDDING_API_KEY", "none"))


def load_documents(corpus):
    from llama_index.core import SimpleDirectoryReader

    corpus = Path(corpus).resolve()
    files = sorted(
        p for p in corpus.rglob("*.md") if p.is_file() and p.name != "SOURCE.md"
    )
    if not files:
        sys.exit(f"llamaindex_retrieve: no Markdown files in {corpus}")

    def source(path):
        rel = Path(path).resolve().relative_to(corpus).as_posix()
        return {"file_path": f"{corpus.name}/{rel}", "file_name": Path(path).name}

    return SimpleDirectoryReader(input_files=files, file_metadata=source).load_data()


def headings_of(document_text):
    """Every ATX heading text of a document, as MarkdownNodeParser reads them."""
    return {m.group(2) for m in re.finditer(r"(?m)^(#+)\s(.*)$", document_text)}


def split_header_path(header_path, known):
    """Splits LlamaIndex's "/a/b/" header_path back into headings.

    A heading may itself hold a "/", so the split is the one whose parts are
    all headings of the document (the plain split when none fits).
    """
    inner = header_path[1:-1] if len(header_path) >= 2 else ""
    if not inner:
        return []
    parts = inner.split("/")

    @functools.lru_cache(maxsize=None)
    def solve(i):
        if i == len(parts):
            return ()
        for j in range(len(parts), i, -1):
            head = "/".join(parts[i:j])
            if head in known:
                rest = solve(j)
                if rest is not None:
                    return (head,) + rest
        return None

    found = solve(0)
    return list(found) if found is not None else parts


def heading_path(node, known):
    path = split_header_path(node.metadata.get("header_path", "/"), known)
    first = node.get_content().split("\n", 1)[0]
    m = re.match(r"^(#+)\s(.*)", first)
    if m:
        path.append(m.group(2))
    return [h.strip() for h in path]


def milvus_store(uri, collection, dimensions, hybrid):
    """A fresh MilvusVectorStore: dense, or dense + Milvus BM25 fused by RRF (k 60)."""
    from llama_index.vector_stores.milvus import MilvusVectorStore
    from llama_index.vector_stores.milvus.utils import BM25BuiltInFunction

    return MilvusVectorStore(
        uri=uri,
        collection_name=collection,
        dim=dimensions,
        overwrite=True,
        enable_sparse=hybrid,
        sparse_embedding_function=BM25BuiltInFunction() if hybrid else None,
        hybrid_ranker="RRFRanker",
        hybrid_ranker_params={"k": 60},
        use_async_client=False,
    )


def parse_nodes(name, documents):
    """The configuration's nodes, each Markdown node tagged with its heading path."""
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

    if "-markdown-" not in name:
        return SentenceSplitter().get_nodes_from_documents(documents)
    nodes = MarkdownNodeParser().get_nodes_from_documents(documents)
    known = {d.metadata["file_path"]: headings_of(d.get_content()) for d in documents}
    for n in nodes:
        n.metadata[PATH_KEY] = json.dumps(heading_path(n, known.get(n.metadata.get("file_path", ""), set())))
        for keys in (n.excluded_embed_metadata_keys, n.excluded_llm_metadata_keys):
            if PATH_KEY not in keys:
                keys.append(PATH_KEY)
    if "-sentence-" in name:
        # As an IngestionPipeline([MarkdownNodeParser(), SentenceSplitter()])
        # runs it: the parts inherit their node's metadata.
        nodes = SentenceSplitter()(nodes)
    return nodes


def run_config(name, documents, questions, embed_model, args):
    from llama_index.core import StorageContext, VectorStoreIndex

    hybrid = name.endswith("-hybrid")
    markdown = "-markdown-" in name
    started = time.perf_counter()
    nodes = parse_nodes(name, documents)
    largest = max((len(n.get_content().encode("utf-8")) for n in nodes), default=0)
    result = {"chunks": len(nodes), "largest_chunk_bytes": largest}
    try:
        store = milvus_store(args.milvus_uri, name.replace("-", "_"), args.dimensions, hybrid)
        index = VectorStoreIndex(
            nodes,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=embed_model,
        )
    except Exception as e:  # noqa: BLE001 - any failure is this configuration's result
        result["ingest_seconds"] = round(time.perf_counter() - started, 2)
        reason = " ".join(f"{type(e).__name__}: {e}".split())
        result["failure"] = reason[:500]
        result["questions"] = {}
        print(f"llamaindex: {name}: {len(nodes)} chunks (largest {largest:,} bytes), ingestion FAILED: {reason[:500]}",
              file=sys.stderr)
        return result
    ingest_seconds = time.perf_counter() - started
    result["ingest_seconds"] = round(ingest_seconds, 2)
    if not questions:
        print(f"llamaindex: {name}: {len(nodes)} chunks (largest {largest:,} bytes), ingest {ingest_seconds:.1f} s",
              file=sys.stderr)
        result["questions"] = {}
        return result

    retriever = index.as_retriever(
        similarity_top_k=args.top_k,
        vector_store_query_mode="hybrid" if hybrid else "default",
    )
    retriever.retrieve("warm-up")
    out = {}
    for q in questions:
        t0 = time.perf_counter()
        hits = retriever.retrieve(q["question"])
        ms = (time.perf_counter() - t0) * 1000
        results = []
        for h in hits:
            r = {
                "source": h.node.metadata.get("file_path", ""),
                "text": h.node.get_content(),
                "score": h.score,
            }
            if markdown:
                r["heading_path"] = json.loads(h.node.metadata[PATH_KEY])
            results.append(r)
        out[q["id"]] = {"ms": round(ms, 2), "results": results}
    total = sum(v["ms"] for v in out.values())
    print(
        f"llamaindex: {name}: {len(nodes)} chunks, ingest {ingest_seconds:.1f} s, "
        f"{len(out)} questions in {total / 1000:.1f} s",
        file=sys.stderr,
    )
    result["questions"] = out
    return result


def main():
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--questions", default="", help="questions, JSON lines; none: measure ingestion only")
    ap.add_argument("--milvus-uri", required=True)
    ap.add_argument("--embedding-base-url", required=True)
    ap.add_argument("--embedding-model", required=True)
    ap.add_argument("--dimensions", type=int, default=384)
    ap.add_argument("--max-input-tokens", type=int, default=256,
                    help="cut embedder inputs to this many WordPiece tokens, as ragroute does (0: no limit)")
    ap.add_argument("--query-prefix", default="", help="put in front of each question, as ragroute eval --query-prefix")
    ap.add_argument("--document-prefix", default="", help="put in front of each chunk, as ragroute eval --document-prefix")
    ap.add_argument("--vocab", default=str(here.parent.parent / "internal/tokenize/vocab-bert-uncased.txt"))
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    _check_offline_data()
    import logging

    # SimpleDirectoryReader warns that llama-index-readers-file is missing:
    # it is not needed, Markdown is read as plain text.
    logging.getLogger("llama_index.core.readers.file.base").setLevel(logging.ERROR)
    from llama_index.core import Settings

    questions = []
    if args.questions:
        # Several files comma-separated, as ragroute eval reads them.
        questions = [json.loads(l) for f in args.questions.split(",")
                     for l in Path(f).read_text().splitlines() if l.strip()]
    wordpiece = WordPiece(args.vocab)
    embed_model = make_embedder(args.embedding_base_url, args.embedding_model, args.dimensions,
                                wordpiece, args.max_input_tokens, args.query_prefix, args.document_prefix)
    Settings.embed_model = embed_model
    documents = load_documents(args.corpus)
    report = {"embedder": f"{args.embedding_model}/{args.dimensions}", "configs": {}}
    for name in args.configs.split(","):
        if name not in CONFIGS:
            sys.exit(f"llamaindex_retrieve: unknown config {name!r}; want some of {', '.join(CONFIGS)}")
        report["configs"][name] = run_config(name, documents, questions, embed_model, args)
    Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    if all("failure" in c for c in report["configs"].values()):
        sys.exit("llamaindex_retrieve: every configuration failed")


if __name__ == "__main__":
    main()
