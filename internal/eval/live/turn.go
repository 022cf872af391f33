package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/route"
	"github.com/ragroute/ragroute/internal/route/answer"
)

// maxEventBytes bounds one event's line: a retrieval event lists at most
// the packed fragments' metadata, never their texts.
const maxEventBytes = 1 << 20

// turn runs q as a first turn through the route (POST /v1/turns, then its
// event stream) and digests its events as eval-answers digests the
// Runner's. The packed fragments' texts, which events leave out, come
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
	events, err := readEvents(resp, start)
	if err != nil {
		return eval.TurnOutcome{}, fmt.Errorf("GET %s: %w", submitted.StreamURL, err)
	}
	o := eval.Digest(q, liveMode, events, time.Since(start))
	for _, e := range events {
		report, ok := e.Data.(route.RetrievalReport)
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

// readEvents reads a turn's Server-Sent Events up to its final one, each
// payload decoded as the Runner emitted it.
func readEvents(resp *http.Response, start time.Time) ([]eval.TimedEvent, error) {
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 64<<10), maxEventBytes)
	var out []eval.TimedEvent
	var typ, data string
	for scanner.Scan() {
		line := scanner.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			typ = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		case line == "" && typ != "":
			payload, err := decodePayload(typ, data)
			if err != nil {
				return nil, fmt.Errorf("event %s: %w", typ, err)
			}
			e := route.Event{Type: typ, Data: payload}
			out = append(out, eval.TimedEvent{Event: e, At: time.Since(start)})
			if e.Final() {
				return out, nil
			}
			typ, data = "", ""
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("read the stream: %w", err)
	}
	return nil, fmt.Errorf("the stream ended before turn.completed or error")
}

// decodePayload decodes the payloads digest reads; others stay raw.
func decodePayload(typ, data string) (any, error) {
	switch typ {
	case route.EventDelta:
		return decodeAs[route.Delta](data)
	case route.EventRetrieval:
		return decodeAs[route.RetrievalReport](data)
	case route.EventCitation:
		return decodeAs[route.Citation](data)
	case route.EventGrounding:
		return decodeAs[answer.Grounding](data)
	case route.EventTurnCompleted:
		return decodeAs[route.TurnCompleted](data)
	case route.EventError:
		return decodeAs[route.TurnError](data)
	}
	return json.RawMessage(data), nil
}

func decodeAs[T any](data string) (any, error) {
	var v T
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return v, nil
}
