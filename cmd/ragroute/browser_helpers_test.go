package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/testenv"
)

// Helpers of browser_test.go: the route it serves the page from, the
// scripted model behind it, the sign-in proxies that give the page its
// users, and a headless Chromium with its console collected.

const pageProxySecret = "s3cret"

// pageRoute ingests testdata/ui (staff/ for group staff, ops/ for group
// ops; IMAGE_BASE replaced by imageBase) into a fresh Milvus Lite and
// returns a trusted-proxy route over it with the page on, answered by
// the scripted pageModel, streaming a chunk every chunkDelay.
func pageRoute(ctx context.Context, t *testing.T, imageBase string, chunkDelay time.Duration) (podconfig.RouteConfig, *testenv.ModelServer) {
	t.Helper()
	milvus := startMilvus(ctx, t)
	models := testenv.StartModelServer(512)
	t.Cleanup(models.Close)
	models.Chat = pageModel
	models.ChunkDelay = chunkDelay
	docs := t.TempDir()
	for _, group := range []string{"staff", "ops"} {
		files, err := filepath.Glob(filepath.Join("testdata", "ui", group, "*.md"))
		if err != nil || len(files) == 0 {
			t.Fatalf("testdata/ui/%s: %v", group, err)
		}
		if err := os.MkdirAll(filepath.Join(docs, group), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.ReplaceAll(data, []byte("IMAGE_BASE"), []byte(imageBase))
			if err := os.WriteFile(filepath.Join(docs, group, filepath.Base(f)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	milvusCfg := podconfig.Milvus{URI: milvus.URI, Database: "default", Collection: "docs"}
	embedding := podconfig.Embedding{BaseURL: models.BaseURL(), Model: "hash", Dimensions: 512, MaxInputTokens: 256}
	ingestOrFail(t, podconfig.IngestConfig{Version: podconfig.IngestVersion, Store: "docs", Milvus: milvusCfg, Embedding: embedding,
		Chunking: podconfig.Chunking{MaxTokens: 200, OverlapTokens: 24, MergeBelowTokens: 20},
		Sources: []podconfig.Source{
			{Name: "staff", Path: filepath.Join(docs, "staff"), Principals: []string{"group:staff"}},
			{Name: "ops", Path: filepath.Join(docs, "ops"), Principals: []string{"group:ops"}},
		},
	})
	t.Setenv("TEST_PROXY_SECRET", pageProxySecret)
	return podconfig.RouteConfig{
		Version: podconfig.RouteVersion, Route: podconfig.RouteRef{Name: "support", Namespace: "test"}, Server: podconfig.Server{Port: 8080},
		Prompt: podconfig.Prompt{Platform: "You are ACME's assistant.", NotFound: notFoundWording},
		Store: podconfig.Store{Name: "docs", Milvus: milvusCfg, Embedding: embedding,
			Search: podconfig.Search{Primitives: []string{"textDense", "textSparse", "titleDense", "titleSparse"}, Candidates: 12, RRFK: 60}},
		Model:  podconfig.ChatModel{BaseURL: models.BaseURL(), Name: "scripted", SearchPolicy: "modelDecides"},
		Window: podconfig.Window{ContextTokens: 8192, AnswerReserveTokens: 1024},
		// The hash embedder's vectors of unrelated words are near
		// orthogonal; a floor of 0.3 keeps only fragments that share
		// the query's words, so the pager question finds nothing alice
		// may read.
		Retrieval: podconfig.Retrieval{SimilarityFloor: 0.3, StrictFloor: 0.3, MaxFragments: 6, Research: true},
		Rerank:    podconfig.Rerank{Mode: "rrf"},
		Cache:     podconfig.Cache{Backend: "memory", TTL: podconfig.Duration(10 * time.Minute), MaxEntries: 100},
		Turns:     podconfig.Turns{Backend: "memory", Retention: podconfig.Duration(10 * time.Minute)},
		Limits:    podconfig.Limits{ConcurrentTurnsPerUser: 8, TurnsPerMinutePerUser: 600},
		Mode:      "singleRound",
		UI:        podconfig.UI{Enabled: true},
		Feedback:  podconfig.Feedback{Enabled: true, Retention: podconfig.Duration(720 * time.Hour)},
		Auth: podconfig.Auth{TrustedProxy: &podconfig.TrustedProxy{UserHeader: "X-User", GroupsHeader: "X-Groups",
			SecretHeader: "X-Proxy-Secret", SecretEnv: "TEST_PROXY_SECRET"}},
	}, models
}

const notFoundWording = "I could not find this in the documentation you may read."

// The scripted model's answers, by question. {S} is the marker of the
// fragment about calibration, {G} of the one about gadgets.
const (
	calibrationAnswer = "To calibrate a widget, open its **Calibration** panel {S}:\n\n1. Press **Calibrate**.\n" +
		"2. Wait for the *green light*.\n3. Press `Save`.\n\nDo it every 30 days and after any repair {S}."
	followUpAnswer = "Every 30 days, and after any repair {S} (not [S9], a marker of no source)."
	gadgetAnswer   = "Hold **Pair** for five seconds until the gadget beeps twice {G}. Old gadgets show " +
		`<img src=x onerror="window.__ragrouteXSS='answer'"> on their label, and <script>window.__ragrouteXSS='script'</script> stays text.`
	resumeAnswer = "Widgets measure line pressure on the factory floor {S}. Calibrate each one every 30 days from its " +
		"Calibration panel: press Calibrate, wait for the green light, then press Save {S}."
)

// pageModel is the scripted chat model: it searches what the question
// is about, rephrases to the same query, and answers by question.
func pageModel(req testenv.ChatRequest) testenv.ChatReply {
	question := ""
	rephrase := false
	for _, m := range req.Messages {
		if m.Role == "user" {
			question = m.Content
		}
		rephrase = rephrase || strings.Contains(m.Content, "different search query")
	}
	query := "widget calibration"
	switch q := strings.ToLower(question); {
	case strings.Contains(q, "pager"):
		query = "pager escalation rota"
	case strings.Contains(q, "gadget"):
		query = "gadget setup"
	}
	if rephrase {
		return testenv.ChatReply{Content: query}
	}
	if len(req.Tools) > 0 {
		args, _ := json.Marshal(map[string]string{"query": query})
		return testenv.ChatReply{ToolCalls: []testenv.ScriptedToolCall{{Name: "search_knowledge", Arguments: string(args)}}}
	}
	answer := calibrationAnswer
	switch q := strings.ToLower(question); {
	case strings.Contains(q, "gadget"):
		answer = gadgetAnswer
	case strings.Contains(q, "how often"):
		answer = followUpAnswer
	case strings.Contains(q, "in detail"):
		answer = resumeAnswer
	}
	return testenv.ChatReply{Content: strings.NewReplacer("{S}", markerOf(req, "calibration"), "{G}", markerOf(req, "gadget")).Replace(answer)}
}

var fenceLine = regexp.MustCompile(`(S\d+) \| ([^|\n]+) \|`)

// markerOf is the marker of the first packed fragment whose title or
// heading path names about, as the tool results' fence lines show it.
func markerOf(req testenv.ChatRequest, about string) string {
	for _, m := range req.Messages {
		if m.Role != "tool" {
			continue
		}
		for _, f := range fenceLine.FindAllStringSubmatch(m.Content, -1) {
			if strings.Contains(strings.ToLower(f[2]), about) {
				return "[" + f[1] + "]"
			}
		}
	}
	return "[S1]"
}

// answerRequests are the chat requests that wrote an answer (no tools
// offered, not a rephrasing), in order.
func answerRequests(models *testenv.ModelServer) []testenv.ChatRequest {
	var out []testenv.ChatRequest
	for _, r := range models.Seen() {
		if len(r.Tools) > 0 {
			continue
		}
		rephrase := false
		for _, m := range r.Messages {
			rephrase = rephrase || strings.Contains(m.Content, "different search query")
		}
		if !rephrase {
			out = append(out, r)
		}
	}
	return out
}

// transcript is the user and assistant messages of a chat request.
func transcript(r testenv.ChatRequest) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "user" || (m.Role == "assistant" && len(m.ToolCalls) == 0) {
			out = append(out, m.Role+": "+m.Content)
		}
	}
	return out
}

// imageServer serves one PNG, a drawing of the calibration panel, at
// /img/calibration-panel.png; every other image is missing (404).
func imageServer(t *testing.T) *httptest.Server {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 240, 120))
	for y := range 120 {
		for x := range 240 {
			c := color.RGBA{R: 0xe8, G: 0xec, B: 0xf0, A: 0xff}
			switch {
			case (x-60)*(x-60)+(y-60)*(y-60) < 24*24:
				c = color.RGBA{R: 0x2d, G: 0xa4, B: 0x4e, A: 0xff} // the green light
			case x > 130 && x < 220 && y > 45 && y < 75:
				c = color.RGBA{R: 0x1f, G: 0x5f, B: 0xa8, A: 0xff} // the Save button
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/img/calibration-panel.png" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(buf.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// proxyUser is who a sign-in proxy says the caller is.
type proxyUser struct{ user, groups string }

// signInProxy plays oauth2-proxy for the route at routeURL: it drops the
// identity headers a client sent and adds its user's, with the proxy
// secret. wrap, if set, wraps the proxy (to cut streams, or to add demo
// identities).
func signInProxy(t *testing.T, routeURL string, who func(*http.Request) (proxyUser, bool), wrap func(http.Handler) http.Handler) string {
	t.Helper()
	target, err := url.Parse(routeURL)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		for _, name := range []string{"X-User", "X-Groups", "X-Proxy-Secret"} {
			pr.Out.Header.Del(name)
		}
		if u, ok := who(pr.In); ok {
			pr.Out.Header.Set("X-User", u.user)
			pr.Out.Header.Set("X-Groups", u.groups)
			pr.Out.Header.Set("X-Proxy-Secret", pageProxySecret)
		}
	}}
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func always(u proxyUser) func(*http.Request) (proxyUser, bool) {
	return func(*http.Request) (proxyUser, bool) { return u, true }
}

// streamCutter breaks a turn's event stream twice: the first stream ends
// cleanly after cutAfter delta events (a proxy's timeout), the second,
// the page's resume, is cut off mid-stream after as many more (a dying
// replica). It records the id of the last event each broken stream
// carried and the Last-Event-ID of each stream request after the first.
type streamCutter struct {
	routeURL string
	user     proxyUser
	cutAfter int

	mu      sync.Mutex
	streams int
	sent    []string
	resumes []string
}

var eventsPath = regexp.MustCompile(`^/v1/turns/[^/]+/events$`)

func (c *streamCutter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !eventsPath.MatchString(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		c.mu.Lock()
		n := c.streams
		c.streams++
		if n > 0 {
			c.resumes = append(c.resumes, r.Header.Get("Last-Event-ID"))
		}
		c.mu.Unlock()
		if n >= 2 {
			next.ServeHTTP(w, r)
			return
		}
		c.forwardAndCut(w, r, n == 1)
	})
}

// forwardAndCut streams the route's events to w frame by frame and stops
// after the cutAfter-th delta: the client sees the stream end before the
// turn did, cleanly or (abort) with the connection cut.
func (c *streamCutter) forwardAndCut(w http.ResponseWriter, r *http.Request, abort bool) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, c.routeURL+r.URL.Path, nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header.Set("X-User", c.user.user)
	req.Header.Set("X-Groups", c.user.groups)
	req.Header.Set("X-Proxy-Secret", pageProxySecret)
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	scanner := bufio.NewScanner(resp.Body)
	var frame strings.Builder
	deltas := 0
	for scanner.Scan() {
		line := scanner.Text()
		frame.WriteString(line + "\n")
		if line != "" {
			continue
		}
		_, _ = w.Write([]byte(frame.String()))
		if flusher != nil {
			flusher.Flush()
		}
		text := frame.String()
		frame.Reset()
		if !strings.Contains(text, "event: delta\n") {
			continue
		}
		if deltas++; deltas == c.cutAfter {
			c.mu.Lock()
			c.sent = append(c.sent, strings.TrimPrefix(strings.SplitN(text, "\n", 2)[0], "id: "))
			c.mu.Unlock()
			if abort {
				panic(http.ErrAbortHandler) // net/http resets the connection, mid-chunk
			}
			return
		}
	}
}

func (c *streamCutter) report() (sent, resumes []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sent...), append([]string(nil), c.resumes...)
}

