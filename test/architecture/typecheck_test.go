package architecture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A rule about what a value's type is needs the type checker: the
// syntax alone cannot tell a turn.Engine from another struct. The
// module's packages, their tests included, are checked from source here;
// what they import comes from the compiler's export data (`go list
// -export`, which the build cache makes cheap after `go build`).

// listedPackage is what `go list -json` says of one package.
type listedPackage struct {
	ImportPath, Dir, Export, ForTest             string
	GoFiles, CgoFiles, TestGoFiles, XTestGoFiles []string
	ImportMap                                    map[string]string
	Error                                        *struct{ Err string }
	Standard                                     bool
}

// typedFiles are one package's files as the compiler checks them: a
// package with its in-package tests, or an external test package.
type typedFiles struct {
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
}

// eachTypedPackage type-checks the module's packages whose folder keep
// admits (a package with its in-package tests, then its external test
// package) and hands each to visit.
func eachTypedPackage(t *testing.T, keep func(rel string) bool, visit func(pkg typedFiles)) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	listed := listModule(t, root)
	exports := map[string]string{}
	for _, p := range listed {
		exports[p.ImportPath] = p.Export
	}
	for _, p := range listed {
		if p.ForTest != "" || p.Standard || !strings.HasPrefix(p.ImportPath, module) || strings.HasSuffix(p.ImportPath, ".test") {
			continue
		}
		rel, err := filepath.Rel(root, p.Dir)
		if err != nil || !keep(filepath.ToSlash(rel)) {
			continue
		}
		units := []struct {
			path, variant string
			files         []string
		}{
			{p.ImportPath, p.ImportPath + " [" + p.ImportPath + ".test]", concat(p.GoFiles, p.CgoFiles, p.TestGoFiles)},
			{p.ImportPath + "_test", p.ImportPath + "_test [" + p.ImportPath + ".test]", p.XTestGoFiles},
		}
		for _, u := range units {
			if len(u.files) == 0 {
				continue
			}
			imports := p.ImportMap
			if v, ok := listed[u.variant]; ok {
				imports = v.ImportMap
			}
			pkg, err := typeCheck(u.path, p.Dir, u.files, imports, exports)
			if err != nil {
				t.Fatalf("type-check %s: %v", u.variant, err)
			}
			visit(pkg)
		}
	}
}

// listModule lists the module's packages, their tests and everything they
// import, by import path, each with its export data.
func listModule(t *testing.T, root string) map[string]listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-test",
		"-json=ImportPath,Dir,Export,ForTest,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,ImportMap,Error,Standard", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	listed := map[string]listedPackage{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -export: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		listed[p.ImportPath] = p
	}
	return listed
}

// typeCheck checks the files of package path in dir, resolving an import
// path through importMap (a test variant's) to the export data in exports.
func typeCheck(path, dir string, names []string, importMap, exports map[string]string) (typedFiles, error) {
	pkg := typedFiles{fset: token.NewFileSet(), info: &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{},
		Types: map[ast.Expr]types.TypeAndValue{}}}
	for _, name := range names {
		file, err := parser.ParseFile(pkg.fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return pkg, err
		}
		pkg.files = append(pkg.files, file)
	}
	lookup := func(path string) (io.ReadCloser, error) {
		if mapped, ok := importMap[path]; ok {
			path = mapped
		}
		export := exports[path]
		if export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(export)
	}
	var errs []error
	cfg := types.Config{Importer: importer.ForCompiler(pkg.fset, "gc", lookup), FakeImportC: true,
		Error: func(err error) { errs = append(errs, err) }}
	_, _ = cfg.Check(path, pkg.fset, pkg.files, pkg.info) // its errors are errs
	return pkg, errors.Join(errs...)
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
