package turn_test

import (
	"context"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/model"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/answer"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/routetest"
	"github.com/ragroute/ragroute/internal/route/turn"
)

const (
	groundedSentence = "Lower waves are applied first [S1]. "
	inventedSentence = "Lower waves are applied first with --wave-limit 7 in the sync [S1]."
)

func withPolicy(w *fastWorld, policy podconfig.GroundingPolicy) *fastWorld {
	w.runner.Answer.Grounding = answer.GroundingSettings{Policy: policy}
	return w
}

// strip shows the supported sentence and withholds the one with an
// invented flag and number, though the rest of it matches the fragment.
func TestStripWithholdsTheSentenceWithAnInventedCommand(t *testing.T) {
	w := withPolicy(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence+inventedSentence)), podconfig.GroundingStrip)
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if got := routetest.AnswerOf(events); got != groundedSentence {
		t.Errorf("client read %q, want only %q", got, groundedSentence)
	}
	g := groundings(events)
	if len(g) != 2 || g[0].Withheld || !g[1].Withheld || g[1].Status != answer.Unsupported {
		t.Fatalf("grounding %+v", g)
	}
	if done := completed(t, events); done.Withheld != 1 || done.AnswerReplaced || *done.GroundedRatio != 0.5 {
		t.Errorf("completed %+v", done)
	}
}

// Under annotate the same answer streams as written; only the report
// says what is unsupported.
func TestAnnotateShowsEverySentenceAndReportsEach(t *testing.T) {
	w := withPolicy(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence+inventedSentence)), podconfig.GroundingAnnotate)
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if got := routetest.AnswerOf(events); got != groundedSentence+inventedSentence {
		t.Errorf("client read %q", got)
	}
	if g := groundings(events); len(g) != 2 || g[1].Withheld || g[1].Status != answer.Unsupported {
		t.Errorf("grounding %+v", g)
	}
}

// fallback replaces a poorly grounded answer, invented steps and link and
// all, with the extractive one, and says so.
func TestFallbackReplacesAPoorlyGroundedAnswerWithTheExtractiveOne(t *testing.T) {
	invented := "Run heroku create to deploy the waves. Then git clone https://github.com/test-team/app and push [S1]."
	w := withPolicy(newFastWorld(t, searchesThenAnswers("sync waves", invented)), podconfig.GroundingFallback)
	texts := &textCounter{Embedder: w.runner.Searcher.Embedder, seen: map[string]int{}}
	w.runner.Searcher.Embedder = texts
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	read := routetest.AnswerOf(events)
	if strings.Contains(read, "heroku") || strings.Contains(read, "github.com") || !strings.Contains(read, "> Sync waves order the resources") {
		t.Errorf("client read:\n%s", read)
	}
	replaced := routetest.OfType(events, turn.EventAnswerReplaced)
	if len(replaced) != 1 || replaced[0].Data.(turn.AnswerReplaced).GroundedRatio >= answer.DefaultFallbackBelow {
		t.Fatalf("answer.replaced %+v", replaced)
	}
	if done := completed(t, events); !done.AnswerReplaced || done.NotFound {
		t.Errorf("completed %+v", done)
	}
	// The check embedded the fragments' sentences; the extractive answer
	// reuses them.
	if n := texts.seen["Sync waves order the resources of an application during a sync: lower waves are applied first, and a wave starts only when the previous one is healthy."]; n != 1 {
		t.Errorf("a fragment sentence was embedded %d times, want once", n)
	}
}

// textCounter counts how often each text is embedded.
type textCounter struct {
	knowledge.Embedder
	mu   sync.Mutex
	seen map[string]int
}

func (c *textCounter) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	for _, text := range texts {
		c.seen[text]++
	}
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

