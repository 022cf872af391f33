package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/eval/live"
	"github.com/ragroute/ragroute/internal/podconfig"
)

// evalRouteQuestions are about internal/ingest/testdata/docs as pruneRoute
// serves it to ann (group staff). Their ranks, read off the route's own
// search: a1, a2 and a3 find their gold section first (a2's by text: the
// merged "Command Line Tool" chunk holds "Shell completion"); a5 asks a3's
// question with Prune Last as gold, the route's second result; a4's gold
// file is visible only to group sre, so it is never found. u1 ("???")
// finds nothing; u2 finds fragments above the floors.
const evalRouteQuestions = `{"id":"a1","question":"What does prune last do?","gold_file":"nested-headings.md","gold_heading_path":["Deploying Applications","Sync Options","Prune Last"]}
{"id":"a2","question":"How do I generate shell completion scripts?","gold_file":"merged-short.md","gold_heading_path":["Command Line Tool","Shell completion"]}
{"id":"a3","question":"Which button opens the sync panel?","gold_file":"ui-screen.md","gold_heading_path":["Application Details Page","Sync Panel"]}
{"id":"a4","question":"How fast must I acknowledge a page?","gold_file":"frontmatter-acl.md","gold_heading_path":["Paging"]}
{"id":"a5","question":"Which button opens the sync panel?","gold_file":"nested-headings.md","gold_heading_path":["Deploying Applications","Sync Options","Prune Last"]}
{"id":"u1","question":"???","gold_file":null,"gold_heading_path":null}
{"id":"u2","question":"How do I rebalance Kafka partitions?","gold_file":null,"gold_heading_path":null}
`

