package ingest

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/ragroute/ragroute/internal/tokenize"
)

// The chunker's hot paths are written out by hand; these tests hold them
// to the plain versions they replace (regexps, strings.Fields, joined
// lines), on every line of the eval corpus and on generated odd text.

// oddFragments make up generated lines: Markdown markers, spaces of all
// kinds, letters in all cases, non-ASCII and invalid UTF-8.
var oddFragments = []string{
	" ", "  ", "   ", "    ", "\t", "\r", "\v", "\f", "\u00a0", "\u2003", "\u3000", "\u0085",
	"#", "##", "######", "#######", "`", "```", "````", "~", "~~~", "|", "-", "*", "+", "1", "12", "1234567890",
	".", ")", ":", "!", "?", ";", "\"", "'", "]", "[", "(", "<", ">", "!", "=", "_",
	"a", "Z", "Click", "BUTTON", "tab", "Drop-Down", "menu", "select", "ui", "UI", "word", "x509",
	"é", "É", "e\u0301", "ß", "İ", "\u212a", "ſ", "汉字", "🚀", "\xff", "\xc3", "\x00", "\x7f",
	"<img", "<IMG", "src=", "![", "](", "a.png",
}

func oddLine(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(12) {
		b.WriteString(oddFragments[rng.IntN(len(oddFragments))])
	}
	return b.String()
}

// testLines returns every line of the eval corpus and generated lines.
func testLines(t *testing.T) []string {
	t.Helper()
	var lines []string
	for _, doc := range corpusDocuments(t) {
		lines = append(lines, strings.Split(doc.Content, "\n")...)
	}
	lines = append(lines, "123456789. nine digits", "1234567890. ten digits", "12345678) eight", "1.", "1.x", "1. ",
		"   - three spaces", "    - four spaces", "\t- tab", "\t\t\t\t- four tabs", "-", "- ", "+\tx", "*x",
		"#", "# ", "#\tx", "# x #  \t", "###### six", "####### seven", "   ### three", "    ### four", "#x",
		"```", "```js", "~~~~", "   ```", "    ```", "``", "~~", "``` a`b", "| a |", " \t|", "\v|")
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50000 {
		lines = append(lines, oddLine(rng))
	}
	return lines
}

func TestHandWrittenMatchersEqualTheirRegexps(t *testing.T) {
	fenceOpen := regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	for _, line := range testLines(t) {
		m := headingLine.FindStringSubmatch(line)
		level, text, ok := parseHeading(line)
		if ok != (m != nil) || (ok && (level != len(m[1]) || text != m[2])) {
			t.Errorf("parseHeading(%q) = %d, %q, %v; regexp %q", line, level, text, ok, m)
		}
		want := ""
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			want = m[1]
		}
		if got := openingFence(line); got != want {
			t.Errorf("openingFence(%q) = %q, regexp %q", line, got, want)
		}
		if got, want := isTableRow(line), tableRow.MatchString(line); got != want {
			t.Errorf("isTableRow(%q) = %v, regexp %v", line, got, want)
		}
		if got, want := IsListItem(line), listItem.MatchString(line); got != want {
			t.Errorf("IsListItem(%q) = %v, regexp %v", line, got, want)
		}
	}
}

// TestImagePrefilterIsExact: a text mayMatch rejects has no match, and
// the case folds hasImgTag relies on are ASCII.
func TestImagePrefilterIsExact(t *testing.T) {
	for _, c := range "img" {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= 0x80 {
				t.Errorf("%q folds to non-ASCII %q", c, f)
			}
		}
	}
	texts := testLines(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		texts = append(texts, oddLine(rng)+oddLine(rng)+oddLine(rng))
	}
	for _, text := range texts {
		for _, p := range imagePatterns {
			if !p.mayMatch(text) && p.re.MatchString(text) {
				t.Errorf("%v: mayMatch(%q) is false, but it matches", p.re, text)
			}
		}
	}
}

func TestCountWordsEqualsFields(t *testing.T) {
	reference := func(text string, set map[string]bool) (hits, words int) {
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) {
			words++
			if set[strings.ToLower(w)] {
				hits++
			}
		}
		return hits, words
	}
	texts := testLines(t)
	for _, doc := range corpusDocuments(t) {
		texts = append(texts, doc.Content)
	}
	texts = append(texts, "CLICK the Drop-Down, then the ui/UI \u212aey clic\u212a "+strings.Repeat("button", 10))
	for _, set := range []*wordSet{screenCueWords, screenHeadingWords} {
		for _, text := range texts {
			hits, words := countWords(text, set)
			wantHits, wantWords := reference(text, set.words)
			if hits != wantHits || words != wantWords {
				t.Errorf("countWords(%q) = %d, %d; reference %d, %d", text, hits, words, wantHits, wantWords)
			}
		}
	}
}

