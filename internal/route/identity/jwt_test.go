package identity

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// idp is a test identity provider in Keycloak's shape: the issuer is
// <server>/realms/x and its keys are served at
// /realms/x/protocol/openid-connect/certs, not at
// <issuer>/.well-known/jwks.json.
type idp struct {
	srv    *httptest.Server
	issuer string

	mu   sync.Mutex
	keys []jose.JSONWebKey
	// discoveryDown answers discovery with 503; jwksDown answers the
	// JWKS with 500.
	discoveryDown, jwksDown bool
	// hold, when set, blocks JWKS fetches after the first until it is
	// closed; each blocked fetch is announced on held.
	hold chan struct{}
	held chan struct{}

	jwksFetches atomic.Int32
}

const certsPath = "/realms/x/protocol/openid-connect/certs"

func newIDP(t *testing.T) *idp {
	t.Helper()
	p := &idp{}
	mux := http.NewServeMux()
	mux.HandleFunc("/realms/x/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		down := p.discoveryDown
		p.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                p.issuer,
			"jwks_uri":                              p.srv.URL + certsPath,
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc(certsPath, func(w http.ResponseWriter, _ *http.Request) {
		n := p.jwksFetches.Add(1)
		p.mu.Lock()
		hold, held, down := p.hold, p.held, p.jwksDown
		p.mu.Unlock()
		if hold != nil && n > 1 {
			held <- struct{}{}
			<-hold
		}
		if down {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		p.mu.Lock()
		set := jose.JSONWebKeySet{Keys: p.keys}
		p.mu.Unlock()
		_ = json.NewEncoder(w).Encode(set)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	p.issuer = p.srv.URL + "/realms/x"
	return p
}

func (p *idp) publish(kid, alg string, key crypto.PublicKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: alg, Use: "sig"})
}

func (p *idp) set(f func(p *idp)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func (p *idp) verifier(jwksURL string) *JWTVerifier {
	return &JWTVerifier{Issuer: p.issuer, Audience: "ragroute", JWKSURL: jwksURL,
		UserClaim: "sub", GroupsClaim: "groups", HTTP: p.srv.Client(), Refresh: time.Minute}
}

func (p *idp) claims() jwt.MapClaims {
	return jwt.MapClaims{"iss": p.issuer, "aud": "ragroute", "sub": "ann",
		"groups": []string{"staff"}, "exp": time.Now().Add(time.Hour).Unix()}
}

func bearer(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) *http.Request {
	t.Helper()
	token := jwt.NewWithClaims(method, claims)
	if kid != "" {
		token.Header["kid"] = kid
	}
	raw, err := token.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+raw)
	return r
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ecdsaKey(t *testing.T, c elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestJWTDiscoveryFindsKeysAtJWKSURI(t *testing.T) {
	p := newIDP(t)
	rs, es, ps := rsaKey(t), ecdsaKey(t, elliptic.P256()), rsaKey(t)
	p.publish("rs", "RS256", &rs.PublicKey)
	p.publish("es", "ES256", &es.PublicKey)
	p.publish("ps", "PS256", &ps.PublicKey)
	v := p.verifier("") // discovery
	for name, r := range map[string]*http.Request{
		"RS256": bearer(t, jwt.SigningMethodRS256, "rs", rs, p.claims()),
		"ES256": bearer(t, jwt.SigningMethodES256, "es", es, p.claims()),
		"PS256": bearer(t, jwt.SigningMethodPS256, "ps", ps, p.claims()),
	} {
		id, err := v.Authenticate(r)
		if err != nil || id.User != "ann" || !slices.Equal(id.Groups, []string{"staff"}) {
			t.Errorf("%s: %+v, %v", name, id, err)
		}
	}
	c := p.claims()
	c["groups"] = "staff, sre"
	if id, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "rs", rs, c)); err != nil || !slices.Equal(id.Groups, []string{"staff", "sre"}) {
		t.Errorf("groups as a string: %+v %v", id, err)
	}
	if n := p.jwksFetches.Load(); n != 1 {
		t.Errorf("%d JWKS fetches, want 1", n)
	}
}

func TestJWTExplicitJWKSURLSkipsDiscovery(t *testing.T) {
	p := newIDP(t)
	p.set(func(p *idp) { p.discoveryDown = true })
	k := rsaKey(t)
	p.publish("k1", "RS256", &k.PublicKey)
	v := p.verifier(p.srv.URL + certsPath)
	if id, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k1", k, p.claims())); err != nil || id.User != "ann" {
		t.Fatalf("explicit jwksURL: %+v %v", id, err)
	}
}

func TestJWTRefusesBadTokens(t *testing.T) {
	p := newIDP(t)
	key, other := rsaKey(t), rsaKey(t)
	p.publish("k1", "RS256", &key.PublicKey)
	v := p.verifier("")
	if _, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k1", key, p.claims())); err != nil {
		t.Fatalf("valid token: %v", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	sign := func(c jwt.MapClaims) *http.Request { return bearer(t, jwt.SigningMethodRS256, "k1", key, c) }
	bad := map[string]func(t *testing.T) *http.Request{
		"alg none": func(t *testing.T) *http.Request {
			return bearer(t, jwt.SigningMethodNone, "k1", jwt.UnsafeAllowNoneSignatureType, p.claims())
		},
		"HS256 with the public key as secret": func(t *testing.T) *http.Request {
			return bearer(t, jwt.SigningMethodHS256, "k1", pubPEM, p.claims())
		},
		"HS256 with the public key's DER as secret": func(t *testing.T) *http.Request {
			return bearer(t, jwt.SigningMethodHS256, "k1", pub, p.claims())
		},
		"wrong audience": func(t *testing.T) *http.Request { c := p.claims(); c["aud"] = "other"; return sign(c) },
		"wrong issuer":   func(t *testing.T) *http.Request { c := p.claims(); c["iss"] = "https://evil.example"; return sign(c) },
		"expired": func(t *testing.T) *http.Request {
			c := p.claims()
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			return sign(c)
		},
		"no expiry":  func(t *testing.T) *http.Request { c := p.claims(); delete(c, "exp"); return sign(c) },
		"forged key": func(t *testing.T) *http.Request { return bearer(t, jwt.SigningMethodRS256, "k1", other, p.claims()) },
		"forged key, no kid": func(t *testing.T) *http.Request {
			return bearer(t, jwt.SigningMethodRS256, "", other, p.claims())
		},
		"unknown kid":                func(t *testing.T) *http.Request { return bearer(t, jwt.SigningMethodRS256, "k9", other, p.claims()) },
		"no user":                    func(t *testing.T) *http.Request { c := p.claims(); delete(c, "sub"); return sign(c) },
		"user with a no-break space": func(t *testing.T) *http.Request { c := p.claims(); c["sub"] = "ann\u00a0"; return sign(c) },
		"group with a zero width space": func(t *testing.T) *http.Request {
			c := p.claims()
			c["groups"] = []string{"staff", "ad\u200bmins"}
			return sign(c)
		},
		"groups string with U+FFFD": func(t *testing.T) *http.Request { c := p.claims(); c["groups"] = "staff,\ufffd"; return sign(c) },
		"not a token": func(t *testing.T) *http.Request {
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer x.y.z")
			return r
		},
	}
	for name, req := range bad {
		if _, err := v.Authenticate(req(t)); !errors.Is(err, ErrNoIdentity) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	// A token that expired within the clock skew still passes.
	c := p.claims()
	c["exp"] = time.Now().Add(-clockSkew / 2).Unix()
	if _, err := v.Authenticate(sign(c)); err != nil {
		t.Errorf("expired within the clock skew: %v", err)
	}
}

func TestJWTDiscoveryDownFailsClosed(t *testing.T) {
	p := newIDP(t)
	k := rsaKey(t)
	p.publish("k1", "RS256", &k.PublicKey)
	p.set(func(p *idp) { p.discoveryDown = true })
	var logs bytes.Buffer
	var logMu sync.Mutex
	v := p.verifier("")
	v.RetryInterval = 20 * time.Millisecond
	v.Log = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))

	start := time.Now()
	v.Start() // the route starts: Start must not wait for discovery
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Start blocked %s", d)
	}
	_, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k1", k, p.claims()))
	if !errors.Is(err, ErrNoIdentity) || !strings.Contains(err.Error(), keysUnavailable) || strings.Contains(err.Error(), "503") ||
		strings.Contains(err.Error(), "well-known") {
		t.Fatalf("discovery down: %v, want ErrNoIdentity saying only that the keys are unavailable", err)
	}
	logMu.Lock()
	logged := logs.String()
	logMu.Unlock()
	if !strings.Contains(logged, "discovery failed") || !strings.Contains(logged, "503") {
		t.Errorf("the reason is not logged: %q", logged)
	}

	// The IdP comes back: discovery is tried again and tokens verify.
	p.set(func(p *idp) { p.discoveryDown = false })
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k1", k, p.claims()))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("discovery never recovered: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// A slow JWKS fetch for an unknown kid must not hold a token signed with a
// known key (it held one for 3.8 s when the fetch ran under the lock).
func TestJWTSlowFetchDoesNotDelayKnownKid(t *testing.T) {
	p := newIDP(t)
	k := rsaKey(t)
	p.publish("k1", "RS256", &k.PublicKey)
	hold := make(chan struct{})
	p.set(func(p *idp) { p.hold, p.held = hold, make(chan struct{}, 1) })
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	defer release()
	v := p.verifier(p.srv.URL + certsPath)
	v.Refresh = 0 // any unknown kid may fetch
	if _, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k1", k, p.claims())); err != nil {
		t.Fatalf("warm-up: %v", err)
	}

	unknown := make(chan error, 1)
	go func() {
		_, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k2", rsaKey(t), p.claims()))
		unknown <- err
	}()
	select {
	case <-p.held: // the fetch for k2 is in flight and blocked
	case <-time.After(10 * time.Second):
		t.Fatal("the unknown kid did not fetch the JWKS")
	}
	known := make(chan error, 1)
	go func() {
		_, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k1", k, p.claims()))
		known <- err
	}()
	select {
	case err := <-known:
		if err != nil {
			t.Errorf("known kid: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("a token with a known kid waited for a JWKS fetch")
	}
	release()
	if err := <-unknown; !errors.Is(err, ErrNoIdentity) {
		t.Errorf("unknown kid: %v, want ErrNoIdentity", err)
	}
}

func TestJWTRefetchesAreRateLimited(t *testing.T) {
	p := newIDP(t)
	k := rsaKey(t)
	p.publish("k1", "RS256", &k.PublicKey)
	v := p.verifier("")
	v.Refresh = time.Hour
	if _, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k1", k, p.claims())); err != nil {
		t.Fatal(err)
	}
	forged := rsaKey(t)
	for i := range 20 {
		kid := "k1" // a forged signature with a known kid never fetches
		if i%2 == 0 {
			kid = "unknown-" + string(rune('a'+i))
		}
		if _, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, kid, forged, p.claims())); !errors.Is(err, ErrNoIdentity) {
			t.Fatalf("forged token %d accepted: %v", i, err)
		}
	}
	if n := p.jwksFetches.Load(); n != 1 {
		t.Errorf("%d JWKS fetches for 20 bad tokens within Refresh, want 1", n)
	}
}

