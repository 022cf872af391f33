package live

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route/turn"
	"github.com/ragroute/ragroute/internal/route/turnstream"
)

// turn runs q as a first turn through the route (POST /v1/turns, then its
// event stream) and digests its events as eval-answers digests the
// turn.Engine's. The packed fragments' texts, which events leave out, come
// from searching each query the turn searched once more: the route's
// cache answers it with the fragments the turn packed.
func (c *routeClient) turn(ctx context.Context, q eval.Question, fragments *eval.FragmentRecorder) (eval.TurnOutcome, error) {
	start := time.Now()
	var submitted struct {
		StreamURL string `json:"stream_url"`
	}
	body := map[string]any{"messages": []map[string]string{{"role": "user", "content": q.Question}}}
	if _, err := c.postJSON(ctx, "/v1/turns", body, &submitted); err != nil {
		return eval.TurnOutcome{}, err
	}
	if !strings.HasPrefix(submitted.StreamURL, "/") {
		return eval.TurnOutcome{}, fmt.Errorf("POST /v1/turns: the route answered no stream path (%q)", submitted.StreamURL)
	}
	resp, _, err := c.do(ctx, http.MethodGet, submitted.StreamURL, nil)
	if err != nil {
		return eval.TurnOutcome{}, err
	}
	defer resp.Body.Close()
	var events []eval.TimedEvent
	err = turnstream.Read(resp.Body, func(e turn.Event) error {
		events = append(events, eval.TimedEvent{Event: e, At: time.Since(start)})
		return nil
	})
	if err != nil {
		return eval.TurnOutcome{}, fmt.Errorf("GET %s: %w", submitted.StreamURL, err)
	}
	o := eval.Digest(q, liveMode, events, time.Since(start))
	for _, e := range events {
		report, ok := e.Data.(turn.RetrievalReport)
		if !ok || report.Query == "" {
			continue
		}
		_, found, err := c.search(ctx, report.Query)
		if err != nil {
			return eval.TurnOutcome{}, fmt.Errorf("fragments of the turn's search %q: %w", report.Query, err)
		}
		fragments.Put(ctx, "", found)
	}
	o.Units = map[string]eval.Unit{}
	for _, s := range o.Sources {
		if f, ok := fragments.Packed(s); ok {
			o.Units[s.Marker] = eval.Unit{Source: f.Source, Text: f.Text, HeadingPath: f.HeadingPath}
			o.Allowed = append(o.Allowed, eval.FragmentHolds(f)...)
		}
	}
	return o, nil
}

// liveMode names the live route's turns in the answer figures.
const liveMode = "route"
