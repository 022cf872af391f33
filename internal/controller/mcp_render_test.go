package controller

import (
	"testing"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// /mcp is on unless the QueryRoute says mcp.enabled: false.
func TestRouteMCPIsRenderedOnUnlessTurnedOff(t *testing.T) {
	off := false
	for _, tc := range []struct {
		name string
		mcp  *v1alpha1.RouteMCP
		want bool
	}{
		{"left out", nil, true},
		{"enabled left out", &v1alpha1.RouteMCP{}, true},
		{"turned off", &v1alpha1.RouteMCP{Enabled: &off}, false},
	} {
		route := newRoute("acme", "support", "docs", "default")
		route.Spec.MCP = tc.mcp
		cfg := renderRouteConfig(routeInputs{route: route, store: newStore("acme", "docs", "http://milvus:19530"), promptName: "p"})
		if cfg.MCP.Enabled != tc.want {
			t.Errorf("%s: mcp.enabled rendered %v, want %v", tc.name, cfg.MCP.Enabled, tc.want)
		}
	}
}