// fallback shows a well grounded answer as written, once checked, and
// reports the fragment it cites (the answer is held until then: the
// citations are read from what was released).
func TestFallbackKeepsAGroundedAnswer(t *testing.T) {
	for _, policy := range []podconfig.GroundingPolicy{podconfig.GroundingFallback, podconfig.GroundingStrip} {
		t.Run(string(policy), func(t *testing.T) {
			w := withPolicy(newFastWorld(t, searchesThenAnswers("sync waves", groundedSentence)), policy)
			events := w.run(staff, routetest.User("How are sync waves ordered?"))

			if got := routetest.AnswerOf(events); got != groundedSentence || len(routetest.OfType(events, turn.EventAnswerReplaced)) != 0 {
				t.Errorf("client read %q, events %v", got, events)
			}
			cites := routetest.OfType(events, turn.EventCitation)
			if len(cites) != 1 || cites[0].Data.(turn.Citation).Marker != "S1" || cites[0].Data.(turn.Citation).Inferred {
				t.Errorf("citations %+v, want S1 as written", cites)
			}
		})
	}
}

// strip that would leave nothing shows the extractive answer instead of
// an empty one.
func TestStripWithholdingEverythingFallsBackToExtractive(t *testing.T) {
	w := withPolicy(newFastWorld(t, searchesThenAnswers("sync waves", inventedSentence)), podconfig.GroundingStrip)
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if read := routetest.AnswerOf(events); !strings.Contains(read, "> Sync waves order the resources") || strings.Contains(read, "wave-limit") {
		t.Errorf("client read:\n%s", read)
	}
	if r := routetest.OfType(events, turn.EventAnswerReplaced); len(r) != 1 || r[0].Data.(turn.AnswerReplaced).Reason != "every sentence withheld" {
		t.Errorf("answer.replaced %+v", r)
	}
}

// The platform's not-found wording passes strip unchecked.
func TestStripLetsTheNotFoundWordingThrough(t *testing.T) {
	w := withPolicy(newFastWorld(t, searchesThenAnswers("sync waves", routetest.Prompt().NotFound)), podconfig.GroundingStrip)
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	if got := routetest.AnswerOf(events); got != routetest.Prompt().NotFound || !completed(t, events).NotFound {
		t.Errorf("client read %q", got)
	}
}

// A link no fragment holds is removed, its text kept, and counted.
func TestInventedLinksAreRemovedAndCounted(t *testing.T) {
	written := "Lower waves are applied first, see [the wave guide](https://careers.example.com/x) or https://evil.example/y [S1]."
	w := newFastWorld(t, searchesThenAnswers("sync waves", written))
	events := w.run(staff, routetest.User("How are sync waves ordered?"))

	got := routetest.AnswerOf(events)
	if strings.Contains(got, "example.com") || strings.Contains(got, "evil.example") || !strings.Contains(got, "the wave guide") {
		t.Errorf("client read %q", got)
	}
	if n := completed(t, events).LinksRemoved; n != 2 {
		t.Errorf("links_removed %d, want 2", n)
	}
}

// Pieces of generated answers: fragment sentences (as written, cut, or
// recased), invented commands, numbers and links, list items.
var answerPieces = []string{
	"Sync waves order the resources of an application during a sync.",
	"Lower waves are applied first, and a wave starts only when the previous one is healthy.",
	"Pruning deletes resources that are no longer in Git.",
	"Enable it with the prune sync option.",
	"click the sync button in the toolbar to open the sync panel.",
	"Run heroku create --app guestbook to deploy.",
	"Set the sync timeout to 42 seconds.",
	"See https://evil.example/waves for the details.",
	"Clone [the repository](https://github.com/test-team/app) first.",
	"![diagram](https://img.example/waves.png)",
	"Waves are configured in the Helm values file values-prod.yaml.",
	"Kubernetes applies every manifest in parallel.",
}

var urlPattern = regexp.MustCompile(`(?i)(https?|ftp)://`)

