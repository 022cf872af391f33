package ingest

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// blockKind says how a block may be cut.
type blockKind int

const (
	blockText  blockKind = iota // paragraphs: by line, then sentence, then word
	blockList                   // list items: by item, then as text
	blockTable                  // table rows, repeating the header
	blockCode                   // fenced code lines, re-fenced
)

// piece is a run of text no larger than the part budget, and what may be
// placed before it when it joins the previous piece in the same part.
type piece struct {
	text   string
	tokens int
	sep    string
	kind   blockKind
}

var (
	listItem    = regexp.MustCompile(`^\s{0,3}([-*+]|\d{1,9}[.)])\s`)
	tableRow    = regexp.MustCompile(`^\s*\|`)
	sentenceEnd = regexp.MustCompile(`[.!?:;]["')\]]*\s+`)
)

// splitter is the adaptive pass: it cuts text over the budget into parts.
type splitter struct {
	c      *chunker
	budget int // tokens per part, leaving room for the overlap
}

// split returns text as parts of at most MaxTokens tokens each, with an
// overlap of at most OverlapTokens repeated from the previous part.
func (c *chunker) split(text string) []string {
	if c.opts.Tokens.Count(text) <= c.opts.MaxTokens {
		return []string{text}
	}
	s := splitter{c: c, budget: c.opts.MaxTokens - c.opts.OverlapTokens}
	var pieces []piece
	for _, b := range blocks(text) {
		pieces = append(pieces, s.fit(b)...)
	}
	return s.withOverlap(s.pack(pieces))
}

// blocks cuts text into Markdown blocks at blank lines, keeping fenced code
// whole.
func blocks(text string) []piece {
	var out []piece
	var cur []string
	var f fence
	flush := func() {
		if len(cur) == 0 {
			return
		}
		out = append(out, piece{text: strings.Join(cur, "\n"), sep: "\n\n", kind: kindOf(cur)})
		cur = nil
	}
	for _, line := range strings.Split(text, "\n") {
		wasCode := f.marker != ""
		inCode := f.step(line)
		if !inCode && strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if inCode && !wasCode {
			flush() // fenced code is a block of its own
		}
		cur = append(cur, line)
		if wasCode && f.marker == "" {
			flush()
		}
	}
	flush()
	return out
}

func kindOf(lines []string) blockKind {
	switch {
	case fenceOpen.MatchString(lines[0]):
		return blockCode
	case tableRow.MatchString(lines[0]):
		return blockTable
	case listItem.MatchString(lines[0]):
		return blockList
	}
	return blockText
}

// fit returns a block as pieces that each fit the budget, cutting it at the
// best boundary its kind allows.
func (s splitter) fit(b piece) []piece {
	b.tokens = s.c.opts.Tokens.Count(b.text)
	if b.tokens <= s.budget {
		return []piece{b}
	}
	lines := strings.Split(b.text, "\n")
	switch b.kind {
	case blockCode:
		return s.wrapped(b, lines[:1], lines[1:], closingFence(lines))
	case blockTable:
		header := lines[:min(2, len(lines))]
		return s.wrapped(b, header, lines[len(header):], nil)
	case blockList:
		return s.listItems(b, lines)
	}
	var out []piece
	for i, line := range lines {
		sep := "\n"
		if i == 0 {
			sep = b.sep
		}
		out = append(out, s.fine(piece{text: line, sep: sep, kind: blockText})...)
	}
	return out
}

// wrapped groups body lines under a repeated head (a table's header, a code
// fence) and tail (the closing fence), so every part is valid Markdown.
func (s splitter) wrapped(b piece, head, body, tail []string) []piece {
	if len(tail) > 0 && len(body) > 0 && body[len(body)-1] == tail[0] {
		body = body[:len(body)-1] // the closing fence, re-added to every part
	}
	frame := s.c.opts.Tokens.Count(strings.Join(append(append([]string{}, head...), tail...), "\n"))
	asLines := func() []piece { return s.fit(piece{text: b.text, sep: b.sep, kind: blockText}) }
	if frame >= s.budget/2 || len(body) == 0 {
		return asLines() // the frame alone nearly fills a part: cut as plain lines
	}
	var out []piece
	var group []string
	groupTokens := frame
	emit := func() {
		if len(group) == 0 {
			return
		}
		lines := append(append(append([]string{}, head...), group...), tail...)
		text := strings.Join(lines, "\n")
		out = append(out, piece{text: text, tokens: s.c.opts.Tokens.Count(text), sep: "\n\n", kind: b.kind})
		group, groupTokens = nil, frame
	}
	for _, line := range body {
		n := s.c.opts.Tokens.Count(line)
		if frame+n > s.budget {
			return asLines() // a row or code line too long for any frame
		}
		if groupTokens+n > s.budget {
			emit()
		}
		group = append(group, line)
		groupTokens += n
	}
	emit()
	out[0].sep = b.sep
	return out
}

func closingFence(lines []string) []string {
	if len(lines) > 1 {
		last := strings.TrimSpace(lines[len(lines)-1])
		if last != "" && strings.Trim(last, last[:1]) == "" && (last[0] == '`' || last[0] == '~') {
			return []string{lines[len(lines)-1]}
		}
	}
	m := fenceOpen.FindStringSubmatch(lines[0])
	return []string{m[1]} // an unclosed fence is closed in each part
}

