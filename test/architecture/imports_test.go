// Package architecture checks the house rules of the tree: the data path
// (route, knowledge, ingest, model and their helpers) never imports
// Kubernetes packages; the controller renders pod configs without the
// ingestion run's code; the route's packages depend in one direction and
// the answer filters import only their inputs; the live scorer never
// needs the lab, nor the event stream's reader the server; and only cmd/
// reads the environment.
package architecture

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/ragroute/ragroute"

// dataPath are the packages that must stay free of Kubernetes.
var dataPath = []string{"assembly", "route", "knowledge", "lexical", "ingest", "ingestion", "sources", "model", "tokenize", "podconfig", "eval"}

func isKubernetes(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") || strings.HasPrefix(path, "sigs.k8s.io/")
}

// goList runs `go list -f format` on packages and returns package → the
// fields the format lists after a colon.
func goList(t *testing.T, format string, packages ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-f", "{{.ImportPath}}:" + format}, packages...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	result := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, fields, _ := strings.Cut(line, ":")
		result[pkg] = strings.Fields(fields)
	}
	return result
}

const (
	imports = `{{range .Imports}} {{.}}{{end}}`
	deps    = `{{range .Deps}} {{.}}{{end}}`
)

func internal(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, module+"/internal/"+n+"/...")
	}
	return out
}

func TestDataPathImportsNoKubernetes(t *testing.T) {
	for pkg, imps := range goList(t, imports, internal(dataPath...)...) {
		for _, imp := range imps {
			if isKubernetes(imp) {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

// The official Milvus Go client (a chosen dependency) pulls
// k8s.io/apimachinery/pkg/api/resource in through its hardware utilities;
// nothing else may bring Kubernetes into the data path.
func TestDataPathDependsOnKubernetesOnlyThroughMilvus(t *testing.T) {
	allowed := map[string]bool{
		"k8s.io/apimachinery/pkg/api/resource":                           true,
		"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct":         true,
		"k8s.io/apimachinery/pkg/runtime/serializer/cbor/internal/modes": true,
		"k8s.io/utils/third_party/forked/golang/btree":                   true,
		"sigs.k8s.io/json": true,
		"sigs.k8s.io/json/internal/golang/encoding/json": true,
		"sigs.k8s.io/yaml": true,
	}
	for pkg, ds := range goList(t, deps, internal(dataPath...)...) {
		for _, dep := range ds {
			if isKubernetes(dep) && !allowed[dep] {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
	// Those packages must come from the Milvus client, not from our code.
	for pkg, ds := range goList(t, deps, internal("ingest", "lexical", "model", "tokenize", "podconfig")...) {
		for _, dep := range ds {
			if isKubernetes(dep) {
				t.Errorf("%s (no Milvus) depends on %s", pkg, dep)
			}
		}
	}
}

// forbid fails for every package of from that depends (directly or not)
// on a package under one of the prefixes.
func forbid(t *testing.T, from []string, prefixes ...string) {
	t.Helper()
	for pkg, ds := range goList(t, deps, from...) {
		for _, dep := range ds {
			for _, p := range prefixes {
				if dep == p || strings.HasPrefix(dep, p+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// The controller renders the ingest config; it needs neither the run nor
// the sources' readers (nor go-git through them).
func TestControllerNeedsNoIngestionCode(t *testing.T) {
	forbid(t, internal("controller"),
		module+"/internal/ingest", module+"/internal/ingestion", module+"/internal/sources", "github.com/go-git")
}

// The store knows rows, not chunks: the ingestion run converts between them.
func TestKnowledgeKnowsNoChunker(t *testing.T) {
	forbid(t, internal("knowledge"), module+"/internal/ingest", module+"/internal/ingestion", module+"/internal/sources")
}

// The route's packages depend in one direction: server → turn → answer →
// retrieval → knowledge/model; identity and the turn log sit beside the
// turn.
func TestRoutePackagesDependInOneDirection(t *testing.T) {
	route := module + "/internal/route"
	turn, server := route+"/turn", route+"/server"
	forbid(t, []string{route + "/retrieval/..."}, server, route+"/turnlog", route+"/identity")
	forbid(t, []string{turn}, server, route+"/turnlog", route+"/identity")
	forbid(t, []string{route + "/answer/..."}, server, route+"/turnlog", route+"/identity")
	forbid(t, []string{route + "/identity/..."}, server, route+"/turnlog", route+"/retrieval")
	// The turn log stores the turn's events, so it may know the turn.
	forbid(t, []string{route + "/turnlog/..."}, server, route+"/identity")
	for _, below := range []string{"/retrieval/...", "/answer/...", "/identity/..."} {
		for pkg, ds := range goList(t, deps, route+below) {
			for _, dep := range ds {
				if dep == turn {
					t.Errorf("%s depends on the turn (%s)", pkg, dep)
				}
			}
		}
	}
}

// The live scorer runs in every RouteEvaluation Job: it is product code
// and never needs the lab's (ablations, answers, agentic); what both
// score with lives in eval, which needs neither.
func TestLiveScorerNeedsNoLab(t *testing.T) {
	eval := module + "/internal/eval"
	forbid(t, []string{eval + "/live/..."}, eval+"/lab")
	forbid(t, []string{eval}, eval+"/lab", eval+"/live")
}

// The event stream's reader is a client: it knows the events, not the
// server that writes them (its clients, the demo, the live scorer and e2e,
// would link the whole API).
func TestTurnStreamReaderNeedsNoServer(t *testing.T) {
	route := module + "/internal/route"
	forbid(t, []string{route + "/turnstream/..."}, route+"/server", route+"/turnlog", route+"/identity")
}

// The answer filters and quotes know fragments, embedders, token counts,
// the policy enums, the question's language and ingestion's Markdown
// rules, nothing else of ours: no turn, no events, no model client, no
// HTTP.
func TestAnswerImportsOnlyItsInputs(t *testing.T) {
	allowed := map[string]bool{}
	for _, p := range []string{"route/retrieval", "knowledge", "tokenize", "podconfig", "ingest", "language"} {
		allowed[module+"/internal/"+p] = true
	}
	for pkg, imps := range goList(t, imports, module+"/internal/route/answer") {
		for _, imp := range imps {
			if strings.HasPrefix(imp, module+"/") && !allowed[imp] {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}
