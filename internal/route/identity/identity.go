package identity

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/ragroute/ragroute/internal/principal"
)

// Identity is who asks.
type Identity struct {
	User   string
	Groups []string
}

// Principals are what the ACL filter matches: user:<name>, group:<name>…
// and public, sorted and unique. Names are used exactly as they are; one
// that breaks the principal rule (which an Authenticator never returns)
// grants nothing rather than being mended into another name.
func (id Identity) Principals() []string {
	set := map[string]bool{principal.Public: true}
	if principal.ValidName(id.User) == nil {
		set[principal.UserPrefix+id.User] = true
	}
	for _, g := range id.Groups {
		if principal.ValidName(g) == nil {
			set[principal.GroupPrefix+g] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ErrNoIdentity is the error of a request that carries no (valid) identity.
var ErrNoIdentity = errors.New("no identity")

// Authenticator establishes a request's identity.
type Authenticator interface {
	Authenticate(r *http.Request) (Identity, error)
}

// ProxyHeaders trusts identity headers set by a proxy in front of the
// route (which must strip them from client requests).
type ProxyHeaders struct {
	UserHeader   string
	GroupsHeader string
	// SecretHeader and Secret, when Secret is set, prove a request came
	// through the proxy: it must carry exactly one SecretHeader equal to
	// Secret, or its identity headers are not read at all.
	SecretHeader string
	Secret       []byte
}

// Authenticate reads the user and comma-separated groups. Each header
// must appear once (the groups header at most once): a proxy that appends
// its value instead of replacing the client's leaves two, and the first
// may be forged. Names must keep the principal rule; none is trimmed or
// otherwise mended, except ASCII spaces and tabs around a group item.
func (p ProxyHeaders) Authenticate(r *http.Request) (Identity, error) {
	if len(p.Secret) > 0 && !p.fromProxy(r) {
		return Identity{}, fmt.Errorf("%w: proxy secret header %s is missing, repeated or wrong", ErrNoIdentity, p.SecretHeader)
	}
	users := r.Header.Values(p.UserHeader)
	if len(users) == 0 {
		return Identity{}, ErrNoIdentity
	}
	if len(users) > 1 {
		return Identity{}, fmt.Errorf("%w: %s: %d values; want exactly one", ErrNoIdentity, p.UserHeader, len(users))
	}
	if err := principal.ValidName(users[0]); err != nil {
		return Identity{}, fmt.Errorf("%w: %s: user %w", ErrNoIdentity, p.UserHeader, err)
	}
	id := Identity{User: users[0]}
	switch lines := r.Header.Values(p.GroupsHeader); len(lines) {
	case 0:
	case 1:
		groups, err := groupList(lines[0])
		if err != nil {
			return Identity{}, fmt.Errorf("%w: %s: %w", ErrNoIdentity, p.GroupsHeader, err)
		}
		id.Groups = groups
	default:
		return Identity{}, fmt.Errorf("%w: %s: %d field lines; want at most one", ErrNoIdentity, p.GroupsHeader, len(lines))
	}
	return id, nil
}

// fromProxy says whether r carries exactly one SecretHeader equal to
// Secret. Digests are compared so that the time taken tells nothing of
// the secret's length either.
func (p ProxyHeaders) fromProxy(r *http.Request) bool {
	values := r.Header.Values(p.SecretHeader)
	if len(values) != 1 {
		return false
	}
	got, want := sha256.Sum256([]byte(values[0])), sha256.Sum256(p.Secret)
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// groupList splits a comma-separated list of group names. Items that are
// empty once ASCII spaces and tabs are trimmed are skipped ("a,,b", a
// trailing comma); every other item must be a valid name as it stands.
// Items are counted from 1, empty ones included, so an error points at
// the item as the sender wrote it.
func groupList(raw string) ([]string, error) {
	if raw == "" {
		return nil, nil
	}
	var groups []string
	for i, item := range strings.Split(raw, string(principal.ListSeparator)) {
		item = principal.TrimItem(item)
		if item == "" {
			continue
		}
		if err := principal.ValidName(item); err != nil {
			return nil, fmt.Errorf("group %d %w", i+1, err)
		}
		groups = append(groups, item)
	}
	return groups, nil
}
