package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/ragroute/ragroute/internal/principal"
)

// signingAlgs are the token algorithms accepted: the RSA, ECDSA and
// RSA-PSS families. "none" and the HMAC algorithms are never accepted, so
// a token signed with the issuer's public key as an HMAC secret is refused
// before any key is looked at.
var signingAlgs = []string{
	oidc.RS256, oidc.RS384, oidc.RS512,
	oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512,
}

var joseAlgs = func() []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(signingAlgs))
	for i, a := range signingAlgs {
		out[i] = jose.SignatureAlgorithm(a)
	}
	return out
}()

// DefaultRetryInterval is JWTVerifier.RetryInterval when unset.
const DefaultRetryInterval = 5 * time.Second

// keysUnavailable is what a caller reads while the issuer's keys cannot
// be read: never why, which is the issuer's addresses and answers.
const keysUnavailable = "the token cannot be verified now: the issuer's keys are unavailable"

// clockSkew is the leeway on a token's expiry.
const clockSkew = 30 * time.Second

// JWTVerifier verifies bearer tokens with go-oidc against the issuer's
// keys and maps their claims to an identity.
//
// Discovery: with JWKSURL empty, the keys' address is the jwks_uri of the
// issuer's OpenID discovery document (<Issuer>/.well-known/openid-
// configuration, whose issuer must equal Issuer). Discovery runs once, on
// Start or on the first token, in the background and bounded by Timeout;
// it never blocks the route's start. While it fails, every token is
// refused (401) with the reason logged, and it is tried again at most every
// few seconds. A set JWKSURL skips discovery.
//
// Keys: a token's kid is looked up in the last good key set without
// waiting for anything, so a fetch in flight never delays a token signed
// with a known key. An unknown kid starts one background fetch of the
// JWKS (concurrent tokens share it, and each waits for it at most as long
// as its request lives and the fetch's Timeout); fetches for unknown kids
// happen at most once per Refresh, and a token whose kid is still unknown
// is refused. A bad signature with a known kid is refused without a fetch.
// A failed fetch keeps the last good keys, so an IdP outage does not log
// out tokens signed with them.
type JWTVerifier struct {
	Issuer   string
	Audience string
	// JWKSURL, when set, serves the signing keys instead of discovery's
	// jwks_uri.
	JWKSURL     string
	UserClaim   string
	GroupsClaim string
	HTTP        *http.Client
	// Refresh bounds how often an unknown kid fetches the JWKS again.
	Refresh time.Duration
	// Timeout bounds discovery and each JWKS fetch; 10s when 0.
	Timeout time.Duration
	// RetryInterval bounds how often a failed discovery, or a JWKS fetch
	// while no key is known yet, is tried again; a token presented in
	// between is refused at once with the last failure.
	// DefaultRetryInterval when 0.
	RetryInterval time.Duration
	// Log receives discovery and key fetch failures; slog.Default() when nil.
	Log *slog.Logger

	mu          sync.Mutex
	verifier    *oidc.IDTokenVerifier
	keys        *keySet
	discovering chan struct{}
	triedAt     time.Time
	discoverErr error
}

// Start begins discovery and the first key fetch in the background, so
// the first token need not wait for them. It returns at once.
func (v *JWTVerifier) Start() {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*v.timeout())
		defer cancel()
		if _, ks, err := v.discovered(ctx); err == nil {
			_ = ks.refresh(ctx)
		}
	}()
}

// Authenticate verifies the request's bearer token.
func (v *JWTVerifier) Authenticate(r *http.Request) (Identity, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(raw) == "" {
		return Identity{}, ErrNoIdentity
	}
	verifier, _, err := v.discovered(r.Context())
	if err != nil {
		// The cause names the issuer's addresses and what they answered:
		// the log has it (discover), the caller a fixed sentence.
		return Identity{}, fmt.Errorf("%w: %s", ErrNoIdentity, keysUnavailable)
	}
	token, err := verifier.Verify(r.Context(), strings.TrimSpace(raw))
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrNoIdentity, err)
	}
	claims := map[string]any{}
	if err := token.Claims(&claims); err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrNoIdentity, err)
	}
	return v.identityOf(claims)
}

