package ingest

import (
	"bytes"
	"regexp"
	"strings"
)

// readerBody splits off a document's front matter and returns its body as
// a reader of the rendered page sees it: Hugo shortcodes resolved as far
// as a chunker can without the site (resolveShortcodes) and heading
// attributes dropped (HeadingText). Chunking, the line paths evaluation
// scores with and the tests' nothing-lost check all start from it, so they
// agree line for line. Markdown without either (the Argo CD docs) comes
// back as it was, CRLF line ends made LF.
func readerBody(content, aclKey string) (frontMatter, string, error) {
	fm, body, _, err := splitFrontMatter(content, aclKey)
	if err != nil {
		return frontMatter{}, "", err
	}
	body = strings.ReplaceAll(body, "\r\n", "\n")
	return fm, dropHeadingAttributes(resolveShortcodes(body)), nil
}

// headingAttributes is a trailing attribute block of a heading, as Hugo's
// Markdown renderer (Goldmark) reads it: "## Location {#location}",
// "### `BUILD` {#build .notranslate lang=en}". It sets the anchor, classes
// and HTML attributes; the reader never sees it.
var headingAttributes = regexp.MustCompile(`[ \t]+\{[ \t]*(?:(?:#[^\s{}]+|\.[^\s{}]+|[A-Za-z_][\w.:-]*=(?:"[^"{}]*"|'[^'{}]*'|[^\s"'{}]+))[ \t]*)+\}$`)

// HeadingText is a heading's text without a trailing attribute block
// ({#id}, {.class}, {key=value}): the heading a reader sees. Question sets
// write gold heading paths as the file has them; the scorer normalizes
// them with this, as the chunker does its headings.
func HeadingText(heading string) string {
	if !strings.HasSuffix(heading, "}") {
		return heading
	}
	return headingAttributes.ReplaceAllLiteralString(heading, "")
}

// dropHeadingAttributes removes the attribute blocks of the body's ATX
// headings outside fenced code.
func dropHeadingAttributes(body string) string {
	if !strings.Contains(body, "}") {
		return body
	}
	lines := strings.Split(body, "\n")
	changed := false
	var f fence
	for i, line := range lines {
		if f.step(line) || !strings.HasSuffix(strings.TrimRight(line, " \t"), "}") {
			continue
		}
		if _, text, ok := parseHeading(line); ok {
			if seen := HeadingText(text); seen != text {
				// The block holds no brace, so the line's last one opens it.
				lines[i] = strings.TrimRight(line[:strings.LastIndexByte(line, '{')], " \t")
				changed = true
			}
		}
	}
	if !changed {
		return body
	}
	return strings.Join(lines, "\n")
}

// How a shortcode reaches the reader, by name. Any other shortcode's
// markers are dropped, their inner text kept, and a label argument kept
// (shortcodeLabel): a site template renders it (a table, an included
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
// {{% name args %}}, or a closing {{< /name >}}.
type shortcode struct {
	name       string
	closing    bool
	positional []string
	named      map[string]string
	// literal is what an escaped marker ({{</* name */>}}) shows: the
	// marker itself, unescaped.
	literal string
}

