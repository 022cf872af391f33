package identity

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ragroute/ragroute/internal/principal"
)

// JWTVerifier verifies bearer tokens against an issuer's JWKS and maps
// their claims to an identity.
type JWTVerifier struct {
	Issuer      string
	Audience    string
	JWKSURL     string
	UserClaim   string
	GroupsClaim string
	HTTP        *http.Client
	// Refresh bounds how often the JWKS is fetched.
	Refresh time.Duration

	mu      sync.Mutex
	keys    map[string]crypto.PublicKey
	fetched time.Time
}

// Authenticate verifies the request's bearer token.
func (v *JWTVerifier) Authenticate(r *http.Request) (Identity, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(raw) == "" {
		return Identity{}, ErrNoIdentity
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(strings.TrimSpace(raw), claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.key(r.Context(), kid)
	},
		jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "ES256", "ES384", "PS256"}),
		jwt.WithIssuer(v.Issuer), jwt.WithAudience(v.Audience), jwt.WithExpirationRequired(), jwt.WithLeeway(30*time.Second))
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrNoIdentity, err)
	}
	return v.identityOf(claims)
}

// identityOf maps a verified token's claims to an identity. The user
// claim must be a valid name as it stands; the groups claim is a list of
// names or one comma-separated string of them (see groupList). A name
// that breaks the principal rule refuses the whole token: dropping it
// would hide an issuer's misconfiguration.
func (v *JWTVerifier) identityOf(claims jwt.MapClaims) (Identity, error) {
	user, _ := claims[v.UserClaim].(string)
	if user == "" {
		return Identity{}, fmt.Errorf("%w: token has no %q claim", ErrNoIdentity, v.UserClaim)
	}
	if err := principal.ValidName(user); err != nil {
		return Identity{}, fmt.Errorf("%w: claim %q: user %w", ErrNoIdentity, v.UserClaim, err)
	}
	id := Identity{User: user}
	switch groups := claims[v.GroupsClaim].(type) {
	case []any:
		// Items that are not strings, and empty ones, grant nothing (as
		// empty items of a list); the others are names as they stand,
		// never trimmed.
		for i, g := range groups {
			s, ok := g.(string)
			if !ok || s == "" {
				continue
			}
			if err := principal.ValidName(s); err != nil {
				return Identity{}, fmt.Errorf("%w: claim %q: group %d %w", ErrNoIdentity, v.GroupsClaim, i+1, err)
			}
			id.Groups = append(id.Groups, s)
		}
	case string:
		list, err := groupList(groups)
		if err != nil {
			return Identity{}, fmt.Errorf("%w: claim %q: %w", ErrNoIdentity, v.GroupsClaim, err)
		}
		id.Groups = list
	}
	return id, nil
}

// key returns the signing key kid, fetching the JWKS when it is unknown
// (keys rotate) but not more often than Refresh.
func (v *JWTVerifier) key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.keys[kid]; ok {
		return k, nil
	}
	if time.Since(v.fetched) < v.Refresh && v.keys != nil {
		return nil, fmt.Errorf("unknown signing key %q", kid)
	}
	keys, err := fetchJWKS(ctx, v.HTTP, v.JWKSURL)
	v.fetched = time.Now()
	if err != nil {
		return nil, err
	}
	v.keys = keys
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	if len(keys) == 1 && kid == "" {
		for _, k := range keys {
			return k, nil
		}
	}
	return nil, fmt.Errorf("unknown signing key %q", kid)
}

func fetchJWKS(ctx context.Context, client *http.Client, url string) (map[string]crypto.PublicKey, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS %s: %s", url, resp.Status)
	}
	var set struct {
		Keys []struct {
			Kid string `json:"kid"`
			Kty string `json:"kty"`
			N   string `json:"n"`
			E   string `json:"e"`
			Crv string `json:"crv"`
			X   string `json:"x"`
			Y   string `json:"y"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("parse JWKS %s: %w", url, err)
	}
	keys := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		switch k.Kty {
		case "RSA":
			n, errN := b64int(k.N)
			e, errE := b64int(k.E)
			if errN == nil && errE == nil {
				keys[k.Kid] = &rsa.PublicKey{N: n, E: int(e.Int64())}
			}
		case "EC":
			if key, err := ecKey(k.Crv, k.X, k.Y); err == nil {
				keys[k.Kid] = key
			}
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("JWKS " + url + " holds no usable RSA or EC key")
	}
	return keys, nil
}

// ecKey parses a JWK's curve point; a point off the curve is refused.
func ecKey(crv, x, y string) (*ecdsa.PublicKey, error) {
	curve := map[string]elliptic.Curve{"P-256": elliptic.P256(), "P-384": elliptic.P384()}[crv]
	if curve == nil {
		return nil, fmt.Errorf("unsupported curve %q", crv)
	}
	size := (curve.Params().BitSize + 7) / 8
	xb, errX := base64.RawURLEncoding.DecodeString(x)
	yb, errY := base64.RawURLEncoding.DecodeString(y)
	if errX != nil || errY != nil || len(xb) > size || len(yb) > size {
		return nil, errors.New("bad EC coordinates")
	}
	// The uncompressed SEC 1 form: 0x04 || X || Y, each left-padded.
	point := make([]byte, 1+2*size)
	point[0] = 4
	copy(point[1+size-len(xb):1+size], xb)
	copy(point[1+2*size-len(yb):], yb)
	return ecdsa.ParseUncompressedPublicKey(curve, point)
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return new(big.Int).SetBytes(b), nil
}
