package answer

import "github.com/ragroute/ragroute/internal/route/retrieval"

// Cited are the packed fragments the answer's markers name, in order of
// first use, each once; a marker no fragment carries names nothing.
func Cited(answer string, packed []retrieval.Fragment) []retrieval.Fragment {
	byMarker := markers(packed)
	var out []retrieval.Fragment
	seen := map[string]bool{}
	for _, m := range markerPattern.FindAllStringSubmatch(answer, -1) {
		f, ok := byMarker[m[1]]
		if !ok || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		out = append(out, f)
	}
	return out
}

// Inferred are the citations the model left out: for each supported,
// shown sentence without a marker of its own, the fragment that supports
// it, unless the answer cites that fragment already; each once.
func Inferred(checked []Grounding, answer string, packed []retrieval.Fragment) []retrieval.Fragment {
	cited := map[string]bool{}
	for _, m := range markerPattern.FindAllStringSubmatch(answer, -1) {
		cited[m[1]] = true
	}
	byMarker := markers(packed)
	var out []retrieval.Fragment
	for _, g := range checked {
		f, ok := byMarker[g.Marker]
		if g.Status != Supported || g.Withheld || !ok || cited[g.Marker] || markerPattern.MatchString(g.Sentence) {
			continue
		}
		cited[g.Marker] = true
		out = append(out, f)
	}
	return out
}

// markers are the packed fragments by their markers.
func markers(packed []retrieval.Fragment) map[string]retrieval.Fragment {
	out := make(map[string]retrieval.Fragment, len(packed))
	for _, f := range packed {
		out[f.Marker] = f
	}
	return out
}
