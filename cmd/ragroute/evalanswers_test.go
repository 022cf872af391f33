package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/eval/lab"
	"github.com/ragroute/ragroute/internal/testenv"
)

// testRoute are the evaluations' default route manifests, seen from this
// package's folder.
const testRoute = "../../config/samples/v1alpha1_queryroute.yaml,../../config/samples/v1alpha1_knowledgestore.yaml," +
	"../../test/eval/platformprompt.yaml"

// evalAnswersCorpus writes a corpus of two documents and four questions
// (two unanswerable: one names what the documents never do, one does
// not) and returns the corpus folder and the questions file.
func evalAnswersCorpus(t *testing.T) (corpus, questions string) {
	t.Helper()
	dir := t.TempDir()
	corpus = filepath.Join(dir, "sync")
	if err := os.MkdirAll(corpus, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"prune.md": "# Prune\n\nPrune deletes resources that are no longer in Git.\n" +
			"Pruning runs after the other resources are healthy when PruneLast is set.\n",
		"retry.md": "# Retry\n\nA failed sync is retried with an exponential backoff.\n" +
			"The retry limit is set per application in its sync policy.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(corpus, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	questions = filepath.Join(dir, "questions.jsonl")
	lines := `{"id":"prune","question":"What does prune delete from Git?","gold_file":"prune.md","gold_heading_path":["Prune"],"intent":"concept"}
{"id":"retry","question":"Is a failed sync retried with backoff?","gold_file":"retry.md","gold_heading_path":["Retry"],"intent":"concept"}
{"id":"velero","question":"How do I back up applications with Velero?","gold_file":null,"gold_heading_path":null,"intent":"unanswerable"}
{"id":"tape","question":"How do I back up applications to tape?","gold_file":null,"gold_heading_path":null,"intent":"unanswerable"}
`
	if err := os.WriteFile(questions, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return corpus, questions
}

// TestEvalAnswersEndToEnd runs `ragroute eval-answers` on Milvus Lite with
// the scripted model: one supported, cited sentence for the prune
// question, an answer with an invented URL and number for the retry
// question, the not-found wording for the unanswerable one.
func TestEvalAnswersEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	milvus := startMilvus(ctx, t)
	models := testenv.StartModelServer(32)
	t.Cleanup(models.Close)
	notFound := regexp.MustCompile(`reply exactly: "([^"]+)"`)
	models.Chat = func(req testenv.ChatRequest) testenv.ChatReply {
		var all, question string
		for _, m := range req.Messages {
			all += m.Content + "\n"
			if m.Role == "user" {
				question = m.Content
			}
		}
		// The marker of the packed fragment from a document, as packing
		// labels it: "<fence> S2 | Retry | sync/retry.md".
		marker := func(title string) string {
			if m := regexp.MustCompile(`(S\d+) \| ` + title + ` \|`).FindStringSubmatch(all); m != nil {
				return m[1]
			}
			return "S9"
		}
		switch {
		case strings.Contains(question, "prune"):
			return testenv.ChatReply{Content: "Prune deletes resources that are no longer in Git [" + marker("Prune") + "]."}
		case strings.Contains(question, "retried"):
			return testenv.ChatReply{Content: "See https://made-up.example/retry for the limit of 4711 retries [" + marker("Retry") + "]."}
		}
		if m := notFound.FindStringSubmatch(all); m != nil {
			return testenv.ChatReply{Content: m[1]}
		}
		return testenv.ChatReply{Content: "no not-found wording in the prompt"}
	}
	corpus, questions := evalAnswersCorpus(t)
	jsonPath := filepath.Join(t.TempDir(), "answers.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"eval-answers", "--route", testRoute, "--corpus", corpus, "--questions", questions, "--milvus-uri", milvus.URI,
		"--embedding-base-url", models.BaseURL(), "--embedding-model", "hash", "--dimensions", "32",
		"--chat-base-url", models.BaseURL(), "--chat-model", "scripted", "--concurrency", "2",
		// The hashing embedder's similarities are low: no floor drops a fragment.
		"--similarity-floor", "0.01", "--strict-floor", "0.01", "--grounding-curve", "--json", jsonPath}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var report lab.AnswersReport
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	if report.Questions != 4 || report.Answerable != 2 || len(report.Modes) != 4 {
		t.Fatalf("report: %d questions, %d answerable, %d modes\n%s", report.Questions, report.Answerable, len(report.Modes), stdout.String())
	}
	byMode := map[string]eval.ModeFigures{}
	for _, m := range report.Modes {
		byMode[m.Mode] = m
		// The sample route's check refuses the question naming Velero,
		// which nothing packed holds (names: require), in every mode. It
		// lets the other unanswerable one through (the hashing embedder
		// packs words of it); the model says not found, and the route
		// quotes the fragments in its place (whenModelRefuses: quote);
		// extractive answers quote whatever was found.
		if m.Errors != 0 || m.NotFound != 0.5 || m.FalseNotFound != 0 {
			t.Errorf("%s: %d errors, not-found %v on unanswerable, %v on answerable", m.Mode, m.Errors, m.NotFound, m.FalseNotFound)
		}
	}
	g := byMode[lab.ModeGenerative]
	// Both answers cite their gold document, and only it.
	if g.CitationPrecision == nil || *g.CitationPrecision != 1 || g.CitationRecall != 1 {
		t.Errorf("generative: citation precision %v, recall %v", g.CitationPrecision, g.CitationRecall)
	}
	// The invented URL was removed by the route and never shown; its
	// invented number leaves one of two answers' sentences unsupported.
	if g.LinksRemoved != 1 || g.UnsupportedURLTurns != 0 {
		t.Errorf("generative: links removed %d, answers with an unsupported URL %d", g.LinksRemoved, g.UnsupportedURLTurns)
	}
	if g.GroundedRatio == nil || *g.GroundedRatio != 0.5 || g.Sentences != 2 {
		t.Errorf("generative: grounded %v over %d sentences", g.GroundedRatio, g.Sentences)
	}
	if s := byMode[lab.ModeStrip]; s.Withheld != 1 {
		t.Errorf("strip: withheld %d", s.Withheld)
	}
	// One of the three answered turns (the quoted refusal is one).
	if f := byMode[lab.ModeFallback]; math.Abs(f.Replaced-1.0/3) > 1e-9 {
		t.Errorf("fallback: replaced %v", f.Replaced)
	}
	refused := 0
	for _, turn := range report.Turns {
		if turn.ModelNotFound {
			refused++
			if turn.Question != "tape" || turn.NotFound {
				t.Errorf("%s %s: the model's not-found on an answerable question, or not overridden: %+v", turn.Mode, turn.Question, turn)
			}
		}
	}
	if refused != 3 {
		t.Errorf("%d turns with the model's not-found, want the unnamed unanswerable question's in the three modes the model answers", refused)
	}
	if x := byMode[lab.ModeExtractive]; x.GroundedRatio == nil || x.CitationRecall != 1 {
		t.Errorf("extractive: grounded %v, citation recall %v", x.GroundedRatio, x.CitationRecall)
	}
	for _, turn := range report.Turns {
		if turn.Mode == lab.ModeGenerative && turn.Question == "retry" && strings.Contains(turn.Answer, "made-up.example") {
			t.Errorf("the invented URL was shown: %q", turn.Answer)
		}
	}
	if report.Curve == nil || report.Curve.Supported == 0 || len(report.Curve.Points) != 9 {
		t.Errorf("curve %+v", report.Curve)
	}
	// The route evaluated is the sample's as shipped, and what the
	// evaluation changed is said setting by setting.
	if report.Route != "default/support" || !slices.Contains(report.Deviations, "retrieval.similarityFloor: 0.2 → 0.01") {
		t.Errorf("route %s, deviations %q: want the sample route and its changed floor", report.Route, report.Deviations)
	}
	for _, want := range []string{"route default/support as shipped, except:", "generative+strip", "grounding threshold calibration"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, stdout.String())
		}
	}

	// The curve alone needs no chat model.
	chatCalls := len(models.Seen())
	stdout.Reset()
	code = run([]string{"eval-answers", "--route", testRoute, "--corpus", corpus, "--questions", questions, "--milvus-uri", milvus.URI,
		"--embedding-base-url", models.BaseURL(), "--embedding-model", "hash", "--dimensions", "32",
		"--similarity-floor", "0.01", "--strict-floor", "0.01", "--curve-only"}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "grounding threshold calibration") || strings.Contains(stdout.String(), "TTFT") {
		t.Errorf("--curve-only: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if n := len(models.Seen()); n != chatCalls {
		t.Errorf("--curve-only called the chat model %d times", n-chatCalls)
	}
}
