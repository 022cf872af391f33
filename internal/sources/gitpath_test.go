package sources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// The clone-time link check sees the source's path as it is read, cleaned
// once: "./team/docs", "team//docs" or "site/docs/." name the folder
// "team/docs" or "site/docs" names, so a link above or under it refuses
// the clone as it does with the plain path. (The raw path matched no
// committed name, and only the check on disk refused the link.) A path
// climbing out of the repository is refused before anything is fetched.
func TestCloneChecksTheSourcesPathCleaned(t *testing.T) {
	dir := t.TempDir()
	repo := initRepo(t, dir)
	tree, _ := repo.Worktree()
	write(t, dir, "finance/docs/salaries.md", "# Salaries\n\nCANARY: the CEO earns a lot.\n")
	write(t, dir, "site/docs/intro.md", "# Intro\n")
	if err := os.Symlink("finance", filepath.Join(dir, "team")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../finance/docs/salaries.md", filepath.Join(dir, "site", "docs", "pay.md")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"finance/docs/salaries.md", "site/docs/intro.md", "site/docs/pay.md", "team"} {
		if _, err := tree.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tree.Commit("links", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"./team/docs":       "team is a symbolic link, a folder above the source's path team/docs: refused",
		"team//docs/":       "team is a symbolic link, a folder above the source's path team/docs: refused",
		"team/../team/docs": "team is a symbolic link, a folder above the source's path team/docs: refused",
		"site/docs/.":       "site/docs/pay.md is a symbolic link: refused",
		"./site/./docs":     "site/docs/pay.md is a symbolic link: refused",
		"../site/docs":      `path "../site/docs" leaves its volume or repository`,
	} {
		err := Clone(context.Background(), podconfig.GitSource{URL: "file://" + dir, Ref: "main", Path: path}, filepath.Join(t.TempDir(), "c"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("path %q: Clone() = %v, want %q", path, err, want)
		}
	}
}
