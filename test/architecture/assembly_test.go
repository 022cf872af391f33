package architecture

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// assembled are the types a route is assembled from, by package path:
// what serve runs, the evaluations score, the benchmarks load and the
// tests exercise must be built one way, from the route's config.
var assembled = map[string][]string{
	module + "/internal/route/turn":      {"Engine"},
	module + "/internal/route/retrieval": {"Searcher"},
}

// mayConstruct are the folders that may build them by hand: the one
// assembly, and the packages that define them (their own unit tests give
// an Engine or Searcher fakes field by field).
var mayConstruct = []string{"internal/assembly", "internal/route/turn", "internal/route/retrieval"}

// Only internal/assembly constructs a turn.Engine or retrieval.Searcher:
// a second construction would drift from the config the operator renders
// (the evaluations once scored a route nobody shipped).
func TestOnlyTheAssemblyConstructsARoute(t *testing.T) {
	keep := func(rel string) bool { return !mayBuild(filepath.Dir(rel)) }
	eachGoFile(t, filepath.Join("..", ".."), nil, keep, func(fset *token.FileSet, file *ast.File) {
		names := map[string][]string{}
		for pkg, types := range assembled {
			if name := importName(file, pkg); name != "" {
				names[name] = types
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			sel, ok := lit.Type.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok {
				for _, typ := range names[pkg.Name] {
					if sel.Sel.Name == typ {
						t.Errorf("%s: %s.%s built by hand: build it with internal/assembly from the route's config",
							fset.Position(lit.Pos()), pkg.Name, typ)
					}
				}
			}
			return true
		})
	})
}

func mayBuild(dir string) bool {
	dir = filepath.ToSlash(dir)
	for _, d := range mayConstruct {
		if dir == d {
			return true
		}
	}
	return strings.HasPrefix(dir, "internal/assembly/")
}
