package eval

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/ragroute/ragroute/internal/route/retrieval"
	"github.com/ragroute/ragroute/internal/route/turn"
)

// FragmentRecorder is the searcher's cache: it never hits, and keeps
// every fragment a search returned, so a turn's retrieval event (which
// names sources, not texts) can be scored by the text its fragments hold.
type FragmentRecorder struct {
	mu    sync.Mutex
	byKey map[string]retrieval.Fragment
}

// NewFragmentRecorder is an empty recorder.
func NewFragmentRecorder() *FragmentRecorder {
	return &FragmentRecorder{byKey: map[string]retrieval.Fragment{}}
}

func fragmentKey(sourceURI, title string, headingPath []string) string {
	return sourceURI + "\x00" + title + "\x00" + strings.Join(headingPath, "\x00")
}

// Get never hits: every search runs, so Put sees what it found.
func (c *FragmentRecorder) Get(context.Context, string) ([]retrieval.Fragment, bool) {
	return nil, false
}

// Put keeps the fragments a search returned, by source and heading path.
func (c *FragmentRecorder) Put(_ context.Context, _ string, fragments []retrieval.Fragment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range fragments {
		c.byKey[fragmentKey(f.SourceURI, f.Title, f.HeadingPath)] = f
	}
}

// Packed is the fragment a retrieval event reported under its marker.
func (c *FragmentRecorder) Packed(s turn.RetrievalSource) (retrieval.Fragment, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.byKey[fragmentKey(s.SourceURI, s.Title, s.HeadingPath)]
	f.Marker = s.Marker
	return f, ok
}

// FragmentHolds is what a packed fragment shows, where a URL the answer
// shows may come from: its text, source, images, and its label (a heading
// may be a link; extractive answers quote under the label).
func FragmentHolds(f retrieval.Fragment) []string {
	return append([]string{f.Text, f.SourceURI, f.Label()}, f.ImageURLs...)
}

// MarkerNumber is n of the marker Sn.
func MarkerNumber(marker string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(marker, "S"))
	return n
}
