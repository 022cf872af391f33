package ingest

import (
	"regexp"
	"strings"
)

// How a shortcode reaches the reader, by name. Any other shortcode's
// markers are dropped, their inner text kept, and a label argument kept
// (label): a site template renders it (a table, an included
// partial, a video) and the chunker cannot.
var (
	// hiddenShortcodes render nothing, their inner text included.
	hiddenShortcodes = map[string]bool{"comment": true}
	// valueShortcodes render a site value (a version, a shared sentence)
	// the chunker cannot look up: their first argument, the value's key,
	// stands in its place.
	valueShortcodes = map[string]bool{"param": true, "_param": true, "version-from-registry": true}
	// labelFirstShortcodes show their first positional argument as a
	// label: a tab's name, a status line's signal.
	labelFirstShortcodes = map[string]bool{"tab": true, "spec_status": true}
)

// shortcode is one parsed Hugo shortcode marker: {{< name args >}} or
// {{% name args %}}, or a closing {{< /name >}}. Of its arguments it
// keeps what a reader may see: the first positional one, and the
// labelArguments.
type shortcode struct {
	name    string
	closing bool
	first   string
	labels  [len(labelArguments)]string
	// literal is what an escaped marker ({{</* name */>}}) shows: the
	// marker itself, unescaped.
	literal string
}

// labelArguments are the named arguments a shortcode shows as its label,
// the first given first.
var labelArguments = [...]string{"title", "header", "name"}

// shortcodeName is what Hugo accepts as a shortcode's name.
var shortcodeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*$`)

// resolveShortcodes replaces each Hugo shortcode marker by what a reader
// of the page sees of it (see hiddenShortcodes, valueShortcodes,
// label), in code blocks too, as Hugo does. Paired shortcodes'
// inner text stays; a line that held only markers rendering nothing goes.
// A "{{<" or "{{%" that does not open a well-formed marker stays as
// written.
func resolveShortcodes(body string) string {
	if !strings.Contains(body, "{{<") && !strings.Contains(body, "{{%") {
		return body
	}
	return newShortcodeReader(body).resolve()
}

// shortcodeReader reads one page's markers in time linear in its length,
// whatever they are: a page is untrusted, and a quadratic reading let
// 491 KB of comments never closed hold a run for minutes.
type shortcodeReader struct {
	body string
	// out is the page as read so far; its last line starts at lineStart,
	// and out[lineStart:checked] holds something other than blanks when
	// lineText: placing a marker never rescans the line.
	out       []byte
	lineStart int
	checked   int
	lineText  bool
	// closers is, per hidden shortcode's name, the last search for its
	// closing marker.
	closers map[string]closerSearch
	// scanned counts the bytes the reader's searches examined: a test
	// holds it linear in the page's length, where a timing would be
	// neither reliable nor quick.
	scanned int
}

func newShortcodeReader(body string) *shortcodeReader {
	return &shortcodeReader{body: body, out: make([]byte, 0, len(body)), closers: map[string]closerSearch{}}
}

// closerSearch is a search for a closing marker from from: the marker
// starts at at and ends at end, or both are -1 when none follows.
type closerSearch struct{ from, at, end int }

// resolve is resolveShortcodes' reading of the page.
func (r *shortcodeReader) resolve() string {
	body := r.body
	for i := 0; i < len(body); {
		open := r.next(i)
		if open < 0 {
			r.out = append(r.out, body[i:]...)
			break
		}
		r.out = append(r.out, body[i:open]...)
		sc, end, ok := r.parse(open)
		switch {
		case !ok:
			r.out, i = append(r.out, body[open:open+3]...), open+3
			continue
		case sc.literal != "":
			r.out, i = append(r.out, sc.literal...), end
			continue
		case hiddenShortcodes[sc.name] && !sc.closing:
			if closed := r.closingEnd(end, sc.name); closed >= 0 {
				end = closed
			}
		}
		i = r.place(sc.render(), end)
	}
	return string(r.out)
}

// seen counts what a search of s examined, up to the match of width
// bytes it found at i, or the whole of s when none (i < 0); it returns i.
func (r *shortcodeReader) seen(s string, i, width int) int {
	if i < 0 {
		r.scanned += len(s)
	} else {
		r.scanned += i + width
	}
	return i
}

// next is where the next "{{<" or "{{%" starts at or after from; -1 when
// none does.
func (r *shortcodeReader) next(from int) int {
	for {
		rest := r.body[from:]
		at := r.seen(rest, strings.Index(rest, "{{"), 2)
		if at < 0 || from+at+2 >= len(r.body) {
			return -1
		}
		if c := r.body[from+at+2]; c == '<' || c == '%' {
			return from + at
		}
		from += at + 2
	}
}

// parse reads the marker opening at open; end is just past it. ok is
// false when it is not a marker: no closing delimiter before the next
// "{{", or no name. The delimiter is looked for only up to that "{{", so
// no opener searches the page beyond the next one.
func (r *shortcodeReader) parse(open int) (sc shortcode, end int, ok bool) {
	body := r.body
	opener, closer := body[open:open+3], "%}}"
	if opener == "{{<" {
		closer = ">}}"
	}
	rest := body[open+3:]
	if next := r.seen(rest, strings.Index(rest, "{{"), 2); next >= 0 {
		rest = rest[:next]
	}
	n := r.seen(rest, strings.Index(rest, closer), len(closer))
	if n < 0 {
		return shortcode{}, 0, false
	}
	inner, end := strings.TrimSpace(rest[:n]), open+3+n+3
	if strings.HasPrefix(inner, "/*") && strings.HasSuffix(inner, "*/") && len(inner) >= 4 {
		return shortcode{literal: opener + " " + strings.TrimSpace(inner[2:len(inner)-2]) + " " + closer}, end, true
	}
	if strings.HasPrefix(inner, "/") {
		sc.closing, inner = true, strings.TrimSpace(inner[1:])
	}
	var args string
	sc.name = inner
	if cut := strings.IndexAny(inner, " \t\n"); cut >= 0 {
		sc.name, args = inner[:cut], inner[cut+1:]
	}
	if !shortcodeName.MatchString(sc.name) {
		return shortcode{}, 0, false
	}
	r.arguments(&sc, args)
	return sc, end, true
}

// closingEnd is where the closing marker of name after from ends; -1 when
// there is none. The reading goes forward and each search starts at a
// marker's end, from where the markers met are those met from any
// earlier such start (a marker holds no "{{"): what the last search found,
// or that it found none, holds for a later start up to its find, so no
// stretch of the page is searched twice for one name.
func (r *shortcodeReader) closingEnd(from int, name string) int {
	if c, ok := r.closers[name]; ok && from >= c.from && (c.at < 0 || from <= c.at) {
		return c.end
	}
	c := closerSearch{from: from, at: -1, end: -1}
	for at := r.next(from); at >= 0; at = r.next(at + 3) {
		if sc, end, ok := r.parse(at); ok && sc.closing && sc.name == name {
			c.at, c.end = at, end
			break
		}
	}
	r.closers[name] = c
	return c.end
}

// render is the text a reader sees in place of the marker.
func (sc shortcode) render() string {
	switch {
	case sc.closing || hiddenShortcodes[sc.name]:
		return ""
	case valueShortcodes[sc.name]:
		return sc.first
	}
	return sc.label()
}

// label is what a shortcode shows of its arguments: a title, header or
// name argument, or the first positional argument of the
// labelFirstShortcodes; "" when none.
func (sc shortcode) label() string {
	for _, v := range sc.labels {
		if v != "" {
			return v
		}
	}
	if labelFirstShortcodes[sc.name] {
		return sc.first
	}
	return ""
}

// arguments reads a marker's arguments into sc: quoted ("..." or `...`)
// or bare positional ones, and key=value named ones (a later one of a
// name wins). An argument is named when an "=" comes before any blank or
// quote.
func (r *shortcodeReader) arguments(sc *shortcode, s string) {
	positional := 0
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		var key string
		if eq := r.seen(s, strings.IndexAny(s, "= \t\n\"`"), 1); eq > 0 && s[eq] == '=' {
			key, s = s[:eq], s[eq+1:]
		}
		var value string
		value, s = r.value(s)
		if key == "" {
			if positional++; positional == 1 {
				sc.first = value
			}
			continue
		}
		for i, label := range labelArguments {
			if key == label {
				sc.labels[i] = value
			}
		}
	}
}

