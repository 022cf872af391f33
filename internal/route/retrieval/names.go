package retrieval

import (
	"strings"
	"unicode"

	"github.com/ragroute/ragroute/internal/language"
	"github.com/ragroute/ragroute/internal/lexical"
	"github.com/ragroute/ragroute/internal/tokenize"
)

// The names a question uses, and whether a text holds them: a question
// about something the documents never describe names it (Velero, an
// AnalysisTemplate), and a user does not rename the tool or resource kind
// they ask about. The confidence score reads them over a search's
// candidates; the answerability check over what a turn packed.

// MissingNames are the names the query uses (DistinctiveTerms) that text
// does not hold in any form; text must be lower-cased. A name is held
// where text holds a word of its stem (WordStem, as coverage reads a
// word: "Pods" where the fragments say "pod") or its written form less a
// common ending ("backs" in "backup"). A compound of English words
// ("ready-made", "built-in", "domain-qualified": each a whole word of
// BERT's vocabulary) is not a name: users coin such compounds for what
// the documents say in other words. A compound with a coined part
// ("kube-proxy", "argocd-cm", "helm-secrets-plugin") is one.
func MissingNames(query, text string) []string {
	var missing []string
	var stems map[string]bool
	for _, name := range DistinctiveTerms(query) {
		if isProseCompound(name) || holdsAsWritten(text, name) {
			continue
		}
		if stems == nil {
			stems = wordStems(text)
		}
		if !stems[WordStem(name)] {
			missing = append(missing, name)
		}
	}
	return missing
}

// holdsAsWritten: text holds the name less a common ending, or, for a
// compound, one of its words ("argocd-vault-plugin" where the fragments
// name the plugin's parts).
func holdsAsWritten(text, name string) bool {
	if strings.Contains(text, trimEnding(name)) {
		return true
	}
	if !isCompound(name) {
		return false
	}
	for _, word := range strings.Split(name, "-") {
		if len(word) >= 3 && !commonWords[word] && strings.Contains(text, trimEnding(word)) {
			return true
		}
	}
	return false
}

// isCompound: lower-case letters joined by hyphens.
func isCompound(name string) bool {
	return strings.Contains(name, "-") && strings.Trim(name, "abcdefghijklmnopqrstuvwxyz-") == ""
}

// wordStems are the stems of text's content words.
func wordStems(text string) map[string]bool {
	stems := map[string]bool{}
	for _, w := range ContentWords(text) {
		stems[WordStem(w)] = true
	}
	return stems
}

// isProseCompound: lower-case English words joined by hyphens, each a
// whole word of BERT's uncased vocabulary.
func isProseCompound(name string) bool {
	if !isCompound(name) {
		return false
	}
	vocabulary := tokenize.NewBERTUncased()
	for _, word := range strings.Split(name, "-") {
		if word != "" && !vocabulary.IsWord(word) {
			return false
		}
	}
	return true
}

// DistinctiveTerms are the query's words that name something rather than
// say something: a word capitalised inside a sentence (`Velero`), in
// mixed case (`AnalysisTemplate`, `restartPolicy`), or holding a digit,
// `-`, `_`, `.` or `/` (`argocd-repo-server`, `ghcr.io`). Users reword
// what they ask about in plain words the documents never use; they do not
// rename the tool or resource kind they ask about. In a question written
// in Cyrillic, a word in Latin letters is a name too (`kubelet`, `Job`,
// `containerd`): Russian prose names tools and kinds as they are spelt.
// Lower-cased, without common words.
func DistinctiveTerms(query string) []string {
	var out []string
	seen := map[string]bool{}
	sentenceStart, cyrillic := true, language.HasCyrillic(query)
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'`()[]{},;:?!*", r)
	}) {
		word := strings.Trim(w, "-_./")
		first := sentenceStart
		sentenceStart = strings.HasSuffix(w, ".") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, "!")
		word = strings.TrimSuffix(strings.TrimSuffix(word, "'s"), "’s")
		lower := strings.ToLower(word)
		if len(word) < 3 || commonWords[lower] || russianQuestionWords[lower] || seen[lower] || !nameInQuestion(word, first, cyrillic) {
			continue
		}
		seen[lower] = true
		out = append(out, lower)
	}
	return out
}

// nameInQuestion: namesSomething, or a word in Latin letters in a
// Cyrillic question. A Russian word joined to a name by a hyphen
// ("HTTP-запросы", "foreground-удалении") inflects, so no text holds it as
// written: it is prose.
func nameInQuestion(word string, sentenceStart, cyrillic bool) bool {
	if cyrillic && language.HasCyrillic(word) && strings.ContainsAny(word, "-_./") {
		return false
	}
	return namesSomething(word, sentenceStart) || cyrillic && isLatinWord(word)
}

// namesSomething reports whether a word looks like a name or identifier.
// A number ("200 apps", "90 seconds"), a pair of plain words
// ("health/sync", "enable/disable") and an abbreviation ("e.g.") are prose: the documents say them in
// other words or not at all, so they are not missing the way a name is.
func namesSomething(word string, sentenceStart bool) bool {
	if isNumber(word) || isWordPair(word) || isAbbreviation(word) {
		return false
	}
	upper, inner := 0, false
	for i, r := range word {
		switch {
		case unicode.IsUpper(r):
			upper++
			if i > 0 {
				inner = true
			}
		case unicode.IsDigit(r), strings.ContainsRune("-_./", r):
			return true
		}
	}
	return inner || (upper == 1 && !sentenceStart)
}

// isLatinWord: a word of Latin letters alone.
func isLatinWord(word string) bool {
	for _, r := range word {
		if !unicode.Is(unicode.Latin, r) {
			return false
		}
	}
	return true
}

// isAbbreviation: single letters joined by dots ("e.g", "i.e").
func isAbbreviation(word string) bool {
	parts := strings.Split(word, ".")
	if len(parts) < 2 {
		return false
	}
	for _, part := range parts {
		if len([]rune(part)) > 1 {
			return false
		}
	}
	return true
}

func isNumber(word string) bool {
	return strings.Trim(word, "0123456789.,") == ""
}

func isWordPair(word string) bool {
	parts := strings.Split(word, "/")
	if len(parts) < 2 {
		return false
	}
	for _, part := range parts {
		if part == "" || strings.TrimFunc(part, func(r rune) bool { return r >= 'a' && r <= 'z' }) != "" {
			return false
		}
	}
	return true
}

// trimEnding is what of a name a text must hold as written: a Russian
// word's Snowball stem, an English word without its common endings, so
// `backs` finds `backup` and `configured` finds `configuration`.
func trimEnding(term string) string {
	if language.HasCyrillic(term) {
		return lexical.RussianTerm(term)
	}
	for _, suffix := range []string{"ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s"} {
		if len(term)-len(suffix) >= 4 && strings.HasSuffix(term, suffix) {
			return term[:len(term)-len(suffix)]
		}
	}
	return term
}
