package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragroute/ragroute/api/v1alpha1"
)

// turnTiming is one turn as a client of the OpenAI streaming API saw it.
type turnTiming struct {
	// firstToken is the time to the first content delta; lastToken to the
	// last one; done to the end of the stream (the finishing chunk and
	// [DONE]), which waits for what the system does after the answer.
	firstToken, lastToken, done time.Duration
	// unchecked: the route's grounding check did not judge the whole
	// answer (ragroute.grounding_unchecked).
	unchecked bool
	err       error
}

// client asks one system questions through its OpenAI-compatible
// streaming endpoint.
type client struct {
	http    *http.Client
	url     string
	headers map[string]string
}

// forStream is the client of stream s: with a user header, a user of its
// own ("perf-7"), since a route bounds one user's open streams
// (limits.streamsPerUser, 16) and 64 streams stand for 64 users.
func (c client) forStream(s int) client {
	headers := map[string]string{}
	for k, v := range c.headers {
		if k == v1alpha1.DefaultProxyUserHeader {
			v = fmt.Sprintf("%s-%d", v, s)
		}
		headers[k] = v
	}
	c.headers = headers
	return c
}

// ask streams one answer to question.
func (c client) ask(ctx context.Context, question string) turnTiming {
	body, _ := json.Marshal(map[string]any{"model": "perf", "stream": true,
		"messages": []map[string]string{{"role": "user", "content": question}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return turnTiming{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return turnTiming{err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return turnTiming{err: fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))}
	}
	var t turnTiming
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 64<<10), 4<<20)
	for scanner.Scan() {
		data, ok := strings.CutPrefix(scanner.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			t.done = time.Since(start)
			if t.firstToken == 0 {
				t.err = errors.New("no answer text")
			}
			return t
		}
		var chunk struct {
			Error    json.RawMessage `json:"error"`
			Ragroute struct {
				GroundingUnchecked string `json:"grounding_unchecked"`
			} `json:"ragroute"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			return turnTiming{err: fmt.Errorf("chunk %q: %w", data, err)}
		}
		if len(chunk.Error) > 0 {
			return turnTiming{err: fmt.Errorf("error in the stream: %s", chunk.Error)}
		}
		t.unchecked = t.unchecked || chunk.Ragroute.GroundingUnchecked != ""
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			t.lastToken = time.Since(start)
			if t.firstToken == 0 {
				t.firstToken = t.lastToken
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return turnTiming{err: err}
	}
	return turnTiming{err: errors.New("the stream ended without [DONE]")}
}

// sequential asks each question once, one at a time.
func sequential(ctx context.Context, c client, questions []string) []turnTiming {
	out := make([]turnTiming, 0, len(questions))
	for _, q := range questions {
		out = append(out, c.ask(ctx, q))
	}
	return out
}

// concurrent keeps streams turns running for d, each stream asking the
// questions in turn from its own offset, and returns every turn that
// finished.
func concurrent(ctx context.Context, c client, questions []string, streams int, d time.Duration) []turnTiming {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return runStreams(ctx, c, streams, func(s, i int) (string, bool) {
		return questions[(s*len(questions)/streams+i)%len(questions)], true
	})
}

// runStreams keeps streams turns running, each stream a user of its own,
// until ctx ends or next has no question for a stream (next(s, i) is
// stream s's i-th), and returns every turn that finished: a turn cut by
// ctx's end is not a failure.
func runStreams(ctx context.Context, c client, streams int, next func(s, i int) (string, bool)) []turnTiming {
	var mu sync.Mutex
	var out []turnTiming
	var wg sync.WaitGroup
	for s := range streams {
		wg.Go(func() {
			c := c.forStream(s)
			for i := 0; ctx.Err() == nil; i++ {
				q, ok := next(s, i)
				if !ok {
					return
				}
				t := c.ask(ctx, q)
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				out = append(out, t)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// questionPool hands out its questions once each, in order, to any number
// of streams: the unseen phases never ask a question twice.
type questionPool struct {
	questions []string
	next      atomic.Int64
}

func newQuestionPool(questions []string) *questionPool { return &questionPool{questions: questions} }

// take is the next question; false once every question was taken.
func (p *questionPool) take() (string, bool) {
	i := p.next.Add(1) - 1
	if i >= int64(len(p.questions)) {
		return "", false
	}
	return p.questions[i], true
}

// left is how many questions were not taken yet.
func (p *questionPool) left() int { return max(0, len(p.questions)-int(p.next.Load())) }

// sequentialFromPool asks up to n questions of the pool, one at a time.
func sequentialFromPool(ctx context.Context, c client, pool *questionPool, n int) []turnTiming {
	var out []turnTiming
	for range n {
		q, ok := pool.take()
		if !ok {
			break
		}
		out = append(out, c.ask(ctx, q))
	}
	return out
}

// concurrentFromPool keeps streams turns running for d, each turn asking
// the pool's next question, and returns every turn that finished and the
// time measured: d, or, where the pool ran out first, the time until then
// (exhausted). The turns still running then are cut as at d's end: the
// phase never wraps around to a question asked before.
func concurrentFromPool(ctx context.Context, c client, pool *questionPool, streams int, d time.Duration) (turns []turnTiming, wall time.Duration, exhausted bool) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var ranOut sync.Once
	wall = d
	turns = runStreams(ctx, c, streams, func(int, int) (string, bool) {
		q, ok := pool.take()
		if !ok {
			ranOut.Do(func() {
				wall, exhausted = time.Since(start), true
				cancel()
			})
		}
		return q, ok
	})
	return turns, wall, exhausted
}

// summary is what the turns of one phase measured.
type summary struct {
	Turns, Errors int
	// Unchecked counts the turns whose grounding check did not judge the
	// whole answer (past its wait, or failed): work the route shed.
	Unchecked int
	// FirstError is the first failure's text.
	FirstError                       string  `json:",omitempty"`
	TTFTp50, TTFTp95                 float64 // ms
	TurnP50, TurnP95                 float64 // ms
	TrailP50, TrailP95               float64 // ms: the end of the stream after the last delta
	TurnsPerSecond                   float64
	CPUms                            map[string]float64 // per turn, by process
	EmbedderInputs, EmbedderRequests float64            // per turn
	RSSMiB, PeakRSSMiB               float64
	wall                             time.Duration
}

func summarize(turns []turnTiming, wall time.Duration) summary {
	s := summary{wall: wall}
	var ttft, total, trail []float64
	for _, t := range turns {
		if t.err != nil {
			s.Errors++
			if s.FirstError == "" {
				s.FirstError = t.err.Error()
			}
			continue
		}
		s.Turns++
		if t.unchecked {
			s.Unchecked++
		}
		ttft = append(ttft, ms(t.firstToken))
		total = append(total, ms(t.done))
		trail = append(trail, ms(t.done-t.lastToken))
	}
	s.TTFTp50, s.TTFTp95 = percentile(ttft, 0.5), percentile(ttft, 0.95)
	s.TurnP50, s.TurnP95 = percentile(total, 0.5), percentile(total, 0.95)
	s.TrailP50, s.TrailP95 = percentile(trail, 0.5), percentile(trail, 0.95)
	if wall > 0 {
		s.TurnsPerSecond = float64(s.Turns) / wall.Seconds()
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[int(p*float64(len(v)-1)+0.5)]
}
