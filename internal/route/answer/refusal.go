package answer

import "strings"

// RefusalHold holds back an answer that may still turn out to be the
// not-found wording, so that a route which overrides the model's refusal
// (whenModelRefuses) never shows it: what the model writes passes as soon
// as it can no longer be one of the wordings. An answer that is one, whole,
// is never passed on; Held says so.
type RefusalHold struct {
	outlet
	wordings []string
	held     strings.Builder
	passing  bool
	refused  bool
}

// NewRefusalHold holds back text while it is the start of one of wordings.
func NewRefusalHold(wordings ...string) *RefusalHold {
	h := &RefusalHold{}
	for _, w := range wordings {
		if w = strings.TrimSpace(w); w != "" {
			h.wordings = append(h.wordings, w)
		}
	}
	return h
}

// Write passes text on once what was written can no longer be a wording.
func (h *RefusalHold) Write(text string) error {
	if h.passing {
		return h.pass(text)
	}
	h.held.WriteString(text)
	if h.startsAWording(strings.TrimLeft(h.held.String(), " \t\r\n")) {
		return nil
	}
	h.passing = true
	return h.pass(h.held.String())
}

// Flush passes on what was held, unless it is a whole wording.
func (h *RefusalHold) Flush() error {
	if h.passing {
		return nil
	}
	whole := strings.TrimSpace(h.held.String())
	for _, w := range h.wordings {
		if whole == w {
			h.refused = true
			return nil
		}
	}
	h.passing = true
	return h.pass(h.held.String())
}

// Held says whether the answer was the not-found wording and was kept
// back.
func (h *RefusalHold) Held() bool { return h.refused }

func (h *RefusalHold) startsAWording(text string) bool {
	for _, w := range h.wordings {
		if strings.HasPrefix(w, text) {
			return true
		}
	}
	return false
}