// Property: under strip, every sentence the client reads was checked and
// has support at or above the threshold, and no URL reaches the client
// that no fragment or the platform prompt holds (here: none does).
func TestStripLetsThroughOnlySupportedSentencesAndNoForeignURL(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	shown, withheld := 0, 0
	defer func() {
		if shown == 0 || withheld == 0 {
			t.Errorf("the generated answers showed %d sentences and withheld %d; want both", shown, withheld)
		}
	}()
	for round := range 150 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			piece := answerPieces[rng.IntN(len(answerPieces))]
			switch rng.IntN(4) {
			case 0:
				piece = "- " + piece + "\n"
			case 1:
				piece += " [S" + string(rune('1'+rng.IntN(3))) + "] "
			default:
				piece += " "
			}
			b.WriteString(piece)
		}
		written := b.String()
		w := withPolicy(newFastWorld(t, searchesThenAnswers("sync waves pruning sync panel", written)), podconfig.GroundingStrip)
		events := w.run(staff, routetest.User("How do sync waves and pruning work?"))
		client := routetest.AnswerOf(events)
		if urlPattern.MatchString(client) {
			t.Fatalf("round %d: a URL reached the client:\n%s\n(model wrote %q)", round, client, written)
		}
		if completed(t, events).AnswerReplaced {
			continue // the extractive answer quotes fragments only
		}
		rest := client
		for _, g := range groundings(events) {
			if g.Withheld {
				withheld++
				if strings.Contains(client, g.Sentence) {
					t.Fatalf("round %d: withheld %q reached the client", round, g.Sentence)
				}
				continue
			}
			if g.Status != answer.Supported || g.Score < answer.DefaultGroundingThreshold || len(g.Invented) > 0 {
				t.Fatalf("round %d: shown sentence %+v is not supported", round, g)
			}
			at := strings.Index(rest, g.Sentence)
			if at < 0 {
				t.Fatalf("round %d: checked %q is not in what the client read:\n%s", round, g.Sentence, client)
			}
			rest = rest[:at] + rest[at+len(g.Sentence):]
			shown++
		}
		if words := retrieval.ContentWords(regexp.MustCompile(`\[S\d+\]|^- `).ReplaceAllString(rest, "")); len(words) > 0 {
			t.Fatalf("round %d: unchecked text reached the client: %q (words %v)", round, rest, words)
		}
	}
}

// Under strip and fallback a direct answer, the model's own words with no
// search, does not reach the client unchecked: the question is searched
// and answered from the documentation, as the policy says.
func TestStrictPoliciesDoNotShowADirectAnswer(t *testing.T) {
	const fromMemory = "Do not worry: run kubectl delete --all --wave-limit 7 and it is fixed. "
	for _, policy := range []podconfig.GroundingPolicy{podconfig.GroundingStrip, podconfig.GroundingFallback} {
		t.Run(string(policy), func(t *testing.T) {
			w := withPolicy(newFastWorld(t, func(c chatCall) model.Reply {
				if len(c.Tools) > 0 {
					return model.Reply{Content: fromMemory} // answers from memory, calls no tool
				}
				return model.Reply{Content: groundedSentence}
			}), policy)
			events := w.run(staff, routetest.User("How are sync waves ordered?"))

			read := routetest.AnswerOf(events)
			if strings.Contains(read, "kubectl delete") || strings.Contains(read, "wave-limit") {
				t.Errorf("the direct answer reached the client:\n%s", read)
			}
			if got := w.index.searches(); len(got) != 1 || got[0] != "How are sync waves ordered?" {
				t.Errorf("index searches %q: want the question searched", got)
			}
			if g := groundings(events); len(g) == 0 || strings.Contains(g[0].Sentence, "kubectl") {
				t.Errorf("grounding %+v: want the answer from the fragments checked", g)
			}
			if done := completed(t, events); done.NotFound {
				t.Errorf("completed %+v", done)
			}
		})
	}
	// annotate shows a direct answer as written, as before.
	w := newFastWorld(t, func(c chatCall) model.Reply { return model.Reply{Content: fromMemory} })
	if got := routetest.AnswerOf(w.run(staff, routetest.User("How are sync waves ordered?"))); got != fromMemory {
		t.Errorf("annotate: %q", got)
	}
}
