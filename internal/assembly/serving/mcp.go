package serving

import (
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/server"
)

// mcpOptions are the route's /mcp: a JWT route names its issuer in the
// OAuth protected-resource metadata, so an MCP client knows where to get
// a token; a trusted-proxy route's clients get theirs from the proxy.
func mcpOptions(cfg podconfig.RouteConfig) *server.MCPOptions {
	opts := &server.MCPOptions{ResourceName: cfg.Route.Name}
	if cfg.Auth.JWT != nil {
		opts.Issuer = cfg.Auth.JWT.Issuer
	}
	return opts
}
