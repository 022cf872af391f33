# Shared by hack/compare.sh and hack/compare-perf.sh: LlamaIndex, pinned in
# hack/compare/requirements.txt, in bin/compare-venv, rebuilt when that file
# changes (~400 MB, ~1 min). Source it after setting root and defining log;
# it sets venv.
venv="$root/bin/compare-venv"
req="$root/hack/compare/requirements.txt"
stamp="$(sha256sum "$req" | cut -c1-16)"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    log "installing python3-venv"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-venv >&2
  fi
  started=$SECONDS
  log "installing LlamaIndex into bin/compare-venv (pinned in hack/compare/requirements.txt)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$req" >&2
  "$venv/bin/python" -c 'import llama_index.core, llama_index.vector_stores.milvus, llama_index.embeddings.openai_like' >&2
  echo "$stamp" >"$venv/.stamp"
  log "installed in $((SECONDS - started)) s"
fi
