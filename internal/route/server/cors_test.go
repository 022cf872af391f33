package server

import (
	"net/http"
	"testing"

	"github.com/ragroute/ragroute/internal/route/routetest"
)

// A browser page of an allowed origin may call the route: the preflight
// is answered, the answer carries the origin and exposes X-Request-Id;
// another origin gets no CORS header, and without origins configured no
// request gets one.
func TestCORSOnlyForAllowedOrigins(t *testing.T) {
	w := routetest.NewWorld(t)
	srv := serveWith(t, w, func(o *Options) { o.CORSAllowedOrigins = []string{"https://chat.acme.example"} })
	preflight := func(base, origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodOptions, base+"/v1/chat/completions", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, x-stainless-os")
		resp, err := testClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight(srv.URL, "https://chat.acme.example")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "https://chat.acme.example" ||
		resp.Header.Get("Access-Control-Allow-Headers") != "authorization, content-type, x-stainless-os" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := preflight(srv.URL, "https://evil.example"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin's preflight got %v", resp.Header)
	}
	got := do(t, "GET", srv.URL+"/v1/models", "ann", "", "Origin", "https://chat.acme.example")
	got.Body.Close()
	if got.Header.Get("Access-Control-Allow-Origin") != "https://chat.acme.example" || got.Header.Get("Access-Control-Expose-Headers") == "" {
		t.Errorf("a request from the allowed origin: %v", got.Header)
	}

	off := serve(t, w)
	if resp := preflight(off.URL, "https://chat.acme.example"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS answered without origins configured: %v", resp.Header)
	}
}
