package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The route's page (GET /) in the demo. In a cluster a sign-in proxy
// (oauth2-proxy and the like) sits in front of the route and adds the
// identity headers; here a loopback proxy plays it, signing the page in
// as the demo identity picked on the page. Only this proxy offers
// identities to pick: it marks the page it passes on and serves the
// list; a route never does either.

// demoIdentityHeader carries the identity the page picked; the proxy
// turns it into the route's identity headers and never passes it on.
const demoIdentityHeader = "X-Ragroute-Demo-Identity"

// demoIdentity is one identity the page may pick.
type demoIdentity struct {
	ID     string `json:"id"`
	Label  string `json:"label"`
	groups string
}

// pageIdentities are the demo's two users (the questions' askers).
var pageIdentities = []demoIdentity{
	{ID: "alice", Label: "alice (group staff)", groups: "staff"},
	{ID: "bob", Label: "bob (groups staff, ops)", groups: "staff,ops"},
}

// demoMeta tells the page that identities are offered (identity.js).
const demoMeta = `<meta name="ragroute-demo-identities" content="">`

// startPage serves the route through the demo's sign-in proxy on a free
// loopback port until ctx ends, and prints the page's address.
func (d *demo) startPage(ctx context.Context) error {
	route, err := url.Parse(d.routeURL)
	if err != nil {
		return fmt.Errorf("route URL %q: %w", d.routeURL, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listen for the page: %w", err)
	}
	// No write timeout: answers stream for as long as a turn runs.
	srv := &http.Server{Handler: newPageProxy(route, d.applied, pageIdentities), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Println("    the page's proxy stopped:", err)
		}
	}()
	go func() {
		<-ctx.Done()
		stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(stop)
	}()
	d.pageURL = "http://" + ln.Addr().String() + "/"
	fmt.Printf("    the route's page: %s\n", d.pageURL)
	fmt.Println("    (demo only: a loopback proxy plays the sign-in proxy and signs the page in as alice or bob, picked on the page;")
	fmt.Println("     it stays up with DEMO_STAY=1)")
	return nil
}

// newPageProxy passes requests to the route as a sign-in proxy would: it
// drops every identity header a client sent and, when the page names one
// of ids, adds that user's headers and the proxy secret. Without a
// pick the route sees no identity and answers 401.
func newPageProxy(route *url.URL, s samples, ids []demoIdentity) http.Handler {
	byID := map[string]demoIdentity{}
	for _, id := range ids {
		byID[id.ID] = id
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(route)
			for _, h := range []string{s.userHeader, s.groupsHeader, s.proxy.header, demoIdentityHeader} {
				pr.Out.Header.Del(h)
			}
			picked := pr.In.Header.Values(demoIdentityHeader)
			id, ok := byID[strings.Join(picked, ",")]
			if !ok || len(picked) != 1 {
				return
			}
			pr.Out.Header.Set(s.userHeader, id.ID)
			pr.Out.Header.Set(s.groupsHeader, id.groups)
			if s.proxy.value != "" {
				pr.Out.Header.Set(s.proxy.header, s.proxy.value)
			}
		},
		ModifyResponse: markPage,
	}
	list, _ := json.Marshal(map[string]any{
		"notice":     "The demo's loopback proxy signs this page in as the identity you pick; in a cluster your sign-in proxy decides who you are.",
		"identities": ids,
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui/demo-identities.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(list)
	})
	mux.Handle("/", proxy)
	return mux
}

// markPage adds demoMeta to the page itself, so the page offers the
// identities; the route's other answers pass unchanged.
func markPage(resp *http.Response) error {
	if resp.Request.URL.Path != "/" || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read the page: %w", err)
	}
	body = bytes.Replace(body, []byte("</head>"), []byte(demoMeta+"</head>"), 1)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("ETag") // the body is no longer the route's
	return nil
}
