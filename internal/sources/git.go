package sources

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/ragroute/ragroute/internal/podconfig"
)

var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// DefaultCloneTimeout bounds a clone whose config names no timeout (the
// CRD's git.timeout default).
const DefaultCloneTimeout = 10 * time.Minute

// Clone checks out g into dest (a pure-Go client: no git binary needed),
// within g.Timeout: a git host that accepts and never answers would
// otherwise hold the run. The source's documents are then
// ReadMarkdown(dest, g.Path, …). A symbolic link committed at g.Path,
// under it or at a folder above it (team when the path is team/docs)
// refuses the checkout: what it leads to is not the repository's to give
// (ReadMarkdown refuses such links on disk too). g.Path is cleaned first,
// as ReadMarkdown cleans it ("./team/docs" is team/docs), and refused
// when it climbs out of the repository.
func Clone(ctx context.Context, g podconfig.GitSource, dest string) error {
	if err := refuseURLCredentials(g.URL); err != nil {
		return err
	}
	dir, err := localPath(g.Path)
	if err != nil {
		return err
	}
	g.Path = dir
	timeout := cmp.Or(g.Timeout.Std(), DefaultCloneTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = clone(ctx, g, dest)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("clone %s: no answer within the git timeout of %s: %w", g.URL, timeout, err)
	}
	return err
}

// clone is Clone under its deadline, g.Path cleaned.
func clone(ctx context.Context, g podconfig.GitSource, dest string) error {
	auth, err := gitAuth(g)
	if err != nil {
		return err
	}
	var repo *git.Repository
	var commit plumbing.Hash
	if commitHash.MatchString(g.Ref) {
		if repo, err = git.PlainCloneContext(ctx, dest, false, &git.CloneOptions{URL: g.URL, Auth: auth, NoCheckout: true}); err != nil {
			return fmt.Errorf("clone %s: %w", g.URL, err)
		}
		commit = plumbing.NewHash(g.Ref)
	} else if repo, commit, err = cloneNamed(ctx, g, auth, dest); err != nil {
		return err
	}
	c, err := commitOf(repo, commit)
	if err != nil {
		return fmt.Errorf("%s at %s: %w", g.URL, g.Ref, err)
	}
	if err := refuseLinks(c, g.Path); err != nil {
		return fmt.Errorf("%s at %s: %w", g.URL, g.Ref, err)
	}
	tree, err := repo.Worktree()
	if err == nil {
		err = tree.Checkout(&git.CheckoutOptions{Hash: c.Hash})
	}
	if err != nil {
		return fmt.Errorf("check out %s of %s: %w", g.Ref, g.URL, err)
	}
	return nil
}

// refuseURLCredentials refuses a URL with a token or password in it (an
// ssh user alone is how ssh names the account): the URL is copied into
// configs, logs and errors, where credentials must not go. The error does
// not repeat them.
func refuseURLCredentials(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("the git URL does not parse")
	}
	if u.User == nil {
		return nil
	}
	_, hasPassword := u.User.Password()
	if hasPassword || u.Scheme != "ssh" {
		return fmt.Errorf("the git URL %s://%s%s carries credentials: put them in the source's secretRef", u.Scheme, u.Host, u.Path)
	}
	return nil
}

// cloneNamed clones a branch, or else a tag, shallowly, without checking
// it out, and returns the commit it names.
func cloneNamed(ctx context.Context, g podconfig.GitSource, auth transport.AuthMethod, dest string) (*git.Repository, plumbing.Hash, error) {
	ref := g.Ref
	if ref == "" {
		ref = "main"
	}
	var errs []error
	for _, name := range []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)} {
		repo, err := git.PlainCloneContext(ctx, dest, false, &git.CloneOptions{
			URL: g.URL, Auth: auth, ReferenceName: name, SingleBranch: true, Depth: 1, Tags: git.NoTags, NoCheckout: true,
		})
		if err == nil {
			head, err := repo.Head()
			if err != nil {
				return nil, plumbing.ZeroHash, fmt.Errorf("clone %s at %q: %w", g.URL, ref, err)
			}
			return repo, head.Hash(), nil
		}
		errs = append(errs, err)
		_ = os.RemoveAll(dest)
	}
	return nil, plumbing.ZeroHash, fmt.Errorf("clone %s at %q (no such branch or tag?): %w", g.URL, ref, errors.Join(errs...))
}

// commitOf is the commit hash names, directly or through an annotated tag.
func commitOf(repo *git.Repository, hash plumbing.Hash) (*object.Commit, error) {
	if c, err := repo.CommitObject(hash); err == nil {
		return c, nil
	}
	tag, err := repo.TagObject(hash)
	if err != nil {
		return nil, fmt.Errorf("no commit %s: %w", hash, err)
	}
	return tag.Commit()
}

// refuseLinks fails when commit c's tree holds a symbolic link (mode
// 120000) at or under dir (cleaned: localPath), or at a folder above it:
// a link at team, with path team/docs, would make wherever it leads the
// source.
func refuseLinks(c *object.Commit, dir string) error {
	tree, err := c.Tree()
	if err != nil {
		return fmt.Errorf("read tree: %w", err)
	}
	prefix := dir
	if prefix == "." {
		prefix = "" // the whole repository
	}
	return tree.Files().ForEach(func(f *object.File) error {
		if f.Mode != filemode.Symlink {
			return nil
		}
		if prefix == "" || f.Name == prefix || strings.HasPrefix(f.Name, prefix+"/") {
			return fmt.Errorf("%s is a symbolic link: refused (a source may hold files only)", f.Name)
		}
		if strings.HasPrefix(prefix, f.Name+"/") {
			return fmt.Errorf("%s is a symbolic link, a folder above the source's path %s: refused (the folders above a source's path must not be links)", f.Name, prefix)
		}
		return nil
	})
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
