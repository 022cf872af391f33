package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ragroute/ragroute/internal/route/routetest"
)

// FuzzRequestBodies sends arbitrary bodies to the three endpoints that
// decode one: turn submit, the OpenAI facade and search. Whatever arrives,
// the route answers without a server error, and a refusal is the API's
// JSON error with a code. `go test` runs the seeds; `go test -fuzz
// FuzzRequestBodies ./internal/route/server` explores.
func FuzzRequestBodies(f *testing.F) {
	w := routetest.NewWorld(f)
	w.Models.Chat = routetest.SearchThenAnswer("sync waves", "Lower waves go first [S1].")
	srv := serve(f, w)
	paths := []string{"/v1/turns", "/v1/chat/completions", "/v1/search"}
	for _, seed := range []string{
		`{"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`,
		`{"stream":true,"messages":[{"role":"user","content":"How are sync waves ordered?"}]}`,
		`{"query":"sync waves"}`,
		`{"query":"sync waves","limit":-1}`,
		`{}`, `null`, `[]`, `""`, `{"messages":null}`, `{"messages":[]}`,
		`{"messages":[{"role":"tool","content":"x"}]}`,
		`{"messages":[{"role":"user","content":"\u0000\ud800"}]}`,
		`{"messages":[{"role":"user","content":"a"}],"messages":[{"role":"system","content":"b"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http://x"}}]}]}`,
		`{"messages":[{"role":"user","content":"` + strings.Repeat("a", 40000) + `"}]}`,
		`{"query":"` + strings.Repeat("\\\"", 100) + `"}`,
		`{"n":2,"messages":[{"role":"user","content":"hi"}]}`,
		"{\"query\":\"x\"", "\xff\xfe", `{"unknown":1}`,
	} {
		for i := range paths {
			f.Add(uint8(i), seed)
		}
	}
	calls := 0
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		calls++
		path := paths[int(which)%len(paths)]
		// A fresh user per call: the fuzzer must not trip the per-user limits.
		resp := do(t, "POST", srv.URL+path, fmt.Sprintf("fuzz%d", calls), body)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s: read: %v", path, err)
		}
		// 503 is the answer to overload (the fuzzer submits turns faster
		// than they finish); any other server error is a bug.
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s %q: %s %s", path, body, resp.Status, data)
		}
		if resp.StatusCode >= 400 {
			var refusal struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(data, &refusal); err != nil || refusal.Error.Code == "" || refusal.Error.Message == "" {
				t.Fatalf("%s %q: %s with a body that is not the API's error: %s", path, body, resp.Status, data)
			}
		}
	})
}
