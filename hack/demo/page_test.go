package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestPageProxyPlaysTheSignInProxy: the demo's proxy signs the page in as
// the identity it picked, and as nobody otherwise; what a client sends in
// the route's identity headers never passes; only the page it proxies
// offers the identities.
func TestPageProxyPlaysTheSignInProxy(t *testing.T) {
	route := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("ETag", `"route"`)
			_, _ = io.WriteString(w, "<!doctype html><html><head><title>page</title></head></html>")
			return
		}
		// Echo what the route was told.
		_ = json.NewEncoder(w).Encode(map[string][]string{
			"user": r.Header.Values("X-Forwarded-User"), "groups": r.Header.Values("X-Forwarded-Groups"),
			"secret": r.Header.Values("X-Ragroute-Proxy-Secret"), "pick": r.Header.Values(demoIdentityHeader),
		})
	}))
	defer route.Close()
	target, _ := url.Parse(route.URL)
	s := samples{userHeader: "X-Forwarded-User", groupsHeader: "X-Forwarded-Groups",
		proxy: proxySecret{header: "X-Ragroute-Proxy-Secret", value: "hunter2"}}
	proxy := httptest.NewServer(newPageProxy(target, s, pageIdentities))
	defer proxy.Close()

	seen := func(header http.Header) map[string][]string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, proxy.URL+"/v1/turns", strings.NewReader("{}"))
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var got map[string][]string
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := seen(http.Header{demoIdentityHeader: {"bob"}, "X-Forwarded-User": {"mallory"}, "X-Forwarded-Groups": {"admins"}})
	if strings.Join(got["user"], ",") != "bob" || strings.Join(got["groups"], "|") != "staff,ops" ||
		strings.Join(got["secret"], ",") != "hunter2" || len(got["pick"]) != 0 {
		t.Errorf("picked bob, forged mallory: the route saw %v", got)
	}
	for _, header := range []http.Header{
		{"X-Forwarded-User": {"mallory"}, "X-Ragroute-Proxy-Secret": {"guess"}},
		{demoIdentityHeader: {"root"}},
		{demoIdentityHeader: {"alice", "bob"}},
	} {
		if got := seen(header); len(got["user"])+len(got["groups"])+len(got["secret"]) != 0 {
			t.Errorf("sent %v: the route saw %v, want no identity", header, got)
		}
	}

	resp, err := http.Get(proxy.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), demoMeta+"</head>") || resp.Header.Get("ETag") != "" {
		t.Errorf("the proxied page is not marked as offering identities (ETag %q):\n%s", resp.Header.Get("ETag"), page)
	}
	resp, err = http.Get(proxy.URL + "/ui/demo-identities.json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Notice     string         `json:"notice"`
		Identities []demoIdentity `json:"identities"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil || !strings.Contains(list.Notice, "demo") || len(list.Identities) != 2 || list.Identities[1].ID != "bob" {
		t.Errorf("identities: %+v %v", list, err)
	}
}
