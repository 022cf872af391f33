package serving

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/identity"
)

// authenticator establishes identities as the route's auth says.
func authenticator(a podconfig.Auth, secrets assembly.Secrets) (identity.Authenticator, error) {
	switch {
	case a.TrustedProxy != nil:
		p := a.TrustedProxy
		proxy := identity.ProxyHeaders{UserHeader: p.UserHeader, GroupsHeader: p.GroupsHeader}
		if p.SecretEnv != "" {
			// A missing secret must not turn into "trust any caller".
			secret := secrets.Get(p.SecretEnv)
			if secret == "" {
				return nil, fmt.Errorf("auth: the proxy secret (environment variable %s) is empty", p.SecretEnv)
			}
			proxy.SecretHeader, proxy.Secret = p.SecretHeader, []byte(secret)
		}
		return proxy, nil
	case a.JWT != nil:
		// Discovery (or the explicit JWKS) runs in the background: an
		// unreachable issuer refuses tokens, it never holds the start.
		v := &identity.JWTVerifier{Issuer: a.JWT.Issuer, Audience: a.JWT.Audience, JWKSURL: a.JWT.JWKSURL,
			UserClaim: a.JWT.UserClaim, GroupsClaim: a.JWT.GroupsClaim,
			HTTP: &http.Client{Timeout: 10 * time.Second}, Refresh: time.Minute, Timeout: 10 * time.Second}
		v.Start()
		return v, nil
	}
	return nil, errors.New("auth: no authenticator configured")
}
