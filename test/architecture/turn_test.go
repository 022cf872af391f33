package architecture

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The turn's packages: the turn itself and the server that plays it.
var turnPackages = []string{"internal/route/turn", "internal/route/server"}

// maxFileLines and maxParams keep the turn an object: a file holds one
// concern, and a step takes from its receiver what every step shares,
// its parameters only what varies.
const (
	maxFileLines = 300
	maxParams    = 4
)

// No file of the turn is over maxFileLines, and no function or method
// takes more than maxParams parameters besides its context.
func TestTheTurnStaysSmall(t *testing.T) {
	for _, dir := range turnPackages {
		keep := func(rel string) bool { return !strings.HasSuffix(rel, "_test.go") && !strings.Contains(rel, "/") }
		root := filepath.Join("..", "..", dir)
		eachGoFile(t, root, nil, keep, func(fset *token.FileSet, file *ast.File) {
			name := fset.Position(file.Pos()).Filename
			if data, err := os.ReadFile(name); err != nil {
				t.Fatal(err)
			} else if lines := strings.Count(string(data), "\n"); lines > maxFileLines {
				t.Errorf("%s: %d lines; split it by concern (at most %d)", name, lines, maxFileLines)
			}
			for _, decl := range file.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if n := paramsBesidesContext(fn.Type); n > maxParams {
					t.Errorf("%s: %s takes %d parameters besides its context (at most %d): what every step shares belongs to the receiver",
						fset.Position(fn.Pos()), fn.Name.Name, n, maxParams)
				}
			}
		})
	}
}

// paramsBesidesContext counts fn's parameters, a leading context.Context
// not counted.
func paramsBesidesContext(fn *ast.FuncType) int {
	n := 0
	for i, field := range fn.Params.List {
		names := max(len(field.Names), 1)
		if sel, ok := field.Type.(*ast.SelectorExpr); ok && i == 0 && sel.Sel.Name == "Context" {
			names--
		}
		n += names
	}
	return n
}

// drivers are the files that may play a turn (call the engine's Run): the
// server's one driver, the evaluations' one in-process player, and the
// tests' (routetest).
var drivers = []string{"internal/route/server/drive.go", "internal/eval/lab/play.go", "internal/route/routetest/routetest.go"}

// Only the driver starts a turn: admission, timeout, observation and the
// release before the final event are written once, so every surface (and
// the evaluations) play a turn the same way.
func TestOnlyTheDriverPlaysATurn(t *testing.T) {
	root := filepath.Join("..", "..")
	keep := func(rel string) bool {
		rel = filepath.ToSlash(rel)
		return !strings.HasSuffix(rel, "_test.go") && !strings.HasPrefix(rel, "internal/route/turn/") && !contains(drivers, rel)
	}
	eachGoFile(t, root, nil, keep, func(fset *token.FileSet, file *ast.File) {
		turnName := importName(file, module+"/internal/route/turn")
		if turnName == "" {
			return
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Run" && len(call.Args) == 3 && takesEvents(call.Args[2], turnName) {
				t.Errorf("%s: a turn played outside the driver (%s): play it through %s",
					fset.Position(call.Pos()), strings.Join(drivers, ", "), drivers[0])
			}
			return true
		})
	})
}

// takesEvents reports whether arg is a function of a turn's events.
func takesEvents(arg ast.Expr, turnName string) bool {
	lit, ok := arg.(*ast.FuncLit)
	if !ok || len(lit.Type.Params.List) != 1 {
		return false
	}
	sel, ok := lit.Type.Params.List[0].Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == turnName && sel.Sel.Name == "Event"
}

// oneWayIn are the calls of the turn's dependencies and the one file of
// the turn that makes each: the chat model's stream (callModel) and the
// searches (search). Every step and both modes go through them, so each
// call is traced, timed and counted the same way.
var oneWayIn = map[string]string{"Stream": "modelcall.go", "Search": "tools.go"}

// The modes and every step call the model and search only through the
// turn's one callModel and one search.
func TestTheTurnCallsTheModelAndSearchesOneWay(t *testing.T) {
	keep := func(rel string) bool { return !strings.HasSuffix(rel, "_test.go") && !strings.Contains(rel, "/") }
	eachGoFile(t, filepath.Join("..", "..", "internal/route/turn"), nil, keep, func(fset *token.FileSet, file *ast.File) {
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pos := fset.Position(call.Pos())
			if home, ok := oneWayIn[sel.Sel.Name]; ok && filepath.Base(pos.Filename) != home {
				t.Errorf("%s: .%s called outside %s: go through the turn's step there", pos, sel.Sel.Name, home)
			}
			return true
		})
	})
}