// shortcodeName is what Hugo accepts as a shortcode's name.
var shortcodeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_./-]*$`)

// resolveShortcodes replaces each Hugo shortcode marker by what a reader
// of the page sees of it (see hiddenShortcodes, valueShortcodes,
// shortcodeLabel), in code blocks too, as Hugo does. Paired shortcodes'
// inner text stays; a line that held only markers rendering nothing goes.
// A "{{<" or "{{%" that does not open a well-formed marker stays as
// written.
func resolveShortcodes(body string) string {
	if !strings.Contains(body, "{{<") && !strings.Contains(body, "{{%") {
		return body
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		open := nextShortcode(body, i)
		if open < 0 {
			out = append(out, body[i:]...)
			break
		}
		out = append(out, body[i:open]...)
		sc, end, ok := parseShortcode(body, open)
		switch {
		case !ok:
			out, i = append(out, body[open:open+3]...), open+3
			continue
		case sc.literal != "":
			out, i = append(out, sc.literal...), end
			continue
		case hiddenShortcodes[sc.name] && !sc.closing:
			if closed := closingEnd(body, end, sc.name); closed >= 0 {
				end = closed
			}
		}
		out, i = place(out, body, sc.render(), end)
	}
	return string(out)
}

// nextShortcode is where the next "{{<" or "{{%" starts at or after from;
// -1 when none does.
func nextShortcode(body string, from int) int {
	for {
		at := strings.Index(body[from:], "{{")
		if at < 0 || from+at+2 >= len(body) {
			return -1
		}
		if c := body[from+at+2]; c == '<' || c == '%' {
			return from + at
		}
		from += at + 2
	}
}

// parseShortcode reads the marker opening at open; end is just past it.
// ok is false when it is not a marker: no closing delimiter before the
// next "{{", or no name.
func parseShortcode(body string, open int) (sc shortcode, end int, ok bool) {
	opener, closer := body[open:open+3], "%}}"
	if opener == "{{<" {
		closer = ">}}"
	}
	rest := body[open+3:]
	n := strings.Index(rest, closer)
	if n < 0 || strings.Contains(rest[:n], "{{") {
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
	sc.positional, sc.named = shortcodeArgs(args)
	return sc, end, true
}

// closingEnd is where the closing marker of name after from ends; -1 when
// there is none.
func closingEnd(body string, from int, name string) int {
	for at := nextShortcode(body, from); at >= 0; at = nextShortcode(body, at+3) {
		if sc, end, ok := parseShortcode(body, at); ok && sc.closing && sc.name == name {
			return end
		}
	}
	return -1
}

// render is the text a reader sees in place of the marker.
func (sc shortcode) render() string {
	switch {
	case sc.closing || hiddenShortcodes[sc.name]:
		return ""
	case valueShortcodes[sc.name]:
		if len(sc.positional) > 0 {
			return sc.positional[0]
		}
		return ""
	}
	return sc.label()
}

// label is what a shortcode shows of its arguments: a title, header or
// name argument, or the first positional argument of the
// labelFirstShortcodes; "" when none.
func (sc shortcode) label() string {
	for _, key := range []string{"title", "header", "name"} {
		if v := sc.named[key]; v != "" {
			return v
		}
	}
	if labelFirstShortcodes[sc.name] && len(sc.positional) > 0 {
		return sc.positional[0]
	}
	return ""
}

// shortcodeArgs splits a marker's arguments: quoted ("..." or `...`) or
// bare positional ones, and key=value named ones.
func shortcodeArgs(s string) (positional []string, named map[string]string) {
	named = map[string]string{}
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		var key string
		if eq := strings.IndexByte(s, '='); eq > 0 && !strings.ContainsAny(s[:eq], " \t\n\"`") {
			key, s = s[:eq], s[eq+1:]
		}
		var value string
		value, s = shortcodeValue(s)
		if key != "" {
			named[key] = value
		} else {
			positional = append(positional, value)
		}
	}
	return positional, named
}

// shortcodeValue reads one argument value at the start of s: quoted, or
// up to the next blank; rest is what follows it.
func shortcodeValue(s string) (value, rest string) {
	if s != "" && (s[0] == '"' || s[0] == '`') {
		if end := strings.IndexByte(s[1:], s[0]); end >= 0 {
			return strings.ReplaceAll(s[1:1+end], `\"`, `"`), s[2+end:]
		}
	}
	if end := strings.IndexAny(s, " \t\n"); end >= 0 {
		return s[:end], s[end:]
	}
	return s, ""
}

// place appends what a marker ending at end renders to out, and returns
// where the body goes on. A marker that renders nothing at the start of a
// line takes the blanks after it, and the whole line when nothing else is
// on it.
func place(out []byte, body, text string, end int) ([]byte, int) {
	if text != "" {
		return append(out, text...), end
	}
	lineStart := bytes.LastIndexByte(out, '\n') + 1
	if strings.Trim(string(out[lineStart:]), " \t") != "" {
		return out, end
	}
	next := end
	for next < len(body) && (body[next] == ' ' || body[next] == '\t') {
		next++
	}
	if next == len(body) || body[next] == '\n' {
		out = out[:lineStart]
		if next < len(body) {
			next++
		}
	}
	return out, next
}
