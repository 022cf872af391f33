package identity

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// attacks are names that read as another name somewhere downstream.
func attacks() []string {
	return []string{
		"\xff", "ops\xc3", "\ufffd", "alice\u00a0", "\u00a0ops", "ad\u200bmins", "admins\u202e", "\ufeffops",
		"al\u3000ice", "a\x00b", "a\x1fb", "a\u0085b", " ", "\t", "staff, sre", " staff ,\tsre,,", "a,b", "jörg",
	}
}

// checkAccepted: an accepted identity holds exactly the names sent (the
// user as is, the groups as the list's non-empty items with ASCII spaces
// and tabs trimmed), every one keeps the rule, and its principals are
// exactly public, user:<user> and group:<each group>.
func checkAccepted(t *testing.T, id Identity, user string, groups []string) {
	t.Helper()
	if id.User != user || !slices.Equal(id.Groups, groups) {
		t.Fatalf("accepted user %q groups %q as %+v", user, groups, id)
	}
	want := []string{"public", "user:" + user}
	for _, name := range append([]string{user}, groups...) {
		if !utf8.ValidString(name) || name == "" {
			t.Fatalf("accepted name %q", name)
		}
		for _, r := range name {
			if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError || r == ',' {
				t.Fatalf("accepted name %q holding %U", name, r)
			}
		}
	}
	for _, g := range groups {
		want = append(want, "group:"+g)
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if got := id.Principals(); !slices.Equal(got, want) {
		t.Fatalf("principals %q, want %q", got, want)
	}
}

// listItems is what a comma-separated list means by contract.
func listItems(raw string) []string {
	var items []string
	for _, item := range strings.Split(raw, ",") {
		if item = strings.Trim(item, " \t"); item != "" {
			items = append(items, item)
		}
	}
	return items
}

func FuzzProxyHeaders(f *testing.F) {
	for _, a := range attacks() {
		f.Add(a, "staff")
		f.Add("ann", a)
	}
	auth := ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}
	f.Fuzz(func(t *testing.T, user, groups string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header = http.Header{"X-User": {user}, "X-Groups": {groups}}
		id, err := auth.Authenticate(r)
		if err != nil {
			if !errors.Is(err, ErrNoIdentity) {
				t.Fatalf("refused with %v, not ErrNoIdentity", err)
			}
			return
		}
		checkAccepted(t, id, user, listItems(groups))
	})
}

func FuzzJWTClaims(f *testing.F) {
	for _, a := range attacks() {
		f.Add(a, "staff", "sre", "staff")
		f.Add("ann", a, "sre", a)
	}
	v := &JWTVerifier{UserClaim: "sub", GroupsClaim: "groups"}
	f.Fuzz(func(t *testing.T, user, first, second, list string) {
		id, err := v.identityOf(jwt.MapClaims{"sub": user, "groups": []any{first, 7, second}})
		if err == nil {
			var groups []string
			for _, g := range []string{first, second} {
				if g != "" {
					groups = append(groups, g)
				}
			}
			checkAccepted(t, id, user, groups)
		} else if !errors.Is(err, ErrNoIdentity) {
			t.Fatalf("refused with %v, not ErrNoIdentity", err)
		}
		id, err = v.identityOf(jwt.MapClaims{"sub": user, "groups": list})
		if err == nil {
			checkAccepted(t, id, user, listItems(list))
		} else if !errors.Is(err, ErrNoIdentity) {
			t.Fatalf("refused with %v, not ErrNoIdentity", err)
		}
	})
}
