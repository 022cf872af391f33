package route

import (
	"regexp"
	"strings"

	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The answer is checked as it streams, one unit at a time: a prose
// sentence, a list item or a code block, as answerUnits cuts fragments.
// answerSplitter cuts the streamed text into segments whose raw texts
// concatenate back to the answer exactly, so whatever a policy lets
// through reads as the model wrote it.

// segment is a complete piece of the answer: raw as streamed (with the
// whitespace after it), and the text to check ("" for what is not
// checked: blank lines, headings, bare markers).
type segment struct {
	raw, check string
}

// maxSegmentHold bounds a segment held waiting for its end; past it the
// text is cut where it is.
const maxSegmentHold = 4096

// lineKindChars is how much of a line tells a list item, heading or code
// fence from prose ("100. " is five).
const lineKindChars = 6

var (
	leadingMarker = regexp.MustCompile(`^\[S\d+\]`)
	partialMarker = regexp.MustCompile(`^\[(S\d*)?$`)
)

type answerSplitter struct {
	pending   string
	lineStart bool // pending starts a line
}

func newAnswerSplitter() *answerSplitter { return &answerSplitter{lineStart: true} }

// write takes the next delta and returns the segments it completed.
func (s *answerSplitter) write(text string) []segment {
	s.pending += text
	return s.cut(false)
}

// flush returns what is left once the answer has ended.
func (s *answerSplitter) flush() []segment { return s.cut(true) }

func (s *answerSplitter) cut(final bool) []segment {
	var out []segment
	for s.pending != "" {
		n := s.next(final || len(s.pending) > maxSegmentHold)
		if n == 0 {
			break
		}
		raw := s.pending[:n]
		s.pending = s.pending[n:]
		s.lineStart = strings.HasSuffix(raw, "\n")
		out = append(out, segment{raw: raw, check: checkable(raw)})
	}
	return out
}

// next is the length of the complete segment pending starts with; 0:
// not complete yet.
func (s *answerSplitter) next(final bool) int {
	p := s.pending
	if s.lineStart {
		line, complete := p, false
		if i := strings.IndexByte(p, '\n'); i >= 0 {
			line, complete = p[:i+1], true
		}
		trimmed := strings.TrimSpace(line)
		if !complete && !final && len(strings.TrimLeft(line, " \t")) < lineKindChars {
			return 0 // not yet known what the line is
		}
		switch {
		case strings.HasPrefix(trimmed, "```"):
			return codeBlockEnd(p, final)
		case trimmed == "", strings.HasPrefix(trimmed, "#"), isListItem(trimmed):
			if complete || final {
				return len(line)
			}
			return 0
		}
	}
	return sentenceEnd(p, final)
}

// codeBlockEnd is the length of the fenced block p starts with, through
// its closing fence's line.
func codeBlockEnd(p string, final bool) int {
	open := strings.IndexByte(p, '\n')
	if open < 0 {
		return finalLen(p, final)
	}
	for at := open + 1; at < len(p); {
		end := strings.IndexByte(p[at:], '\n')
		if end < 0 {
			break
		}
		if strings.HasPrefix(strings.TrimSpace(p[at:at+end]), "```") {
			return at + end + 1
		}
		at += end + 1
	}
	return finalLen(p, final)
}

// sentenceEnd is the length of the prose sentence p starts with: through
// its end (. ! ? before a space, or the line's end), the markers that
// follow it and the spaces after.
func sentenceEnd(p string, final bool) int {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\n' {
			return i + 1
		}
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		if i+1 == len(p) {
			return finalLen(p, final)
		}
		if p[i+1] != ' ' && p[i+1] != '\n' {
			continue
		}
		return afterSentence(p, i+1, final)
	}
	return finalLen(p, final)
}

// afterSentence extends a sentence ending at end over the markers and
// spaces that follow it (a model often writes "… first. [S1] Then …").
func afterSentence(p string, end int, final bool) int {
	for {
		j := end
		for j < len(p) && p[j] == ' ' {
			j++
		}
		if j < len(p) && p[j] == '\n' {
			return j + 1
		}
		rest := p[j:]
		if m := leadingMarker.FindString(rest); m != "" {
			end = j + len(m)
			continue
		}
		if !final && (rest == "" || partialMarker.MatchString(rest)) {
			return 0 // a marker may follow
		}
		return j
	}
}

func finalLen(p string, final bool) int {
	if final {
		return len(p)
	}
	return 0
}

// checkable is what of a segment is checked: nothing for blank lines,
// headings and text without content words (bare markers, "Sure!").
func checkable(raw string) string {
	text := strings.TrimSpace(raw)
	if strings.HasPrefix(text, "#") || len(retrieval.ContentWords(markerPattern.ReplaceAllString(text, ""))) == 0 {
		return ""
	}
	return text
}