func TestTrailingWordStartsEqualsWordStarts(t *testing.T) {
	texts := testLines(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		texts = append(texts, oddLine(rng)+" "+oddLine(rng)+"\n"+oddLine(rng))
	}
	for _, text := range texts {
		want := wordStarts(text)
		slices.Reverse(want)
		got := slices.Collect(trailingWordStarts(text))
		if !slices.Equal(got, want) {
			t.Errorf("trailingWordStarts(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestLineCountsEqualCount: the counts of lines, counted once and summed
// or remembered, are what the counter gives for the whole text, with or
// without a counter whose counts add up.
func TestLineCountsEqualCount(t *testing.T) {
	w := tokenize.NewBERTUncased()
	var texts []string
	for _, doc := range corpusDocuments(t) {
		texts = append(texts, doc.Content)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for range 5000 {
		texts = append(texts, oddLine(rng)+"\n"+oddLine(rng)+"\n\n"+oddLine(rng))
	}
	for _, counter := range []tokenize.Counter{w, plainCounter{w}} {
		lc := newLineCounts(counter, 0)
		for _, text := range texts {
			want := w.Count(text)
			counts, sum := lc.countLines(text)
			lc.forget()
			lc.remember(text, counts)
			if got := lc.count(text); sum != want || got != want {
				t.Errorf("%T: %q counts %d, then %d; want %d", counter, text, sum, got, want)
			}
			for _, line := range lineSpans(text) {
				if got, want := lc.line(line), w.Count(line); lc.addsUp && got != want {
					t.Errorf("%T: line(%q) = %d, want %d", counter, line, got, want)
				}
			}
		}
	}
}

// plainCounter hides that a counter's counts add up.
type plainCounter struct{ tokenize.Counter }

// TestSectionsEqualJoinedLines: parseSections cuts each section's text
// from the body; it must be its lines joined, as they were collected
// before.
func TestSectionsEqualJoinedLines(t *testing.T) {
	type node struct {
		level   int
		heading string
		lines   []string
		kids    []*node
	}
	reference := func(body string) *node {
		root := &node{}
		stack := []*node{root}
		var f fence
		for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
			m := headingLine.FindStringSubmatch(line)
			if f.step(line) || m == nil {
				stack[len(stack)-1].lines = append(stack[len(stack)-1].lines, line)
				continue
			}
			for stack[len(stack)-1].level >= len(m[1]) {
				stack = stack[:len(stack)-1]
			}
			n := &node{level: len(m[1]), heading: strings.TrimSpace(m[2]), lines: []string{line}}
			stack[len(stack)-1].kids = append(stack[len(stack)-1].kids, n)
			stack = append(stack, n)
		}
		return root
	}
	var compare func(doc string, got *section, want *node)
	compare = func(doc string, got *section, want *node) {
		hasBody := false
		for i, line := range want.lines {
			hasBody = hasBody || (strings.TrimSpace(line) != "" && (i > 0 || want.level == 0))
		}
		if got.level != want.level || got.heading != want.heading || got.text != strings.Join(want.lines, "\n") ||
			got.hasBody() != hasBody || len(got.kids) != len(want.kids) {
			t.Fatalf("%s: section %q differs: %q, want %q", doc, want.heading, got.text, strings.Join(want.lines, "\n"))
		}
		for i := range got.kids {
			compare(doc, got.kids[i], want.kids[i])
		}
	}
	docs := corpusDocuments(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for i := range 3000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(oddLine(rng) + "\n")
		}
		docs = append(docs, Document{Source: "generated-" + strings.Repeat("x", i%3), Content: b.String()})
	}
	for _, doc := range docs {
		root, err := parseSections(doc.Content, MaxChunksPerDocument)
		if err != nil {
			t.Fatal(err)
		}
		compare(doc.Source, root, reference(doc.Content))
	}
}

// TestBlocksEqualJoinedLines: blocks cuts each block from the text; it
// must be its lines joined, as they were collected before.
func TestBlocksEqualJoinedLines(t *testing.T) {
	reference := func(text string) []string {
		var out, cur []string
		var f fence
		flush := func() {
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, "\n"))
				cur = nil
			}
		}
		for _, line := range strings.Split(text, "\n") {
			wasCode := f.marker != ""
			inCode := f.step(line)
			if !inCode && strings.TrimSpace(line) == "" {
				flush()
				continue
			}
			if inCode && !wasCode {
				flush()
			}
			cur = append(cur, line)
			if wasCode && f.marker == "" {
				flush()
			}
		}
		flush()
		return out
	}
	texts := []string{}
	for _, doc := range corpusDocuments(t) {
		texts = append(texts, doc.Content)
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(oddLine(rng) + "\n")
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		var got []string
		for b := range blocks(text) {
			got = append(got, b.text)
		}
		if want := reference(text); !slices.Equal(got, want) {
			t.Errorf("blocks(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestTailEqualsCountingEveryCandidate: tail sums remembered line counts
// and word counts; it must pick what counting every candidate picked.
func TestTailEqualsCountingEveryCandidate(t *testing.T) {
	w := tokenize.NewBERTUncased()
	reference := func(text string, overlap int) (string, int) {
		var starts []int
		inWord := false
		for i, r := range text {
			space := unicode.IsSpace(r)
			if !space && !inWord {
				starts = append(starts, i)
			}
			inWord = !space
		}
		best, bestTokens := "", 0
		for k := len(starts) - 1; k >= 0; k-- {
			candidate := strings.TrimRightFunc(text[starts[k]:], unicode.IsSpace)
			n := w.Count(candidate)
			if n > overlap {
				break
			}
			best, bestTokens = candidate, n
		}
		return best, bestTokens
	}
	var texts []string
	for _, doc := range corpusDocuments(t) {
		for _, s := range strings.SplitAfter(doc.Content, "\n\n") {
			texts = append(texts, s, strings.TrimSpace(s))
		}
	}
	rng := rand.New(rand.NewPCG(17, 18))
	for range 5000 {
		texts = append(texts, oddLine(rng)+"\n"+oddLine(rng)+" "+oddLine(rng)+"\n\n"+oddLine(rng)+"\n")
	}
	for _, counter := range []tokenize.Counter{w, plainCounter{w}} {
		for _, overlap := range []int{0, 1, 5, 24} {
			opts := DefaultOptions()
			opts.Tokens, opts.OverlapTokens = counter, overlap
			c := &chunker{opts: opts, tokens: newLineCounts(counter, 0)}
			s := splitter{c: c, budget: opts.MaxTokens - overlap}
			for _, text := range texts {
				got, gotTokens := s.tail(text)
				want, wantTokens := reference(text, overlap)
				if got != want || gotTokens != wantTokens {
					t.Fatalf("%T, overlap %d: tail(%q) = %q, %d; want %q, %d", counter, overlap, text, got, gotTokens, want, wantTokens)
				}
			}
		}
	}
}

// TestFenceStepEqualsTheRegexpOne: fence.step, written out, tells code
// lines as it did with the regexp, line by line through every document.
func TestFenceStepEqualsTheRegexpOne(t *testing.T) {
	fenceOpen := regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
	reference := func(f *fence, line string) bool {
		trimmed := strings.TrimLeft(line, " ")
		if f.marker == "" {
			if m := fenceOpen.FindStringSubmatch(line); m != nil && len(line)-len(trimmed) <= 3 {
				if m[1][0] == '`' && strings.Contains(trimmed[len(m[1]):], "`") {
					return false
				}
				f.marker = m[1]
				return true
			}
			return false
		}
		closing := strings.TrimRight(trimmed, " \t\r")
		if len(line)-len(trimmed) <= 3 && len(closing) >= len(f.marker) &&
			strings.Trim(closing, f.marker[:1]) == "" {
			f.marker = ""
		}
		return true
	}
	var docs [][]string
	for _, doc := range corpusDocuments(t) {
		docs = append(docs, strings.Split(doc.Content, "\n"))
	}
	docs = append(docs, testLines(t))
	rng := rand.New(rand.NewPCG(19, 20))
	fences := []string{"```", "````", "~~~", "~~~~", "   ```", "    ```", "``` `x`", "```go", "~~~ ` ", "`````\t", "```` x"}
	for range 3000 {
		var lines []string
		for range rng.IntN(20) {
			if rng.IntN(3) == 0 {
				lines = append(lines, fences[rng.IntN(len(fences))])
			} else {
				lines = append(lines, oddLine(rng))
			}
		}
		docs = append(docs, lines)
	}
	for _, lines := range docs {
		var got, want fence
		for _, line := range lines {
			if g, w := got.step(line), reference(&want, line); g != w || got.marker != want.marker {
				t.Fatalf("step(%q) = %v, marker %q; want %v, %q", line, g, got.marker, w, want.marker)
			}
		}
	}
}
