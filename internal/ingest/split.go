package ingest

import (
	"iter"
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
	at     int // where text stands in the text being split; -1 when it is made up
}

var (
	listItem    = regexp.MustCompile(`^\s{0,3}([-*+]|\d{1,9}[.)])\s`) // IsListItem matches it
	tableRow    = regexp.MustCompile(`^\s*\|`)                        // isTableRow matches it
	sentenceEnd = regexp.MustCompile(`[.!?:;]["')\]]*\s+`)
)

// regexpSpace is what \s matches in a regexp.
const regexpSpace = "\t\n\f\r "

// isTableRow reports whether line matches tableRow. It and IsListItem
// are written out: the first line of every block is tested, and every
// line of a long list.
func isTableRow(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, regexpSpace), "|")
}

// IsListItem reports whether line is a Markdown list item (it matches
// listItem): at most three spaces, a bullet or one to nine digits and a
// dot or parenthesis, then a space. The chunker keeps such an item whole,
// and the route's answer units (route/answer) take it as one: one rule.
func IsListItem(line string) bool {
	rest := strings.TrimLeft(line, regexpSpace)
	if len(line)-len(rest) > 3 || rest == "" {
		return false
	}
	marker := 1 // the bullet's length
	if digits := len(rest) - len(strings.TrimLeft(rest, "0123456789")); digits > 0 {
		if digits > 9 || digits == len(rest) || (rest[digits] != '.' && rest[digits] != ')') {
			return false
		}
		marker = digits + 1
	} else if rest[0] != '-' && rest[0] != '*' && rest[0] != '+' {
		return false
	}
	return len(rest) > marker && strings.IndexByte(regexpSpace, rest[marker]) >= 0
}

// Bytes of a part: a chunk's text must fit the store's text field
// (MaxTextBytes) whatever the token count says (BERT counts a word over
// 100 characters as one token, so a 70 KiB "word" is one token). A part
// is cut to partBytes, leaving room for an overlap of at most
// maxOverlapBytes and the blank line after it.
const (
	maxOverlapBytes = 4 << 10
	partBytes       = MaxTextBytes - maxOverlapBytes - len("\n\n")
)

// splitter is the adaptive pass: it cuts text over the budget into parts.
type splitter struct {
	c      *chunker
	text   string // the text being split
	budget int    // tokens per part, leaving room for the overlap
}

// fits reports whether a piece of tokens tokens and size bytes fits a
// part.
func (s splitter) fits(tokens, size int) bool {
	return tokens <= s.budget && size <= partBytes
}

// part is a chunk's text and its token count.
type part struct {
	text   string
	tokens int
}

// split returns text, which counts tokens, as parts of at most MaxTokens
// tokens and MaxTextBytes bytes each, with an overlap of at most
// OverlapTokens repeated from the previous part.
func (c *chunker) split(text string, tokens int) []part {
	if tokens <= c.opts.MaxTokens && len(text) <= MaxTextBytes {
		return []part{{text, tokens}}
	}
	s := splitter{c: c, text: text, budget: c.opts.MaxTokens - c.opts.OverlapTokens}
	pieces := c.pieces[:0] // only their texts outlive split: the slice serves the next draft
	for b := range blocks(text) {
		if c.bounds.stopped() {
			break
		}
		pieces = s.fit(pieces, b)
	}
	c.pieces = pieces
	return s.withOverlap(s.pack(pieces))
}

// blocks yields the Markdown blocks of text, cut at blank lines, fenced
// code kept whole. A block's lines are consecutive: it is cut from text,
// not joined.
func blocks(text string) iter.Seq[piece] {
	return func(yield func(piece) bool) {
		var f fence
		blockStart, blockEnd := -1, 0 // the current block; none when blockStart < 0
		flush := func() bool {
			if blockStart < 0 {
				return true
			}
			block, at := text[blockStart:blockEnd], blockStart
			blockStart = -1
			first, _, _ := strings.Cut(block, "\n")
			return yield(piece{text: block, sep: "\n\n", kind: kindOf(first), at: at})
		}
		for start, line := range lineSpans(text) {
			wasCode := f.marker != ""
			inCode := f.step(line)
			if !inCode && strings.TrimSpace(line) == "" {
				if !flush() {
					return
				}
				continue
			}
			if inCode && !wasCode && !flush() { // fenced code is a block of its own
				return
			}
			if blockStart < 0 {
				blockStart = start
			}
			blockEnd = start + len(line)
			if wasCode && f.marker == "" && !flush() {
				return
			}
		}
		flush()
	}
}

