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
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestPrincipalsOfAnIdentity(t *testing.T) {
	got := Identity{User: "ann", Groups: []string{"staff", " sre ", "", "staff"}}.Principals()
	if want := []string{"group:sre", "group:staff", "public", "user:ann"}; !slices.Equal(got, want) {
		t.Errorf("principals %v, want %v", got, want)
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
	bad := map[string]func() *http.Request{
		"wrong audience": func() *http.Request { c := valid(); c["aud"] = "other"; return sign(key, c) },
		"wrong issuer":   func() *http.Request { c := valid(); c["iss"] = "https://evil.example"; return sign(key, c) },
		"expired":        func() *http.Request { c := valid(); c["exp"] = time.Now().Add(-time.Hour).Unix(); return sign(key, c) },
		"no expiry":      func() *http.Request { c := valid(); delete(c, "exp"); return sign(key, c) },
		"other key":      func() *http.Request { return sign(other, valid()) },
		"no user":        func() *http.Request { c := valid(); delete(c, "sub"); return sign(key, c) },
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
