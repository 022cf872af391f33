package route

import (
	"regexp"

	"github.com/ragroute/ragroute/internal/route/retrieval"
)

var markerPattern = regexp.MustCompile(`\[(S\d+)\]`)

// emitCitations reports the markers the answer used, in order of first use.
func (r *Runner) emitCitations(answer string, packed []retrieval.Fragment, st *turnState) {
	byMarker := map[string]retrieval.Fragment{}
	for _, f := range packed {
		byMarker[f.Marker] = f
	}
	seen := map[string]bool{}
	for _, m := range markerPattern.FindAllStringSubmatch(answer, -1) {
		f, ok := byMarker[m[1]]
		if !ok || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		st.emit(Event{Type: EventCitation, Data: Citation{Marker: m[1], Title: f.Title, SourceURI: f.SourceURI, Heading: f.HeadingPath}})
	}
}
