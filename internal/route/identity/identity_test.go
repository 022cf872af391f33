package identity

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestPrincipalsOfAnIdentity(t *testing.T) {
	got := Identity{User: "ann", Groups: []string{"staff", "sre", "staff"}}.Principals()
	if want := []string{"group:sre", "group:staff", "public", "user:ann"}; !slices.Equal(got, want) {
		t.Errorf("principals %v, want %v", got, want)
	}
}

// A name that breaks the rule grants nothing: it is never mended into the
// name it looks like.
func TestPrincipalsNeverMendANameIntoAnother(t *testing.T) {
	got := Identity{User: "ann\u00a0", Groups: []string{" sre ", "", "\u00a0ops", "ad\u200bmins", "\xff", "\ufffd"}}.Principals()
	if want := []string{"public"}; !slices.Equal(got, want) {
		t.Errorf("principals %q, want %q", got, want)
	}
}

func TestProxyHeadersNeedAUser(t *testing.T) {
	auth := ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}
	r := httptest.NewRequest("GET", "/", nil)
	if _, err := auth.Authenticate(r); !errors.Is(err, ErrNoIdentity) {
		t.Errorf("no header: %v", err)
	}
	r.Header.Set("X-User", "ann")
	r.Header.Set("X-Groups", "staff,sre")
	if id, err := auth.Authenticate(r); err != nil || id.User != "ann" || len(id.Groups) != 2 {
		t.Errorf("identity %+v %v", id, err)
	}
}

func TestProxyHeadersReadNamesAsSent(t *testing.T) {
	auth := ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "jörg.o'brien@example.com")
	r.Header.Set("X-Groups", "staff, sre ,\tops,,")
	id, err := auth.Authenticate(r)
	if err != nil || id.User != "jörg.o'brien@example.com" || !slices.Equal(id.Groups, []string{"staff", "sre", "ops"}) {
		t.Errorf("identity %+v %v", id, err)
	}
}

// A proxy that appends its header to the client's leaves the client's
// (possibly forged) value first: a repeated identity header is refused.
func TestProxyHeadersRefuseRepeatedHeaders(t *testing.T) {
	auth := ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}
	for name, header := range map[string]http.Header{
		"two users":              {"X-User": {"admin", "ann"}},
		"two group lines":        {"X-User": {"ann"}, "X-Groups": {"admins", "staff"}},
		"empty group line first": {"X-User": {"ann"}, "X-Groups": {"", "staff"}},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header = header
		if id, err := auth.Authenticate(r); !errors.Is(err, ErrNoIdentity) {
			t.Errorf("%s: accepted as %+v (%v)", name, id, err)
		}
	}
	// The same over the wire: two header lines reach the handler as two values.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := auth.Authenticate(r); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header["X-User"] = []string{"admin", "ann"}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("two X-User lines over HTTP: status %d, want 401", resp.StatusCode)
	}
}

// Names that another layer would read as another name are refused, with
// an error that says which header, which item and which character.
func TestProxyHeadersRefuseInvalidNames(t *testing.T) {
	auth := ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups"}
	for _, c := range []struct{ user, groups, want string }{
		{"ann\u00a0", "", "X-User: user contains U+00A0 (no-break space)"},
		{" ann", "", "X-User: user contains U+0020 (space)"},
		{"\xff", "", "X-User: user is not valid UTF-8 (byte 1)"},
		{"ad\u200bmin", "", "X-User: user contains U+200B (zero width space)"},
		{"ann\u202e", "", "X-User: user contains U+202E (right-to-left override)"},
		{"\ufeffann", "", "X-User: user contains U+FEFF (zero width no-break space)"},
		{"ann\x7f", "", "X-User: user contains U+007F (a control character)"},
		{"", "", "X-User: user is empty"},
		{"ann", "staff,\u00a0ops", "X-Groups: group 2 contains U+00A0 (no-break space)"},
		{"ann", "staff,\xff", "X-Groups: group 2 is not valid UTF-8 (byte 1)"},
		{"ann", "\ufffd", "X-Groups: group 1 contains U+FFFD (replacement character)"},
		{"ann", "staff,,ad\u200bmins", "X-Groups: group 3 contains U+200B (zero width space)"},
		{"ann", "st aff", "X-Groups: group 1 contains U+0020 (space)"},
		{"ann", "staff\u3000", "X-Groups: group 1 contains U+3000 (ideographic space)"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header = http.Header{"X-User": {c.user}}
		if c.groups != "" {
			r.Header["X-Groups"] = []string{c.groups}
		}
		id, err := auth.Authenticate(r)
		if !errors.Is(err, ErrNoIdentity) || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("user %q groups %q: %+v, %v; want an error ending %q", c.user, c.groups, id, err, c.want)
		}
	}
}

func TestProxyHeadersCheckTheProxySecret(t *testing.T) {
	auth := ProxyHeaders{UserHeader: "X-User", GroupsHeader: "X-Groups", SecretHeader: "X-Proxy-Secret", Secret: []byte("s3cret")}
	for name, secrets := range map[string][]string{
		"missing":         nil,
		"wrong":           {"guess"},
		"a prefix":        {"s3cre"},
		"longer":          {"s3cret!"},
		"empty":           {""},
		"right and wrong": {"s3cret", "guess"},
		"wrong and right": {"guess", "s3cret"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header = http.Header{"X-User": {"ann"}}
		if secrets != nil {
			r.Header["X-Proxy-Secret"] = secrets
		}
		if id, err := auth.Authenticate(r); !errors.Is(err, ErrNoIdentity) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s secret: %+v, %v; want ErrNoIdentity, not naming the secret", name, id, err)
		}
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header = http.Header{"X-User": {"ann"}, "X-Proxy-Secret": {"s3cret"}}
	if id, err := auth.Authenticate(r); err != nil || id.User != "ann" {
		t.Errorf("right secret: %+v, %v", id, err)
	}
	// Without a secret, the header is neither needed nor looked at.
	auth.Secret = nil
	r.Header.Del("X-Proxy-Secret")
	if id, err := auth.Authenticate(r); err != nil || id.User != "ann" {
		t.Errorf("no secret configured: %+v, %v", id, err)
	}
}
