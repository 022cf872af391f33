package scalecorpus

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"unicode"
)

// Perturbation rates: about one prose word in five is replaced by another
// word of the same document, and one in ten swapped with its neighbor.
const (
	substituteOneIn = 5
	swapOneIn       = 10
)

// perturb rewrites a Markdown document's prose for copy seed, the same
// way every run: words of lowercase letters in prose and heading lines are
// replaced by a word drawn from the document's own prose (so the
// vocabulary and its frequencies stay the document's), and neighbors are
// swapped. Front matter and fenced code are kept, and so is every line's
// place, so the copy chunks like the original while its BM25 terms and
// its embeddings differ from every other copy's. Seed 0 is the original.
func perturb(doc string, seed uint64) string {
	if seed == 0 {
		return doc
	}
	lines := strings.Split(doc, "\n")
	prose := proseLines(lines)
	var vocabulary []string
	for i, line := range lines {
		if prose[i] {
			for _, w := range strings.Fields(line) {
				if isWord(w) {
					vocabulary = append(vocabulary, w)
				}
			}
		}
	}
	if len(vocabulary) == 0 {
		return doc
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(doc))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	for i, line := range lines {
		if !prose[i] {
			continue
		}
		words := strings.Split(line, " ")
		for j, w := range words {
			if isWord(w) && rng.IntN(substituteOneIn) == 0 {
				words[j] = vocabulary[rng.IntN(len(vocabulary))]
			}
		}
		for j := 0; j+1 < len(words); j++ {
			if isWord(words[j]) && isWord(words[j+1]) && rng.IntN(swapOneIn) == 0 {
				words[j], words[j+1] = words[j+1], words[j]
				j++
			}
		}
		lines[i] = strings.Join(words, " ")
	}
	return strings.Join(lines, "\n")
}

// proseLines marks the lines perturb may change: not the front matter
// (a first line "---" up to the next), not fenced code (``` or ~~~).
func proseLines(lines []string) []bool {
	prose := make([]bool, len(lines))
	inFrontMatter := len(lines) > 0 && strings.TrimSpace(lines[0]) == "---"
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case inFrontMatter:
			if i > 0 && trimmed == "---" {
				inFrontMatter = false
			}
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			prose[i] = true
		}
	}
	return prose
}

// isWord: three or more lowercase letters and nothing else, so names,
// links, inline code and Markdown syntax are never touched.
func isWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, r := range w {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return true
}
