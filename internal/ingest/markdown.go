package ingest

import (
	"regexp"
	"strings"
)

// section is a node of a document's heading tree. The root (level 0)
// holds the text under no heading.
type section struct {
	level   int
	heading string   // the heading's raw Markdown, trimmed
	path    []string // headings from the outermost enclosing one down to this one
	lines   []string // the heading line, then the section's own lines (not its subsections')
	kids    []*section
}

var (
	headingLine = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$`)
	fenceOpen   = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")
)

// fence tracks whether a line is inside fenced code, where '#' lines are
// not headings.
type fence struct {
	marker string // "" when outside
}

// step reports whether line is code (a fence line or inside a fence).
func (f *fence) step(line string) bool {
	trimmed := strings.TrimLeft(line, " ")
	if f.marker == "" {
		if m := fenceOpen.FindStringSubmatch(line); m != nil && len(line)-len(trimmed) <= 3 {
			// A backtick fence's info string may not contain backticks.
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

// parseSections builds the heading tree of a Markdown body. Only ATX
// headings outside fenced code count, as in the eval set's conventions.
func parseSections(body string) *section {
	root := &section{}
	stack := []*section{root}
	var f fence
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		if f.step(line) {
			top := stack[len(stack)-1]
			top.lines = append(top.lines, line)
			continue
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			top := stack[len(stack)-1]
			top.lines = append(top.lines, line)
			continue
		}
		level := len(m[1])
		for stack[len(stack)-1].level >= level {
			stack = stack[:len(stack)-1]
		}
		parent := stack[len(stack)-1]
		heading := strings.TrimSpace(m[2])
		node := &section{level: level, heading: heading, lines: []string{line}}
		node.path = append(append([]string{}, parent.path...), heading)
		parent.kids = append(parent.kids, node)
		stack = append(stack, node)
	}
	return root
}

// ownText is the section's heading line and own lines, trimmed of blank
// lines at both ends.
func (s *section) ownText() string {
	return strings.Trim(strings.Join(s.lines, "\n"), "\n \t")
}

// hasBody reports whether the section has text of its own beyond its heading.
func (s *section) hasBody() bool {
	start := 0
	if s.level > 0 {
		start = 1
	}
	for _, line := range s.lines[start:] {
		if strings.TrimSpace(line) != "" {
			return true
		}
	}
	return false
}

// LinePaths returns, for each line of a document's body (front matter
// excluded), the heading path in effect at that line, and the body's
// lines. Evaluation tools use it to tell which sections a span covers.
func LinePaths(content, frontMatterKey string) (lines []string, paths [][]string, err error) {
	_, body, _, err := splitFrontMatter(content, frontMatterKey)
	if err != nil {
		return nil, nil, err
	}
	var stack []*section
	var f fence
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		if !f.step(line) {
			if m := headingLine.FindStringSubmatch(line); m != nil {
				level := len(m[1])
				for len(stack) > 0 && stack[len(stack)-1].level >= level {
					stack = stack[:len(stack)-1]
				}
				stack = append(stack, &section{level: level, heading: strings.TrimSpace(m[2])})
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
