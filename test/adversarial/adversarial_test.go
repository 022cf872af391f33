package adversarial

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ragroute/ragroute/internal/assembly"
	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/route/identity"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/seal/sealtest"
	"github.com/ragroute/ragroute/internal/route/server"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/testenv"
)

var (
	requests    = flag.Int("adversarial.requests", 1000, "requests per cache backend")
	seed        = flag.Int64("adversarial.seed", 1, "seed of the corpus and of the identities")
	concurrency = flag.Int("adversarial.concurrency", 8, "requests in flight at once")
)

func TestMain(m *testing.M) { routetest.Main(m) }

const (
	userHeader   = "X-User"
	groupsHeader = "X-Groups"
	dim          = routetest.Dim
)

// ingest builds corpus into a fresh collection of the shared Milvus Lite;
// the two backends share it.
func ingest(t *testing.T, models *testenv.ModelServer, corpus []corpusRow) *knowledge.Store {
	t.Helper()
	ctx := context.Background()
	client, err := knowledge.Connect(ctx, knowledge.Connection{URI: routetest.Milvus.Get(t).URI})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close(context.Background()) })
	store := knowledge.NewStore(client, fmt.Sprintf("adv%d", time.Now().UnixNano()%1e12), dim)
	reingest(t, store, models, corpus)
	return store
}

