package tokenize

import (
	"strings"
	"unicode"
)

// Truncate returns the longest prefix of text, ending at a word boundary,
// that counts at most limit tokens: what an embedder that truncates its
// input (as sentence-transformers does at max_seq_length) actually sees.
// A text within the limit is returned unchanged. Both tokenizers here
// split on whitespace first, so word counts add up.
func Truncate(c Counter, text string, limit int) string {
	if limit <= 0 || c.Count(text) <= limit {
		return text
	}
	used, end := 0, 0
	for start := 0; start < len(text); {
		wordEnd := start + strings.IndexFunc(text[start:], unicode.IsSpace)
		if wordEnd < start {
			wordEnd = len(text)
		}
		n := c.Count(text[start:wordEnd])
		if used+n > limit {
			break
		}
		used, end = used+n, wordEnd
		// Skip the whitespace to the next word.
		next := strings.IndexFunc(text[wordEnd:], func(r rune) bool { return !unicode.IsSpace(r) })
		if next < 0 {
			break
		}
		start = wordEnd + next
	}
	return text[:end]
}
