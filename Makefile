# ragroute — make help lists the targets.

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

LOCALBIN ?= $(CURDIR)/bin
VERSION ?= 0.1.0
IMG ?= ragroute/ragroute:$(VERSION)
# Image tarballs of make image and make image-kubectl (hack/image).
IMAGE_DIR ?= $(LOCALBIN)/image
KUBECTL_IMG ?= ragroute/kubectl:dev

CONTROLLER_TOOLS_VERSION ?= v0.22.0
HELM_VERSION ?= v3.22.0
GOLANGCI_LINT_VERSION ?= v2.15.0
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)/controller-gen
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)/helm
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

# Go test flags, e.g. make test GOTESTFLAGS='-run TestRoute -v'.
GOTESTFLAGS ?=

.PHONY: all
all: build

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the Go types and markers, and copy them into the chart.
	"$(CONTROLLER_GEN)" crd:allowDangerousTypes=true rbac:roleName=manager-role paths="./..." output:crd:artifacts:config=config/crd/bases
	rm -f charts/ragroute/files/crds/*.yaml
	cp config/crd/bases/*.yaml charts/ragroute/files/crds/
	cp config/rbac/role.yaml charts/ragroute/files/rbac/role.yaml

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate DeepCopy methods.
	"$(CONTROLLER_GEN)" object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## gofmt the tree.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Lint with golangci-lint (pinned; config in .golangci.yml).
	"$(GOLANGCI_LINT)" run ./...

.PHONY: verify
verify: manifests generate ## Fail if generated files or formatting are out of date.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "verify: run make fmt"; exit 1; }
	@git diff --exit-code -- api config charts || { echo "verify: generated files are stale; run make manifests generate and commit"; exit 1; }

.PHONY: build
build: manifests generate vet ## Build bin/ragroute.
	go build -ldflags "-X main.version=$(VERSION)" -o $(LOCALBIN)/ragroute ./cmd/ragroute

# make test runs every benchmark once besides the tests (-benchtime 1x): a
# benchmark that breaks fails the build instead of waiting for `make bench`.
.PHONY: test
test: manifests generate vet testbed image ## Run all tests, and every benchmark once, against a real kube-apiserver, etcd and Milvus Lite, and the chart on a real node (installs them on first run).
	KUBEBUILDER_ASSETS="$$(hack/testbed.sh)" \
	RAGROUTE_MILVUS_LITE="$$(hack/milvus-lite.sh)" \
	RAGROUTE_CHROMIUM="$$(hack/chromium.sh)" \
	RAGROUTE_OPENAI_PYTHON="$$(hack/openai-sdk.sh)" \
	RAGROUTE_MCP_PYTHON="$$(hack/mcp-sdk.sh)" \
	RAGROUTE_KUBE_APISERVER_130="$$(hack/kube-apiserver-1.30.sh)" \
	RAGROUTE_NODE_BIN="$$(hack/node.sh)" \
	RAGROUTE_IMAGE="$(IMG)" RAGROUTE_IMAGE_TAR="$(IMAGE_DIR)/ragroute.tar" \
	RAGROUTE_HELM="$(HELM)" \
	go test ./... -count=1 -bench . -benchtime 1x $(GOTESTFLAGS)
	cd hack/image && go test ./... -count=1

# make e2e: the chart on the test bed's real node, all of it (make test runs
# a bounded version); prints the time from helm install to the first answer
# and from a prompt edit to the new pods serving.
.PHONY: e2e
e2e: manifests testbed image image-kubectl ## The chart on a real node (kubelet + containerd) with the real local models: helm install, the samples with a ConfigMap and a private git source, answers through the route's Service as two users, a prompt edit's roll without a failed turn, helm test, helm uninstall (test/e2e; E2E_MODELS=scripted for the scripted model server).
	@if [ "$(E2E_MODELS)" != scripted ]; then hack/models.sh install && hack/models.sh fetch qwen && hack/models.sh fetch rerank; fi
	KUBEBUILDER_ASSETS="$$(hack/testbed.sh)" \
	$(if $(filter scripted,$(E2E_MODELS)),,RAGROUTE_MODELS="$(CURDIR)/hack/models.sh") \
	RAGROUTE_MILVUS_LITE="$$(hack/milvus-lite.sh)" \
	RAGROUTE_NODE_BIN="$$(hack/node.sh)" \
	RAGROUTE_IMAGE="$(IMG)" RAGROUTE_IMAGE_TAR="$(IMAGE_DIR)/ragroute.tar" RAGROUTE_KUBECTL_IMAGE="$(IMAGE_DIR)/kubectl.tar" \
	RAGROUTE_HELM="$(HELM)" \
	go test ./test/e2e -run TestChartOnARealNode -count=1 -v -timeout 20m -args -e2e.full

.PHONY: bench
bench: testbed ## Print every performance figure (docs/performance.md); BENCH_JSON=path also writes them as JSON.
	@export RAGROUTE_MILVUS_LITE="$$(hack/milvus-lite.sh)"; { \
	  go test ./internal/ingest ./internal/tokenize -run '^$$' -bench . -benchtime 5x && \
	  go test ./internal/knowledge -run '^$$' -bench Search -benchtime 50x && \
	  go test ./internal/route/turn -run '^$$' -bench 'RouteOverhead|CacheHit' -benchtime 500x && \
	  go test ./internal/route/server -run '^$$' -bench 'ConcurrentStreams' -benchtime 2000x && \
	  go test ./internal/route/server -run '^$$' -bench 'IdleStreams' -benchtime 1x && \
	  go test ./internal/route/server -run '^$$' -bench 'SearchMCPBesideHTTP' -benchtime 300x && \
	  go test ./internal/route/server -run '^$$' -bench 'SoakTurns' -benchtime 50000x -timeout 30m; \
	} 2>&1 | go run ./hack/benchjson "$(BENCH_JSON)"

.PHONY: bench-operator
bench-operator: testbed ## The operator at scale on simulated nodes (kwok): 5,000 routes, 500 stores, 50 prompts (BENCH_OPERATOR_ROUTES, _STORES, _PROMPTS); time to Ready, peak RSS, CPU by process, reconciles and writes per route, prompt-edit roll, restart writes, and the goals (BENCH_JSON=path writes them as JSON; RAGROUTE_SCALE_PROFILE=dir writes CPU profiles of the API server and the manager, and its heap; BENCH_OPERATOR_PROFILE_AFTER=200s starts them that long after the first create).
	go build -o $(LOCALBIN)/ragroute ./cmd/ragroute
	KUBEBUILDER_ASSETS="$$(hack/testbed.sh)" \
	RAGROUTE_MILVUS_LITE="$$(hack/milvus-lite.sh)" \
	RAGROUTE_BIN="$(LOCALBIN)/ragroute" \
	BENCH_JSON="$(if $(BENCH_JSON),$(abspath $(BENCH_JSON)))" \
	$(if $(RAGROUTE_SCALE_PROFILE),RAGROUTE_SCALE_PROFILE=$(abspath $(RAGROUTE_SCALE_PROFILE))) go test ./test/scale -run '^TestOperatorScale$$' -count=1 -v -timeout 60m \
		-args -scale.ready-timeout=30m -scale.routes=$(BENCH_OPERATOR_ROUTES) -scale.stores=$(BENCH_OPERATOR_STORES) \
		-scale.prompts=$(BENCH_OPERATOR_PROMPTS) -scale.namespaces=5 -scale.nodes=4 \
		-scale.profile-after=$(BENCH_OPERATOR_PROFILE_AFTER)

# The world make bench-operator creates: a store per 10 routes and a prompt
# per 100 by default (each count must divide evenly over 5 namespaces).
BENCH_OPERATOR_ROUTES ?= 5000
BENCH_OPERATOR_STORES ?= $(shell expr $(BENCH_OPERATOR_ROUTES) / 10)
BENCH_OPERATOR_PROMPTS ?= $(shell expr $(BENCH_OPERATOR_ROUTES) / 100)
BENCH_OPERATOR_PROFILE_AFTER ?= 0s

.PHONY: bench-scale
bench-scale: ## How search cost, ingestion and memory grow with the corpus: the Argo CD corpus at 1, 2, 5 and 10× (perturbed copies), the OpenTelemetry docs and both; search p50/p95 and Milvus CPU per search, ingestion chunks/s and peak RSS, the route's RSS, and the goals (SCALE_MULTIPLES, SCALE_OTEL, SCALE_QUERIES, SCALE_EMBEDDER=hash, BENCH_JSON; docs/performance.md).
	hack/bench-scale.sh

.PHONY: adversarial
adversarial: testbed ## The adversarial ACL harness at scale: 10,000 requests per cache backend with crafted ACLs and identity headers, then the hostile corpus of every hardening pass ingested beside good pages; fails on any leak or lost page (docs/security.md).
	RAGROUTE_MILVUS_LITE="$$(hack/milvus-lite.sh)" \
	go test ./test/adversarial -run 'TestACLAdversarial|TestHostileCorpusAdversarial' -count=1 -v -timeout 30m -args -adversarial.requests=10000

.PHONY: testbed
testbed: $(HELM) ## Install the test bed: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, Milvus Lite, the OpenAI and MCP Python SDKs, Helm, kube-apiserver 1.30 for the chart, and a real node (containerd, kubelet, kube-proxy, CNI plugins; hack/node.sh).
	hack/testbed.sh >/dev/null
	hack/milvus-lite.sh >/dev/null
	hack/openai-sdk.sh >/dev/null
	hack/mcp-sdk.sh >/dev/null
	hack/kube-apiserver-1.30.sh >/dev/null
	hack/node.sh >/dev/null

.PHONY: eval
eval: ## Retrieval quality of the chunking/search ablations with the local all-MiniLM-L6-v2 (EVAL_CORPUS, EVAL_QUESTIONS, EVAL_JSON; EMBEDDER=bge or e5 for the other local embedders, EMBEDDING_BASE_URL/EMBEDDING_MODEL for any other).
	hack/eval.sh

.PHONY: eval-answers
eval-answers: ## Answer quality per answer mode: the questions end to end through the route's turn with the local Qwen2.5-Coder-1.5B (EVAL_CHAT=smollm2 or qwen-0.5b, EVAL_CHAT_URL/EVAL_CHAT_MODEL for another model; EVAL_ANSWERS_LIMIT, EVAL_ANSWERS_MODES, EVAL_ANSWERS_JSON), plus the grounding threshold curve.
	hack/eval-answers.sh

.PHONY: eval-agentic
eval-agentic: ## Single-round vs agentic turns on the multi-part questions (test/eval/multipart.jsonl): part recall of the answer's fragments, grounding, rounds, searches, model calls, time, with the local Qwen2.5-Coder-1.5B and the sample route's cross-encoder (EVAL_CHAT_URL/EVAL_CHAT_MODEL for another model, EVAL_RERANK=0 for no cross-encoder; EVAL_QUESTIONS, EVAL_AGENTIC_LIMIT, EVAL_AGENTIC_MODES, EVAL_AGENTIC_JSON, EVAL_AGENTIC_ARGS).
	hack/eval-agentic.sh

.PHONY: compare
compare: ## ragroute's retrieval side by side with LlamaIndex's default pipelines (SentenceSplitter dense/hybrid, MarkdownNodeParser hybrid, MarkdownNodeParser then SentenceSplitter hybrid; a failed ingestion is a row) on the same Milvus Lite, embedder and questions (EVAL_CORPUS, EVAL_QUESTIONS: none outside argocd, then ingestion only; COMPARE_JSON keeps LlamaIndex's results; installs bin/compare-venv on first run).
	hack/compare.sh

.PHONY: compare-perf
compare-perf: ## ragroute's throughput and latency beside LlamaIndex's streaming query engine on the same embedder, Milvus Lite and scripted model, one turn at a time and 64 streams, re-asked and unseen questions (PERF_STREAMS, PERF_DURATION, PERF_SYSTEMS, PERF_UNSEEN, BENCH_JSON; docs/performance.md).
	hack/compare-perf.sh

.PHONY: demo
demo: manifests ## The main job end to end on this machine: real local models (Qwen2.5-Coder-1.5B; DEMO_CHAT=smollm2 for the fastest run), local control plane, operator, ingestion, route, cited answers (DEMO_STAY=1 keeps it running).
	hack/demo.sh

.PHONY: run
run: manifests generate ## Run the operator against the cluster in ~/.kube/config.
	go run ./cmd/ragroute manager --metrics-secure=false

##@ Deployment

.PHONY: install
install: manifests ## Install the CRDs into the cluster in ~/.kube/config.
	kubectl apply --server-side -k config/crd

.PHONY: uninstall
uninstall: ## Remove the CRDs (and every ragroute object) from the cluster.
	kubectl delete -k config/crd --ignore-not-found

.PHONY: docker-build
docker-build: ## Build the image (needs a Docker engine).
	docker build -t $(IMG) --build-arg VERSION=$(VERSION) .

# make image needs no Docker engine and no base image: hack/image writes the
# distroless static nonroot files and the binary as one reproducible layer.
.PHONY: image
image: ## Build bin/image/ragroute.tar, the image ragroute/ragroute:VERSION as an OCI layout tarball, without Docker; prints its digest (ctr -n k8s.io images import it; docs/operator.md).
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$(VERSION)" -o "$(IMAGE_DIR)/ragroute" ./cmd/ragroute
	cd hack/image && go run . --binary "$(IMAGE_DIR)/ragroute" --name "$(IMG)" --label org.opencontainers.image.version=$(VERSION) --out "$(IMAGE_DIR)/ragroute.tar"

# kubectl for helm test, built from the test bed's pinned Kubernetes
# (hack/testbed/go.mod) so the binary is static and the same everywhere;
# KUBECTL=path packs another static kubectl instead.
.PHONY: image-kubectl
image-kubectl: ## Build bin/image/kubectl.tar, the image ragroute/kubectl:dev with kubectl on its PATH, for helm test (--set tests.image.repository=ragroute/kubectl,tests.image.tag=dev).
	@set -e; kubectl="$(KUBECTL)"; \
	if [ -z "$$kubectl" ]; then \
	  version="$$(sed -n 's/^require k8s.io\/kubernetes \(v[^ ]*\)$$/\1/p' hack/testbed/go.mod)"; \
	  kubectl="$(IMAGE_DIR)/kubectl"; \
	  echo "building kubectl $$version from the Go module proxy (a minute or more on first run)"; \
	  (cd hack/testbed && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -buildvcs=false \
	    -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$$version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$$(echo "$$version" | cut -d. -f2)" \
	    -o "$$kubectl" k8s.io/kubernetes/cmd/kubectl); \
	fi; \
	cd hack/image && go run . --binary "$$(readlink -f "$$kubectl")" --entrypoint /usr/local/bin/kubectl --name "$(KUBECTL_IMG)" \
	  --label org.opencontainers.image.source=https://github.com/kubernetes/kubernetes --out "$(IMAGE_DIR)/kubectl.tar"

##@ Tools (cached under bin/)

$(CONTROLLER_GEN):
	@echo "installing controller-gen $(CONTROLLER_TOOLS_VERSION) from the Go module proxy (a minute or two on first run)"
	GOBIN="$(dir $(CONTROLLER_GEN))" hack/with-heartbeat.sh "installing controller-gen" 90 go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

$(GOLANGCI_LINT):
	@echo "installing golangci-lint $(GOLANGCI_LINT_VERSION) from the Go module proxy (a few minutes on first run)"
	GOBIN="$(dir $(GOLANGCI_LINT))" hack/with-heartbeat.sh "installing golangci-lint" 240 go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

$(HELM):
	@echo "installing helm $(HELM_VERSION) from the Go module proxy (a few minutes on first run)"
	GOBIN="$(dir $(HELM))" hack/with-heartbeat.sh "installing helm" 180 go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
