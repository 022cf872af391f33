package answer

import (
	"regexp"
	"strings"
)

// fenceTail is what follows a fence in the packing: " S1 | title | source"
// on an opening line, " end S1" on a closing one.
var fenceTail = regexp.MustCompile(`^ (?:end )?S\d+(?: \|[^\n]*)?`)

// maxFenceTail bounds how long an echoed marker line is held back.
const maxFenceTail = 512

// FenceScrubber is the stage that removes the turn's fence markers from a
// streamed answer: a small model sometimes echoes them, and they are
// packing syntax, not text for the user. Text that may be the start of a
// marker is held until it is known, so a marker split across deltas is
// removed too.
type FenceScrubber struct {
	outlet
	fence   string
	pending string
}

// NewFenceScrubber scrubs the turn's fence.
func NewFenceScrubber(fence string) *FenceScrubber {
	return &FenceScrubber{fence: fence}
}

// Write takes the next delta.
func (s *FenceScrubber) Write(text string) error {
	s.pending += text
	return s.drain(false)
}

// Flush sends what is held back once the answer is complete.
func (s *FenceScrubber) Flush() error { return s.drain(true) }

func (s *FenceScrubber) drain(final bool) error {
	var out strings.Builder
	for {
		at := strings.Index(s.pending, s.fence)
		if at < 0 {
			break
		}
		rest := s.pending[at+len(s.fence):]
		if !final && !strings.Contains(rest, "\n") && len(rest) < maxFenceTail {
			// The marker's tail may still be streaming: emit what precedes it.
			out.WriteString(s.pending[:at])
			s.pending = s.pending[at:]
			return s.pass(out.String())
		}
		out.WriteString(s.pending[:at])
		s.pending = rest[len(fenceTail.FindString(rest)):]
	}
	keep := 0
	if !final {
		keep = partialPrefix(s.pending, s.fence)
	}
	out.WriteString(s.pending[:len(s.pending)-keep])
	s.pending = s.pending[len(s.pending)-keep:]
	return s.pass(out.String())
}

// partialPrefix is the length of the longest end of text that begins fence.
func partialPrefix(text, fence string) int {
	for n := min(len(text), len(fence)-1); n > 0; n-- {
		if strings.HasPrefix(fence, text[len(text)-n:]) {
			return n
		}
	}
	return 0
}
