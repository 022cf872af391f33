package answer

import (
	"regexp"
	"strings"

	"github.com/ragroute/ragroute/internal/tokenize"
)

// What a sentence and a citation marker are, decided once: the grounding
// check cuts the model's answer with these rules as it streams
// (split.go), the quotes and the check's fragment units cut the fragments
// with them (units.go), packing cuts a fragment that does not fit at
// them (CutToBudget), and the evaluations cut their sentences with them,
// so a threshold calibrated on one is applied to sentences cut alike.

// markerPattern finds the citation markers an answer writes: [S1], [S2], ….
var markerPattern = regexp.MustCompile(`\[(S\d+)\]`)

var (
	leadingMarker = regexp.MustCompile(`^\[S\d+\]`)
	partialMarker = regexp.MustCompile(`^\[(S\d*)?$`)
)

// Sentences cuts prose into its sentences: each ends at ". ", "! " or "? "
// (or a line break after the mark), or at a line break, and takes the
// citation markers and spaces that follow it. The pieces join back to
// text exactly.
func Sentences(text string) []string {
	var out []string
	for text != "" {
		n := sentenceEnd(text, true)
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

// sentenceEnd is the length of the prose sentence p starts with: through
// its end (. ! ? before a space, or the line's end), the markers that
// follow it and the spaces after. Unless final, 0 while what follows is
// not known yet.
func sentenceEnd(p string, final bool) int {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\n' {
			return i + 1
		}
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		if i+1 == len(p) {
			return finalLen(p, final)
		}
		if p[i+1] != ' ' && p[i+1] != '\n' {
			continue
		}
		return afterSentence(p, i+1, final)
	}
	return finalLen(p, final)
}

// afterSentence extends a sentence ending at end over the markers and
// spaces that follow it (a model often writes "… first. [S1] Then …").
func afterSentence(p string, end int, final bool) int {
	for {
		j := end
		for j < len(p) && p[j] == ' ' {
			j++
		}
		if j < len(p) && p[j] == '\n' {
			return j + 1
		}
		rest := p[j:]
		if m := leadingMarker.FindString(rest); m != "" {
			end = j + len(m)
			continue
		}
		if !final && (rest == "" || partialMarker.MatchString(rest)) {
			return 0 // a marker may follow
		}
		return j
	}
}

func finalLen(p string, final bool) int {
	if final {
		return len(p)
	}
	return 0
}

// minCutTokens: a text cut shorter than this is not worth showing.
const minCutTokens = 32

// CutToBudget keeps the longest run of whole sentences of text that,
// shown as shown makes it, fits budget, marked as cut; nothing when that
// is too short to be useful.
func CutToBudget(text string, budget int, tokens tokenize.Counter, shown func(string) string) string {
	if budget < minCutTokens {
		return ""
	}
	kept := ""
	for _, sentence := range Sentences(text) {
		next := kept + sentence
		if tokens.Count(shown(next)) > budget {
			break
		}
		kept = next
	}
	kept = shown(strings.TrimSpace(kept))
	if tokens.Count(kept) < minCutTokens {
		return ""
	}
	return kept + " …"
}