// listItems keeps each item (with its continuation lines) whole when it fits.
func (s splitter) listItems(b piece, lines []string) []piece {
	var items [][]string
	for _, line := range lines {
		if listItem.MatchString(line) || len(items) == 0 {
			items = append(items, nil)
		}
		items[len(items)-1] = append(items[len(items)-1], line)
	}
	var out []piece
	for i, item := range items {
		sep := "\n"
		if i == 0 {
			sep = b.sep
		}
		p := piece{text: strings.Join(item, "\n"), sep: sep, kind: blockList}
		if p.tokens = s.c.opts.Tokens.Count(p.text); p.tokens <= s.budget {
			out = append(out, p)
			continue
		}
		out = append(out, s.fit(piece{text: p.text, sep: sep, kind: blockText})...)
	}
	return out
}

// fine cuts one line at sentence ends, then words, then characters.
func (s splitter) fine(p piece) []piece {
	if p.tokens = s.c.opts.Tokens.Count(p.text); p.tokens <= s.budget {
		return []piece{p}
	}
	var out []piece
	for i, sentence := range cutAfter(p.text, sentenceEnd) {
		sep := " "
		if i == 0 {
			sep = p.sep
		}
		sp := piece{text: sentence, sep: sep, kind: blockText, tokens: s.c.opts.Tokens.Count(sentence)}
		if sp.tokens <= s.budget {
			out = append(out, sp)
			continue
		}
		for j, word := range strings.Fields(sentence) {
			wsep := " "
			if j == 0 {
				wsep = sep
			}
			out = append(out, s.runes(piece{text: word, sep: wsep, kind: blockText})...)
		}
	}
	return out
}

// runes cuts a word too long for a part (a key, a URL, base64) by
// characters, each cut the longest prefix that fits (binary search).
func (s splitter) runes(p piece) []piece {
	if p.tokens = s.c.opts.Tokens.Count(p.text); p.tokens <= s.budget {
		return []piece{p}
	}
	var out []piece
	for start := 0; start < len(p.text); {
		rest := p.text[start:]
		lo, hi := 0, len(rest) // the fitting prefix length lies in [lo, hi]
		for lo < hi {
			mid := (lo + hi + 1) / 2
			for mid < len(rest) && mid > lo && !utf8.RuneStart(rest[mid]) {
				mid-- // cut between characters, never inside one
			}
			if mid == lo {
				break
			}
			if s.c.opts.Tokens.Count(rest[:mid]) <= s.budget {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo == 0 { // not even one character fits a sane budget; take one anyway
			_, lo = utf8.DecodeRuneInString(rest)
		}
		sep := ""
		if start == 0 {
			sep = p.sep
		}
		out = append(out, piece{text: rest[:lo], sep: sep, kind: blockText, tokens: s.c.opts.Tokens.Count(rest[:lo])})
		start += lo
	}
	return out
}

// cutAfter splits text after each match of re, keeping the text whole.
func cutAfter(text string, re *regexp.Regexp) []string {
	var out []string
	start := 0
	for _, m := range re.FindAllStringIndex(text, -1) {
		out = append(out, strings.TrimSpace(text[start:m[1]]))
		start = m[1]
	}
	if rest := strings.TrimSpace(text[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// packedPart is a part's text and the kind of its last piece.
type packedPart struct {
	text string
	last blockKind
}

// pack fills parts greedily with pieces in order. Token counts add up
// across whitespace, so only a piece glued on without a separator (a cut
// word) needs a recount.
func (s splitter) pack(pieces []piece) []packedPart {
	var parts []packedPart
	var b strings.Builder
	var last blockKind
	tokens := 0
	for _, p := range pieces {
		if b.Len() > 0 {
			next := tokens + p.tokens
			if p.sep == "" {
				next = s.c.opts.Tokens.Count(b.String() + p.text)
			}
			if next > s.budget {
				parts = append(parts, packedPart{b.String(), last})
				b.Reset()
			} else {
				b.WriteString(p.sep)
				b.WriteString(p.text)
				tokens, last = next, p.kind
				continue
			}
		}
		b.WriteString(p.text)
		tokens, last = p.tokens, p.kind
	}
	if b.Len() > 0 {
		parts = append(parts, packedPart{b.String(), last})
	}
	return parts
}

// withOverlap starts each part after the first with the last words of the
// previous one, unless it ended in code or a table (a cut there would
// leave broken Markdown).
func (s splitter) withOverlap(parts []packedPart) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p.text
		if i == 0 || s.c.opts.OverlapTokens == 0 {
			continue
		}
		prev := parts[i-1]
		if prev.last == blockCode || prev.last == blockTable {
			continue
		}
		if tail := s.tail(prev.text); tail != "" {
			out[i] = tail + "\n\n" + p.text
		}
	}
	return out
}

// tail is the longest run of trailing words within the overlap budget,
// cut from text as it stands so a reader can find it again.
func (s splitter) tail(text string) string {
	var starts []int
	inWord := false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if !space && !inWord {
			starts = append(starts, i)
		}
		inWord = !space
	}
	best := ""
	for k := len(starts) - 1; k >= 0; k-- {
		candidate := strings.TrimRightFunc(text[starts[k]:], unicode.IsSpace)
		if s.c.opts.Tokens.Count(candidate) > s.c.opts.OverlapTokens {
			break
		}
		best = candidate
	}
	return best
}
