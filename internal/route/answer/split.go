package answer

import (
	"strings"

	"github.com/ragroute/ragroute/internal/ingest"
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
		case trimmed == "", strings.HasPrefix(trimmed, "#"), ingest.IsListItem(trimmed):
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

// checkable is what of a segment is checked: nothing for blank lines,
// headings and text without content words (bare markers, "Sure!").
func checkable(raw string) string {
	text := strings.TrimSpace(raw)
	if strings.HasPrefix(text, "#") || len(retrieval.ContentWords(markerPattern.ReplaceAllString(text, ""))) == 0 {
		return ""
	}
	return text
}
