package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnstream"
)

// question is asked by one user through the trusted-proxy headers, as an
// authenticating proxy in front of the route would send them.
type question struct {
	user, groups, text string
	// expect is what the user must read: an answer, the not-found
	// wording, or either (empty).
	expect expectation
}

// expectation is what a demo question must get.
type expectation string

const (
	expectAnswer   expectation = "an answer"
	expectNotFound expectation = "the not-found wording"
)

// check says how outcome fails q's expectation; nil when it meets it.
// The scripted models hash words and cannot tell a question the
// documents do not answer, so only an answer is expected of them.
func (q question) check(outcome *turn.Outcome, scripted bool) error {
	c := outcome.Completed
	if c == nil || q.expect == "" || q.expect == expectNotFound && scripted {
		return nil
	}
	if got := map[bool]expectation{true: expectNotFound, false: expectAnswer}[c.NotFound]; got != q.expect {
		return fmt.Errorf("%s's question %q got %s, want %s: %q", q.user, q.text, got, q.expect, shorten(outcome.Answer(), 200))
	}
	return nil
}

// questions: one concept question, one the handbook does not answer
// (expenses are in it, a mileage rate is not: the route says its
// not-found wording), one screen question; the screen question's answer
// is in a document only the ops group may read, so it is asked by a user
// outside that group and by one inside it.
var questions = []question{
	{"alice", "staff", "How does the approval of an expense claim work?", expectAnswer},
	{"alice", "staff", "What mileage rate is paid when I use my own car for a business trip?", expectNotFound},
	{"alice", "staff", "Where do I click to roll back a release in the deploy console?", ""},
	{"bob", "staff,ops", "Where do I click to roll back a release in the deploy console?", expectAnswer},
}

// researchQuestion asks two things from two documents, one of which only
// ops may read: in agentic mode the research searches each part.
var researchQuestion = question{"bob", "staff,ops",
	"How does the approval of an expense claim work, and where do I click to roll back a release in the deploy console?", expectAnswer}

func (d *demo) askQuestions(ctx context.Context) error {
	asked := questions
	if d.cfg.mode == "agentic" {
		asked = append(slices.Clip(questions), researchQuestion)
	}
	for i, q := range asked {
		fmt.Printf("\n  %s (groups: %s) asks: %s\n", q.user, q.groups, q.text)
		turn, outcome, err := d.ask(ctx, q)
		if err != nil {
			return fmt.Errorf("%s's question: %w", q.user, err)
		}
		if err := q.check(outcome, d.cfg.scripted); err != nil {
			return err
		}
		if i == 0 {
			d.rated.q, d.rated.turn = q, turn // rated in the next step
		}
	}
	return nil
}

// ask submits a turn to the sample route and prints its event stream as
// it arrives; it returns the turn's id and the turn as the user read it.
func (d *demo) ask(ctx context.Context, q question) (turnID string, outcome *turn.Outcome, err error) {
	return d.askAt(ctx, d.routeURL, q)
}

// askAt is ask at the route at base.
func (d *demo) askAt(ctx context.Context, base string, q question) (turnID string, outcome *turn.Outcome, err error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": q.text}}})
	var submitted struct {
		TurnID    string `json:"turn_id"`
		StreamURL string `json:"stream_url"`
	}
	if err := d.callAt(ctx, base, q, http.MethodPost, "/v1/turns", body, func(resp *http.Response) error {
		return json.NewDecoder(resp.Body).Decode(&submitted)
	}); err != nil {
		return "", nil, err
	}
	err = d.callAt(ctx, base, q, http.MethodGet, submitted.StreamURL, nil, func(resp *http.Response) error {
		outcome, err = printEvents(os.Stdout, resp.Body)
		return err
	})
	return submitted.TurnID, outcome, err
}

func (d *demo) call(ctx context.Context, q question, method, path string, body []byte, read func(*http.Response) error) error {
	return d.callAt(ctx, d.routeURL, q, method, path, body, read)
}

// callAt sends a request to the route at base as q's user, with the
// headers the sign-in proxy would send.
func (d *demo) callAt(ctx context.Context, base string, q question, method, path string, body []byte, read func(*http.Response) error) error {
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set(d.applied.userHeader, q.user)
	req.Header.Set(d.applied.groupsHeader, q.groups)
	if p := d.applied.proxy; p.value != "" {
		req.Header.Set(p.header, p.value)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var msg bytes.Buffer
		_, _ = msg.ReadFrom(resp.Body)
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(msg.String()))
	}
	return read(resp)
}

