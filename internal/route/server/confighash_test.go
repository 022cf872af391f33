package server

import (
	"net/http"
	"testing"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/routetest"
)

// Every API answer, a refusal included, names the config the replica
// runs, so that a RouteEvaluation's run can tell the config it measures
// from the old one a stopping replica still serves; a route run without a
// hash sends none.
func TestEveryAnswerNamesTheConfigItRuns(t *testing.T) {
	w := routetest.NewWorld(t)
	srv := serveWith(t, w, func(o *Options) { o.ConfigHash = "0123abcd" })
	for _, c := range []struct {
		method, path, user string
		status             int
	}{
		{http.MethodGet, "/v1/models", "ann", http.StatusOK},
		{http.MethodPost, "/v1/search", "", http.StatusUnauthorized},
	} {
		resp := do(t, c.method, srv.URL+c.path, c.user, `{"query":"sync"}`)
		resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get(podconfig.ConfigHashHeader) != "0123abcd" {
			t.Errorf("%s %s: %d, %s %q; want %d and the replica's hash", c.method, c.path, resp.StatusCode,
				podconfig.ConfigHashHeader, resp.Header.Get(podconfig.ConfigHashHeader), c.status)
		}
	}
	resp := do(t, http.MethodGet, serve(t, w).URL+"/v1/models", "ann", "")
	resp.Body.Close()
	if got, ok := resp.Header[podconfig.ConfigHashHeader]; ok {
		t.Errorf("a route without a hash sent %s %q", podconfig.ConfigHashHeader, got)
	}
}
