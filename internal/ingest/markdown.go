package ingest

import (
	"fmt"
	"iter"
	"regexp"
	"strings"
)

// section is a node of a document's heading tree. The root (level 0)
// holds the text under no heading.
type section struct {
	level   int
	heading string   // the heading's raw Markdown, trimmed
	path    []string // headings from the outermost enclosing one down to this one
	// text is the heading line, then the section's own lines (not its
	// subsections'), as they stand in the body: they are consecutive.
	text  string
	start int // where text starts in the body
	kids  []*section

	own        string  // ownText, once worked out by chunker.own
	lineTokens []int32 // the token counts of own's lines, when counts add up
	tokens     int     // own's token count
	counted    bool    // own, lineTokens and tokens are worked out
}

// headingLine is an ATX heading; parseHeading matches it.
var headingLine = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)

// parseHeading matches a line against headingLine: at most three spaces,
// one to six '#', then the end of the line or blanks and the heading's
// text, whose trailing blanks are not part of it. It is written out, as
// every line outside code is tested and the regexp backtracks.
func parseHeading(line string) (level int, text string, ok bool) {
	rest := strings.TrimLeft(line, " ")
	if len(line)-len(rest) > 3 {
		return 0, "", false
	}
	level = len(rest) - len(strings.TrimLeft(rest, "#"))
	rest = rest[level:]
	if level == 0 || level > 6 || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return 0, "", false
	}
	return level, strings.Trim(rest, " \t"), true
}

// openingFence returns the fence marker a line opens with: a run of three
// or more backticks or tildes after at most three spaces (the regexp
// ^ {0,3}(`{3,}|~{3,}), written out as every line is tested); "" when
// it has none.
func openingFence(line string) string {
	rest := strings.TrimLeft(line, " ")
	if len(line)-len(rest) > 3 || rest == "" || (rest[0] != '`' && rest[0] != '~') {
		return ""
	}
	run := len(rest) - len(strings.TrimLeft(rest, rest[:1]))
	if run < 3 {
		return ""
	}
	return rest[:run]
}

// fence tracks whether a line is inside fenced code, where '#' lines are
// not headings.
type fence struct {
	marker string // "" when outside
}

// step reports whether line is code (a fence line or inside a fence).
func (f *fence) step(line string) bool {
	if f.marker == "" {
		if marker := openingFence(line); marker != "" {
			// A backtick fence's info string may not contain backticks.
			if marker[0] == '`' && strings.Contains(strings.TrimLeft(line, " ")[len(marker):], "`") {
				return false
			}
			f.marker = marker
			return true
		}
		return false
	}
	// A closing fence is a run of the opening one's character, at least as
	// long, then only blanks.
	if trimmed := strings.TrimLeft(line, " "); len(line)-len(trimmed) <= 3 && strings.HasPrefix(trimmed, f.marker) &&
		strings.Trim(strings.TrimRight(trimmed, " \t\r"), f.marker[:1]) == "" {
		f.marker = ""
	}
	return true
}

// parseSections builds the heading tree of a Markdown body. Only ATX
// headings outside fenced code count, as in the eval set's conventions.
// A body with more than maxHeadings headings is refused as soon as the
// count is passed, before its tree takes the memory of millions of
// sections.
func parseSections(body string, maxHeadings int) (*section, error) {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	root := &section{}
	stack := []*section{root}
	var f fence
	headings := 0
	for start, line := range lineSpans(body) {
		if !f.step(line) {
			if level, heading, ok := parseHeading(line); ok {
				if headings++; headings > maxHeadings {
					return nil, fmt.Errorf("more than %d headings, the most chunks one document may make: refused", maxHeadings)
				}
				stack = openSection(stack, level, strings.TrimSpace(heading), start)
			}
		}
		top := stack[len(stack)-1]
		top.text = body[top.start : start+len(line)]
	}
	return root, nil
}

// openSection adds a section for a heading starting at start in the body
// under the innermost open section of a lower level, and opens it.
func openSection(stack []*section, level int, heading string, start int) []*section {
	for stack[len(stack)-1].level >= level {
		stack = stack[:len(stack)-1]
	}
	parent := stack[len(stack)-1]
	heading = cutBytes(heading, MaxHeadingBytes) // the path's; the text keeps the line whole
	node := &section{level: level, heading: heading, start: start}
	node.path = append(append([]string{}, parent.path...), heading)
	parent.kids = append(parent.kids, node)
	return append(stack, node)
}

// lineSpans yields each line of text, cut at "\n" as strings.Split cuts
// it, and where it starts in text: a run of consecutive lines can then be
// sliced from text instead of joined again.
func lineSpans(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		for start := 0; ; {
			end := strings.IndexByte(text[start:], '\n')
			if end < 0 {
				yield(start, text[start:])
				return
			}
			if !yield(start, text[start:start+end]) {
				return
			}
			start += end + 1
		}
	}
}

// ownText is the section's heading line and own lines, trimmed of blank
// lines at both ends.
func (s *section) ownText() string {
	return strings.Trim(s.text, "\n \t")
}

// hasBody reports whether the section has text of its own beyond its heading.
func (s *section) hasBody() bool {
	body := s.text
	if s.level > 0 {
		_, body, _ = strings.Cut(s.text, "\n")
	}
	return strings.TrimSpace(body) != ""
}

// LinePaths returns, for each line of a document's body (front matter
// excluded) as a reader sees it (readerBody), the heading path in effect
// at that line, and the body's lines. Evaluation tools use it to tell
// which sections a span covers.
func LinePaths(content, frontMatterKey string) (lines []string, paths [][]string, err error) {
	_, body, err := readerBody(content, frontMatterKey)
	if err != nil {
		return nil, nil, err
	}
	var stack []*section
	var f fence
	for _, line := range strings.Split(body, "\n") {
		if !f.step(line) {
			if level, text, ok := parseHeading(line); ok {
				for len(stack) > 0 && stack[len(stack)-1].level >= level {
					stack = stack[:len(stack)-1]
				}
				stack = append(stack, &section{level: level, heading: strings.TrimSpace(text)})
			}
		}
		path := make([]string, len(stack))
		for i, s := range stack {
			path[i] = s.heading
		}
		lines = append(lines, line)
		paths = append(paths, path)
	}
	return lines, paths, nil
}
