package route

import (
	"context"
	"regexp"
	"strings"

	"github.com/ragroute/ragroute/internal/knowledge"
	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The grounding check: once the model's answer is complete, each of its
// sentences is scored against the packed fragments' sentences, and the
// turn reports which are supported, by which fragment. A sentence whose
// numbers, flags, paths or URLs appear in no fragment is unsupported
// whatever its wording: an invented command must not pass on similarity.
// A supported sentence without a marker gets its supporting fragment's
// citation, inferred.

// DefaultGroundingThreshold is the support a sentence needs: the mean of
// its best embedding similarity to a fragment sentence and the share of
// its content words that sentence holds. Not yet calibrated on real
// models (the scripted tests use a hashing embedder).
const DefaultGroundingThreshold = 0.45

// maxGroundingUnits bounds the fragment sentences embedded per turn.
const maxGroundingUnits = 256

// identifierPattern finds what must be copied, not paraphrased: numbers,
// flags, paths, URLs, dotted or snake_case names.
var identifierPattern = regexp.MustCompile(`(?:https?://\S+|--?[A-Za-z][\w-]*|\b[\w.-]*\d[\w.-]*\b|\b\w+[_./]\w[\w./-]*\b)`)

// checkGrounding scores the answer's sentences against packing and emits
// a grounding event per sentence, inferred citations, and returns the
// share of sentences supported (nil when the answer has none to check).
func (r *Runner) checkGrounding(ctx context.Context, answer string, packing Packing, st *turnState) (*float64, error) {
	var sentences []string
	for _, s := range answerUnits([]retrieval.Fragment{{Text: answer}}) {
		sentences = append(sentences, s.text)
	}
	units := answerUnits(packing.Packed)
	if len(sentences) == 0 || len(units) == 0 {
		return nil, nil
	}
	units = units[:min(len(units), maxGroundingUnits)]
	texts := append(append([]string{}, sentences...), unitTexts(units)...)
	vectors, err := r.Searcher.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, &ToolError{Tool: "grounding", Err: err}
	}
	packed := strings.ToLower(packedText(packing.Packed))
	cited := map[string]bool{}
	for _, m := range markerPattern.FindAllStringSubmatch(answer, -1) {
		cited[m[1]] = true
	}
	threshold := r.GroundingThreshold
	if threshold <= 0 {
		threshold = DefaultGroundingThreshold
	}
	supported := 0
	for i, sentence := range sentences {
		best, bestScore := -1, 0.0
		words := retrieval.ContentWords(sentence)
		for j, u := range units {
			score := (float64(knowledge.Cosine(vectors[i], vectors[len(sentences)+j])) + overlap(words, u.text)) / 2
			if best < 0 || score > bestScore {
				best, bestScore = j, score
			}
		}
		g := Grounding{Index: i, Sentence: sentence, Score: bestScore, Status: GroundingUnsupported}
		fragment := packing.Packed[units[best].fragment]
		missing := inventedIdentifiers(sentence, packed)
		if bestScore >= threshold && len(missing) == 0 {
			g.Status, g.Marker = GroundingSupported, fragment.Marker
			supported++
		}
		g.Invented = missing
		for _, m := range markerPattern.FindAllStringSubmatch(sentence, -1) {
			if g.Status != GroundingSupported || m[1] != fragment.Marker {
				g.UnsupportedMarkers = append(g.UnsupportedMarkers, m[1])
			}
		}
		st.emit(Event{Type: EventGrounding, Data: g})
		if g.Status == GroundingSupported && !markerPattern.MatchString(sentence) && !cited[fragment.Marker] {
			cited[fragment.Marker] = true
			st.emit(Event{Type: EventCitation, Data: Citation{Marker: fragment.Marker, Title: fragment.Title,
				SourceURI: fragment.SourceURI, Heading: fragment.HeadingPath, Inferred: true}})
		}
	}
	ratio := float64(supported) / float64(len(sentences))
	return &ratio, nil
}

func unitTexts(units []unit) []string {
	out := make([]string, len(units))
	for i, u := range units {
		out[i] = u.text
	}
	return out
}

func packedText(fragments []retrieval.Fragment) string {
	var b strings.Builder
	for _, f := range fragments {
		b.WriteString(f.Title + "\n" + strings.Join(f.HeadingPath, "\n") + "\n" + f.SourceURI + "\n" + strings.Join(f.ImageURLs, "\n") + "\n" + f.Text + "\n")
	}
	return b.String()
}

// overlap is the share of words that text holds.
func overlap(words []string, text string) float64 {
	if len(words) == 0 {
		return 0
	}
	have := map[string]bool{}
	for _, w := range retrieval.ContentWords(text) {
		have[w] = true
	}
	n := 0
	for _, w := range words {
		if have[w] {
			n++
		}
	}
	return float64(n) / float64(len(words))
}

// inventedIdentifiers are the sentence's identifiers that the packed text
// (lower-cased) does not hold; markers do not count.
func inventedIdentifiers(sentence, packed string) []string {
	var out []string
	for _, id := range identifierPattern.FindAllString(markerPattern.ReplaceAllString(sentence, ""), -1) {
		id = strings.TrimRight(id, ".,;:!?)")
		if id != "" && !strings.Contains(packed, strings.ToLower(id)) {
			out = append(out, id)
		}
	}
	return out
}
