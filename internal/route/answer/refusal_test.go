package answer

import (
	"strings"
	"testing"
)

func TestRefusalHoldKeepsBackOnlyTheWholeWording(t *testing.T) {
	wordings := []string{"I could not find this in the documentation.", "Я не нашёл этого в документации."}
	cases := []struct {
		name   string
		pieces []string
		shown  string
		held   bool
	}{
		{"the wording, streamed in pieces", []string{" I could", " not find this", " in the documentation."}, "", true},
		{"the Russian wording", []string{"Я не нашёл ", "этого в документации."}, "", true},
		{"an answer that starts like it", []string{"I could", " not find a flag, but set ", "prune: true [S1]."}, "I could not find a flag, but set prune: true [S1].", false},
		{"an answer", []string{"Set ", "prune: true."}, "Set prune: true.", false},
		{"a reply cut short inside the wording", []string{"I could not"}, "I could not", false},
	}
	for _, tc := range cases {
		var shown strings.Builder
		hold := NewRefusalHold(wordings...)
		pipe := NewPipe(func(s string) error { shown.WriteString(s); return nil }, hold)
		for _, p := range tc.pieces {
			if err := pipe.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := pipe.Flush(); err != nil {
			t.Fatal(err)
		}
		if shown.String() != tc.shown || hold.Held() != tc.held {
			t.Errorf("%s: shown %q held %v; want %q %v", tc.name, shown.String(), hold.Held(), tc.shown, tc.held)
		}
	}
}

// What passes passes as soon as it can no longer be the wording: an
// answer's first words are not held back to its end.
func TestRefusalHoldPassesAnAnswerAsSoonAsItDiffers(t *testing.T) {
	var shown strings.Builder
	pipe := NewPipe(func(s string) error { shown.WriteString(s); return nil }, NewRefusalHold("I could not find this."))
	_ = pipe.Write("I could")
	if shown.Len() != 0 {
		t.Fatalf("shown %q while it could still be the wording", shown.String())
	}
	_ = pipe.Write(" use")
	if shown.String() != "I could use" {
		t.Errorf("shown %q", shown.String())
	}
}
