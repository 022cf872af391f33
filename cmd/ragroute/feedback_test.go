package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/assembly/serving"
	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnlog"
	"github.com/ragroute/ragroute/internal/testenv"
)

// feedbackRoute is a route whose turns and feedback live in a fresh
// Redis, sealed with a key from the environment, as its pods get it.
func feedbackRoute(t *testing.T) (podconfig.RouteConfig, func(string) string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := testenv.StartRedis(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	env := map[string]string{"ROUTE_SEAL_KEY": strings.Repeat("s", 32)}
	return podconfig.RouteConfig{
		Route:    podconfig.RouteRef{Name: "handbook", Namespace: "docs"},
		Turns:    podconfig.Turns{Backend: podconfig.BackendRedis, Retention: podconfig.Duration(10 * time.Minute)},
		Redis:    &podconfig.Redis{Address: r.Addr, SealKeyEnv: "ROUTE_SEAL_KEY"},
		Feedback: podconfig.Feedback{Enabled: true, Retention: podconfig.Duration(720 * time.Hour)},
	}, func(name string) string { return env[name] }
}

// `ragroute feedback export` reads the verdicts the route's pods stored,
// with the route's own config and secrets, and writes each down-rated
// turn as a RouteEvaluation question: the user's expected source as the
// gold (its heading path from the turn's fragments), unanswerable when
// the user said the answer was invented and named no source, and a line
// the evaluation refuses until an admin sets the gold otherwise. Up
// ratings are not questions.
func TestFeedbackExportWritesDownRatedTurnsAsQuestions(t *testing.T) {
	cfg, env := feedbackRoute(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// What a route pod stores, through the same store.
	pod, release, err := serving.OpenFeedback(ctx, cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	expenses := turn.RetrievalSource{Marker: "S1", SourceURI: "handbook/expenses.md", HeadingPath: []string{"Expenses", "How approval works"}}
	travel := turn.RetrievalSource{Marker: "S2", SourceURI: "handbook/travel.md", HeadingPath: []string{"Travel", "Booking"}}
	turn := func(id, question string) turnlog.AnsweredTurn {
		return turnlog.AnsweredTurn{ID: id, Owner: "alice", Question: question, Answer: "Book it yourself [S2].",
			Citations: []turn.Citation{{Marker: "S2", SourceURI: travel.SourceURI, Heading: travel.HeadingPath}},
			Fragments: []turn.RetrievalSource{travel, expenses}}
	}
	verdicts := []struct {
		turn    turnlog.AnsweredTurn
		verdict turnlog.Verdict
	}{
		{turn("aaaaaaaaaaaaaaaa1", "Who approves my claim?"), turnlog.Verdict{Rating: "down", Comment: "Approval is in Expenses.", ExpectedSource: "handbook/expenses.md"}},
		{turn("bbbbbbbbbbbbbbbb2", "What is the mileage rate?"), turnlog.Verdict{Rating: "down", Invented: true}},
		{turn("cccccccccccccccc3", "How do I book a train?"), turnlog.Verdict{Rating: "up"}},
		{turn("dddddddddddddddd4", "Can I fly business?"), turnlog.Verdict{Rating: "down"}},
	}
	for i, v := range verdicts {
		v.verdict.At = time.Now().Add(time.Duration(i) * time.Second)
		if err := pod.Rate(ctx, v.turn, v.verdict); err != nil {
			t.Fatal(err)
		}
	}

	var out, notes bytes.Buffer
	n, err := exportFeedback(ctx, cfg, env, "handbook", &out, &notes)
	if err != nil || n != 3 {
		t.Fatalf("export: %d questions, %v; notes %s", n, err, notes.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out.String())
	}
	var got []exportedQuestion
	for _, line := range lines {
		var q exportedQuestion
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		got = append(got, q)
	}
	if q := got[0]; q.ID != "fb-aaaaaaaaaaaa" || q.Question.Question != "Who approves my claim?" || q.GoldFile == nil || *q.GoldFile != "expenses.md" ||
		strings.Join(q.GoldHeading, "/") != "Expenses/How approval works" || q.Feedback.Comment != "Approval is in Expenses." ||
		strings.Join(q.Feedback.Cited, ";") != "handbook/travel.md › Travel › Booking" || q.Feedback.Review != "" {
		t.Errorf("expected source: %s", lines[0])
	}
	if q := got[1]; q.GoldFile != nil || q.Intent != "unanswerable" || !q.Feedback.Invented || q.Feedback.Review != "" {
		t.Errorf("invented: %s", lines[1])
	}
	if q := got[2]; q.ID != "fb-dddddddddddd" || q.Feedback.Review == "" || !strings.Contains(notes.String(), "fb-dddddddddddd: set gold_file") {
		t.Errorf("no detail: %s; notes %q", lines[2], notes.String())
	}
	// The reviewed lines load as a RouteEvaluation question set; the one
	// left for the admin does not, naming itself.
	dir := t.TempDir()
	reviewed, all := filepath.Join(dir, "reviewed.jsonl"), filepath.Join(dir, "all.jsonl")
	if err := os.WriteFile(reviewed, []byte(lines[0]+"\n"+lines[1]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(all, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if qs, err := eval.LoadQuestions(reviewed); err != nil || len(qs) != 2 || !qs[0].Answerable() || qs[1].Answerable() {
		t.Errorf("the reviewed lines load as %+v, %v: want one answerable, one unanswerable question", qs, err)
	}
	if _, err := eval.LoadQuestions(all); err == nil || !strings.Contains(err.Error(), "fb-dddddddddddd") {
		t.Errorf("the unreviewed line loads: %v", err)
	}
}

// Export reads only a store another process can read: a route that keeps
// feedback in its replicas' memory, or takes none, is a clear error.
func TestFeedbackExportNeedsTheRoutesRedis(t *testing.T) {
	ctx := context.Background()
	memory := podconfig.RouteConfig{Turns: podconfig.Turns{Backend: podconfig.BackendMemory}, Feedback: podconfig.Feedback{Enabled: true, Retention: podconfig.Duration(time.Hour)}}
	if _, err := exportFeedback(ctx, memory, nil, "", &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "spec.turns.backend redis") {
		t.Errorf("memory backend: %v", err)
	}
	off := podconfig.RouteConfig{Turns: podconfig.Turns{Backend: podconfig.BackendRedis}}
	if _, err := exportFeedback(ctx, off, nil, "", &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "spec.feedback.enabled is false") {
		t.Errorf("feedback off: %v", err)
	}
}
