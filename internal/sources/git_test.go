package sources

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
		dest := filepath.Join(t.TempDir(), "clone")
		if err := Clone(ctx, podconfig.GitSource{URL: url, Ref: tc.ref, Path: "docs"}, dest); err != nil {
			t.Fatalf("clone %s: %v", tc.ref, err)
		}
		read, err := ReadMarkdown(dest, "docs", nil)
		if err != nil || len(read.Refused) > 0 {
			t.Fatal(err, read.Refused)
		}
		var got []string
		for _, d := range read.Documents {
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
	if err := Clone(ctx, podconfig.GitSource{URL: url, Ref: "nope"}, filepath.Join(t.TempDir(), "c")); err == nil || !strings.Contains(err.Error(), `at "nope"`) {
		t.Errorf("unknown ref: %v", err)
	}
	if err := Clone(ctx, podconfig.GitSource{URL: url, Ref: "main", Path: "../.."}, filepath.Join(t.TempDir(), "c")); err == nil || !strings.Contains(err.Error(), "leaves its volume or repository") {
		t.Errorf("escaping path: %v", err)
	}
	creds := t.TempDir()
	if err := os.WriteFile(filepath.Join(creds, "ssh-privatekey"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Clone(ctx, podconfig.GitSource{URL: url, Ref: "main", CredentialsDir: creds}, filepath.Join(t.TempDir(), "c")); err == nil || !strings.Contains(err.Error(), "ssh-privatekey") {
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
		err := Clone(ctx, podconfig.GitSource{URL: "file://" + dir, Ref: ref, Path: "docs"}, filepath.Join(t.TempDir(), "c"))
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
	if err := Clone(ctx, podconfig.GitSource{URL: "file://" + dir, Ref: "main", Path: "docs"}, filepath.Join(t.TempDir(), "c")); err != nil {
		t.Errorf("a link outside the source's folder: %v", err)
	}
}

// A folder above the source's path committed as a symbolic link (team,
// with path team/docs) would make what it leads to the source: here
// another team's folder with salaries.md, which would be read with this
// source's principals. The clone is refused, naming the link and the
// path, and nothing is checked out to be read.
func TestCloneRefusesALinkAboveTheSourcesPath(t *testing.T) {
	dir := t.TempDir()
	repo := initRepo(t, dir)
	tree, _ := repo.Worktree()
	write(t, dir, "finance/docs/salaries.md", "# Salaries\n\nCANARY: the CEO earns a lot.\n")
	if err := os.Symlink("finance", filepath.Join(dir, "team")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"finance/docs/salaries.md", "team"} {
		if _, err := tree.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tree.Commit("a team folder that is a link", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "c")
	err := Clone(context.Background(), podconfig.GitSource{URL: "file://" + dir, Ref: "main", Path: "team/docs"}, dest)
	if err == nil || !strings.Contains(err.Error(), "team is a symbolic link, a folder above the source's path team/docs: refused") {
		t.Fatalf("Clone() = %v, want the link above the path refused", err)
	}
	// On disk (the repository's own worktree) the link is refused too.
	read, err := ReadMarkdown(dir, "team/docs", []string{"public"})
	if err == nil || !strings.Contains(err.Error(), "team is a symbolic link") || len(read.Documents) > 0 {
		t.Errorf("ReadMarkdown() = %+v, %v; want the link above the path refused", read, err)
	}
}

// A git host that accepts the connection and never answers fails the
// clone at the source's timeout, with an error that names it, instead of
// holding the ingestion until the Job's deadline.
func TestCloneOfAStallingHostEndsAtItsTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})

	done := make(chan error, 1)
	go func() {
		err := Clone(context.Background(), podconfig.GitSource{URL: "http://" + ln.Addr().String() + "/acme/docs.git",
			Ref: "main", Timeout: podconfig.Duration(300 * time.Millisecond)}, t.TempDir())
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no answer within the git timeout of 300ms") {
			t.Fatalf("clone of a stalling host: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the clone of a stalling host did not end at its timeout")
	}
}

// Credentials written into the URL are refused before any connection,
// without repeating them; an ssh user alone is not a credential.
func TestCloneRefusesCredentialsInTheURL(t *testing.T) {
	for _, raw := range []string{"https://alice:ghp_token123@git.acme.example/docs.git", "https://ghp_token123@git.acme.example/docs.git",
		"ssh://git:ghp_token123@git.acme.example/docs.git"} {
		err := Clone(context.Background(), podconfig.GitSource{URL: raw, Ref: "main"}, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "carries credentials: put them in the source's secretRef") || strings.Contains(err.Error(), "ghp_token123") {
			t.Errorf("%s: %v", raw, err)
		}
	}
	if err := refuseURLCredentials("ssh://git@git.acme.example/docs.git"); err != nil {
		t.Errorf("an ssh user was refused: %v", err)
	}
}