func TestJWTKeysRotateAndSurviveAnOutage(t *testing.T) {
	p := newIDP(t)
	k1, k2, k3 := rsaKey(t), rsaKey(t), rsaKey(t)
	p.publish("k1", "RS256", &k1.PublicKey)
	v := p.verifier("")
	v.Refresh = time.Millisecond
	var logs bytes.Buffer
	var logMu sync.Mutex
	v.Log = slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))
	if _, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k1", k1, p.claims())); err != nil {
		t.Fatal(err)
	}
	// Rotation: a new kid fetches the new set.
	p.publish("k2", "RS256", &k2.PublicKey)
	time.Sleep(5 * time.Millisecond)
	if _, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k2", k2, p.claims())); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	// Outage: the fetch for k3 fails; k1 and k2 still verify.
	p.publish("k3", "RS256", &k3.PublicKey)
	p.set(func(p *idp) { p.jwksDown = true })
	time.Sleep(5 * time.Millisecond)
	// The caller is told the keys are unavailable, never what the
	// issuer's address or answer was: that is for the log.
	_, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, "k3", k3, p.claims()))
	if !errors.Is(err, ErrNoIdentity) || !strings.Contains(err.Error(), keysUnavailable) || strings.Contains(err.Error(), "500") ||
		strings.Contains(err.Error(), p.srv.URL) {
		t.Errorf("k3 during the outage: %v, want a refusal saying the keys are unavailable, and no more", err)
	}
	logMu.Lock()
	if logged := logs.String(); !strings.Contains(logged, "500") || !strings.Contains(logged, certsPath) {
		t.Errorf("the log does not say why the fetch failed:\n%s", logged)
	}
	logMu.Unlock()
	for kid, key := range map[string]*rsa.PrivateKey{"k1": k1, "k2": k2} {
		if _, err := v.Authenticate(bearer(t, jwt.SigningMethodRS256, kid, key, p.claims())); err != nil {
			t.Errorf("%s during the outage: %v", kid, err)
		}
	}
}

