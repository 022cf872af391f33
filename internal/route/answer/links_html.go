package answer

import "strings"

// Raw HTML in an answer is rendered by many Markdown clients, and a tag
// loads what its attributes name: src, href, srcset, poster, style's
// url(…), and more. So a tag passes only when each attribute with a value
// is one that names nothing (alt, title, sizes…) or a src or href that
// the answer was given, and its element loads nothing by itself; any
// other tag is replaced whole. Closing tags carry no attributes and pass.

// urlAttributes are the attributes whose value is judged as a URL.
var urlAttributes = map[string]bool{"src": true, "href": true}

// inertAttributes name nothing a client fetches.
var inertAttributes = map[string]bool{
	"alt": true, "title": true, "width": true, "height": true, "align": true, "valign": true,
	"colspan": true, "rowspan": true, "lang": true, "dir": true, "start": true, "open": true,
}

// loadingElements load or run content whatever their attributes say.
var loadingElements = map[string]bool{
	"script": true, "style": true, "iframe": true, "frame": true, "frameset": true, "object": true,
	"embed": true, "link": true, "meta": true, "base": true, "svg": true, "math": true,
	"form": true, "input": true, "video": true, "audio": true, "source": true, "track": true,
	"picture": true, "image": true, "template": true, "portal": true, "applet": true,
}

// htmlTag is a raw HTML open tag: its element, its attributes, and its
// length.
type htmlTag struct {
	name  string
	attrs []htmlAttr
	n     int
}

type htmlAttr struct {
	name, value string
	hasValue    bool
}

// judgeTag judges the open tag s starts with. A "<" that starts none is
// text, but escaped where a form the guard may replace starts before the
// tag fails (a link where an attribute should be: its label would be
// one), or where a tag runs past the hold: the client must not read a
// tag the guard did not.
func (g *LinkGuard) judgeTag(s string, final bool) verdict {
	switch dest, n, state := scanAutolink(s); {
	case state == formIncomplete && holding(s, final):
		return waitForMore
	case state == formComplete && g.allowed.Allows(dest):
		return kept(s, n)
	case state == formComplete:
		return replaced(n, linkRemoved)
	}
	tag, state, failAt := scanTag(s)
	escaped := verdict{n: 1, text: escapedTagStart}
	switch {
	case state == formNot:
		// Where a form the guard may replace starts (a "!" before it
		// counts: with a replacement's "[" it reads as "!["), or may yet
		// start once more text comes.
		start := func(at int) int {
			if at > 1 && at < len(s) && s[at] != '!' && s[at-1] == '!' {
				return at - 1
			}
			return at
		}
		first, partial := linkStart(s[1:], '<'), partialLinkStart(s[1:], '<')
		if partial == 0 && strings.HasSuffix(s, "]") {
			partial = 1 // a "(" or ":" may follow
		}
		switch {
		case first >= 0 && start(1+first) <= failAt:
			return escaped
		case holding(s, final) && partial > 0 && start(len(s)-partial) <= failAt:
			return waitForMore
		}
		return kept(s, 1)
	case state == formIncomplete && holding(s, final):
		return waitForMore
	case state == formIncomplete && final && linkStart(s[1:], '<') < 0:
		return kept(s, 1) // the answer ends inside it: no tag
	case state == formIncomplete:
		return escaped
	case g.tagAllowed(tag):
		return kept(s, tag.n)
	case tag.name == "img":
		return replaced(tag.n, imageRemoved)
	}
	return replaced(tag.n, linkRemoved)
}

// tagAllowed says whether tag loads nothing the answer was not given.
func (g *LinkGuard) tagAllowed(tag htmlTag) bool {
	if loadingElements[tag.name] {
		return false
	}
	for _, attr := range tag.attrs {
		switch {
		case !attr.hasValue, inertAttributes[attr.name]:
		case urlAttributes[attr.name] && g.allowed.Allows(attr.value):
		default:
			return false
		}
	}
	return true
}

