package lab

import (
	"slices"
	"time"

	"github.com/ragroute/ragroute/internal/eval"
	"github.com/ragroute/ragroute/internal/podconfig"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// Scoring of the agentic evaluation's turns from their events alone, as
// eval.Digest does for answer modes: pure, so each figure is tested
// on scripted events without a model or a store.

// Turn modes the agentic evaluation compares.
var (
	AgenticSingleRound = string(podconfig.ModeSingleRound)
	AgenticMode        = string(podconfig.ModeAgentic)
)

// AgenticModes are both modes, in the order they are reported.
func AgenticModes() []string { return []string{AgenticSingleRound, AgenticMode} }

// The tools whose accepted calls are searches: the harness's search and
// the single round's search_knowledge (web_search is not the documentation).
var searchTools = []string{"search", "search_knowledge"}

// agenticTurn is one question's turn in one mode, digested.
type agenticTurn struct {
	Question eval.MultiQuestion
	Mode     string
	// Final are the fragments the answer step used, as retrieval reported
	// them; Cut marks those the budget cut.
	Final []turn.RetrievalSource
	Cut   map[string]bool
	// Queries are the accepted searches' queries, in order.
	Queries    []string
	Rounds     int
	ModelCalls int
	Forced     bool
	Shown      string
	Completed  *turn.Completed
	Err        string
	Total      time.Duration
}

// digestAgentic reads a turn's events. The answer's fragment set is, in
// agentic mode, the last retrieval event of round 0 (the harness's own
// searches report their round; the answer's set is emitted after the
// research), and in single-round mode every retrieval event of the turn.
func digestAgentic(q eval.MultiQuestion, mode string, events []turn.Event, modelCalls int, total time.Duration) agenticTurn {
	t := agenticTurn{Question: q, Mode: mode, ModelCalls: modelCalls, Total: total, Cut: map[string]bool{}}
	var folded turn.Outcome
	for _, e := range events {
		folded.Add(e)
	}
	for _, c := range folded.ToolCalls {
		// A single round's calls have no status; an unusable one has no query.
		if slices.Contains(searchTools, c.Name) && c.Status != turn.CallRejected && c.Query != "" {
			t.Queries = append(t.Queries, c.Query)
		}
	}
	for _, r := range folded.Research {
		// The single round's one rephrased search is a search too.
		t.Queries = append(t.Queries, r.Rephrase)
	}
	final := folded.Retrievals
	if mode == AgenticMode {
		final = nil
		for _, r := range folded.Retrievals {
			if r.Round == 0 {
				final = []turn.RetrievalReport{r}
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range final {
		for _, s := range r.Sources {
			if !seen[s.Marker] {
				seen[s.Marker] = true
				t.Final = append(t.Final, s)
			}
		}
		for _, d := range r.Dropped {
			if d.Cut {
				t.Cut[d.Marker] = true
			}
		}
	}
	t.Forced, t.Completed, t.Shown = folded.Forced, folded.Completed, folded.Answer()
	if f := folded.Failed; f != nil {
		t.Err = f.Code + ": " + f.Message
	}
	t.Rounds = folded.Rounds
	if mode != AgenticMode {
		t.Rounds = 1 // one round of tools
	} else if t.Completed != nil {
		t.Rounds = max(t.Rounds, t.Completed.Rounds)
	}
	return t
}

// partsFound says, per part, whether a fragment of the final set holds
// its gold section; resolve gives a reported fragment's text (false when
// the searches never returned it). A fragment the budget cut is judged by
// its heading path only, as CitedHits judges it: the model saw part of it.
func partsFound(t agenticTurn, gold eval.Gold, resolve func(turn.RetrievalSource) (eval.Unit, bool)) []bool {
	units := make([]eval.Unit, 0, len(t.Final))
	for _, s := range t.Final {
		u, ok := resolve(s)
		if !ok {
			u = eval.Unit{HeadingPath: s.HeadingPath}
		}
		if t.Cut[s.Marker] {
			u.Text = ""
		}
		units = append(units, u)
	}
	found := make([]bool, len(t.Question.Parts))
	for i, p := range t.Question.Parts {
		part := eval.Question{ID: eval.PartID(t.Question.ID, i), GoldFile: &p.GoldFile, GoldHeading: p.GoldHeading}
		found[i] = slices.ContainsFunc(units, func(u eval.Unit) bool { return gold.Hit(u, part) })
	}
	return found
}

// GroupFigures are one mode's figures over one kind of question.
type GroupFigures struct {
	Questions int `json:"questions"`
	Errors    int `json:"errors"`
	NotFound  int `json:"not_found"`
	Parts     int `json:"parts"`
	// PartRecall is the share of parts found in the answer's final
	// fragment set; AllParts the share of questions with every part found.
	PartsFound int     `json:"parts_found"`
	PartRecall float64 `json:"part_recall"`
	AllParts   float64 `json:"all_parts_found"`
	// GroundedRatio is the mean grounded ratio of the answered turns the
	// route checked (nil: none), over GroundedTurns.
	GroundedRatio *float64 `json:"grounded_ratio"`
	GroundedTurns int      `json:"grounded_turns"`
	// Means per turn that completed.
	Rounds     float64 `json:"rounds_mean"`
	Searches   float64 `json:"searches_mean"`
	ModelCalls float64 `json:"model_calls_mean"`
	// Forced counts the turns whose research the harness finalized.
	Forced   int     `json:"finalize_forced"`
	TotalP50 float64 `json:"total_p50_ms"`
	TotalP95 float64 `json:"total_p95_ms"`
}

// groupFigures scores turns (one kind of question, one mode); found is
// partsFound of each turn.
func groupFigures(turns []agenticTurn, found [][]bool) GroupFigures {
	g := GroupFigures{Questions: len(turns)}
	var ratios []float64
	var total []time.Duration
	var rounds, searches, calls, completed, allParts int
	for i, t := range turns {
		g.Parts += len(found[i])
		n := 0
		for _, f := range found[i] {
			if f {
				n++
			}
		}
		g.PartsFound += n
		if n == len(found[i]) && n > 0 {
			allParts++
		}
		if t.Completed == nil {
			g.Errors++
			continue
		}
		completed++
		total = append(total, t.Total)
		rounds += t.Rounds
		searches += len(t.Queries)
		calls += t.ModelCalls
		if t.Forced {
			g.Forced++
		}
		if t.Completed.NotFound {
			g.NotFound++
		} else if r := t.Completed.GroundedRatio; r != nil {
			ratios = append(ratios, *r)
		}
	}
	g.PartRecall = eval.Share(g.PartsFound, g.Parts)
	g.AllParts = eval.Share(allParts, len(turns))
	if len(ratios) > 0 {
		m := eval.Mean(ratios)
		g.GroundedRatio, g.GroundedTurns = &m, len(ratios)
	}
	if completed > 0 {
		g.Rounds = float64(rounds) / float64(completed)
		g.Searches = float64(searches) / float64(completed)
		g.ModelCalls = float64(calls) / float64(completed)
	}
	g.TotalP50, g.TotalP95 = eval.PercentileMillis(total, 0.5), eval.PercentileMillis(total, 0.95)
	return g
}

// AgenticModeFigures are one mode's figures, multi-part questions and
// single-part controls apart.
type AgenticModeFigures struct {
	Mode      string       `json:"mode"`
	MultiPart GroupFigures `json:"multi_part"`
	Controls  GroupFigures `json:"single_part_controls"`
}

// modeFigures splits one mode's turns by kind and scores each.
func modeFigures(mode string, turns []agenticTurn, found [][]bool) AgenticModeFigures {
	var multi, single []agenticTurn
	var multiFound, singleFound [][]bool
	for i, t := range turns {
		if t.Question.MultiPart() {
			multi, multiFound = append(multi, t), append(multiFound, found[i])
		} else {
			single, singleFound = append(single, t), append(singleFound, found[i])
		}
	}
	return AgenticModeFigures{Mode: mode, MultiPart: groupFigures(multi, multiFound), Controls: groupFigures(single, singleFound)}
}
