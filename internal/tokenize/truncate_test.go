package tokenize

import (
	"strings"
	"testing"
)

func TestTruncateKeepsTheFirstTokensUpToTheLimit(t *testing.T) {
	w := NewBERTUncased()
	text := strings.Repeat("Rolling updates replace pods one at a time, keeping the service up. ", 40)
	for _, limit := range []int{1, 7, 100, 256} {
		got := Truncate(w, text, limit)
		if n := w.Count(got); n > limit || n < limit-12 {
			t.Errorf("limit %d: prefix counts %d tokens", limit, n)
		}
		if !strings.HasPrefix(text, got) {
			t.Errorf("limit %d: %q is not a prefix", limit, got)
		}
	}
	short := "fits easily"
	if got := Truncate(w, short, 256); got != short {
		t.Errorf("a text within the limit changed: %q", got)
	}
	if got := Truncate(w, text, 0); got != text {
		t.Error("limit 0 means no limit")
	}
}

func TestInputCounterIsBERTsCountButForOverlongWords(t *testing.T) {
	c, bert := NewInputCounter(), NewBERTUncased()
	prose := "Rolling updates replace pods one at a time, keeping the service up."
	if c.Count(prose) != bert.Count(prose) {
		t.Errorf("prose: %d tokens, BERT counts %d", c.Count(prose), bert.Count(prose))
	}
	key := strings.Repeat("q7", 60) // 120 characters: one [UNK] to BERT
	if got := c.Count("key " + key); got != 1+120 {
		t.Errorf("an overlong word counts %d with the word before it, want 121", got)
	}
	if got := c.ContentBudget(512, "query: "); got != 512-SpecialTokens-bert.Count("query: ") {
		t.Errorf("budget behind a prefix: %d", got)
	}
}
