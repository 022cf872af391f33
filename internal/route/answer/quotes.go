package answer

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/language"
	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// Extractive answers (answer mode extractive, and the grounding
// fallback's replacement): no model writes the answer. The route quotes
// the sentences and list items of the packed fragments that best answer
// the question, in their fragments' order, cited, within the answer
// budget. Nothing is invented, whatever the model.

// Quoter writes extractive answers.
type Quoter struct {
	// Question and Units are the store's embedding model: each unit is
	// scored for the question by their similarity. Units may keep the
	// fragments' units across turns, as the grounding check's does, and
	// embeds only those Stored (ingestion's vectors; nil: none) lacks.
	Question, Units knowledge.Embedder
	Stored          StoredUnits
	// Tokens counts the answer as the chat model would; Budget is the
	// tokens it may take.
	Tokens tokenize.Counter
	Budget int
	// Language is the question's: the words that introduce each
	// fragment's quotes are in it.
	Language language.Tag
}

// Quote is the extractive answer to question from the packed fragments;
// "" when nothing in them may answer it. embedded, when it holds a vector
// for every unit of packed (the grounding check's, for a replaced
// answer), spares embedding them again.
func (q Quoter) Quote(ctx context.Context, question string, intent retrieval.Intent, packed []retrieval.Fragment,
	embedded [][]float32) (string, error) {
	units := answerUnits(packed)
	if len(units) == 0 {
		return "", nil
	}
	if err := q.scoreUnits(ctx, question, packed, units, embedded); err != nil {
		return "", err
	}
	lead := ""
	if intent == retrieval.IntentScreen {
		// A screen question first gets where to go: the best-scoring
		// fragment's path and its screenshot.
		best := packed[slices.MaxFunc(units, func(a, b unit) int { return cmpScore(a.score, b.score) }).fragment]
		lead = fmt.Sprintf("**%s** [%s]\n", best.Label(), best.Marker)
		for _, img := range best.ImageURLs {
			lead += fmt.Sprintf("![%s](%s)\n", best.Title, img)
		}
		lead += "\n"
		// The screenshot led; quoting it again would show it twice.
		units = slices.DeleteFunc(units, func(u unit) bool {
			target, ok := firstTarget(u.text)
			return strings.HasPrefix(u.text, "![") && ok && slices.Contains(best.ImageURLs, target)
		})
	}
	chosen := q.chooseUnits(units, packed, q.Budget-q.Tokens.Count(lead))
	if len(chosen) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString(lead)
	for i, u := range chosen {
		if i == 0 || chosen[i-1].fragment != u.fragment {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(q.sourceLine(packed[u.fragment]))
		}
		b.WriteString(quoted(u.text))
	}
	return b.String(), nil
}

// scoreUnits scores each unit for the question: its embedding similarity
// (the store's embedder, one batched call) plus the share of the
// question's content words it holds, weighted by how rare each is among
// the units (BM25's idf, on the packed text).
func (q Quoter) scoreUnits(ctx context.Context, question string, packed []retrieval.Fragment, units []unit, embedded [][]float32) error {
	vectors, err := q.Question.Embed(ctx, []string{question})
	if err != nil {
		return fmt.Errorf("embed the question: %w", err)
	}
	if len(embedded) != len(units) {
		if embedded, _, err = unitVectors(ctx, q.Stored, q.Units, packed, units); err != nil {
			return fmt.Errorf("embed the answer's candidates: %w", err)
		}
	}
	vectors = append(vectors[:1:1], embedded...)
	words := retrieval.ContentWords(question)
	df := map[string]int{}
	unitWords := make([]map[string]bool, len(units))
	for i, u := range units {
		unitWords[i] = map[string]bool{}
		for _, w := range retrieval.ContentWords(u.text) {
			unitWords[i][w] = true
			df[w]++
		}
	}
	idf := func(w string) float64 {
		return math.Log(1 + (float64(len(units))-float64(df[w])+0.5)/(float64(df[w])+0.5))
	}
	total := 0.0
	for _, w := range words {
		total += idf(w)
	}
	for i := range units {
		lexical := 0.0
		for _, w := range words {
			if unitWords[i][w] {
				lexical += idf(w)
			}
		}
		if total > 0 {
			lexical /= total
		}
		units[i].score = float64(knowledge.Cosine(vectors[0], vectors[i+1])) + lexical
	}
	return nil
}

// sourceLine introduces a fragment's quotes with its citation.
func (q Quoter) sourceLine(f retrieval.Fragment) string {
	if q.Language == language.Russian {
		return fmt.Sprintf("Из раздела «%s» [%s]:\n", f.Label(), f.Marker)
	}
	return fmt.Sprintf("From %s [%s]:\n", f.Label(), f.Marker)
}

// quoted is a unit as a Markdown quote.
func quoted(text string) string {
	return "> " + strings.ReplaceAll(text, "\n", "\n> ") + "\n"
}

func cmpScore(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// chooseUnits takes the best units while they fit budget (each with its
// fragment's citation line, once), at most three per fragment so every
// packed fragment may have a say, and returns them in reading order. The
// best unit alone past the budget is cut to it at a sentence end; none
// fits: nothing.
func (q Quoter) chooseUnits(units []unit, fragments []retrieval.Fragment, budget int) []unit {
	ranked := slices.Clone(units)
	slices.SortStableFunc(ranked, func(a, b unit) int { return cmpScore(b.score, a.score) })
	perFragment := make([]int, len(fragments))
	var chosen []unit
	used := 0
	for _, u := range ranked {
		size := q.Tokens.Count(quoted(u.text))
		if perFragment[u.fragment] == 0 {
			size += q.Tokens.Count("\n" + q.sourceLine(fragments[u.fragment]))
		}
		if used+size > budget || perFragment[u.fragment] >= 3 || u.score <= 0 {
			continue
		}
		used += size
		perFragment[u.fragment]++
		chosen = append(chosen, u)
	}
	if len(chosen) == 0 && len(ranked) > 0 && ranked[0].score > 0 {
		best := ranked[0]
		room := budget - q.Tokens.Count(q.sourceLine(fragments[best.fragment])) - 4
		if best.text = CutToBudget(best.text, room, q.Tokens, quoted); best.text != "" {
			chosen = append(chosen, best)
		}
	}
	slices.SortFunc(chosen, func(a, b unit) int {
		if a.fragment != b.fragment {
			return a.fragment - b.fragment
		}
		return a.index - b.index
	})
	return chosen
}
