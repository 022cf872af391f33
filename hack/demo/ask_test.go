package main

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ragroute/ragroute/internal/route/turn"
)

// stream is a turn's SSE stream as the route writes it.
const stream = `id: 1
event: turn.started
data: {"turn_id":"t1","mode":"singleRound"}

id: 2
event: retrieval
data: {"query":"roll back","intent":"screen","sources":[{"marker":"S1","title":"Deploy console","heading_path":["Deploy console","Roll back a release"],"source_uri":"ops/deploy-console.md","image_urls":["https://docs.acme.example/img/rollback.png"]},{"marker":"S2","title":"VPN","heading_path":["Connect screen"],"source_uri":"handbook/vpn.md"}]}

: keep-alive

id: 3
event: delta
data: {"text":"Open the History tab "}

id: 4
event: delta
data: {"text":"and choose Roll back [S1]."}

id: 5
event: grounding
data: {"index":0,"sentence":"Open the History tab and choose Roll back [S1].","status":"supported","marker":"S1","score":0.71}

id: 6
event: grounding
data: {"index":1,"sentence":"Then run heroku rollback v12.","status":"unsupported","score":0.2,"invented":["v12"],"withheld":true}

id: 7
event: citation
data: {"marker":"S1","title":"Deploy console","source_uri":"ops/deploy-console.md"}

id: 8
event: turn.completed
data: {"not_found":false,"timings_ms":{"total":120,"model_answer":100},"grounded_ratio":0.5,"withheld_sentences":1}

`

func TestPrintEventsShowsTheAnswerAndMarksCitedSources(t *testing.T) {
	var out strings.Builder
	if _, err := printEvents(&out, strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`searched "roll back" (intent screen): 2 fragments`,
		"answer: Open the History tab and choose Roll back [S1].",
		"✔ [S1] Deploy console › Roll back a release  ops/deploy-console.md", // top heading = title, shown once
		"image: https://docs.acme.example/img/rollback.png",
		"   [S2] VPN › Connect screen  handbook/vpn.md", // retrieved, not cited
		`✔ [S1] 0.71 "Open the History tab and choose Roll back [S1]."`,
		`✗ unsupported 0.20 "Then run heroku rollback v12."; invented: v12; withheld`,
		"grounded ratio 0.50; 1 withheld; 0 links removed; replaced: false",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestPrintEventsFailsOnAnErrorOrACutStream(t *testing.T) {
	failed := "event: error\ndata: {\"code\":\"timeout\",\"message\":\"model server timed out\"}\n\n"
	_, err := printEvents(&strings.Builder{}, strings.NewReader(failed))
	if err == nil || !strings.Contains(err.Error(), "timeout: model server timed out") {
		t.Errorf("error event: %v", err)
	}
	cut := stream[:strings.Index(stream, "id: 6")]
	if _, err := printEvents(&strings.Builder{}, strings.NewReader(cut)); err == nil {
		t.Error("a stream without turn.completed passed")
	}
}

// An agentic turn's research as the demo prints it: each search, the
// model's save and its finalize, with the parts it reports.
func TestPrintEventsShowsTheModelsSaveAndFinalize(t *testing.T) {
	research := `event: retrieval
data: {"round":1,"query":"expense approval","sources":[{"marker":"F1","title":"Expenses"}]}

event: memory.saved
data: {"round":1,"fragments":[{"id":"F1","note":"two approvals"}],"closed":["approval"],"open":["rollback"]}

event: finalized
data: {"round":2,"fragments":["F1","F3"],"closed":["approval","rollback"]}

event: turn.completed
data: {"not_found":false}

`
	var out strings.Builder
	if _, err := printEvents(&out, strings.NewReader(research)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`round 1 searched "expense approval": 1 new fragments`,
		`round 1: the model saved 1 fragments; closed "approval"; open "rollback"`,
		`round 2: the model finalized 2 fragments; closed "approval", "rollback"; open none`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestPrintKnowledgeShowsEachFragmentOrNotFound(t *testing.T) {
	var out strings.Builder
	found := &mcp.CallToolResult{StructuredContent: map[string]any{"not_found": false, "fragments": []any{map[string]any{
		"citation": "S1", "title_path": "Deploy console › Roll back a release", "source": "ops/deploy-console.md",
		"text": "Open the History tab and choose Roll back.", "score": 0.71}}}}
	if err := printKnowledge(&out, found); err != nil {
		t.Fatal(err)
	}
	if want := "[S1] 0.71 Deploy console › Roll back a release  ops/deploy-console.md\n        Open the History tab"; !strings.Contains(out.String(), want) {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := printKnowledge(&out, &mcp.CallToolResult{StructuredContent: map[string]any{"not_found": true, "fragments": []any{}}}); err != nil ||
		!strings.Contains(out.String(), "not found") {
		t.Errorf("not found printed %q, %v", out.String(), err)
	}
	if err := printKnowledge(&out, &mcp.CallToolResult{IsError: true}); err == nil {
		t.Error("a tool error printed as a result")
	}
}

// The demo fails when a question gets what it must not: an answer to the
// question no page answers, or the not-found wording for one they do.
func TestAQuestionMustGetWhatItExpects(t *testing.T) {
	outcome := func(notFound bool) *turn.Outcome {
		var o turn.Outcome
		o.Add(turn.NewEvent(turn.Delta{Text: "I could not find this."}))
		o.Add(turn.NewEvent(turn.Completed{NotFound: notFound}))
		return &o
	}
	unanswerable := question{"alice", "staff", "What mileage rate is paid?", expectNotFound}
	answerable := question{"alice", "staff", "How are claims approved?", expectAnswer}
	if err := unanswerable.check(outcome(false), false); err == nil || !strings.Contains(err.Error(), "got an answer, want the not-found wording") {
		t.Errorf("an answered unanswerable question: %v", err)
	}
	if err := answerable.check(outcome(true), false); err == nil {
		t.Error("a refused answerable question passed")
	}
	if unanswerable.check(outcome(true), false) != nil || answerable.check(outcome(false), true) != nil {
		t.Error("a question that got what it expects failed")
	}
	if unanswerable.check(outcome(false), true) != nil {
		t.Error("the scripted models are held to telling unanswerable questions")
	}
}
