package answer

import (
	"context"
	"strings"
	"sync"
	"time"

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
//
// Under annotate the answer has streamed already, so the turn waits for
// the verdicts only up to the check's wait; past it, or when the embedder
// (or the judge) fails, the turn ends without them (Unchecked says why).
type Gate struct {
	outlet
	settings GroundingSettings
	wait     time.Duration
	exempt   string
	scorer   sentenceScorer
	// report hears each sentence's verdict.
	report func(Grounding)

	split     *answerSplitter
	mu        sync.Mutex // orders what is shown and reported between the stream and the checker
	queue     chan segment
	done      chan struct{}
	cancel    context.CancelFunc // stops the checker
	closeOnce sync.Once
	showErr   error

	// Filled by the checker; read after Flush.
	checked   []Grounding
	withheld  int
	held      []string // fallback: the answer, until judged
	checkErr  error
	shownText bool // strip: some checked sentence was shown
	// late: annotate stopped waiting for the checker.
	late bool
}

// DefaultCheckWait is how long an annotated answer's turn waits, once the
// answer has streamed, for the grounding check's last verdicts.
const DefaultCheckWait = 2 * time.Second

// DefaultJudgeCheckWait is that wait with the judge scorer: the last
// batch's verdicts take a judge call, not an embedding.
const DefaultJudgeCheckWait = 15 * time.Second

// Checker is the grounding check's embedders, how long an annotated
// answer's turn waits for it (0: DefaultCheckWait, or
// DefaultJudgeCheckWait with the judge scorer), and, for the judge
// scorer, the turn's judge (set per turn: it carries the question).
type Checker struct {
	Embedders
	Wait  time.Duration
	Judge *Judge
}

// gateBatch bounds the sentences of one embeddings call (or judge call).
const gateBatch = 8

// NewGate checks an answer against the packed fragments, reporting each
// verdict; exempt is text shown unchecked wherever it stands (the
// platform's not-found wording). The checker starts at once, embedding
// the fragments' units while the model begins.
func NewGate(ctx context.Context, settings GroundingSettings, checker Checker, packed []retrieval.Fragment, exempt string,
	report func(Grounding)) *Gate {
	if settings.Policy == "" {
		settings.Policy = podconfig.GroundingAnnotate
	}
	if checker.Wait <= 0 {
		checker.Wait = DefaultCheckWait
		if settings.Scorer == podconfig.GroundingJudge {
			checker.Wait = DefaultJudgeCheckWait
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	g := &Gate{settings: settings, wait: checker.Wait, exempt: strings.TrimSpace(exempt),
		scorer: newSentenceScorer(settings, checker, packed), report: report, split: newAnswerSplitter(),
		queue: make(chan segment, 1024), done: make(chan struct{}), cancel: cancel}
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
// checker: under annotate at most the check's wait, then it is stopped.
func (g *Gate) Flush() error {
	g.enqueue(g.split.flush())
	g.closeOnce.Do(func() { close(g.queue) })
	if g.settings.Policy == podconfig.GroundingAnnotate {
		timer := time.NewTimer(g.wait)
		defer timer.Stop()
		select {
		case <-g.done:
		case <-timer.C:
			g.late = true
			g.stop()
		}
	}
	<-g.done
	g.cancel()
	return g.err()
}

// abort stops the checker after a failed stream.
func (g *Gate) abort() { g.stop() }

// stop cancels the checker, ends the queue, once, and waits for it: no
// verdict is reported after stop returns.
func (g *Gate) stop() {
	g.cancel()
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
		if ctx.Err() != nil {
			return // stopped: what is left goes unjudged
		}
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

// CheckErr is why the check failed, after Flush; nil when it ran to the
// end or annotate stopped waiting for it (Unchecked).
func (g *Gate) CheckErr() error {
	if g.late {
		return nil
	}
	return g.checkErr
}

// Why an annotated answer's check did not judge all of it.
const (
	UncheckedFailed   = "check_failed"
	UncheckedDeadline = "check_deadline"
)

// Unchecked says why the check did not judge the whole answer: it failed
// (the embedder or the judge), or annotate stopped waiting for it; ""
// when it did.
func (g *Gate) Unchecked() string {
	switch {
	case g.late:
		return UncheckedDeadline
	case g.checkErr != nil:
		return UncheckedFailed
	}
	return ""
}

// Checked are the verdicts on the answer's sentences, in order.
func (g *Gate) Checked() []Grounding { return g.checked }

// Withheld counts the sentences strip withheld.
func (g *Gate) Withheld() int { return g.withheld }

// UnitVectors are the fragments' unit vectors the check embedded (see
// Scorer.UnitVectors); nil with the judge scorer.
func (g *Gate) UnitVectors() [][]float32 { return g.scorer.UnitVectors() }

// GroundedRatio is the share of checked sentences supported; nil when
// none was checked, or not all of the answer was.
func (g *Gate) GroundedRatio() *float64 {
	if len(g.checked) == 0 || g.Unchecked() != "" {
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
