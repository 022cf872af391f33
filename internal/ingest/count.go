package ingest

import "github.com/ragroute/ragroute/internal/tokenize"

// lineCounts counts tokens for a chunking run. The adaptive pass counts
// the same lines many times over: a subsection to decide whether it
// merges, then the section it is part of, then, when that is too long,
// its blocks, lines and the parts they are packed into. With a counter
// whose counts add up across whitespace, a text's count is the sum of
// its lines' counts, so each line is tokenized once: a section's lines
// are counted once and their counts kept, and a draft being split
// remembers them by text, so that every later count is a few map
// lookups.
type lineCounts struct {
	counter tokenize.Counter
	addsUp  bool           // the counter's counts add up across whitespace
	lines   map[string]int // the remembered lines and their counts
	kept    []int32        // where countLines keeps counts
}

// newLineCounts returns the counts of a run over a text of about lines
// lines.
func newLineCounts(counter tokenize.Counter, lines int) *lineCounts {
	_, addsUp := counter.(tokenize.SpaceAdditive)
	lc := &lineCounts{counter: counter, addsUp: addsUp, lines: map[string]int{}}
	if addsUp {
		lc.kept = make([]int32, 0, lines)
	}
	return lc
}

// count returns counter.Count(text).
func (lc *lineCounts) count(text string) int {
	if !lc.addsUp {
		return lc.counter.Count(text)
	}
	n := 0
	for _, line := range lineSpans(text) {
		n += lc.line(line)
	}
	return n
}

// line returns counter.Count(line) for one line, remembering it.
func (lc *lineCounts) line(line string) int {
	if line == "" {
		return 0
	}
	n, ok := lc.lines[line]
	if !ok {
		n = lc.counter.Count(line)
		lc.lines[line] = n
	}
	return n
}

// countLines returns the counts of text's lines and their sum when
// counts add up; else only the count of text.
func (lc *lineCounts) countLines(text string) (counts []int32, sum int) {
	if !lc.addsUp {
		return nil, lc.counter.Count(text)
	}
	start := len(lc.kept)
	for _, line := range lineSpans(text) {
		n := 0
		if line != "" {
			n = lc.counter.Count(line)
		}
		lc.kept = append(lc.kept, int32(n))
		sum += n
	}
	return lc.kept[start:len(lc.kept):len(lc.kept)], sum
}

// remember makes the lines of text, whose counts countLines returned,
// known to count and line, when counts add up.
func (lc *lineCounts) remember(text string, counts []int32) {
	if !lc.addsUp {
		return
	}
	i := 0
	for _, line := range lineSpans(text) {
		if line != "" {
			lc.lines[line] = int(counts[i])
		}
		i++
	}
}

// expect sizes the map of remembered lines for the longest draft to be
// split, so that it does not grow line by line.
func (lc *lineCounts) expect(drafts []draft, maxTokens int) {
	lines := 0
	for _, d := range drafts {
		if d.tokens > maxTokens {
			n := 0
			for _, s := range d.sections {
				n += len(s.lineTokens)
			}
			lines = max(lines, n)
		}
	}
	if lc.addsUp && lines > 0 {
		lc.lines = make(map[string]int, lines)
	}
}

// forget drops the remembered lines: drafts are split one at a time, and
// a small map is cheap to fill and stays in the cache.
func (lc *lineCounts) forget() { clear(lc.lines) }