// value reads one argument value at the start of s: quoted, or up to
// the next blank; rest is what follows it.
func (r *shortcodeReader) value(s string) (value, rest string) {
	if s != "" && (s[0] == '"' || s[0] == '`') {
		if end := r.seen(s[1:], strings.IndexByte(s[1:], s[0]), 1); end >= 0 {
			return strings.ReplaceAll(s[1:1+end], `\"`, `"`), s[2+end:]
		}
	}
	if end := r.seen(s, strings.IndexAny(s, " \t\n"), 1); end >= 0 {
		return s[:end], s[end:]
	}
	return s, ""
}

// place appends what a marker ending at end renders to the output, and
// returns where the body goes on. A marker that renders nothing at the
// start of a line takes the blanks after it, and the whole line when
// nothing else is on it.
func (r *shortcodeReader) place(text string, end int) int {
	if text != "" {
		r.out = append(r.out, text...)
		return end
	}
	if !r.lastLineBlank() {
		return end
	}
	body, next := r.body, end
	for next < len(body) && (body[next] == ' ' || body[next] == '\t') {
		next++
	}
	if next == len(body) || body[next] == '\n' {
		r.out, r.checked = r.out[:r.lineStart], r.lineStart
		if next < len(body) {
			next++
		}
	}
	return next
}

// lastLineBlank says whether the output's last line holds only blanks,
// looking only at what was written since it was last asked.
func (r *shortcodeReader) lastLineBlank() bool {
	r.scanned += len(r.out) - r.checked
	for ; r.checked < len(r.out); r.checked++ {
		switch r.out[r.checked] {
		case '\n':
			r.lineStart, r.lineText = r.checked+1, false
		case ' ', '\t':
		default:
			r.lineText = true
		}
	}
	return !r.lineText
}