// printEvents prints a turn's SSE stream: what was searched and found, the
// answer as it streams, then the sources it cited, as the turn's own fold
// (turn.Outcome) reads them; it returns the answer.
func printEvents(out io.Writer, body io.Reader) (*turn.Outcome, error) {
	var outcome turn.Outcome
	err := turnstream.Read(body, func(e turn.Event) error {
		outcome.Add(e)
		switch data := e.Data.(type) {
		case turn.RetrievalReport:
			if data.Round > 0 { // an agentic round's search
				fmt.Fprintf(out, "    round %d searched %q: %d new fragments\n", data.Round, data.Query, len(data.Sources))
				break
			}
			fmt.Fprintf(out, "    searched %q (intent %s): %d fragments may be used\n    answer: ", data.Query, data.Intent, len(data.Sources))
		case turn.AnswerReplaced:
			fmt.Fprintf(out, "(the model's answer is replaced by quotes from the fragments: %s, grounded ratio %.2f)\n            ", data.Reason, data.GroundedRatio)
		case turn.MemorySaved:
			fmt.Fprintf(out, "    round %d: the model saved %d fragments; closed %s; open %s\n", data.Round, len(data.Fragments),
				listOrNone(data.Closed), listOrNone(data.Open))
		case turn.FinalizeForced:
			fmt.Fprintf(out, "    the harness finalized: %s\n", data.Reason)
		case turn.Finalized:
			fmt.Fprintf(out, "    round %d: the model finalized %d fragments; closed %s; open %s\n", data.Round, len(data.Fragments),
				listOrNone(data.Closed), listOrNone(data.Open))
		case turn.ToolCall:
			if data.Status == turn.CallRejected {
				fmt.Fprintf(out, "    the harness rejected %s: %s\n", data.Name, data.Reason)
			}
		case turn.AnswerabilityReport:
			if !data.Answerable {
				fmt.Fprintf(out, "(answerability %s %.2f, under the route's %.2f: not found; missing %s) ", data.Check, data.Score, data.Threshold, listOrNone(data.Missing))
			}
		case turn.Research:
			fmt.Fprintf(out, "    nothing found; searched once more as %q: %d fragments\n", data.Rephrase, data.Found)
		case turn.Delta:
			fmt.Fprint(out, strings.ReplaceAll(data.Text, "\n", "\n            "))
		case turn.Completed:
			fmt.Fprintln(out)
			printGrounding(out, outcome.Groundings, data)
			printSources(out, outcome.Sources(), citedMarkers(outcome.Citations), data)
		case turn.Failed:
			return fmt.Errorf("the turn failed: %s: %s", data.Code, data.Message)
		}
		return nil
	})
	return &outcome, err
}

// citedMarkers are the markers the answer cited.
func citedMarkers(citations []turn.Citation) map[string]bool {
	cited := map[string]bool{}
	for _, c := range citations {
		cited[c.Marker] = true
	}
	return cited
}

// printGrounding prints each checked sentence of the model's answer with
// its support: the fragment that supports it, or why none does, and
// whether the client was shown it.
func printGrounding(out io.Writer, grounding []answer.Grounding, c turn.Completed) {
	if len(grounding) == 0 {
		return
	}
	fmt.Fprintln(out, "    grounding of the model's sentences:")
	for _, g := range grounding {
		mark := "✔ [" + g.Marker + "]"
		if g.Status != answer.Supported {
			mark = "✗ unsupported"
		}
		note := ""
		if len(g.Invented) > 0 {
			note += "; invented: " + strings.Join(g.Invented, ", ")
		}
		if g.Withheld {
			note += "; withheld"
		}
		fmt.Fprintf(out, "      %s %.2f %q%s\n", mark, g.Score, shorten(g.Sentence, 90), note)
	}
	summary := "    grounded ratio " + "n/a"
	if c.GroundedRatio != nil {
		summary = fmt.Sprintf("    grounded ratio %.2f", *c.GroundedRatio)
	}
	fmt.Fprintf(out, "%s; %d withheld; %d links removed; replaced: %t\n", summary, c.Withheld, c.LinksRemoved, c.AnswerReplaced)
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func printSources(out io.Writer, sources []turn.RetrievalSource, cited map[string]bool, c turn.Completed) {
	if c.NotFound {
		fmt.Fprintln(out, "    (honest not-found: nothing this user may read answers it)")
	}
	for _, s := range sources {
		mark := "  "
		if cited[s.Marker] {
			mark = "✔ "
		}
		path := s.HeadingPath
		if len(path) > 0 && path[0] == s.Title {
			path = path[1:] // the top heading repeats the title
		}
		fmt.Fprintf(out, "    %s[%s] %s  %s\n", mark, s.Marker, strings.Join(append([]string{s.Title}, path...), " › "), s.SourceURI)
		for _, img := range s.ImageURLs {
			fmt.Fprintf(out, "         image: %s\n", img)
		}
	}
	fmt.Fprintf(out, "    (✔ = cited in the answer; time %d ms, of which model %d ms)\n",
		c.Timings["total"], c.Timings["model_answer"]+c.Timings["condense"]+c.Timings["model_decide"]+c.Timings["model_research"]+c.Timings["rephrase"])
}

// listOrNone quotes a research report's parts, or says there are none.
func listOrNone(parts []string) string {
	if len(parts) == 0 {
		return "none"
	}
	quoted := make([]string, len(parts))
	for i, p := range parts {
		quoted[i] = fmt.Sprintf("%q", p)
	}
	return strings.Join(quoted, ", ")
}
