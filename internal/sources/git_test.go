package sources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// initRepo makes an empty repository in dir on branch main.
func initRepo(t *testing.T, dir string) *git.Repository {
	t.Helper()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// testRepo makes a repository with docs/ on branch main, tagged v1, and
// returns its URL and first commit.
func testRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	repo := initRepo(t, dir)
	tree, _ := repo.Worktree()
	commit := func(file, content string) plumbing.Hash {
		path := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := tree.Add(file); err != nil {
			t.Fatal(err)
		}
		hash, err := tree.Commit("add "+file, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		return hash
	}
	first := commit("docs/install.md", "# Install\n\nRun the installer.\n")
	if _, err := repo.CreateTag("v1", first, nil); err != nil {
		t.Fatal(err)
	}
	commit("docs/upgrade.md", "# Upgrade\n\nRead the release notes first.\n")
	return "file://" + dir, first.String()
}

func TestCloneBranchTagAndCommit(t *testing.T) {
	url, first := testRepo(t)
	ctx := context.Background()
	cases := []struct {
		ref  string
		want []string
	}{
		{"main", []string{"install.md", "upgrade.md"}},
		{"v1", []string{"install.md"}},
		{first, []string{"install.md"}},
	}
	for _, tc := range cases {
		dir, err := Clone(ctx, podconfig.GitSource{URL: url, Ref: tc.ref, Path: "docs"}, filepath.Join(t.TempDir(), "clone"))
		if err != nil {
			t.Fatalf("clone %s: %v", tc.ref, err)
		}
		docs, err := ReadMarkdown(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range docs {
			got = append(got, d.Source)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("ref %s: documents %v, want %v", tc.ref, got, tc.want)
		}
	}
}

func TestCloneNamesWhatIsWrong(t *testing.T) {
	url, _ := testRepo(t)
	ctx := context.Background()
	if _, err := Clone(ctx, podconfig.GitSource{URL: url, Ref: "nope"}, filepath.Join(t.TempDir(), "c")); err == nil || !strings.Contains(err.Error(), `at "nope"`) {
		t.Errorf("unknown ref: %v", err)
	}
	if _, err := Clone(ctx, podconfig.GitSource{URL: url, Ref: "main", Path: "../.."}, filepath.Join(t.TempDir(), "c")); err == nil || !strings.Contains(err.Error(), "leaves the repository") {
		t.Errorf("escaping path: %v", err)
	}
	creds := t.TempDir()
	if err := os.WriteFile(filepath.Join(creds, "ssh-privatekey"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Clone(ctx, podconfig.GitSource{URL: url, Ref: "main", CredentialsDir: creds}, filepath.Join(t.TempDir(), "c")); err == nil || !strings.Contains(err.Error(), "ssh-privatekey") {
		t.Errorf("bad key: %v", err)
	}
}

// A symbolic link committed under the source's folder refuses the
// checkout, whatever it points at and whatever the ref; links elsewhere in
// the repository are not the source's concern.
func TestCloneRefusesLinksUnderTheSource(t *testing.T) {
	dir := t.TempDir()
	repo := initRepo(t, dir)
	tree, _ := repo.Worktree()
	write(t, dir, "docs/intro.md", "# Intro\n")
	if err := os.Symlink("../../../../../../proc/self/environ", filepath.Join(dir, "docs", "env.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs/intro.md", filepath.Join(dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"docs/intro.md", "docs/env.md", "README.md"} {
		if _, err := tree.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	hash, err := tree.Commit("docs", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ref := range []string{"main", hash.String()} {
		_, err := Clone(ctx, podconfig.GitSource{URL: "file://" + dir, Ref: ref, Path: "docs"}, filepath.Join(t.TempDir(), "c"))
		if err == nil || !strings.Contains(err.Error(), "docs/env.md is a symbolic link: refused") {
			t.Errorf("ref %s: Clone() = %v, want the link refused", ref, err)
		}
	}
	// The repository's root link is outside a docs source.
	if err := os.Remove(filepath.Join(dir, "docs", "env.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Remove("docs/env.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Commit("no link", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Clone(ctx, podconfig.GitSource{URL: "file://" + dir, Ref: "main", Path: "docs"}, filepath.Join(t.TempDir(), "c")); err != nil {
		t.Errorf("a link outside the source's folder: %v", err)
	}
}
