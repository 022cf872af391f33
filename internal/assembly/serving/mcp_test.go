package serving

import (
	"testing"

	"github.com/ragroute/ragroute/internal/podconfig"
)

// A JWT route's /mcp names the route's issuer as its authorization
// server; a trusted-proxy route's names none (its proxy signs users in).
func TestMCPNamesTheJWTIssuer(t *testing.T) {
	cfg := podconfig.RouteConfig{Route: podconfig.RouteRef{Name: "support"},
		Auth: podconfig.Auth{JWT: &podconfig.JWT{Issuer: "https://login.example.com/realms/acme"}}}
	if got := mcpOptions(cfg); got.Issuer != "https://login.example.com/realms/acme" || got.ResourceName != "support" {
		t.Errorf("JWT route: %+v", got)
	}
	cfg.Auth = podconfig.Auth{TrustedProxy: &podconfig.TrustedProxy{UserHeader: "X-User"}}
	if got := mcpOptions(cfg); got.Issuer != "" {
		t.Errorf("trusted-proxy route: %+v", got)
	}
}
