package sources

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/ragroute/ragroute/internal/podconfig"
)

var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Clone checks out g into dest (a pure-Go client: no git binary needed)
// and returns the folder to read Markdown from.
func Clone(ctx context.Context, g podconfig.GitSource, dest string) (string, error) {
	auth, err := gitAuth(g)
	if err != nil {
		return "", err
	}
	if commitHash.MatchString(g.Ref) {
		repo, err := git.PlainCloneContext(ctx, dest, false, &git.CloneOptions{URL: g.URL, Auth: auth, NoCheckout: true})
		if err != nil {
			return "", fmt.Errorf("clone %s: %w", g.URL, err)
		}
		tree, err := repo.Worktree()
		if err == nil {
			err = tree.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(g.Ref)})
		}
		if err != nil {
			return "", fmt.Errorf("check out %s of %s: %w", g.Ref, g.URL, err)
		}
	} else if err := cloneNamed(ctx, g, auth, dest); err != nil {
		return "", err
	}
	dir := filepath.Join(dest, filepath.FromSlash(g.Path))
	if rel, err := filepath.Rel(dest, dir); err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("path %q leaves the repository", g.Path)
	}
	return dir, nil
}

// cloneNamed clones a branch, or else a tag, shallowly.
func cloneNamed(ctx context.Context, g podconfig.GitSource, auth transport.AuthMethod, dest string) error {
	ref := g.Ref
	if ref == "" {
		ref = "main"
	}
	var errs []error
	for _, name := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)} {
		_, err := git.PlainCloneContext(ctx, dest, false, &git.CloneOptions{
			URL: g.URL, Auth: auth, ReferenceName: name, SingleBranch: true, Depth: 1, Tags: git.NoTags,
		})
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		_ = os.RemoveAll(dest)
	}
	return fmt.Errorf("clone %s at %q (no such branch or tag?): %w", g.URL, ref, errors.Join(errs...))
}

// gitAuth reads credentials from the mounted Secret, if any.
func gitAuth(g podconfig.GitSource) (transport.AuthMethod, error) {
	if g.CredentialsDir == "" {
		return nil, nil
	}
	read := func(name string) (string, bool) {
		data, err := os.ReadFile(filepath.Join(g.CredentialsDir, name))
		return strings.TrimRight(string(data), "\n"), err == nil
	}
	if key, ok := read("ssh-privatekey"); ok {
		keys, err := gitssh.NewPublicKeys("git", []byte(key+"\n"), "")
		if err != nil {
			return nil, fmt.Errorf("git credentials: ssh-privatekey: %w", err)
		}
		// Host keys are checked: an SSH source needs known_hosts in its Secret.
		hosts := filepath.Join(g.CredentialsDir, "known_hosts")
		callback, err := knownhosts.New(hosts)
		if err != nil {
			return nil, fmt.Errorf("git credentials: an SSH source needs a known_hosts key in its Secret: %w", err)
		}
		keys.HostKeyCallback = callback
		return keys, nil
	}
	user, hasUser := read("username")
	password, hasPassword := read("password")
	if hasPassword {
		if !hasUser {
			user = "git"
		}
		return &githttp.BasicAuth{Username: user, Password: password}, nil
	}
	return nil, fmt.Errorf("git credentials in %s: want username/password or ssh-privatekey", g.CredentialsDir)
}
