package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// eachGoFile parses every .go file under root whose path relative to root
// keep admits and hands it to visit, with the position of its nodes;
// hidden folders, bin and testdata, and the folders named in skip, are
// passed over.
func eachGoFile(t *testing.T, root string, skip []string, keep func(rel string) bool, visit func(fset *token.FileSet, file *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && strings.HasPrefix(name, ".") || name == "bin" || name == "testdata" || contains(skip, name) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if !strings.HasSuffix(name, ".go") || !keep(rel) {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		visit(fset, file)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}