// kindOf tells a block's kind by its first line.
func kindOf(first string) blockKind {
	switch {
	case openingFence(first) != "":
		return blockCode
	case isTableRow(first):
		return blockTable
	case IsListItem(first):
		return blockList
	}
	return blockText
}

// fit appends a block to out as pieces that each fit the budget, cutting
// it at the best boundary its kind allows. (It and the functions below
// append to out rather than return pieces of their own: most blocks are
// one piece, not worth a slice each.)
func (s splitter) fit(out []piece, b piece) []piece {
	b.tokens = s.c.tokens.count(b.text)
	if s.fits(b.tokens, len(b.text)) {
		return append(out, b)
	}
	switch b.kind {
	case blockCode:
		lines := strings.Split(b.text, "\n")
		return s.wrapped(out, b, lines[:1], lines[1:], closingFence(lines))
	case blockTable:
		lines := strings.Split(b.text, "\n")
		header := lines[:min(2, len(lines))]
		return s.wrapped(out, b, header, lines[len(header):], nil)
	case blockList:
		return s.listItems(out, b)
	}
	for start, line := range lineSpans(b.text) {
		sep := "\n"
		if start == 0 {
			sep = b.sep
		}
		out = s.fine(out, piece{text: line, sep: sep, kind: blockText, at: within(b.at, start)})
	}
	return out
}

// wrapped groups body lines under a repeated head (a table's header, a code
// fence) and tail (the closing fence), so every part is valid Markdown.
func (s splitter) wrapped(out []piece, b piece, head, body, tail []string) []piece {
	if len(tail) > 0 && len(body) > 0 && body[len(body)-1] == tail[0] {
		body = body[:len(body)-1] // the closing fence, re-added to every part
	}
	frameText := strings.Join(append(append([]string{}, head...), tail...), "\n")
	frame, frameBytes := s.c.tokens.count(frameText), len(frameText)
	first := len(out) // the block's first piece, once there is one
	asLines := func() []piece { return s.fit(out[:first], piece{text: b.text, sep: b.sep, kind: blockText, at: b.at}) }
	if frame >= s.budget/2 || frameBytes >= partBytes/2 || len(body) == 0 {
		return asLines() // the frame alone nearly fills a part: cut as plain lines
	}
	var group []string
	groupTokens, groupBytes := frame, frameBytes
	emit := func() {
		if len(group) == 0 {
			return
		}
		s.c.bounds.repeat(frameBytes)
		lines := append(append(append([]string{}, head...), group...), tail...)
		p := piece{text: strings.Join(lines, "\n"), tokens: groupTokens, sep: "\n\n", kind: b.kind, at: -1}
		if !s.c.tokens.addsUp {
			p.tokens = s.c.tokens.count(p.text)
		}
		out = append(out, p)
		group, groupTokens, groupBytes = nil, frame, frameBytes
	}
	for _, line := range body {
		if s.c.bounds.stopped() {
			return out
		}
		n := s.c.tokens.count(line)
		if !s.fits(frame+n, frameBytes+1+len(line)) {
			return asLines() // a row or code line too long for any frame
		}
		if !s.fits(groupTokens+n, groupBytes+1+len(line)) {
			emit()
		}
		group = append(group, line)
		groupTokens += n
		groupBytes += 1 + len(line)
	}
	emit()
	out[first].sep = b.sep
	return out
}

func closingFence(lines []string) []string {
	if len(lines) > 1 {
		last := strings.TrimSpace(lines[len(lines)-1])
		if last != "" && strings.Trim(last, last[:1]) == "" && (last[0] == '`' || last[0] == '~') {
			return []string{lines[len(lines)-1]}
		}
	}
	return []string{openingFence(lines[0])} // an unclosed fence is closed in each part
}

// listItems keeps each item (with its continuation lines) whole when it
// fits. An item's lines are consecutive: it is cut from the block.
func (s splitter) listItems(out []piece, b piece) []piece {
	itemStart, sep := 0, b.sep
	item := func(text string) {
		p := piece{text: text, sep: sep, kind: blockList, at: within(b.at, itemStart)}
		if p.tokens = s.c.tokens.count(p.text); s.fits(p.tokens, len(p.text)) {
			out = append(out, p)
		} else {
			out = s.fit(out, piece{text: p.text, sep: sep, kind: blockText, at: p.at})
		}
		sep = "\n"
	}
	for start, line := range lineSpans(b.text) {
		if start > 0 && IsListItem(line) {
			item(b.text[itemStart : start-1])
			itemStart = start
		}
	}
	item(b.text[itemStart:])
	return out
}

