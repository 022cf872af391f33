package identity

import (
	"errors"
	"net/http"
	"sort"
	"strings"
)

// Identity is who asks.
type Identity struct {
	User   string
	Groups []string
}

// Principals are what the ACL filter matches: user:<name>, group:<name>…
// and public, sorted and unique.
func (id Identity) Principals() []string {
	set := map[string]bool{"public": true, "user:" + id.User: true}
	for _, g := range id.Groups {
		if g = strings.TrimSpace(g); g != "" {
			set["group:"+g] = true
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
}

// Authenticate reads the user and comma-separated groups.
func (p ProxyHeaders) Authenticate(r *http.Request) (Identity, error) {
	user := strings.TrimSpace(r.Header.Get(p.UserHeader))
	if user == "" {
		return Identity{}, ErrNoIdentity
	}
	var groups []string
	if raw := r.Header.Get(p.GroupsHeader); raw != "" {
		groups = strings.Split(raw, ",")
	}
	return Identity{User: user, Groups: groups}, nil
}
