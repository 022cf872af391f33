package route

import (
	"context"
	"strings"
	"sync"
)

// groundingGate sits between the model's (scrubbed, link-guarded) answer
// and the client. It cuts the answer into sentences and checks them in
// the background, a batch per embeddings call, while the model writes on:
//   - annotate shows the text at once and reports each sentence's support
//     once checked;
//   - strip shows each sentence once checked, and only if supported;
//   - fallback shows nothing until the whole answer is checked (it may be
//     replaced).
type groundingGate struct {
	policy string
	exempt string
	scorer *supportScorer
	// show passes text to the client; report emits a grounding event.
	show   func(string) error
	report func(Grounding)

	split   *answerSplitter
	mu      sync.Mutex // orders show and report between the stream and the checker
	queue   chan segment
	done    chan struct{}
	showErr error

	// Filled by the checker; read after finish.
	checked   []Grounding
	withheld  int
	held      []string // fallback: the answer, until judged
	checkErr  error
	shownText bool // strip: some checked sentence was shown
}

// gateBatch bounds the sentences of one embeddings call.
const gateBatch = 8

// exempt is text shown unchecked wherever it stands: the platform's
// not-found wording.
func newGroundingGate(ctx context.Context, policy, exempt string, scorer *supportScorer, show func(string) error,
	report func(Grounding)) *groundingGate {
	if policy == "" {
		policy = GroundingAnnotate
	}
	g := &groundingGate{policy: policy, exempt: strings.TrimSpace(exempt), scorer: scorer, show: show, report: report, split: newAnswerSplitter(),
		queue: make(chan segment, 1024), done: make(chan struct{})}
	go g.check(ctx)
	return g
}

// write takes the next piece of the answer.
func (g *groundingGate) write(text string) error {
	if g.policy == GroundingAnnotate {
		if err := g.emit(text); err != nil {
			return err
		}
	}
	g.enqueue(g.split.write(text))
	return g.err()
}

// finish checks the rest once the answer has ended and waits for the
// checker.
func (g *groundingGate) finish() error {
	g.enqueue(g.split.flush())
	close(g.queue)
	<-g.done
	return g.err()
}

// abandon stops the checker after a failed stream.
func (g *groundingGate) abandon() {
	close(g.queue)
	<-g.done
}

func (g *groundingGate) enqueue(segments []segment) {
	for _, s := range segments {
		if g.exempt != "" && s.check == g.exempt {
			s.check = ""
		}
		g.queue <- s
	}
}

func (g *groundingGate) emit(text string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.showErr == nil && text != "" {
		g.showErr = g.show(text)
	}
	return g.showErr
}

func (g *groundingGate) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.showErr
}

// check is the checker: it embeds the fragments' sentences while the
// model starts writing, then judges what the splitter hands it.
func (g *groundingGate) check(ctx context.Context) {
	defer close(g.done)
	g.checkErr = g.scorer.prepare(ctx)
	for first := range g.queue {
		batch := []segment{first}
	more:
		for len(batch) < gateBatch {
			select {
			case s, ok := <-g.queue:
				if !ok {
					break more
				}
				batch = append(batch, s)
			default:
				break more
			}
		}
		g.judge(ctx, batch)
	}
}

// judge checks one batch and passes it on as the policy says. After a
// failed check nothing more is judged: annotate streams on unreported,
// strip and fallback show nothing more (the turn fails).
func (g *groundingGate) judge(ctx context.Context, batch []segment) {
	var texts []string
	for _, s := range batch {
		if s.check != "" {
			texts = append(texts, s.check)
		}
	}
	var judged []Grounding
	if g.checkErr == nil && len(texts) > 0 {
		judged, g.checkErr = g.scorer.score(ctx, texts)
	}
	if g.checkErr != nil {
		return
	}
	for _, s := range batch {
		if s.check == "" {
			g.pass(s.raw, false)
			continue
		}
		j := judged[0]
		judged = judged[1:]
		j.Index = len(g.checked)
		supported := j.Status == GroundingSupported
		if g.policy == GroundingStrip && !supported {
			j.Withheld = true
			g.withheld++
		}
		g.checked = append(g.checked, j)
		g.mu.Lock()
		g.report(j)
		g.mu.Unlock()
		if !j.Withheld {
			g.pass(s.raw, true)
		}
	}
}

// pass lets a judged (or unchecked) segment through.
func (g *groundingGate) pass(raw string, checked bool) {
	switch g.policy {
	case GroundingStrip:
		g.shownText = g.shownText || checked
		_ = g.emit(raw)
	case GroundingFallback:
		g.held = append(g.held, raw)
	}
}

// release shows what fallback held, once the answer may be shown.
func (g *groundingGate) release() error {
	for _, raw := range g.held {
		if err := g.emit(raw); err != nil {
			return err
		}
	}
	g.held = nil
	return nil
}

// groundedRatio is the share of checked sentences supported; nil when
// none was checked.
func (g *groundingGate) groundedRatio() *float64 {
	if len(g.checked) == 0 {
		return nil
	}
	n := 0
	for _, c := range g.checked {
		if c.Status == GroundingSupported {
			n++
		}
	}
	ratio := float64(n) / float64(len(g.checked))
	return &ratio
}
