package answer

import (
	"strings"
	"testing"
)

// upper is a test stage that holds everything until Flush, upper-cased.
type upper struct {
	outlet
	held strings.Builder
}

func (u *upper) Write(text string) error { u.held.WriteString(text); return nil }
func (u *upper) Flush() error            { return u.pass(strings.ToUpper(u.held.String())) }

// A pipe wires its stages in the order given and flushes them in that
// order, so text one stage held back still passes the stages after it.
func TestPipeFlushesEachStageThroughTheRest(t *testing.T) {
	const fence = "⟦data-0a1b2c3d4e5f⟧"
	var got strings.Builder
	guard := NewLinkGuard(AllowedLinks{})
	pipe := NewPipe(func(s string) error { got.WriteString(s); return nil }, NewFenceScrubber(fence), &upper{}, guard)
	for _, d := range []string{"see https://evil.example/x ", fence + " end S1", "\ndone"} {
		if err := pipe.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if got.Len() != 0 {
		t.Fatalf("the holding stage let %q through before the end", got.String())
	}
	if err := pipe.Flush(); err != nil {
		t.Fatal(err)
	}
	// Upper-cased by the middle stage, then the guard judged the URL.
	if want := "SEE [link removed] \nDONE"; got.String() != want {
		t.Errorf("got %q, want %q", got.String(), want)
	}
	if guard.Removed() != 1 {
		t.Errorf("removed %d links, want 1", guard.Removed())
	}
}
