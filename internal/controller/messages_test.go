package controller

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A failed ingestion's log lands in status cut, and still valid UTF-8
// when the cut falls inside a character.
func TestTruncatedMessageStaysValidUTF8(t *testing.T) {
	log := strings.Repeat("a", statusMessageMax-1) + "é and more"
	got := truncateMessage(log)
	if !utf8.ValidString(got) {
		t.Fatalf("the cut message is not valid UTF-8: ...%q", got[len(got)-8:])
	}
	if !strings.HasSuffix(got, "…") || len(got) > statusMessageMax+len("…") {
		t.Errorf("the message is not marked as cut or is longer than %d bytes: %d", statusMessageMax, len(got))
	}
}
