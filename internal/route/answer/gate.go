package answer

import (
	"context"
	"strings"
	"sync"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// Gate is the stage between the model's (scrubbed, link-guarded) answer
// and the client that applies the grounding policy. It cuts the answer
// into sentences and checks them in the background, a batch per
// embeddings call, while the model writes on:
//   - annotate shows the text at once and reports each sentence's support
//     once checked;
//   - strip shows each sentence once checked, and only if supported;
//   - fallback shows nothing until the whole answer is checked (it may be
//     replaced: Replacement, Release).
type Gate struct {
	outlet
	settings GroundingSettings
	exempt   string
	scorer   *Scorer
	// report hears each sentence's verdict.
	report func(Grounding)

	split     *answerSplitter
	mu        sync.Mutex // orders what is shown and reported between the stream and the checker
	queue     chan segment
	done      chan struct{}
	closeOnce sync.Once
	showErr   error

	// Filled by the checker; read after Flush.
	checked   []Grounding
	withheld  int
	held      []string // fallback: the answer, until judged
	checkErr  error
	shownText bool // strip: some checked sentence was shown
}

// gateBatch bounds the sentences of one embeddings call.
const gateBatch = 8

// NewGate checks an answer against the packed fragments with the store's
// embedder, reporting each verdict; exempt is text shown unchecked
// wherever it stands (the platform's not-found wording). The checker
// starts at once, embedding the fragments' units while the model begins.
func NewGate(ctx context.Context, settings GroundingSettings, embedder knowledge.Embedder, packed []retrieval.Fragment, exempt string,
	report func(Grounding)) *Gate {
	if settings.Policy == "" {
		settings.Policy = podconfig.GroundingAnnotate
	}
	g := &Gate{settings: settings, exempt: strings.TrimSpace(exempt), scorer: NewScorer(embedder, packed, settings.threshold()),
		report: report, split: newAnswerSplitter(), queue: make(chan segment, 1024), done: make(chan struct{})}
	go g.check(ctx)
	return g
}

// Write takes the next piece of the answer.
func (g *Gate) Write(text string) error {
	if g.settings.Policy == podconfig.GroundingAnnotate {
		if err := g.emit(text); err != nil {
			return err
		}
	}
	g.enqueue(g.split.write(text))
	return g.err()
}

// Flush checks the rest once the answer has ended and waits for the
// checker.
func (g *Gate) Flush() error {
	g.enqueue(g.split.flush())
	g.stop()
	return g.err()
}

// abort stops the checker after a failed stream.
func (g *Gate) abort() { g.stop() }

// stop ends the queue, once, and waits for the checker.
func (g *Gate) stop() {
	g.closeOnce.Do(func() { close(g.queue) })
	<-g.done
}

func (g *Gate) enqueue(segments []segment) {
	for _, s := range segments {
		if g.exempt != "" && s.check == g.exempt {
			s.check = ""
		}
		g.queue <- s
	}
}

func (g *Gate) emit(text string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.showErr == nil && text != "" {
		g.showErr = g.pass(text)
	}
	return g.showErr
}

func (g *Gate) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.showErr
}

// check is the checker: it embeds the fragments' units while the model
// starts writing, then judges what the splitter hands it.
func (g *Gate) check(ctx context.Context) {
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
func (g *Gate) judge(ctx context.Context, batch []segment) {
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
			g.admit(s.raw, false)
			continue
		}
		j := judged[0]
		judged = judged[1:]
		j.Index = len(g.checked)
		supported := j.Status == Supported
		if g.settings.Policy == podconfig.GroundingStrip && !supported {
			j.Withheld = true
			g.withheld++
		}
		g.checked = append(g.checked, j)
		g.mu.Lock()
		g.report(j)
		g.mu.Unlock()
		if !j.Withheld {
			g.admit(s.raw, true)
		}
	}
}

// admit lets a judged (or unchecked) segment through as the policy says.
func (g *Gate) admit(raw string, checked bool) {
	switch g.settings.Policy {
	case podconfig.GroundingStrip:
		g.shownText = g.shownText || checked
		_ = g.emit(raw)
	case podconfig.GroundingFallback:
		g.held = append(g.held, raw)
	}
}

// Release shows what fallback held, once the answer may be shown.
func (g *Gate) Release() error {
	for _, raw := range g.held {
		if err := g.emit(raw); err != nil {
			return err
		}
	}
	g.held = nil
	return nil
}

// Policy is the policy the gate applies.
func (g *Gate) Policy() podconfig.GroundingPolicy { return g.settings.Policy }

// CheckErr is why the check stopped, after Flush; nil when it ran to the
// end.
func (g *Gate) CheckErr() error { return g.checkErr }

// Checked are the verdicts on the answer's sentences, in order.
func (g *Gate) Checked() []Grounding { return g.checked }

// Withheld counts the sentences strip withheld.
func (g *Gate) Withheld() int { return g.withheld }

// UnitVectors are the fragments' unit vectors the check embedded (see
// Scorer.UnitVectors).
func (g *Gate) UnitVectors() [][]float32 { return g.scorer.UnitVectors() }

// GroundedRatio is the share of checked sentences supported; nil when
// none was checked.
func (g *Gate) GroundedRatio() *float64 {
	if len(g.checked) == 0 {
		return nil
	}
	n := 0
	for _, c := range g.checked {
		if c.Status == Supported {
			n++
		}
	}
	ratio := float64(n) / float64(len(g.checked))
	return &ratio
}

// Why a checked answer is replaced by the extractive one.
const (
	ReplacedBelowRatio  = "below fallbackBelow"
	ReplacedAllWithheld = "every sentence withheld"
)

// Replacement says why the checked answer must give way to the extractive
// one: fallback and too little of it supported, or strip and nothing of it
// shown; "" when it stands.
func (g *Gate) Replacement() string {
	ratio := g.GroundedRatio()
	switch {
	case ratio == nil:
		return ""
	case g.settings.Policy == podconfig.GroundingFallback && *ratio < g.settings.fallbackBelow():
		return ReplacedBelowRatio
	case g.settings.Policy == podconfig.GroundingStrip && !g.shownText:
		return ReplacedAllWithheld
	}
	return ""
}
