package identity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
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

func TestJWTVerification(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]string{
			"kid": "k1", "kty": "RSA",
			"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
		}}})
	}))
	defer jwks.Close()
	v := &JWTVerifier{Issuer: "https://sso.acme.example", Audience: "ragroute", JWKSURL: jwks.URL,
		UserClaim: "sub", GroupsClaim: "groups", HTTP: jwks.Client(), Refresh: time.Minute}

	sign := func(signer *rsa.PrivateKey, claims jwt.MapClaims) *http.Request {
		token := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		token.Header["kid"] = "k1"
		raw, err := token.SignedString(signer)
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+raw)
		return r
	}
	valid := func() jwt.MapClaims {
		return jwt.MapClaims{"iss": "https://sso.acme.example", "aud": "ragroute", "sub": "ann",
			"groups": []string{"staff"}, "exp": time.Now().Add(time.Hour).Unix()}
	}
	id, err := v.Authenticate(sign(key, valid()))
	if err != nil || id.User != "ann" || !slices.Equal(id.Groups, []string{"staff"}) {
		t.Fatalf("valid token: %+v %v", id, err)
	}
	c := valid()
	c["groups"] = "staff, sre"
	if id, err := v.Authenticate(sign(key, c)); err != nil || !slices.Equal(id.Groups, []string{"staff", "sre"}) {
		t.Errorf("groups as a string: %+v %v", id, err)
	}
	bad := map[string]func() *http.Request{
		"wrong audience":             func() *http.Request { c := valid(); c["aud"] = "other"; return sign(key, c) },
		"wrong issuer":               func() *http.Request { c := valid(); c["iss"] = "https://evil.example"; return sign(key, c) },
		"expired":                    func() *http.Request { c := valid(); c["exp"] = time.Now().Add(-time.Hour).Unix(); return sign(key, c) },
		"no expiry":                  func() *http.Request { c := valid(); delete(c, "exp"); return sign(key, c) },
		"other key":                  func() *http.Request { return sign(other, valid()) },
		"no user":                    func() *http.Request { c := valid(); delete(c, "sub"); return sign(key, c) },
		"user with a no-break space": func() *http.Request { c := valid(); c["sub"] = "ann\u00a0"; return sign(key, c) },
		"group with a zero width space": func() *http.Request {
			c := valid()
			c["groups"] = []string{"staff", "ad\u200bmins"}
			return sign(key, c)
		},
		"groups string with U+FFFD": func() *http.Request { c := valid(); c["groups"] = "staff,\ufffd"; return sign(key, c) },
		"not a token": func() *http.Request {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer x.y.z")
			return r
		},
	}
	for name, req := range bad {
		if _, err := v.Authenticate(req()); !errors.Is(err, ErrNoIdentity) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
}

func TestECKeysFromJWKS(t *testing.T) {
	for _, curve := range []elliptic.Curve{elliptic.P256(), elliptic.P384()} {
		priv, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := priv.PublicKey.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		size := (curve.Params().BitSize + 7) / 8
		x := base64.RawURLEncoding.EncodeToString(raw[1 : 1+size])
		y := base64.RawURLEncoding.EncodeToString(raw[1+size:])
		key, err := ecKey(curve.Params().Name, x, y)
		if err != nil || !key.Equal(&priv.PublicKey) {
			t.Fatalf("%s: ecKey = %v, %v; want the generated key", curve.Params().Name, key, err)
		}
		// A point off the curve is refused, not trusted.
		if _, err := ecKey(curve.Params().Name, x, x); err == nil {
			t.Errorf("%s: a point off the curve was accepted", curve.Params().Name)
		}
	}
	if _, err := ecKey("P-521", "AA", "AA"); err == nil {
		t.Error("an unsupported curve was accepted")
	}
}