// evalRoute runs `ragroute eval-route` with args.
func evalRoute(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"eval-route"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func readSummary(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var summary map[string]any
	if err := json.Unmarshal(data, &summary); err != nil {
		t.Fatal(err)
	}
	return summary
}

// figureIs checks one figure of a summary, to the precision it is shown.
func figureIs(t *testing.T, summary map[string]any, name string, want float64) {
	t.Helper()
	got, ok := summary[name].(float64)
	if !ok || math.Abs(got-want) > 1e-6 {
		t.Errorf("%s = %v, want %.4f", name, summary[name], want)
	}
}

func TestEvalRouteScoresALiveRoute(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg, _ := pruneRoute(ctx, t)
	// Floors that let "???" find nothing while the questions about the
	// docs find their sections; limits that no test meets by accident.
	cfg.Retrieval.SimilarityFloor, cfg.Retrieval.StrictFloor = 0.3, 0.3
	cfg.Limits = podconfig.Limits{ConcurrentTurnsPerUser: 16, TurnsPerMinutePerUser: 6000}
	// A check that refuses nothing: every turn that packs reports its
	// score, which the calibration reads, and answers as without it.
	cfg.Answer.Answerability = podconfig.Answerability{Check: podconfig.AnswerabilityCoverage, MinCoverage: 0}
	base, _, stop := serveOnLoopback(ctx, t, cfg)
	defer stop()
	waitOK(t, base+"/readyz")
	dir := t.TempDir()
	questions := writeFile(t, dir, "questions.jsonl", evalRouteQuestions)
	secret := writeFile(t, dir, "proxy-secret", "s3cret\n")
	corpus := "../../internal/ingest/testdata/docs"
	as := func(route string, more ...string) []string {
		return append([]string{"--route", route, "--questions", questions, "--header", "X-User: ann", "--header", "X-Groups: staff",
			"--header-file", "X-Proxy-Secret=" + secret, "--timeout", "20s", "--deadline", "90s"}, more...)
	}

	t.Run("termination log for the operator", func(t *testing.T) {
		term := filepath.Join(dir, "termination-log")
		code, stdout, stderr := evalRoute(t, as(base, "--corpus", corpus, "--termination-log", term)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		data, err := os.ReadFile(term)
		if err != nil {
			t.Fatal(err)
		}
		var got live.Termination
		if err := json.Unmarshal(data, &got); err != nil || len(data) > live.TerminationMessageMax {
			t.Fatalf("%d bytes, %v:\n%s", len(data), err, data)
		}
		// a4 (rank 0) and u2 (answered) miss, as the results say.
		if got.Summary.Questions != 7 || got.Misses.Questions != 2 || got.Misses.Cut != 0 || got.Misses.Results[0].ID != "a4" {
			t.Errorf("termination message:\n%s", data)
		}
	})

	t.Run("retrieval figures by hand", func(t *testing.T) {
		summary, results := filepath.Join(dir, "summary.json"), filepath.Join(dir, "results.json")
		code, stdout, stderr := evalRoute(t, as(base, "--corpus", corpus, "--json", summary, "--results", results)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		var res live.Results
		data, _ := os.ReadFile(results)
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		a5 := res.Results[slices.IndexFunc(res.Results, func(r live.Result) bool { return r.ID == "a5" })]
		if len(a5.TopSources) < 2 || a5.TopSources[1] != "docs/nested-headings.md › Deploying Applications › Sync Options › Prune Last" {
			t.Fatalf("the premise: a5's second result is Prune Last; got %v", a5.TopSources)
		}
		t.Log(stdout)
		s := readSummary(t, summary)
		// Ranks 1, 1, 1, 0, 2 over five answerable questions.
		figureIs(t, s, "recallAt1", 3.0/5)
		figureIs(t, s, "recallAt5", 4.0/5)
		figureIs(t, s, "recallAt10", 4.0/5)
		figureIs(t, s, "mrr", (3+0.5)/5)
		figureIs(t, s, "ndcgAt10", (3+1/math.Log2(3))/5)
		figureIs(t, s, "fileRecallAt5", 4.0/5)
		figureIs(t, s, "notFoundOnUnanswerable", 1.0/2) // u1 found nothing, u2 something
		figureIs(t, s, "questions", 7)
		figureIs(t, s, "answerable", 5)
		if s["scope"] != "retrieval" || s["latencyP50Ms"].(float64) <= 0 || s["latencyP95Ms"].(float64) < s["latencyP50Ms"].(float64) ||
			s["startedAt"] == nil || s["durationMs"] == nil {
			t.Errorf("summary: %v", s)
		}
		for _, absent := range []string{"groundedRatio", "citationPrecision", "citationRecall"} {
			if _, ok := s[absent]; ok {
				t.Errorf("scope retrieval wrote %s", absent)
			}
		}
		if !strings.Contains(stdout, "R@1") || !strings.Contains(stdout, "0.600") || !strings.Contains(stdout, "latency of one search") {
			t.Errorf("table:\n%s", stdout)
		}
		// Without the corpus (a RouteEvaluation's Job) the gold's text is
		// unknown: a2's merged chunk still counts, by its gold heading's
		// line, so the figures are the same.
		code, stdout, stderr = evalRoute(t, as(base, "--source", "docs", "--json", summary)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		figureIs(t, readSummary(t, summary), "recallAt1", 3.0/5)
		figureIs(t, readSummary(t, summary), "recallAt5", 4.0/5)
	})

	t.Run("results put the misses first and keep under the cap", func(t *testing.T) {
		results := filepath.Join(dir, "results.json")
		for _, limit := range []int{900000, 1024} {
			code, stdout, stderr := evalRoute(t, as(base, "--corpus", corpus, "--results", results, "--results-max-bytes", strconv.Itoa(limit))...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			data, _ := os.ReadFile(results)
			var res live.Results
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			if len(data) > limit || res.Questions != 7 || res.Cut+len(res.Results) != 7 || len(res.Results) == 0 {
				t.Fatalf("cap %d: %d bytes, %d results, %d cut", limit, len(data), len(res.Results), res.Cut)
			}
			var ids []string
			for _, r := range res.Results {
				ids = append(ids, r.ID)
			}
			switch want := []string{"a4", "u2", "a1", "a2", "a3", "a5", "u1"}; {
			case limit == 1024 && (res.Cut == 0 || !slices.Equal(ids, want[:len(ids)])):
				t.Errorf("cap 1024: kept %v, cut %d", ids, res.Cut)
			case limit > 1024 && !slices.Equal(ids, want):
				t.Errorf("results in order %v, want the misses a4 and u2 first: %v", ids, want)
			}
			if res.Results[0].HitRank == nil || *res.Results[0].HitRank != 0 || !res.Results[0].Miss {
				t.Errorf("first result: %+v", res.Results[0])
			}
		}
	})

	t.Run("a threshold missed exits 3 and names the figure", func(t *testing.T) {
		code, stdout, stderr := evalRoute(t, as(base, "--corpus", corpus, "--min-recall-at-5", "0.9", "--min-ndcg-10", "0.5", "--min-not-found", "0.5")...)
		if code != 3 || !strings.Contains(stdout, "recallAt5 0.800 is below its minimum 0.900") ||
			strings.Contains(stdout, "ndcgAt10 0") || strings.Contains(stdout, "notFoundOnUnanswerable 0") {
			t.Errorf("exit %d\n%s%s", code, stdout, stderr)
		}
		if code, stdout, stderr := evalRoute(t, as(base, "--corpus", corpus, "--min-recall-at-5", "0.8", "--min-not-found", "0.5")...); code != 0 {
			t.Errorf("thresholds met: exit %d\n%s%s", code, stdout, stderr)
		}
	})

	t.Run("answers through whole turns", func(t *testing.T) {
		// pruneRoute's model searches "sync options prune last" and cites
		// S1, Prune Last, whatever it is asked: only a1's and a5's gold.
		summary := filepath.Join(dir, "answers.json")
		code, stdout, stderr := evalRoute(t, as(base, "--corpus", corpus, "--scope", "both", "--json", summary)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		t.Log(stdout)
		s := readSummary(t, summary)
		figureIs(t, s, "citationPrecision", 2.0/5)
		figureIs(t, s, "citationRecall", 2.0/5)
		figureIs(t, s, "groundedRatio", 1)
		figureIs(t, s, "recallAt1", 3.0/5)
		// The turns answer the unanswerable questions too.
		figureIs(t, s, "notFoundOnUnanswerable", 0)
		if !strings.Contains(stdout, "cite P") {
			t.Errorf("table:\n%s", stdout)
		}
		// Five answerable questions: too few for the default alpha.
		if c, ok := s["answerability"].(map[string]any); !ok || c["check"] != "coverage" || c["threshold"] != 0.0 || c["alpha"] != 0.05 ||
			c["recommended"] != nil || !strings.Contains(fmt.Sprint(c["message"]), "at least 19 are needed") {
			t.Errorf("answerability calibration at the default alpha: %v", s["answerability"])
		}
		code, stdout, stderr = evalRoute(t, as(base, "--corpus", corpus, "--scope", "answers", "--min-grounded-ratio", "0.99", "--json", summary,
			"--calibration-alpha", "0.3")...)
		if code != 0 || readSummary(t, summary)["recallAt1"] != nil {
			t.Errorf("scope answers: exit %d, summary %v\n%s%s", code, readSummary(t, summary), stdout, stderr)
		}
		// k = ⌊0.3 × 6⌋ = 1 of the answerable scores: the least, none below it.
		c, _ := readSummary(t, summary)["answerability"].(map[string]any)
		scored, _ := c["answerableScored"].(float64)
		unanswerable, _ := c["unanswerableScored"].(float64)
		unchecked, _ := c["unchecked"].(float64)
		if scored != 5 || scored+unanswerable+unchecked != 7 || c["recommended"] == nil || c["expectedAnswerableRefused"] != 0.0 ||
			!strings.Contains(stdout, "answerability check coverage at threshold 0: recommended") {
			t.Errorf("answerability calibration at 0.3: %v\n%s", c, stdout)
		}
	})

	t.Run("at most --max-concurrent questions in flight", func(t *testing.T) {
		for _, limit := range []int{1, 2, 3} {
			proxy, peak := countingProxy(t, base, 100*time.Millisecond)
			code, stdout, stderr := evalRoute(t, as(proxy, "--source", "docs", "--max-concurrent", strconv.Itoa(limit))...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			// Seven questions of 100 ms each: the limit is reached, and
			// never passed.
			if got := peak.Load(); got != int64(limit) {
				t.Errorf("--max-concurrent %d: %d requests in flight at most", limit, got)
			}
		}
	})

	t.Run("a 429 is retried after its Retry-After, a bounded number of times", func(t *testing.T) {
		proxy, refused := refusingProxy(t, base, 2)
		start := time.Now()
		code, stdout, stderr := evalRoute(t, as(proxy, "--source", "docs")...)
		if code != 0 || refused.Load() != 2 || time.Since(start) < time.Second || !strings.Contains(stdout, "0 failed") {
			t.Errorf("exit %d after %d refusals in %s\n%s%s", code, refused.Load(), time.Since(start), stdout, stderr)
		}
		one := writeFile(t, t.TempDir(), "one.jsonl", strings.SplitAfter(evalRouteQuestions, "\n")[0])
		proxy, refused = refusingProxy(t, base, 1000)
		code, _, stderr = evalRoute(t, "--route", proxy, "--questions", one, "--source", "docs", "--retries", "1", "--header", "X-User: ann")
		if code != 1 || refused.Load() != 2 || !strings.Contains(stderr, "still rate limited after 1 retries") {
			t.Errorf("exit %d after %d refusals\n%s", code, refused.Load(), stderr)
		}
	})

	t.Run("only the measured config's answers count", func(t *testing.T) {
		proxy, stale := rollingProxy(t, base, 3)
		code, stdout, stderr := evalRoute(t, as(proxy, "--corpus", corpus, "--json", filepath.Join(dir, "rolled.json"), "--config-hash", "new")...)
		if code != 0 || stale.Load() != 3 || !strings.Contains(stdout, "0 failed") {
			t.Fatalf("exit %d after %d answers of the old config\n%s%s", code, stale.Load(), stdout, stderr)
		}
		// The old config's answers found nothing; had one been scored,
		// a question would have lost its section.
		figureIs(t, readSummary(t, filepath.Join(dir, "rolled.json")), "recallAt5", 4.0/5)

		proxy, stale = rollingProxy(t, base, 1000)
		code, _, stderr = evalRoute(t, as(proxy, "--source", "docs", "--config-hash", "new", "--config-wait", "1s")...)
		if code != 1 || !strings.Contains(stderr, "the route still answers from config old after 1s, and this run measures config new") {
			t.Errorf("exit %d after %d answers of the old config\n%s", code, stale.Load(), stderr)
		}
	})

	t.Run("a refused identity says so", func(t *testing.T) {
		wrong := writeFile(t, t.TempDir(), "wrong", "not-the-secret")
		code, stdout, stderr := evalRoute(t, "--route", base, "--questions", questions, "--source", "docs",
			"--header", "X-User: ann", "--header-file", "X-Proxy-Secret="+wrong)
		if code != 1 || !strings.Contains(stderr, "the route refused the identity (401") || strings.Contains(stdout+stderr, "not-the-secret") {
			t.Errorf("exit %d\n%s%s", code, stdout, stderr)
		}
	})
}

// countingProxy forwards to base, holding each request for delay, and
// records the most requests it held at once (answers are buffered: for
// searches, not streams).
func countingProxy(t *testing.T, base string, delay time.Duration) (string, *atomic.Int64) {
	t.Helper()
	target, _ := url.Parse(base)
	forward := httputil.NewSingleHostReverseProxy(target)
	var inFlight, peak atomic.Int64
	var mu sync.Mutex
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		mu.Lock()
		peak.Store(max(peak.Load(), n))
		mu.Unlock()
		time.Sleep(delay)
		// The request leaves the count before its answer is written: a
		// client that has read one answer may send its next at once.
		answer := httptest.NewRecorder()
		forward.ServeHTTP(answer, r)
		inFlight.Add(-1)
		maps.Copy(w.Header(), answer.Header())
		w.WriteHeader(answer.Code)
		_, _ = w.Write(answer.Body.Bytes())
	}))
	t.Cleanup(server.Close)
	return server.URL, &peak
}

// refusingProxy answers the first n requests 429 with Retry-After: 1, as
// the route's per-user limit does, and forwards the rest to base.
func refusingProxy(t *testing.T, base string, n int64) (string, *atomic.Int64) {
	return standInProxy(t, base, n, func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":{"code":"rate_limited","message":"too many turns a minute"}}`, http.StatusTooManyRequests)
	}, nil)
}

// rollingProxy stands for a route rolling from config "old" to "new": its
// first n answers come from a replica of the old config, which finds
// nothing, and the rest are the route's, named "new".
func rollingProxy(t *testing.T, base string, n int64) (string, *atomic.Int64) {
	return standInProxy(t, base, n, func(w http.ResponseWriter) {
		w.Header().Set(podconfig.ConfigHashHeader, "old")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"fragments":[]}`))
	}, func(h http.Header) { h.Set(podconfig.ConfigHashHeader, "new") })
}

// standInProxy answers the first n requests with standIn and forwards the
// rest to base, their headers set by mark first (nil: none); it counts
// the stand-in's answers.
func standInProxy(t *testing.T, base string, n int64, standIn func(http.ResponseWriter), mark func(http.Header)) (string, *atomic.Int64) {
	t.Helper()
	target, _ := url.Parse(base)
	forward := httputil.NewSingleHostReverseProxy(target)
	var seen, stoodIn atomic.Int64
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen.Add(1) <= n {
			stoodIn.Add(1)
			standIn(w)
			return
		}
		if mark != nil {
			mark(w.Header())
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	return server.URL, &stoodIn
}

// TestEvalRouteRefusesBadInput: each mistake is named, with the exit code
// of its kind, before (or without) a route answering.
func TestEvalRouteRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "good.jsonl", strings.SplitAfter(evalRouteQuestions, "\n")[0])
	bad := writeFile(t, dir, "bad.jsonl", strings.SplitAfter(evalRouteQuestions, "\n")[0]+"{not json\n")
	// A port nothing listens on: the route is down.
	ln := listenOnLoopback(t)
	down := "http://" + ln.Addr().String()
	ln.Close()
	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"header without a colon", []string{"--route", down, "--questions", good, "--source", "docs", "--header", "X-User ann"}, 2, `--header "X-User": want 'Name: value' (no colon)`},
		{"header file without a path", []string{"--route", down, "--questions", good, "--source", "docs", "--header-file", "X-Proxy-Secret"}, 2, "want 'Name=/path/to/file'"},
		{"unreadable header file", []string{"--route", down, "--questions", good, "--source", "docs", "--header-file", "X-Proxy-Secret=" + filepath.Join(dir, "absent")}, 2, "--header-file X-Proxy-Secret: read"},
		{"no route", []string{"--questions", good, "--source", "docs"}, 2, "--route is required"},
		{"no source", []string{"--route", down, "--questions", good}, 2, "--source (or --corpus) is required"},
		{"bad scope", []string{"--route", down, "--questions", good, "--source", "docs", "--scope", "all"}, 2, `--scope "all"`},
		{"answer threshold in scope retrieval", []string{"--route", down, "--questions", good, "--source", "docs", "--min-grounded-ratio", "0.5"}, 2, "--min-grounded-ratio measures nothing in --scope retrieval"},
		{"unreadable questions", []string{"--route", down, "--questions", filepath.Join(dir, "absent.jsonl"), "--source", "docs"}, 1, "questions: open"},
		{"a line that is not JSON", []string{"--route", down, "--questions", bad, "--source", "docs"}, 1, "bad.jsonl:2:"},
		{"route down", []string{"--route", down, "--questions", good, "--source", "docs", "--timeout", "5s"}, 1, "every question failed"},
		{"negative config wait", []string{"--route", down, "--questions", good, "--source", "docs", "--config-wait", "-1s"}, 2, "--config-wait must not be negative"},
		{"calibration alpha of a half", []string{"--route", down, "--questions", good, "--source", "docs", "--calibration-alpha", "0.5"}, 2, "--calibration-alpha 0.5: want more than 0 and less than 0.5"},
		{"calibration alpha of none", []string{"--route", down, "--questions", good, "--source", "docs", "--calibration-alpha", "0"}, 2, "--calibration-alpha 0: want more than 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := evalRoute(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.says) {
				t.Errorf("exit %d, want %d saying %q\n%s%s", code, c.code, c.says, stdout, stderr)
			}
		})
	}
}