// reingest brings store to corpus, as a re-ingestion does: changed rows are
// rewritten, rows no longer in it deleted.
func reingest(t *testing.T, store *knowledge.Store, models *testenv.ModelServer, corpus []corpusRow) {
	t.Helper()
	rows := make([]knowledge.Row, len(corpus))
	for i, c := range corpus {
		rows[i] = c.Row
	}
	embedder := model.NewEmbeddings(model.EmbeddingsConfig{BaseURL: models.BaseURL(), Model: "hash", Dimensions: dim})
	if _, err := store.Ingest(context.Background(), knowledge.RowsOf(rows), embedder, "hash", knowledge.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
}

// echo scripts a model that searches with the user's question, then
// answers with everything the tool returned, so that whatever reached the
// model's context reaches the answer too.
func echo(req testenv.ChatRequest) testenv.ChatReply {
	var tools []string
	question := ""
	for _, m := range req.Messages {
		switch m.Role {
		case "tool":
			tools = append(tools, m.Content)
		case "user":
			question = m.Content
		}
	}
	if len(tools) > 0 || len(req.Tools) == 0 {
		return testenv.ChatReply{Content: "Found: " + strings.Join(tools, " ")}
	}
	args, _ := json.Marshal(map[string]string{"query": question})
	return testenv.ChatReply{ToolCalls: []testenv.ScriptedToolCall{{Name: "search_knowledge", Arguments: string(args)}}}
}

// serve wires a route on store with cache behind it.
func serve(t *testing.T, store *knowledge.Store, models *testenv.ModelServer, cache retrieval.Cache) *httptest.Server {
	t.Helper()
	cfg := routetest.Config(16384)
	cfg.Window.AnswerReserveTokens = 2048
	cfg.Store.Search.Candidates = 20
	cfg.Retrieval.SimilarityFloor, cfg.Retrieval.StrictFloor, cfg.Retrieval.MaxFragments = 0.01, 0.01, 8
	w := routetest.Assemble(t, store, models, cfg, assembly.Parts{Cache: cache})
	searcher, runner := w.Searcher, w.Engine
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	limits := server.DefaultLimits()
	limits.ConcurrentTurnsPerUser, limits.TurnsPerMinutePerUser, limits.MaxInFlightTurns = 1<<20, 1<<30, 1<<20
	opts := server.Options{
		Engine: runner, Searcher: searcher, Log: turnlog.NewMemory(5*time.Minute, 1<<16, 0, time.Now),
		Auth: identity.ProxyHeaders{UserHeader: userHeader, GroupsHeader: groupsHeader}, Limits: limits,
		Ready: func(context.Context) error { return nil },
	}
	srv := httptest.NewServer(server.New(ctx, opts).Handler())
	t.Cleanup(srv.Close)
	return srv
}

func TestACLAdversarial(t *testing.T) {
	testenv.Integration(t, "Milvus Lite and redis-server")
	if *requests < 1 {
		t.Fatalf("-adversarial.requests=%d", *requests)
	}
	models := testenv.StartModelServer(dim)
	t.Cleanup(models.Close)
	models.Chat = echo
	corpus, acl := buildCorpus(*seed)
	corpus = append(corpus, sourceCorpus(t, len(acl)+1, acl)...)
	narrowed, narrowedACL := narrow(corpus, *seed)
	store := ingest(t, models, corpus)
	var all []*tally
	backends := cacheBackends(t, "adv")
	for i, b := range backends {
		if i > 0 {
			reingest(t, store, models, corpus)
		}
		start := time.Now()
		srv := serve(t, store, models, b.cache)
		tl := newTally(b.name)
		// Half the requests warm the cache; then the documents' ACLs are
		// narrowed and some deleted, as a re-ingestion of edited front
		// matter does, and the other half must see only what the new
		// ACLs allow: nothing may be served from the cache of before.
		run(t, srv, tl, acl, 0, *requests/2)
		reingest(t, store, models, narrowed)
		run(t, srv, tl, narrowedACL, *requests/2, *requests)
		tl.wall = time.Since(start)
		tl.hits, tl.misses = cacheLookups(t, srv)
		all = append(all, tl)
	}
	report(t, all, len(acl))
}

// backend is a cache the harness runs the route with.
type backend struct {
	name  string
	cache retrieval.Cache
}

// cacheBackends are the two caches, in memory and in the shared Redis
// (its keys under prefix).
func cacheBackends(t *testing.T, prefix string) []backend {
	rc := redis.NewClient(&redis.Options{Addr: routetest.Redis.Get(t).Addr})
	t.Cleanup(func() { _ = rc.Close() })
	return []backend{
		{"memory", retrieval.NewMemoryCache(10000, 10*time.Minute, time.Now)},
		{"redis", retrieval.NewRedisCache(rc, sealtest.New(t), fmt.Sprintf("%s%d:", prefix, time.Now().UnixNano()), 10*time.Minute)},
	}
}

// plan is one request as the harness built it.
type plan struct {
	n        int
	endpoint string
	query    string
	users    []string // X-User field lines (nil: none)
	groups   []string // X-Groups field lines (nil: none)
}

func (p plan) String() string {
	return fmt.Sprintf("#%d %s query=%q %s=%q %s=%q", p.n, p.endpoint, p.query, userHeader, p.users, groupsHeader, p.groups)
}

func (p plan) duplicated() bool { return len(p.users) > 1 || len(p.groups) > 1 }

var endpoints = []string{"search", "turns", "completions", "completions-stream"}

// identityOf builds request n's identity headers from its own seeded
// generator, so a failure reproduces with the same seed.
func identityOf(rng *rand.Rand) (users, groups []string) {
	if rng.Intn(2) == 0 {
		return personaOf(rng)
	}
	pick := func() string {
		if rng.Intn(30) == 0 {
			return aclOnlyNames[rng.Intn(len(aclOnlyNames))]
		}
		return headerNames[rng.Intn(len(headerNames))]
	}
	user := pick()
	switch rng.Intn(20) {
	case 0, 1:
		user = " " + user + "\t" // HTTP optional whitespace: not part of the value
	case 2:
		user = user + "\u00a0"
	}
	users = []string{user}
	if rng.Intn(40) == 0 {
		users = append(users, pick())
	}
	if rng.Intn(8) == 0 {
		return users, nil
	}
	line := func() string {
		var items []string
		for k := rng.Intn(5); k > 0; k-- {
			item := pick()
			switch rng.Intn(28) {
			case 0:
				item = " " + item
			case 1:
				item = item + "\t "
			case 2:
				item = "\u00a0" + item
			case 3:
				item = item + "\u00a0"
			case 4:
				item = ""
			case 5:
				item = item + ",ops-admin" // a forged extra item
			case 6:
				item = strings.ToUpper(item)
			}
			items = append(items, item)
		}
		s := strings.Join(items, ",")
		if rng.Intn(10) == 0 {
			s += ","
		}
		return s
	}
	groups = []string{line()}
	if rng.Intn(12) == 0 {
		groups = append(groups, line()) // the groups header sent twice
	}
	return users, groups
}

// personas are a few identities that many requests share, spelt in
// different ways, so that exact-cache entries are hit often.
var personas = func() [][]string {
	rng := rand.New(rand.NewSource(7))
	out := [][]string{{"ops"}, {"OPS"}, {"Ops", "op"}, {"opsx", "ops-admin"}, {"caf\u00e9"}, {"cafe\u0301"}, {`x"||true||"`}, {`\`, `"`}, {"alice"}, {}}
	for len(out) < 16 {
		var g []string
		for k := 1 + rng.Intn(3); k > 0; k-- {
			g = append(g, headerNames[rng.Intn(len(headerNames))])
		}
		out = append(out, g)
	}
	return out
}()

// personaOf is one of the personas (the user is its first group's name,
// or alice), its groups in any order, with optional whitespace, empty
// items and repeats: the same principals, spelt another way.
func personaOf(rng *rand.Rand) (users, groups []string) {
	g := append([]string{}, personas[rng.Intn(len(personas))]...)
	user := "alice"
	if len(g) > 0 && rng.Intn(2) == 0 {
		user = g[0]
	}
	rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
	var items []string
	for _, n := range g {
		switch rng.Intn(6) {
		case 0:
			n = " " + n + " "
		case 1:
			n = "\t" + n
		case 2:
			items = append(items, "")
		case 3:
			items = append(items, n)
		}
		items = append(items, n)
	}
	return []string{user}, []string{strings.Join(items, ",")}
}

// reading is one way to read the identity headers: the caller's
// principals as the harness computes them from the headers alone.
type reading map[string]bool

// principalsOf is the ground truth: public, user:<the user field value>,
// and group:<item> for each comma-separated item of the groups line with
// ASCII spaces and tabs trimmed. The field values lose the optional
// whitespace around them, as HTTP defines.
func principalsOf(user string, groups *string) reading {
	r := reading{"public": true, "user:" + strings.Trim(user, " \t"): true}
	if groups != nil {
		for _, item := range strings.Split(strings.Trim(*groups, " \t"), ",") {
			if item = strings.Trim(item, " \t"); item != "" {
				r["group:"+item] = true
			}
		}
	}
	return r
}

// readings are every reading of p's headers: each field line alone, and
// the lines joined by a comma.
func (p plan) readings() []reading {
	users := p.users
	if len(users) > 1 {
		users = append(append([]string{}, users...), strings.Join(p.users, ","))
	}
	var groups []*string
	if p.groups == nil {
		groups = []*string{nil}
	}
	for i := range p.groups {
		groups = append(groups, &p.groups[i])
	}
	if len(p.groups) > 1 {
		joined := strings.Join(p.groups, ",")
		groups = append(groups, &joined)
	}
	var out []reading
	for _, u := range users {
		for _, g := range groups {
			out = append(out, principalsOf(u, g))
		}
	}
	return out
}

func (r reading) allows(acl []string) bool {
	for _, p := range acl {
		if r[p] {
			return true
		}
	}
	return false
}

// leak is a marker that reached a caller who may not read it.
type leak struct {
	plan   plan
	status int
	marker string
	acl    []string
	why    string
}

// tally counts one backend's run.
type tally struct {
	backend      string
	mu           sync.Mutex
	tried        map[string]int
	statuses     map[string]map[int]int
	markers      map[string]int
	distinct     map[string]bool
	leaks        []leak
	dupAccepted  []plan
	dupSent      int
	transport    []string
	hits, misses int
	wall         time.Duration
}

var markerRE = regexp.MustCompile(`SECRETMARK-[0-9]+-`)

func newTally(backend string) *tally {
	return &tally{backend: backend, tried: map[string]int{}, statuses: map[string]map[int]int{}, markers: map[string]int{}, distinct: map[string]bool{}}
}

// run sends requests from up to to, checking each against acl.
func run(t *testing.T, srv *httptest.Server, tl *tally, acl map[string][]string, from, to int) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *concurrency * 2}}
	t.Cleanup(client.CloseIdleConnections)
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < *concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				rng := rand.New(rand.NewSource(*seed*1_000_003 + int64(n)))
				p := plan{n: n, endpoint: endpoints[rng.Intn(len(endpoints))], query: queries[rng.Intn(len(queries))]}
				p.users, p.groups = identityOf(rng)
				tl.check(p, acl, send(client, srv.URL, p))
			}
		}()
	}
	for n := from; n < to; n++ {
		work <- n
	}
	close(work)
	wg.Wait()
}