// identityOf maps a verified token's claims to an identity. The user
// claim must be a valid name as it stands; the groups claim is a list of
// names or one comma-separated string of them (see groupList). A name
// that breaks the principal rule refuses the whole token: dropping it
// would hide an issuer's misconfiguration.
func (v *JWTVerifier) identityOf(claims map[string]any) (Identity, error) {
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

func (v *JWTVerifier) retryInterval() time.Duration {
	if v.RetryInterval > 0 {
		return v.RetryInterval
	}
	return DefaultRetryInterval
}

func (v *JWTVerifier) timeout() time.Duration {
	if v.Timeout > 0 {
		return v.Timeout
	}
	return 10 * time.Second
}

func (v *JWTVerifier) client() *http.Client {
	if v.HTTP != nil {
		return v.HTTP
	}
	return &http.Client{Timeout: v.timeout()}
}

func (v *JWTVerifier) log() *slog.Logger {
	if v.Log != nil {
		return v.Log
	}
	return slog.Default()
}

// discovered returns the token verifier, running discovery (in the
// background, shared by concurrent callers) when it has not succeeded
// yet and was not tried within RetryInterval. The caller waits for it at
// most as long as ctx lives.
func (v *JWTVerifier) discovered(ctx context.Context) (*oidc.IDTokenVerifier, *keySet, error) {
	v.mu.Lock()
	if v.verifier != nil {
		defer v.mu.Unlock()
		return v.verifier, v.keys, nil
	}
	done := v.discovering
	if done == nil {
		if !v.triedAt.IsZero() && time.Since(v.triedAt) < v.retryInterval() {
			err := v.discoverErr
			v.mu.Unlock()
			return nil, nil, err
		}
		done = make(chan struct{})
		v.discovering, v.triedAt = done, time.Now()
		go v.discover(done)
	}
	v.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("waiting for discovery of %s: %w", v.Issuer, ctx.Err())
	case <-done:
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier == nil {
		return nil, nil, v.discoverErr
	}
	return v.verifier, v.keys, nil
}

func (v *JWTVerifier) discover(done chan struct{}) {
	jwksURL, err := v.JWKSURL, error(nil)
	if jwksURL == "" {
		jwksURL, err = v.jwksURI()
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	defer close(done)
	v.discovering = nil
	if err != nil {
		v.discoverErr = fmt.Errorf("discovery of %s: %w", v.Issuer, err)
		v.log().Warn("JWT issuer discovery failed; bearer tokens are refused until it succeeds",
			"issuer", v.Issuer, "err", err, "retryAfter", v.retryInterval())
		return
	}
	v.keys = &keySet{url: jwksURL, client: v.client(), timeout: v.timeout(), every: v.Refresh, retry: v.retryInterval(), log: v.log()}
	v.verifier = oidc.NewVerifier(v.Issuer, v.keys, &oidc.Config{
		ClientID:             v.Audience,
		SupportedSigningAlgs: signingAlgs,
		// The leeway on expiry: a token is taken as checked that long ago.
		Now: func() time.Time { return time.Now().Add(-clockSkew) },
	})
	v.discoverErr = nil
}

// jwksURI reads the jwks_uri of the issuer's discovery document.
func (v *JWTVerifier) jwksURI() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), v.timeout())
	defer cancel()
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, v.client()), v.Issuer)
	if err != nil {
		return "", err
	}
	var doc struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := provider.Claims(&doc); err != nil {
		return "", err
	}
	if doc.JWKSURI == "" {
		return "", errors.New("the discovery document has no jwks_uri")
	}
	return doc.JWKSURI, nil
}
