package architecture

import (
	"go/ast"
	"go/token"
	"go/types"
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

// Outside internal/assembly and the defining packages nothing changes an
// assembled route: no field of a turn.Engine or retrieval.Searcher is
// assigned (x.F = …, x.Settings.F = …, x.Settings.Weights[k] = …, through
// a pointer or a copy alike), incremented, or has its address taken. The
// evaluations once assembled a Searcher and then wrote its Settings,
// Reranker and Floors, and scored a search body no config describes; a
// variant is a config, or an assembly.Parts input, that the assembly
// builds whole.
func TestNothingChangesAnAssembledRoute(t *testing.T) {
	keep := func(rel string) bool { return !mayBuild(rel) }
	eachTypedPackage(t, keep, func(pkg typedFiles) {
		for _, file := range pkg.files {
			ast.Inspect(file, func(n ast.Node) bool {
				for _, w := range writes(n) {
					field, owner := assembledField(pkg.info, w.target)
					if owner == "" {
						continue
					}
					t.Errorf("%s: %s %s changes %s of an assembled %s: express the variant as the route's config or an assembly.Parts input and build it with internal/assembly",
						pkg.fset.Position(w.target.Pos()), types.ExprString(w.target), w.how, field, owner)
				}
				return true
			})
		}
	})
}

// write is an expression a statement changes, and how.
type write struct {
	target ast.Expr
	how    string
}

// writes are the expressions n changes: the left of an assignment (not a
// declaration's new names), an increment's operand, a range clause's
// assigned key and value, and the operand of a "&", through which it may
// be changed later.
func writes(n ast.Node) []write {
	var out []write
	switch s := n.(type) {
	case *ast.AssignStmt:
		if s.Tok != token.DEFINE {
			for _, lhs := range s.Lhs {
				out = append(out, write{lhs, "= …"})
			}
		}
	case *ast.IncDecStmt:
		out = append(out, write{s.X, s.Tok.String()})
	case *ast.RangeStmt:
		if s.Tok == token.ASSIGN {
			for _, x := range []ast.Expr{s.Key, s.Value} {
				if x != nil {
					out = append(out, write{x, "= range …"})
				}
			}
		}
	case *ast.UnaryExpr:
		if s.Op == token.AND {
			out = append(out, write{s.X, "(its address taken)"})
		}
	}
	return out
}

// assembledField is what of an assembled type changing expr changes
// ("field Settings"), and that type ("retrieval.Searcher"); owner is ""
// when expr changes none. It looks through parentheses, indexing and field selections, so
// x.Settings.MaxFragments is x's Settings, and through pointers: (*x).F
// and a promoted field are x's too, and *x = … overwrites every field.
func assembledField(info *types.Info, expr ast.Expr) (field, owner string) {
	for {
		switch e := expr.(type) {
		case *ast.ParenExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.StarExpr:
			if owner := assembledName(info.TypeOf(e)); owner != "" {
				return "every field", owner
			}
			expr = e.X
		case *ast.SelectorExpr:
			sel := info.Selections[e]
			if sel == nil || sel.Kind() != types.FieldVal {
				return "", ""
			}
			if owner := fieldOwner(sel); owner != "" {
				return "field " + e.Sel.Name, owner
			}
			expr = e.X
		default:
			return "", ""
		}
	}
}

// fieldOwner is the assembled type whose field sel selects, directly or
// through embedded fields, or "".
func fieldOwner(sel *types.Selection) string {
	t := sel.Recv()
	for _, index := range sel.Index() {
		if owner := assembledName(t); owner != "" {
			return owner
		}
		st, ok := deref(t).Underlying().(*types.Struct)
		if !ok {
			return ""
		}
		t = st.Field(index).Type()
	}
	return ""
}

// assembledName names t ("retrieval.Searcher") when it is, or points to,
// an assembled type; "" otherwise.
func assembledName(t types.Type) string {
	named, ok := types.Unalias(deref(t)).(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return ""
	}
	pkg := named.Obj().Pkg()
	for _, name := range assembled[pkg.Path()] {
		if named.Obj().Name() == name {
			return pkg.Name() + "." + name
		}
	}
	return ""
}

func deref(t types.Type) types.Type {
	if t == nil {
		return types.Typ[types.Invalid]
	}
	if p, ok := types.Unalias(t).(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}
