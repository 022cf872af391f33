package architecture

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// A table of test set-ups (a map or slice of funcs) must not use the
// *testing.T of the function that built it: the table's funcs run inside
// subtests, where a Skip or FailNow on the parent's t ends the parent from
// the subtest's goroutine (`go test -short` panicked on it). Each func
// takes the subtest's t instead.
func TestTableFuncsTakeTheSubtestsT(t *testing.T) {
	isTest := func(rel string) bool { return strings.HasSuffix(rel, "_test.go") }
	eachGoFile(t, filepath.Join("..", ".."), nil, isTest, func(fset *token.FileSet, file *ast.File) {
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			for _, name := range testingTParams(fn.Type) {
				for _, lit := range tableFuncs(fn.Body) {
					if !declares(lit.Type, name) && uses(lit.Body, name) {
						t.Errorf("%s: a func in a table uses %s, the *testing.T of %s: take the subtest's t as a parameter",
							fset.Position(lit.Pos()), name, fn.Name.Name)
					}
				}
			}
		}
	})
}

// testingTParams are the names of a function's *testing.T parameters.
func testingTParams(fn *ast.FuncType) []string {
	var names []string
	for _, field := range fn.Params.List {
		star, ok := field.Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "T" {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "testing" {
				for _, n := range field.Names {
					names = append(names, n.Name)
				}
			}
		}
	}
	return names
}

// tableFuncs are the func literals that are elements (or values) of a
// composite literal in body.
func tableFuncs(body *ast.BlockStmt) []*ast.FuncLit {
	var out []*ast.FuncLit
	ast.Inspect(body, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		for _, elt := range lit.Elts {
			if kv, ok := elt.(*ast.KeyValueExpr); ok {
				elt = kv.Value
			}
			if f, ok := elt.(*ast.FuncLit); ok {
				out = append(out, f)
			}
		}
		return true
	})
	return out
}

// declares says whether a func literal has a parameter named name.
func declares(fn *ast.FuncType, name string) bool {
	for _, field := range fn.Params.List {
		for _, n := range field.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

// uses says whether body refers to name (not as a field or a method).
func uses(body *ast.BlockStmt, name string) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			ast.Inspect(n.X, func(m ast.Node) bool {
				if id, ok := m.(*ast.Ident); ok && id.Name == name {
					found = true
				}
				return !found
			})
			return false
		case *ast.Ident:
			if n.Name == name {
				found = true
			}
		}
		return !found
	})
	return found
}