// result is what a request got: the status of each HTTP exchange and the
// bodies together.
type result struct {
	status int // of the first exchange
	final  int // of the last (the event stream of a turn)
	body   []byte
	err    error
}

func send(client *http.Client, base string, p plan) result {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	do := func(method, path string, body any) (int, []byte, error) {
		var rd io.Reader
		if body != nil {
			data, _ := json.Marshal(body)
			rd = bytes.NewReader(data)
		}
		req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		for _, u := range p.users {
			req.Header.Add(userHeader, u)
		}
		for _, g := range p.groups {
			req.Header.Add(groupsHeader, g)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, data, err
	}
	messages := []map[string]string{{"role": "user", "content": p.query}}
	var r result
	switch p.endpoint {
	case "search":
		r.status, r.body, r.err = do("POST", "/v1/search", map[string]string{"query": p.query})
	case "completions", "completions-stream":
		r.status, r.body, r.err = do("POST", "/v1/chat/completions", map[string]any{"model": "route", "messages": messages, "stream": p.endpoint == "completions-stream"})
	case "turns":
		r.status, r.body, r.err = do("POST", "/v1/turns", map[string]any{"messages": messages})
		r.final = r.status
		if r.err != nil || r.status/100 != 2 {
			return r
		}
		var out struct {
			StreamURL string `json:"stream_url"`
		}
		if err := json.Unmarshal(r.body, &out); err != nil || !strings.HasPrefix(out.StreamURL, "/") {
			r.err = fmt.Errorf("turn answer %q: %v", r.body, err)
			return r
		}
		var events []byte
		r.final, events, r.err = do("GET", out.StreamURL, nil)
		r.body = append(r.body, events...)
		return r
	}
	r.final = r.status
	return r
}

// check compares what p got with the ground truth.
func (tl *tally) check(p plan, acl map[string][]string, r result) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.tried[p.endpoint]++
	if tl.statuses[p.endpoint] == nil {
		tl.statuses[p.endpoint] = map[int]int{}
	}
	tl.statuses[p.endpoint][r.status]++
	if r.err != nil {
		tl.transport = append(tl.transport, fmt.Sprintf("%v: %v", p, r.err))
	}
	ok := r.status/100 == 2
	if p.duplicated() {
		tl.dupSent++
	}
	if ok && p.duplicated() {
		tl.dupAccepted = append(tl.dupAccepted, p)
	}
	readings := p.readings()
	for _, m := range markerRE.FindAllString(string(r.body), -1) {
		tl.markers[p.endpoint]++
		tl.distinct[m] = true
		a, known := acl[m]
		switch {
		case !known:
			tl.leaks = append(tl.leaks, leak{p, r.status, m, nil, "marker of no ingested row"})
		case !ok:
			tl.leaks = append(tl.leaks, leak{p, r.status, m, a, "marker in a refused request's body"})
		default:
			for _, rd := range readings {
				if !rd.allows(a) {
					tl.leaks = append(tl.leaks, leak{p, r.status, m, a, fmt.Sprintf("principals %q hold none of it", keys(rd))})
					break
				}
			}
		}
	}
}