func TestParseJWKSKeepsOnlyPublicSigningKeys(t *testing.T) {
	rs := rsaKey(t)
	var raw []any
	add := func(k jose.JSONWebKey) {
		b, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, json.RawMessage(b))
	}
	var want []crypto.PublicKey
	for _, curve := range []elliptic.Curve{elliptic.P256(), elliptic.P384()} {
		priv := ecdsaKey(t, curve)
		add(jose.JSONWebKey{Key: &priv.PublicKey, KeyID: curve.Params().Name})
		want = append(want, &priv.PublicKey)
		// A point off the curve is skipped, not trusted.
		size := (curve.Params().BitSize + 7) / 8
		b, _ := priv.PublicKey.Bytes()
		x := base64.RawURLEncoding.EncodeToString(b[1 : 1+size])
		raw = append(raw, map[string]string{"kty": "EC", "kid": "off", "crv": curve.Params().Name, "x": x, "y": x})
	}
	add(jose.JSONWebKey{Key: &rs.PublicKey, KeyID: "rsa"})
	want = append(want, &rs.PublicKey)
	add(jose.JSONWebKey{Key: &rs.PublicKey, KeyID: "enc", Use: "enc"})
	add(jose.JSONWebKey{Key: rs, KeyID: "private"})
	add(jose.JSONWebKey{Key: []byte("secret"), KeyID: "oct"})
	raw = append(raw, map[string]string{"kty": "OKP", "crv": "Ed448", "x": "AA", "kid": "ed448"})
	body, _ := json.Marshal(map[string]any{"keys": raw})
	keys, err := parseJWKS(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(want) {
		t.Fatalf("kept %d keys, want %d: %+v", len(keys), len(want), keys)
	}
	for i, k := range keys {
		if !k.Key.(interface{ Equal(crypto.PublicKey) bool }).Equal(want[i]) {
			t.Errorf("key %d (%s) is not the published key", i, k.KeyID)
		}
	}
	if _, err := parseJWKS([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)); err == nil {
		t.Error("a set with no usable key was accepted")
	}
}
