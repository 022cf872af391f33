package podconfig

import (
	"strings"
	"testing"
)

// JWT keys come over https, or over http only from this machine (tests,
// a local IdP): anything else could be swapped on the way.
func TestJWTURLsAreHTTPSOffLoopback(t *testing.T) {
	for _, tc := range []struct {
		issuer, jwks string
		want         string // "" when valid
	}{
		{"https://sso.acme.example", "", ""},
		{"https://sso.acme.example", "https://keys.acme.example/jwks", ""},
		{"http://127.0.0.1:5556/dex", "", ""},
		{"http://localhost:8080/realms/acme", "http://[::1]:8080/keys", ""},
		{"http://sso.acme.example", "", `auth.jwt.issuer: "http://sso.acme.example" must be https://`},
		{"https://sso.acme.example", "http://keys.acme.example/jwks", `auth.jwt.jwksURL: "http://keys.acme.example/jwks" must be https://`},
		{"http://localhost.evil.example", "", "auth.jwt.issuer"},
		{"http://127.0.0.1.nip.io", "", "auth.jwt.issuer"},
	} {
		c := validConfig()
		c.Auth = Auth{JWT: &JWT{Issuer: tc.issuer, JWKSURL: tc.jwks, Audience: "ragroute", UserClaim: "sub", GroupsClaim: "groups"}}
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("issuer %s, jwks %q refused: %v", tc.issuer, tc.jwks, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("issuer %s, jwks %q: error %v, want it to mention %q", tc.issuer, tc.jwks, err, tc.want)
		}
	}
}