func keys(r reading) []string {
	out := make([]string, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var lookupRE = regexp.MustCompile(`ragroute_cache_lookups_total\{result="(hit|miss)"\} ([0-9]+)`)

// cacheLookups reads the exact cache's hits and misses off /metrics.
func cacheLookups(t *testing.T, srv *httptest.Server) (hits, misses int) {
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Logf("metrics: %v", err)
		return -1, -1
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	hits, misses = -1, -1
	for _, m := range lookupRE.FindAllStringSubmatch(string(data), -1) {
		v, _ := strconv.Atoi(m[2])
		if m[1] == "hit" {
			hits = v
		} else {
			misses = v
		}
	}
	return hits, misses
}

// report fails the test on leaks and accepted duplicates and prints the
// summary table.
func report(t *testing.T, all []*tally, rows int) {
	var b strings.Builder
	fmt.Fprintf(&b, "adversarial ACL harness: seed %d, %d rows, %d requests per backend, concurrency %d\n", *seed, rows, *requests, *concurrency)
	fmt.Fprintf(&b, "%-8s %-19s %6s  %-28s %8s %6s\n", "backend", "endpoint", "tried", "statuses", "markers", "leaks")
	for _, tl := range all {
		leaksBy := map[string]int{}
		for _, l := range tl.leaks {
			leaksBy[l.plan.endpoint]++
		}
		for _, e := range endpoints {
			var st []string
			var codes []int
			for c := range tl.statuses[e] {
				codes = append(codes, c)
			}
			sort.Ints(codes)
			for _, c := range codes {
				st = append(st, fmt.Sprintf("%d:%d", c, tl.statuses[e][c]))
			}
			fmt.Fprintf(&b, "%-8s %-19s %6d  %-28s %8d %6d\n", tl.backend, e, tl.tried[e], strings.Join(st, " "), tl.markers[e], leaksBy[e])
		}
		fmt.Fprintf(&b, "%-8s total: %d leaks, %d of %d duplicate-header requests accepted, %d distinct markers of %d seen, cache %d hits / %d misses, %d transport errors, %s\n",
			tl.backend, len(tl.leaks), len(tl.dupAccepted), tl.dupSent, len(tl.distinct), rows, tl.hits, tl.misses, len(tl.transport), tl.wall.Round(time.Millisecond))
	}
	t.Log("\n" + b.String())
	if testing.Verbose() {
		fmt.Fprint(os.Stdout, b.String())
	}
	for _, tl := range all {
		for i, l := range tl.leaks {
			if i == 5 {
				t.Errorf("%s: … %d more leaks", tl.backend, len(tl.leaks)-i)
				break
			}
			t.Errorf("%s: LEAK %s (ACL %q) to %v (status %d): %s", tl.backend, l.marker, l.acl, l.plan, l.status, l.why)
		}
		for i, p := range tl.dupAccepted {
			if i == 5 {
				t.Errorf("%s: … %d more duplicate-header requests accepted", tl.backend, len(tl.dupAccepted)-i)
				break
			}
			t.Errorf("%s: a duplicated identity header was accepted, not refused with 401: %v", tl.backend, p)
		}
		for i, e := range tl.transport {
			if i == 5 {
				t.Errorf("%s: … %d more transport errors", tl.backend, len(tl.transport)-i)
				break
			}
			t.Errorf("%s: %s", tl.backend, e)
		}
		if len(tl.distinct) == 0 {
			t.Errorf("%s: no marker seen in any response: the harness tested nothing", tl.backend)
		}
	}
}
