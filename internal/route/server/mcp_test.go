package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/testenv"
)

// asCaller adds a trusted proxy's identity headers to every request.
type asCaller struct{ user, groups string }

func (c asCaller) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-User", c.user)
	r.Header.Set("X-Groups", c.groups)
	return http.DefaultTransport.RoundTrip(r)
}

// Who asks in these tests: alice reads the staff documents, bob the
// admins' (ops) documents too, carol none.
var (
	alice = asCaller{"alice", "staff"}
	bob   = asCaller{"bob", "staff,admins"}
	carol = asCaller{"carol", "visitors"}
)

// serveMCP serves w's route with /mcp on, after set changes what a test
// needs (nil: nothing).
func serveMCP(t *testing.T, w *routetest.World, set func(*Options)) *httptest.Server {
	t.Helper()
	return serveWith(t, w, func(o *Options) {
		o.MCP = &MCPOptions{}
		if set != nil {
			set(o)
		}
	})
}

// connectMCP connects the official Go SDK's client to srv's /mcp as who,
// with onProgress (nil: none) receiving progress notifications.
func connectMCP(t *testing.T, srv *httptest.Server, who asCaller, onProgress func(*mcp.ProgressNotificationParams)) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if onProgress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { onProgress(req.Params) }
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "ragroute-test", Version: "v0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: who, Timeout: time.Minute}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect as %s: %v", who.user, err)
	}
	t.Cleanup(func() { _ = session.Close() })
	return session
}

// callTool calls tool with args, bounded by a minute.
func callTool(t *testing.T, session *mcp.ClientSession, tool string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

// structured decodes a tool result's structured content into out.
func structured(t *testing.T, res *mcp.CallToolResult, out any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("the call failed: %s", textOf(res))
	}
	data, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("structured content %s: %v", data, err)
	}
}

// textOf is a tool result's text content.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if text, ok := c.(*mcp.TextContent); ok {
			b.WriteString(text.Text)
		}
	}
	return b.String()
}