// fine cuts one line at sentence ends, then words, then characters.
func (s splitter) fine(out []piece, p piece) []piece {
	if p.tokens = s.c.tokens.count(p.text); s.fits(p.tokens, len(p.text)) {
		return append(out, p)
	}
	for i, sentence := range cutAfter(p.text, sentenceEnd) {
		if s.c.bounds.stopped() {
			return out
		}
		sep := " "
		if i == 0 {
			sep = p.sep
		}
		sp := piece{text: sentence, sep: sep, kind: blockText, tokens: s.c.tokens.count(sentence), at: -1}
		if s.fits(sp.tokens, len(sp.text)) {
			out = append(out, sp)
			continue
		}
		for j, word := range strings.Fields(sentence) {
			wsep := " "
			if j == 0 {
				wsep = sep
			}
			out = s.runes(out, piece{text: word, sep: wsep, kind: blockText, at: -1})
		}
	}
	return out
}

// runes cuts a word too long for a part (a key, a URL, base64) by
// characters, each cut the longest prefix that fits (binary search), in
// tokens and in bytes.
func (s splitter) runes(out []piece, p piece) []piece {
	if p.tokens = s.c.tokens.count(p.text); s.fits(p.tokens, len(p.text)) {
		return append(out, p)
	}
	for start := 0; start < len(p.text) && !s.c.bounds.stopped(); {
		rest := p.text[start:]
		lo, hi := 0, min(len(rest), partBytes) // the fitting prefix length lies in [lo, hi]
		for lo < hi {
			mid := (lo + hi + 1) / 2
			for mid < len(rest) && mid > lo && !utf8.RuneStart(rest[mid]) {
				mid-- // cut between characters, never inside one
			}
			if mid == lo {
				break
			}
			if s.c.opts.Tokens.Count(rest[:mid]) <= s.budget { // not worth remembering
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
		out = append(out, piece{text: rest[:lo], sep: sep, kind: blockText, tokens: s.c.opts.Tokens.Count(rest[:lo]), at: -1})
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

// packedPart is a part's text, its token count and the kind of its last
// piece.
type packedPart struct {
	part
	last blockKind
}

// pack fills parts greedily with pieces in order. Token counts add up
// across whitespace, so only a piece glued on without a separator (a cut
// word) needs a recount.
func (s splitter) pack(pieces []piece) []packedPart {
	var parts []packedPart
	var last blockKind
	first, size, tokens := 0, 0, 0 // the current part: pieces from first on, size bytes
	for i, p := range pieces {
		if s.c.bounds.stopped() {
			return parts
		}
		if size > 0 {
			next := tokens + p.tokens
			if p.sep == "" {
				next = s.c.tokens.count(s.join(pieces[first:i]) + p.text)
			}
			if s.fits(next, size+len(p.sep)+len(p.text)) {
				size += len(p.sep) + len(p.text)
				tokens, last = next, p.kind
				continue
			}
			parts = append(parts, packedPart{part{s.join(pieces[first:i]), tokens}, last})
		}
		first, size, tokens, last = i, len(p.text), p.tokens, p.kind
	}
	if size > 0 {
		parts = append(parts, packedPart{part{s.join(pieces[first:]), tokens}, last})
	}
	return parts
}

// join returns pieces, the first not empty, each after its separator but
// the first. Most often they stand so in the text being split, and the
// part is cut from it rather than copied.
func (s splitter) join(pieces []piece) string {
	if start, end, ok := s.standing(pieces); ok {
		return s.text[start:end]
	}
	size := len(pieces[0].text)
	for _, p := range pieces[1:] {
		size += len(p.sep) + len(p.text)
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(pieces[0].text)
	for _, p := range pieces[1:] {
		b.WriteString(p.sep)
		b.WriteString(p.text)
	}
	return b.String()
}

// standing reports whether pieces stand in the text being split, each
// after its separator but the first, from start to end. (Comparing a
// piece with the text it was cut from takes no time: a string equals
// itself at once.)
func (s splitter) standing(pieces []piece) (start, end int, ok bool) {
	start, end = pieces[0].at, pieces[0].at
	for i, p := range pieces {
		sep := p.sep
		if i == 0 {
			sep = ""
		}
		if p.at < 0 || p.at-len(sep) != end || p.at+len(p.text) > len(s.text) ||
			s.text[end:p.at] != sep || s.text[p.at:p.at+len(p.text)] != p.text {
			return 0, 0, false
		}
		end = p.at + len(p.text)
	}
	return start, end, true
}

// within is where a piece starting start bytes into another, which
// stands at at, stands; -1 when the other one is made up.
func within(at, start int) int {
	if at < 0 {
		return -1
	}
	return at + start
}

// withOverlap starts each part after the first with the last words of the
// previous one, unless it ended in code or a table (a cut there would
// leave broken Markdown).
func (s splitter) withOverlap(packed []packedPart) []part {
	parts := make([]part, len(packed))
	for i, p := range packed {
		parts[i] = p.part
		if i > 0 && s.c.opts.OverlapTokens > 0 && packed[i-1].last != blockCode && packed[i-1].last != blockTable {
			if tail, tokens := s.tail(packed[i-1].text); tail != "" {
				s.c.bounds.repeat(len(tail))
				parts[i] = part{tail + "\n\n" + p.text, tokens + p.tokens}
			}
		}
		if !s.c.tokens.addsUp {
			// The sums above are only estimates: count what the part is.
			parts[i].tokens = s.c.tokens.count(parts[i].text)
		}
	}
	return parts
}

// tail is the longest run of trailing words within the overlap budget
// (and maxOverlapBytes), cut from text as it stands so a reader can find
// it again, and its token count.
func (s splitter) tail(text string) (string, int) {
	best, tokens, rest := "", 0, text // the words of text after rest are taken
	if s.c.tokens.addsUp {
		// Whole lines first, from the last: when lines fit, all their
		// words do, and a line's count is remembered.
		for rest != "" {
			nl := strings.LastIndexByte(rest, '\n')
			n := s.c.tokens.line(rest[nl+1:])
			if tokens+n > s.c.opts.OverlapTokens || len(text)-max(nl, 0) > maxOverlapBytes {
				break
			}
			tokens += n
			rest = rest[:max(nl, 0)]
		}
		if start := strings.IndexFunc(text[len(rest):], isNotSpace); start >= 0 {
			best = strings.TrimRightFunc(text[len(rest)+start:], unicode.IsSpace)
		}
	}
	bestTokens := tokens
	// Then word by word.
	for start := range trailingWordStarts(rest) {
		candidate := strings.TrimRightFunc(text[start:], unicode.IsSpace)
		if len(candidate) > maxOverlapBytes {
			break
		}
		if s.c.tokens.addsUp {
			// One word more than the last candidate: add its count.
			word := candidate
			if end := strings.IndexFunc(candidate, unicode.IsSpace); end >= 0 {
				word = candidate[:end]
			}
			tokens += s.c.opts.Tokens.Count(word)
		} else {
			tokens = s.c.tokens.count(candidate)
		}
		if tokens > s.c.opts.OverlapTokens {
			break
		}
		best, bestTokens = candidate, tokens
	}
	return best, bestTokens
}

func isNotSpace(r rune) bool { return !unicode.IsSpace(r) }

// trailingWordStarts yields where each run of non-space characters of
// text starts, the last first. A tail needs only the last few, so it
// scans back from the end; but only a forward scan decodes UTF-8 as
// wordStarts does, so at the first non-ASCII byte it falls back to that.
func trailingWordStarts(text string) iter.Seq[int] {
	return func(yield func(int) bool) {
		end := len(text) // the words from end on are yielded
		for {
			i := end
			for i > 0 && isASCIISpace(text[i-1]) {
				i--
			}
			wordEnd := i
			for i > 0 && text[i-1] < utf8.RuneSelf && !isASCIISpace(text[i-1]) {
				i--
			}
			if i > 0 && text[i-1] >= utf8.RuneSelf {
				break
			}
			if i == wordEnd || !yield(i) { // no word left, or done
				return
			}
			end = i
		}
		starts := wordStarts(text)
		for k := len(starts) - 1; k >= 0; k-- {
			if starts[k] < end && !yield(starts[k]) {
				return
			}
		}
	}
}

// wordStarts returns where each run of non-space characters of text
// starts.
func wordStarts(text string) []int {
	var starts []int
	inWord := false
	for i, r := range text {
		space := unicode.IsSpace(r)
		if !space && !inWord {
			starts = append(starts, i)
		}
		inWord = !space
	}
	return starts
}

// isASCIISpace is unicode.IsSpace for an ASCII byte.
func isASCIISpace(c byte) bool {
	return c == ' ' || ('\t' <= c && c <= '\r')
}