// demoIdentities plays the demo's proxy (hack/demo/page.go) for the
// page: the meta element that says identities are offered, the list,
// and (demoUser) the header the page sends with the one picked.
func demoIdentities(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ui/demo-identities.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"notice":"Demo only: the demo's proxy signs you in as the identity you pick.",` +
				`"identities":[{"id":"alice","label":"alice (staff)"},{"id":"bob","label":"bob (ops)"}]}`))
		case "/":
			page := httptest.NewRecorder()
			next.ServeHTTP(page, r)
			for k, v := range page.Header() {
				if k != "Content-Length" && k != "Etag" {
					w.Header()[k] = v
				}
			}
			w.WriteHeader(page.Code)
			_, _ = w.Write(bytes.Replace(page.Body.Bytes(), []byte("</head>"), []byte(`<meta name="ragroute-demo-identities" content=""></head>`), 1))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// refusalMessage is the route's wording of a refused turn, as refuseTurns
// sends it.
const refusalMessage = "over 600 turns per minute for one user (limits.turnsPerMinutePerUser); retry in 3 s"

// refuseTurns plays a route over its limit: every POST /v1/turns is
// refused in the API's error shape (429, rate_limited, Retry-After: 3).
func refuseTurns(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/turns" {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := json.Marshal(map[string]any{"error": map[string]string{"message": refusalMessage, "type": "rate_limit_error", "code": "rate_limited"}})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write(body)
	})
}

func demoUser(r *http.Request) (proxyUser, bool) {
	switch r.Header.Get("X-Ragroute-Demo-Identity") {
	case "alice":
		return proxyUser{"alice", "staff"}, true
	case "bob":
		return proxyUser{"bob", "ops"}, true
	}
	return proxyUser{}, false
}

// startBrowser starts headless Chromium (RAGROUTE_CHROMIUM) with a fresh
// profile whose languages are the comma-separated list languages
// ("en-US,en"); it is stopped, with every process it started, when the
// test ends. The flags keep it off the network it has no use for.
//
// The languages go in --accept-lang, which sets navigator.languages
// (and Accept-Language): in headless mode --lang and the environment's
// LANG change neither, and Emulation.setLocaleOverride only Intl's
// locale.
func startBrowser(t *testing.T, languages string) context.Context {
	t.Helper()
	bin, err := testenv.Chromium()
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("accept-lang", languages),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel() // closes the browser and waits for it
		cancelAlloc()
	})
	// The first Do binds the browser's life to its context, so it gets
	// none of its own; a browser that does not start fails the test.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start %s: %v", bin, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start within 30 s", bin)
	}
	return ctx
}

// tab is one browser tab with its console collected.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

func newTab(browser context.Context, t *testing.T) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	tb := &tab{t: t, ctx: ctx}
	// As with the browser, the first Do binds the tab's life to its
	// context: it gets no deadline of its own.
	opened := make(chan error, 1)
	go func() { opened <- chromedp.Do(ctx) }()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatalf("open a tab: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a tab did not open within 10 s")
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.console = append(tb.console, m)
			tb.mu.Unlock()
		}
	}()
	return tb
}

// do runs actions within limit, failing the test with what on error.
func (tb *tab) do(what string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, limit)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// evalJS evaluates a JavaScript expression in the page (promises awaited).
func evalJS[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func (tb *tab) waitFor(what, cond string, limit time.Duration) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, limit+time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(25*time.Millisecond),
		chromedp.WithPollingTimeout(limit))); err != nil {
		tb.t.Fatalf("%s: %v\n%s", what, err, tb.dump())
	}
}

// dump is the page's visible text, for a failure message.
func (tb *tab) dump() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		return "(page text unavailable: " + err.Error() + ")"
	}
	return "page text:\n" + text
}

// noConsoleErrors fails the test for each console error, uncaught
// exception or browser log error (a CSP violation, a failed request)
// that allowed does not expect.
func (tb *tab) noConsoleErrors(allowed func(chromedp.ConsoleMessage) bool) {
	tb.t.Helper()
	// Messages arrive asynchronously: give the last ones a moment.
	time.Sleep(200 * time.Millisecond)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, m := range tb.console {
		if m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException {
			continue
		}
		if allowed != nil && allowed(m) {
			continue
		}
		tb.t.Errorf("console %s (%s) at %s:%d: %s", m.Type, m.Source, m.URL, m.Line+1, m.Text)
	}
	tb.console = nil
}

// ask types a question into the page, with the keyboard only, and
// presses Enter.
func (tb *tab) ask(question string) {
	tb.t.Helper()
	tb.do("type the question", 10*time.Second, chromedp.Focus(chromedp.ID("q")), chromedp.KeyEvent(question), chromedp.KeyEvent("\r"))
}

// load opens the page at url and waits for its question box.
func (tb *tab) load(url string) {
	tb.t.Helper()
	tb.do("load the page", 15*time.Second, chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("q")))
}

// wantDone waits for turn n and stops the test unless it finished well.
func (tb *tab) wantDone(n int, limit time.Duration) {
	tb.t.Helper()
	if state := tb.turnDone(n, limit); state != "done" {
		tb.t.Fatalf("turn %d ended %s\n%s", n, state, tb.dump())
	}
}

// turnDone waits until turn n has finished, well or not.
func (tb *tab) turnDone(n int, limit time.Duration) string {
	tb.t.Helper()
	tb.waitFor(fmt.Sprintf("turn %d finishes", n), fmt.Sprintf(`["done","error"].includes(document.querySelector("#turn-%d")?.dataset.state)`, n), limit)
	return evalJS[string](tb, fmt.Sprintf(`document.querySelector("#turn-%d").dataset.state`, n))
}
