package architecture

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// envReaders are the calls that read the process environment.
var envReaders = map[string]bool{"Getenv": true, "LookupEnv": true, "Environ": true, "ExpandEnv": true}

// Only cmd/ reads the environment: it resolves secrets and settings and
// hands values to the internal packages, so a package's behaviour is what
// its caller passed. internal/testenv is exempt: it is the test bed's
// starter (it reads where `make test` installed the servers and passes the
// environment on to the processes it starts) and no binary links it.
func TestOnlyCmdReadsTheEnvironment(t *testing.T) {
	keep := func(rel string) bool { return !strings.HasSuffix(rel, "_test.go") }
	eachGoFile(t, filepath.Join("..", "..", "internal"), []string{"testenv"}, keep, func(fset *token.FileSet, file *ast.File) {
		osName := importName(file, "os")
		if osName == "" {
			return
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == osName && envReaders[sel.Sel.Name] {
				t.Errorf("%s: os.%s: only cmd/ reads the environment", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	})
}

// importName is the name file uses for the package path, or "".
func importName(file *ast.File, path string) string {
	for _, imp := range file.Imports {
		if strings.Trim(imp.Path.Value, `"`) != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return filepath.Base(path)
	}
	return ""
}
