package route

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// Extractive answers (answer mode extractive): no model writes the answer.
// The route quotes the sentences and list items of the packed fragments
// that best answer the question, in their fragments' order, cited, within
// the answer budget. Nothing is invented, whatever the model.

// AnswerExtractive is the answer mode that quotes the fragments.
const AnswerExtractive = "extractive"

// unit is a sentence, a list item or a code block of a packed fragment.
type unit struct {
	fragment, index int
	text            string
	score           float64
}

// extract streams the extractive answer to the question from packing.
// embedded, when it holds a vector for every unit of packing (the
// grounding check's, for a replaced answer), spares embedding them again.
func (r *Runner) extract(ctx context.Context, question string, intent retrieval.Intent, packing Packing, embedded [][]float32,
	st *turnState) (notFound bool, err error) {
	t := time.Now()
	defer func() { st.timings["extract"] = time.Since(t) }()
	units := answerUnits(packing.Packed)
	if len(units) == 0 {
		return true, st.delta(r.Prompt.NotFound)
	}
	if err := r.scoreUnits(ctx, question, units, embedded); err != nil {
		return false, err
	}
	lead := ""
	if intent == retrieval.IntentScreen {
		// A screen question first gets where to go: the best-scoring
		// fragment's path and its screenshot.
		best := packing.Packed[slices.MaxFunc(units, func(a, b unit) int { return cmpScore(a.score, b.score) }).fragment]
		lead = fmt.Sprintf("**%s** [%s]\n", label(best.Title, best.HeadingPath), best.Marker)
		for _, img := range best.ImageURLs {
			lead += fmt.Sprintf("![%s](%s)\n", best.Title, img)
		}
		lead += "\n"
		// The screenshot led; quoting it again would show it twice.
		units = slices.DeleteFunc(units, func(u unit) bool {
			m := markdownTarget.FindStringSubmatch(u.text)
			return strings.HasPrefix(u.text, "![") && m != nil && slices.Contains(best.ImageURLs, m[1])
		})
	}
	chosen := r.chooseUnits(units, packing.Packed, r.answerBudget()-r.Tokens.Count(lead))
	if len(chosen) == 0 {
		return true, st.delta(r.Prompt.NotFound)
	}
	var b strings.Builder
	b.WriteString(lead)
	for i, u := range chosen {
		if i == 0 || chosen[i-1].fragment != u.fragment {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(sourceLine(packing.Packed[u.fragment]))
		}
		b.WriteString(quoted(u.text))
	}
	answer := b.String()
	for _, line := range strings.SplitAfter(answer, "\n") {
		if line != "" {
			if err := st.delta(line); err != nil {
				return false, err
			}
		}
	}
	r.emitCitations(answer, packing.Packed, st)
	return false, nil
}

// answerUnits splits the fragments into what an answer may quote: list
// items and code blocks whole, prose by sentence. Markdown wraps lines
// anywhere, so a paragraph's lines (and a list item's continuation lines)
// are joined before sentences are cut.
func answerUnits(fragments []retrieval.Fragment) []unit {
	var out []unit
	for fi, f := range fragments {
		n := 0
		add := func(text string) {
			if text = strings.TrimSpace(text); len(retrieval.ContentWords(text)) > 0 {
				out = append(out, unit{fragment: fi, index: n, text: text})
				n++
			}
		}
		var prose, item []string // the paragraph or list item being read
		endBlock := func() {
			if len(item) > 0 {
				add(strings.Join(item, " "))
			}
			for _, sentence := range splitSentences(strings.Join(prose, " ")) {
				add(sentence)
			}
			prose, item = nil, nil
		}
		inCode, code := false, ""
		for _, line := range strings.Split(f.Text, "\n") {
			trimmed := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(trimmed, "```"):
				if !inCode {
					endBlock()
				}
				code += line + "\n"
				if inCode {
					add(code)
					code = ""
				}
				inCode = !inCode
			case inCode:
				code += line + "\n"
			case trimmed == "", strings.HasPrefix(trimmed, "#"):
				endBlock() // headings are in the citation label
			case isListItem(trimmed):
				endBlock()
				item = []string{trimmed}
			case len(item) > 0:
				item = append(item, trimmed) // the item goes on
			default:
				prose = append(prose, trimmed)
			}
		}
		endBlock()
		add(code) // an unclosed block
	}
	return out
}

func isListItem(line string) bool {
	if strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ") {
		return true
	}
	digits := len(line) - len(strings.TrimLeft(line, "0123456789"))
	return digits > 0 && digits < len(line) && (line[digits] == '.' || line[digits] == ')')
}

// scoreUnits scores each unit for the question: its embedding similarity
// (the store's embedder, one batched call) plus the share of the
// question's content words it holds, weighted by how rare each is among
// the units (BM25's idf, on the packed text).
func (r *Runner) scoreUnits(ctx context.Context, question string, units []unit, embedded [][]float32) error {
	texts := []string{question}
	reuse := len(embedded) == len(units)
	if !reuse {
		for _, u := range units {
			texts = append(texts, u.text)
		}
	}
	vectors, err := r.Searcher.Embedder.Embed(ctx, texts)
	if err != nil {
		return &ToolError{Tool: "extract", Err: fmt.Errorf("embed the answer's candidates: %w", err)}
	}
	if reuse {
		vectors = append(vectors[:1], embedded...)
	}
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
func sourceLine(f retrieval.Fragment) string {
	return fmt.Sprintf("From %s [%s]:\n", label(f.Title, f.HeadingPath), f.Marker)
}

// quoted is a unit as a Markdown quote.
func quoted(text string) string {
	return "> " + strings.ReplaceAll(text, "\n", "\n> ") + "\n"
}

// answerBudget is the tokens an answer may take: the window's answer
// reserve.
func (r *Runner) answerBudget() int {
	if r.AnswerReserve > 0 {
		return r.AnswerReserve
	}
	return 512
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
func (r *Runner) chooseUnits(units []unit, fragments []retrieval.Fragment, budget int) []unit {
	ranked := slices.Clone(units)
	slices.SortStableFunc(ranked, func(a, b unit) int { return cmpScore(b.score, a.score) })
	perFragment := make([]int, len(fragments))
	var chosen []unit
	used := 0
	for _, u := range ranked {
		size := r.Tokens.Count(quoted(u.text))
		if perFragment[u.fragment] == 0 {
			size += r.Tokens.Count("\n" + sourceLine(fragments[u.fragment]))
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
		room := budget - r.Tokens.Count(sourceLine(fragments[best.fragment])) - 4
		if best.text = cutToBudget(best.text, room, r.Tokens, quoted); best.text != "" {
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
