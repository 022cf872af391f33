// Package architecture checks the house rule of DESIGN.md: the data path
// (route, knowledge, ingest, model and their helpers) never imports
// Kubernetes packages.
package architecture

import (
	"os/exec"
	"strings"
	"testing"
)

// dataPath are the packages that must stay free of Kubernetes.
var dataPath = []string{"route", "knowledge", "ingest", "model", "tokenize", "routeconfig", "eval"}

func isKubernetes(path string) bool {
	return strings.HasPrefix(path, "k8s.io/") || strings.HasPrefix(path, "sigs.k8s.io/")
}

// goList runs `go list` on the data path's packages.
func goList(t *testing.T, format string) []string {
	t.Helper()
	args := []string{"list", "-f", format}
	for _, p := range dataPath {
		args = append(args, "github.com/ragroute/ragroute/internal/"+p+"/...")
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

func TestDataPathImportsNoKubernetes(t *testing.T) {
	for _, line := range goList(t, `{{.ImportPath}}:{{range .Imports}} {{.}}{{end}}`) {
		pkg, imports, _ := strings.Cut(line, ":")
		for _, imp := range strings.Fields(imports) {
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
	for _, line := range goList(t, `{{.ImportPath}}:{{range .Deps}} {{.}}{{end}}`) {
		pkg, deps, _ := strings.Cut(line, ":")
		for _, dep := range strings.Fields(deps) {
			if isKubernetes(dep) && !allowed[dep] {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
	// Those packages must come from the Milvus client, not from our code.
	out, err := exec.Command("go", "list", "-deps", "github.com/ragroute/ragroute/internal/ingest",
		"github.com/ragroute/ragroute/internal/model", "github.com/ragroute/ragroute/internal/tokenize",
		"github.com/ragroute/ragroute/internal/routeconfig").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if isKubernetes(dep) {
			t.Errorf("a package without Milvus depends on %s", dep)
		}
	}
}