// scanTag reads the HTML open tag at the start of s as CommonMark
// does: "<", an element name, attributes (name, or name=value unquoted,
// 'single' or "double" quoted) each after blanks or line endings, and
// ">" or "/>". failAt is where s stops being one (formNot).
func scanTag(s string) (tag htmlTag, state formState, failAt int) {
	i := 1
	for i < len(s) && (isASCIILetter(s[i]) || (i > 1 && (isASCIIDigit(s[i]) || s[i] == '-'))) {
		i++
	}
	switch {
	case i == len(s):
		return htmlTag{}, formIncomplete, 0
	case i == 1:
		return htmlTag{}, formNot, i
	}
	tag.name = strings.ToLower(s[1:i])
	for {
		blank := i
		for i < len(s) && isHTMLSpace(s[i]) {
			i++
		}
		switch {
		case i == len(s):
			return htmlTag{}, formIncomplete, 0
		case s[i] == '>':
			tag.n = i + 1
			return tag, formComplete, 0
		case s[i] == '/' && i+1 == len(s):
			return htmlTag{}, formIncomplete, 0
		case s[i] == '/' && s[i+1] == '>':
			tag.n = i + 2
			return tag, formComplete, 0
		case i == blank:
			return htmlTag{}, formNot, i // attributes are apart
		}
		attr, end, state := scanAttribute(s, i)
		if state != formComplete {
			return htmlTag{}, state, end
		}
		tag.attrs = append(tag.attrs, attr)
		i = end
	}
}

// scanAttribute reads one attribute at s[i]; end is just past it, or
// where s stops being one (formNot).
func scanAttribute(s string, i int) (htmlAttr, int, formState) {
	start := i
	for i < len(s) && isAttributeNameByte(s[i], i == start) {
		i++
	}
	switch {
	case i == start:
		return htmlAttr{}, i, formNot
	case i == len(s):
		return htmlAttr{}, 0, formIncomplete
	}
	attr := htmlAttr{name: strings.ToLower(s[start:i])}
	j := i
	for j < len(s) && isHTMLSpace(s[j]) {
		j++
	}
	switch {
	case j == len(s):
		return htmlAttr{}, 0, formIncomplete
	case s[j] != '=':
		return attr, i, formComplete // a name alone: it names no URL
	}
	j++
	for j < len(s) && isHTMLSpace(s[j]) {
		j++
	}
	if j == len(s) {
		return htmlAttr{}, 0, formIncomplete
	}
	attr.hasValue = true
	if quote := s[j]; quote == '"' || quote == '\'' {
		closing := strings.IndexByte(s[j+1:], quote)
		if closing < 0 {
			return htmlAttr{}, 0, formIncomplete
		}
		attr.value = s[j+1 : j+1+closing]
		return attr, j + closing + 2, formComplete
	}
	// Unquoted, it goes on to a blank or ">" as an HTML parser reads it
	// (CommonMark's inline tag stops at a quote, "=", "<" or "`", but an
	// HTML block passes the line to the parser as it is).
	end := j
	for end < len(s) && !isHTMLSpace(s[end]) && s[end] != '>' {
		end++
	}
	switch {
	case end == j:
		return htmlAttr{}, j, formNot
	case end == len(s):
		return htmlAttr{}, 0, formIncomplete
	}
	attr.value = s[j:end]
	return attr, end, formComplete
}

func isHTMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// isAttributeNameByte: a letter, "_" or ":" first, then also digits, "."
// and "-".
func isAttributeNameByte(c byte, first bool) bool {
	if isASCIILetter(c) || c == '_' || c == ':' {
		return true
	}
	return !first && (isASCIIDigit(c) || c == '.' || c == '-')
}

// scanAutolink reads the CommonMark URI autolink s starts with:
// "<scheme:…>", a scheme of 2 to 32 letters, digits, "+", "." or "-"
// after a letter, and no blank, control or angle bracket before the ">".
// Any scheme is a link to a client ("javascript:" too), so each is judged.
func scanAutolink(s string) (dest string, n int, state formState) {
	i := 1
	for i < len(s) && i <= 33 && (isASCIILetter(s[i]) || (i > 1 && (isASCIIDigit(s[i]) || strings.IndexByte("+.-", s[i]) >= 0))) {
		i++
	}
	switch {
	case i == len(s):
		return "", 0, formIncomplete
	case i < 3 || i > 33 || s[i] != ':':
		return "", 0, formNot
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '>':
			return s[1:j], j + 1, formComplete
		case c <= ' ' || c == 0x7f || c == '<':
			return "", 0, formNot
		}
	}
	return "", 0, formIncomplete
}