func TestMCPListsItsTwoTools(t *testing.T) {
	w := routetest.NewWorld(t)
	session := connectMCP(t, serveMCP(t, w, nil), alice, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range tools.Tools {
		got[tool.Name] = tool
	}
	if len(got) != 2 || got["search_knowledge"] == nil || got["ask"] == nil {
		t.Fatalf("tools %v, want search_knowledge and ask", got)
	}
	for name, required := range map[string]string{"search_knowledge": "query", "ask": "question"} {
		tool := got[name]
		schema, _ := json.Marshal(tool.InputSchema)
		if len(tool.Description) < 100 || !strings.Contains(string(schema), `"required":["`+required+`"]`) || tool.OutputSchema == nil {
			t.Errorf("%s: description %q, input schema %s, output schema %v", name, tool.Description, schema, tool.OutputSchema)
		}
	}
}

// knowledgeResult is search_knowledge's structured result as a client reads it.
type knowledgeResult struct {
	Query     string `json:"query"`
	NotFound  bool   `json:"not_found"`
	Fragments []struct {
		Citation  string  `json:"citation"`
		Text      string  `json:"text"`
		TitlePath string  `json:"title_path"`
		Source    string  `json:"source"`
		Score     float64 `json:"score"`
	} `json:"fragments"`
}

func (k knowledgeResult) sources() []string {
	var out []string
	for _, f := range k.Fragments {
		out = append(out, f.Source)
	}
	return out
}

// search_knowledge searches as /v1/search does, as the caller: alice
// never reads the admins' document that bob finds, a caller who may read
// nothing is told nothing was found, and max_results bounds the answer.
func TestMCPSearchKnowledgeSearchesAsTheCaller(t *testing.T) {
	w := routetest.NewWorld(t)
	srv := serveMCP(t, w, nil)
	query := map[string]any{"query": "admin password secret"}

	var asAlice, asBob, asCarol knowledgeResult
	structured(t, callTool(t, connectMCP(t, srv, alice, nil), "search_knowledge", query), &asAlice)
	structured(t, callTool(t, connectMCP(t, srv, bob, nil), "search_knowledge", query), &asBob)
	carolsResult := callTool(t, connectMCP(t, srv, carol, nil), "search_knowledge", query)
	structured(t, carolsResult, &asCarol)

	if len(asAlice.Fragments) == 0 || asAlice.NotFound {
		t.Fatalf("alice found nothing: %+v", asAlice)
	}
	for i, f := range asAlice.Fragments {
		if f.Source == "secrets.md" || f.Text == "" || f.TitlePath == "" || f.Citation != "S"+string(rune('1'+i)) || f.Score <= 0 {
			t.Errorf("alice's fragment %d: %+v", i, f)
		}
	}
	if !strings.Contains(strings.Join(asBob.sources(), " "), "secrets.md") {
		t.Errorf("bob, an admin, did not find the admins' document: %v", asBob.sources())
	}
	if !asCarol.NotFound || len(asCarol.Fragments) != 0 || textOf(carolsResult) != notFoundText {
		t.Errorf("carol, who may read nothing: %+v, %q", asCarol, textOf(carolsResult))
	}

	var one knowledgeResult
	structured(t, callTool(t, connectMCP(t, srv, bob, nil), "search_knowledge",
		map[string]any{"query": "admin password secret", "max_results": 1}), &one)
	if len(one.Fragments) != 1 || one.Fragments[0].Source != asBob.Fragments[0].Source {
		t.Errorf("max_results 1: %v, want bob's first, %s", one.sources(), asBob.Fragments[0].Source)
	}
}

// askAnswer is ask's structured result as a client reads it.
type askAnswer struct {
	TurnID    string          `json:"turn_id"`
	Answer    string          `json:"answer"`
	Citations []turn.Citation `json:"citations"`
	NotFound  bool            `json:"not_found"`
}

// ask plays a whole turn as the caller: the answer with its citations,
// the answer's text in progress notifications as it streams, one log
// line and the turn metrics; alice's turn never cites the admins'
// document that bob's does.
func TestMCPAskAnswersAsTheCallerWithProgress(t *testing.T) {
	w := routetest.NewWorld(t)
	w.Models.Chat = routetest.SearchThenAnswer("admin password secret", "The admin password lives in a Secret [S1].")
	var logs syncBuffer
	srv := serveMCP(t, w, func(o *Options) { o.Logger = slog.New(slog.NewJSONHandler(&logs, nil)) })

	var mu sync.Mutex
	progress := map[float64]string{}
	bobs := connectMCP(t, srv, bob, func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		defer mu.Unlock()
		progress[p.Progress] = p.Message
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	params := &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "Where is the admin password?"}}
	params.SetProgressToken("bob-1")
	res, err := bobs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	var asBob askAnswer
	structured(t, res, &asBob)
	if asBob.Answer != "The admin password lives in a Secret [S1]." || asBob.NotFound || len(asBob.Citations) == 0 || asBob.TurnID == "" {
		t.Fatalf("bob's answer: %+v", asBob)
	}
	if !citesSource(asBob.Citations, "secrets") {
		t.Errorf("bob's answer does not cite the admins' document: %+v", asBob.Citations)
	}
	// The client handles notifications apart from the result, so the last
	// pieces may arrive after it; their progress values give the order.
	streamed := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		streamed = inProgressOrder(progress)
		mu.Unlock()
		if len(streamed) >= len(asBob.Answer) {
			break
		}
	}
	if streamed != asBob.Answer {
		t.Errorf("progress notifications carried %q, want the answer %q", streamed, asBob.Answer)
	}

	var asAlice askAnswer
	structured(t, callTool(t, connectMCP(t, srv, alice, nil), "ask", map[string]any{"question": "Where is the admin password?"}), &asAlice)
	if citesSource(asAlice.Citations, "secrets") {
		t.Errorf("alice's answer cites the admins' document: %+v", asAlice.Citations)
	}

	line := logs.String()
	if strings.Count(line, `"msg":"turn finished"`) != 2 || !strings.Contains(line, `"endpoint":"mcp"`) || !strings.Contains(line, `"turn":"`+asBob.TurnID+`"`) {
		t.Errorf("the turn log lacks the MCP turns:\n%s", line)
	}
	_, metrics := get(t, srv.URL+"/metrics")
	for _, want := range []string{`ragroute_turns_total{result="answered"} 2`, `ragroute_http_requests_total{code="200",handler="/mcp",method="post"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("the metrics lack %s", want)
		}
	}
}

// inProgressOrder joins progress messages in the order of their progress
// values.
func inProgressOrder(pieces map[float64]string) string {
	order := slices.Sorted(maps.Keys(pieces))
	var b strings.Builder
	for _, k := range order {
		b.WriteString(pieces[k])
	}
	return b.String()
}

// citesSource says whether a citation's source names part.
func citesSource(citations []turn.Citation, part string) bool {
	for _, c := range citations {
		if strings.Contains(c.SourceURI+c.Title, part) || strings.Contains(strings.ToLower(c.Title), part) {
			return true
		}
	}
	return false
}

// holdTurns makes the world's model wait until the returned function is
// called (or the test ends); entered receives once per model call.
func holdTurns(t *testing.T, w *routetest.World) (entered chan struct{}, letGo func()) {
	gate, entered := make(chan struct{}), make(chan struct{}, 16)
	var once sync.Once
	letGo = func() { once.Do(func() { close(gate) }) }
	t.Cleanup(letGo) // before the model server closes: it waits for its handlers
	w.Models.Chat = func(testenv.ChatRequest) testenv.ChatReply {
		entered <- struct{}{}
		<-gate
		return testenv.ChatReply{Content: "Lower waves go first."}
	}
	return entered, letGo
}

// Both tools count against the caller's turn limits, as the HTTP API's
// requests do: alice, running her one turn, is refused a search with the
// API's code; bob is served.
func TestMCPCallsCountAgainstTheCallersTurnLimits(t *testing.T) {
	w := routetest.NewWorld(t)
	entered, letGo := holdTurns(t, w)
	srv := serveMCP(t, w, func(o *Options) { o.Limits.ConcurrentTurnsPerUser = 1 })
	alices := connectMCP(t, srv, alice, nil)

	asked := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := alices.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "How are sync waves ordered?"}})
		asked <- res
	}()
	<-entered // alice's turn is running

	refused := callTool(t, alices, "search_knowledge", map[string]any{"query": "sync waves"})
	if !refused.IsError || !strings.HasPrefix(textOf(refused), "rate_limited: you have 1 turns running") {
		t.Errorf("alice's second call while her turn runs: %v %q", refused.IsError, textOf(refused))
	}
	if fromHTTP, _, apiErr := post(t, srv, "/v1/search", "alice", searchBody); fromHTTP != http.StatusTooManyRequests || apiErr.Code != "rate_limited" {
		t.Errorf("alice's /v1/search while her MCP turn runs: %d %s", fromHTTP, apiErr.Code)
	}
	var asBob knowledgeResult
	structured(t, callTool(t, connectMCP(t, srv, bob, nil), "search_knowledge", map[string]any{"query": "sync waves"}), &asBob)
	letGo()
	if res := <-asked; res == nil || res.IsError {
		t.Errorf("alice's turn: %+v", res)
	}
	if _, metrics := get(t, srv.URL+"/metrics"); !strings.Contains(metrics, `ragroute_requests_refused_total{limit="concurrent_turns_per_user"} 2`) {
		t.Error("the refusals are not counted")
	}
}

// An ask whose client gives up ends its turn as cancelled, and gives the
// caller's slot back: the next call is served.
func TestMCPCancelledAskEndsItsTurn(t *testing.T) {
	w := routetest.NewWorld(t)
	entered, letGo := holdTurns(t, w)
	var logs syncBuffer
	srv := serveMCP(t, w, func(o *Options) {
		// One turn at a time, and the rate never the reason of a refusal.
		o.Limits.ConcurrentTurnsPerUser, o.Limits.TurnsPerMinutePerUser = 1, 60000
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	alices := connectMCP(t, srv, alice, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := alices.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"question": "How are sync waves ordered?"}})
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call returned %v", err)
	}
	// The turn ends once the route sees the client go; wait for its log
	// line (bounded: the test's client gives up after a minute).
	for deadline := time.Now().Add(time.Minute); !strings.Contains(logs.String(), `"code":"cancelled"`); {
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled turn did not end:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	letGo()
	var found knowledgeResult
	structured(t, callTool(t, alices, "search_knowledge", map[string]any{"query": "sync waves"}), &found)
	if !strings.Contains(logs.String(), `"endpoint":"mcp"`) {
		t.Errorf("the cancelled turn's log line:\n%s", logs.String())
	}
}

// Bad input is refused with fixed messages, before any work: an unknown
// tool (a protocol error), arguments of the wrong type or unknown,
// arguments over the limits (tool errors naming the problem), a body
// over the limit, a session the route never issued.
func TestMCPBadInputIsRefusedWithFixedMessages(t *testing.T) {
	w := routetest.NewWorld(t)
	srv := serveMCP(t, w, func(o *Options) { o.Limits.MessageBytes = 64 })
	session := connectMCP(t, srv, alice, nil)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "delete_everything"}); err == nil || !strings.Contains(err.Error(), `unknown tool "delete_everything"`) {
		t.Errorf("unknown tool: %v", err)
	}
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"search_knowledge", map[string]any{"query": 5}, `bad_arguments: the arguments do not fit search_knowledge's input schema: want {"query": string, "max_results"?: integer}`},
		{"search_knowledge", map[string]any{"query": "sync", "filter": "group:admins"}, `bad_arguments: the arguments do not fit search_knowledge's input schema`},
		{"search_knowledge", map[string]any{"query": "sync", "max_results": "all"}, `bad_arguments:`},
		{"search_knowledge", map[string]any{"query": "sync", "max_results": 0}, "bad_max_results: max_results must be an integer from 1 to 50"},
		{"search_knowledge", map[string]any{}, "bad_query: query must be 1 to 64 bytes"},
		{"search_knowledge", map[string]any{"query": strings.Repeat("sync ", 20)}, "bad_query: query must be 1 to 64 bytes"},
		{"ask", map[string]any{"question": []string{"a"}}, `bad_arguments: the arguments do not fit ask's input schema: want {"question": string}`},
		{"ask", map[string]any{"question": strings.Repeat("why ", 20)}, "bad_question: question must be 1 to 64 bytes of UTF-8 text"},
	} {
		res := callTool(t, session, tc.tool, tc.args)
		if !res.IsError || !strings.HasPrefix(textOf(res), tc.want) {
			t.Errorf("%s %v: %v %q, want an error starting %q", tc.tool, tc.args, res.IsError, textOf(res), tc.want)
		}
	}
	if len(w.Models.Seen()) != 0 {
		t.Errorf("refused calls reached the model %d times", len(w.Models.Seen()))
	}

	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_knowledge","arguments":{"query":"sync"}}}`
	for _, tc := range []struct {
		name, body string
		header     []string
		status     int
		want       string
	}{
		{"a session another identity may have", call, []string{mcpSessionHeader, "3f2a9c"}, http.StatusNotFound, "no such MCP session"},
		{"a body over the limit", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"question":"` + strings.Repeat("a", 2<<20) + `"}}}`, nil, http.StatusRequestEntityTooLarge, "exceeds"},
	} {
		resp := do(t, "POST", srv.URL+"/mcp", "alice", tc.body, append([]string{"Accept", "application/json, text/event-stream"}, tc.header...)...)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want %d %q", tc.name, resp.StatusCode, body, tc.status, tc.want)
		}
	}
}

// refuseAll is an authenticator that verifies no request, as a JWT route
// does a request without a valid token.
type refuseAll struct{}

func (refuseAll) Authenticate(*http.Request) (identity.Identity, error) {
	return identity.Identity{}, errors.New("no bearer token")
}

// Without an identity nothing is served: a trusted-proxy route answers
// 401; a JWT route's 401 points at its protected-resource metadata, which
// names the route's issuer, as MCP's authorization asks.
func TestMCPNeedsAnIdentity(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	accept := []string{"Accept", "application/json, text/event-stream"}

	proxied := serveBare(t, func(o *Options) { o.MCP = &MCPOptions{} })
	resp := do(t, "POST", proxied.URL+"/mcp", "", initialize, accept...)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("no identity headers: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if status, _ := get(t, proxied.URL+resourceMetadataPath); status != http.StatusNotFound {
		t.Errorf("a trusted-proxy route serves protected-resource metadata: %d", status)
	}

	jwt := serveBare(t, func(o *Options) {
		o.Auth = refuseAll{}
		o.MCP = &MCPOptions{Issuer: "https://login.example.com/realms/acme", ResourceName: "support"}
	})
	resp = do(t, "POST", jwt.URL+"/mcp", "", initialize, accept...)
	resp.Body.Close()
	wantChallenge := `Bearer resource_metadata="` + jwt.URL + resourceMetadataPath + `/mcp"`
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != wantChallenge {
		t.Errorf("no token: %d %q, want 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), wantChallenge)
	}
	for _, path := range []string{resourceMetadataPath, resourceMetadataPath + "/mcp"} {
		var metadata struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ResourceName         string   `json:"resource_name"`
		}
		_, body := get(t, jwt.URL+path)
		if err := json.Unmarshal([]byte(body), &metadata); err != nil || metadata.Resource != jwt.URL+"/mcp" ||
			len(metadata.AuthorizationServers) != 1 || metadata.AuthorizationServers[0] != "https://login.example.com/realms/acme" ||
			metadata.ResourceName != "support" {
			t.Errorf("%s: %+v %v", path, metadata, err)
		}
	}
}

// A route without MCP has no /mcp.
func TestMCPOffServesNothing(t *testing.T) {
	srv := serveBare(t, func(*Options) {})
	resp := do(t, "POST", srv.URL+"/mcp", "alice", `{}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /mcp on a route without MCP: %d", resp.StatusCode)
	}
}
