package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ragroute/ragroute/internal/testenv"
)

// TestDemoRunsToItsLastStep is make demo's path in make test: the demo's
// own binary, every step from the first to the last, over the operator's
// real rendering (kube-apiserver, the operator, the Job and Deployments it
// renders run as processes, Milvus Lite, Redis), with the tests' scripted
// model server for the local models (DEMO_MODELS=scripted). A change that
// breaks make demo fails here, naming the step; each step is checked for
// what it shows a user.
func TestDemoRunsToItsLastStep(t *testing.T) {
	testenv.Integration(t, "the test bed, Milvus Lite and redis-server")
	if os.Getenv("KUBEBUILDER_ASSETS") == "" || os.Getenv("RAGROUTE_MILVUS_LITE") == "" {
		t.Fatal("KUBEBUILDER_ASSETS and RAGROUTE_MILVUS_LITE are unset: make test sets them (hack/testbed.sh, hack/milvus-lite.sh)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	bin := t.TempDir()
	for _, b := range []struct{ out, pkg string }{{"ragroute", "./cmd/ragroute"}, {"ragroute-demo", "./hack/demo"}} {
		build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, b.out), b.pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	demo := exec.CommandContext(ctx, filepath.Join(bin, "ragroute-demo"))
	demo.Dir = root
	demo.Env = append(os.Environ(), "DEMO_MODELS=scripted", "DEMO_WORK="+filepath.Join(t.TempDir(), "demo"),
		"DEMO_RAGROUTE="+filepath.Join(bin, "ragroute"))
	demo.WaitDelay = 10 * time.Second
	out, err := demo.CombinedOutput()
	transcript := string(out)
	steps := splitSteps(transcript)
	if err != nil {
		last := "none"
		if len(steps) > 0 {
			last = steps[len(steps)-1].title
		}
		t.Fatalf("make demo's path failed at step %q: %v\n%s", last, err, transcript)
	}
	if !regexp.MustCompile(`(?m)^==> \[ *[0-9.]+s\] done$`).MatchString(transcript) {
		t.Fatalf("the demo ended without its last line\n%s", transcript)
	}
	shows := func(step, what string, want ...string) {
		t.Helper()
		text, ok := stepText(steps, step)
		if !ok {
			t.Errorf("no step %q in the transcript", step)
			return
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("step %q: %s: %q is missing from\n%s", step, what, w, text)
			}
		}
	}
	hides := func(text, what, unwanted string) {
		t.Helper()
		if strings.Contains(text, unwanted) {
			t.Errorf("%s: %q is shown in\n%s", what, unwanted, text)
		}
	}
	shows("the ingestion Job", "the store indexed", "KnowledgeStore docs Ready")
	shows("the route Deployment", "the route serves", "route support ready at", "marked 1/1 available")

	questions, _ := stepText(steps, "questions, asked as two users")
	asked := splitOn(questions, " asks: ")
	if len(asked) != 4 {
		t.Fatalf("%d questions asked, want 4:\n%s", len(asked), questions)
	}
	if a := asked[0]; !regexp.MustCompile(`✔ \[S\d\] Expenses[^\n]*expenses\.md`).MatchString(a) {
		t.Errorf("alice's expense question: want the answer cited from expenses.md:\n%s", a)
	}
	for i, what := range []string{"alice's mileage question (the handbook never states a rate)", "alice's screen question (an ops runbook)"} {
		if a := asked[i+1]; !strings.Contains(a, "honest not-found") {
			t.Errorf("%s: want the honest not-found:\n%s", what, a)
		}
	}
	hides(asked[2], "alice may not read the ops runbook", "deploy-console.md")
	if a := asked[3]; !regexp.MustCompile(`✔ \[S\d\] [^\n]*deploy-console\.md`).MatchString(a) {
		t.Errorf("bob's screen question: want the answer cited from the ops runbook deploy-console.md:\n%s", a)
	}

	shows("a user's verdict", "the verdict kept and exported as an evaluation question",
		"→ 204", `"question": "How does the approval of an expense claim work?"`, `"gold_file": "expenses.md"`, `"cited": [`+"\n")
	mcp, _ := stepText(steps, "the route's MCP tools")
	shows("the route's MCP tools", "the route's tools listed", "tool search_knowledge:", "tool ask:")
	if calls := splitOn(mcp, " calls search_knowledge: "); len(calls) != 2 {
		t.Errorf("%d search_knowledge calls, want alice's and bob's:\n%s", len(calls), mcp)
	} else {
		hides(calls[0], "alice's search_knowledge", "deploy-console.md")
		if !strings.Contains(calls[1], "deploy-console.md") {
			t.Errorf("bob's search_knowledge: want the ops runbook:\n%s", calls[1])
		}
	}
	shows("the sample RouteEvaluation's first run", "the evaluation's verdict and figures",
		"Passing=True", "recall@5 1.00")
	shows("kubectl apply -k config/samples/ru", "the Russian store indexed and its route serving",
		"created KnowledgeStore/docs-ru", "KnowledgeStore docs-ru Ready", "route support-ru ready at")
	ru, _ := stepText(steps, "kubectl apply -k config/samples/ru")
	if asked := splitOn(ru, " asks route support-ru: "); len(asked) != 2 {
		t.Errorf("%d Russian questions asked, want 2:\n%s", len(asked), ru)
	} else {
		if !regexp.MustCompile(`✔ \[S\d\] Расходы[^\n]*expenses\.md`).MatchString(asked[0]) {
			t.Errorf("the Russian approval question: want the answer cited from the Russian expenses.md:\n%s", asked[0])
		}
		if !strings.Contains(asked[1], "В документации ACME об этом ничего не нашлось.") || !strings.Contains(asked[1], "honest not-found") {
			t.Errorf("the Russian mileage question: want the Russian not-found wording:\n%s", asked[1])
		}
	}
	shows("the other samples", "every sample Ready, the extractive one answering",
		"created QueryRoute/research", "created QueryRoute/quotes", "route research ready at", "route quotes ready at",
		"asks route quotes:", "expenses.md", "PlatformPrompt/default Ready=True", "KnowledgeStore/docs Ready=True",
		"QueryRoute/support Ready=True", "QueryRoute/research Ready=True", "QueryRoute/quotes Ready=True",
		"RouteEvaluation/support-handbook Ready=True", "KnowledgeStore/docs-ru Ready=True", "QueryRoute/support-ru Ready=True")
	shows("the route's page", "the page's address", "the route's page: http://127.0.0.1:")
	if t.Failed() {
		t.Logf("the whole transcript:\n%s", transcript)
	}
}

// transcriptStep is one "==> [12.3s] 8/14 title" section of the demo's output.
type transcriptStep struct{ title, text string }

var stepHeader = regexp.MustCompile(`(?m)^==> \[ *[0-9.]+s\] \d+/\d+ (.*)$`)

func splitSteps(transcript string) []transcriptStep {
	var steps []transcriptStep
	headers := stepHeader.FindAllStringSubmatchIndex(transcript, -1)
	for i, h := range headers {
		end := len(transcript)
		if i+1 < len(headers) {
			end = headers[i+1][0]
		}
		steps = append(steps, transcriptStep{title: transcript[h[2]:h[3]], text: transcript[h[1]:end]})
	}
	return steps
}

// stepText is the output of the step whose title starts with prefix.
func stepText(steps []transcriptStep, prefix string) (string, bool) {
	for _, s := range steps {
		if strings.HasPrefix(s.title, prefix) {
			return s.text, true
		}
	}
	return "", false
}

// splitOn cuts text into sections that each start at a line holding sep.
func splitOn(text, sep string) []string {
	var sections []string
	for line := range strings.Lines(text) {
		if strings.Contains(line, sep) {
			sections = append(sections, "")
		}
		if len(sections) > 0 {
			sections[len(sections)-1] += line
		}
	}
	return sections
}
