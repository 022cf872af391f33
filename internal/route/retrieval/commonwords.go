package retrieval

import (
	"strings"
	"unicode"

	"github.com/ragroute/ragroute/internal/language"
	"github.com/ragroute/ragroute/internal/lexical"
)

// commonWords are English function words and question phrasing: they say
// nothing about what a question is about, so their absence from the
// candidates means nothing.
var commonWords = func() map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
either else ever every few for from further get gets getting got had hadn't has hasn't have haven't having he
her here hers herself him himself his how however i if in into is isn't it its itself just let like make
makes many may me might mine more most much must my myself need needs neither no nor not now of off often on
once one only or other others our ours ourselves out over own per please rather really same say says see
seem seems shall she should shouldn't since so some still such than that the their theirs them themselves
then there these they thing things this those though through thus to too under until up upon us use used
uses using very via want wants was wasn't way ways we well were weren't what whatever when whenever where
whereas wherever whether which while who whom whose why will with within without won't would wouldn't yes
yet you your yours yourself yourselves anything something nothing everything anyone someone everyone
instead already again able across actually along always another anyway around away back become becomes
better best certain come comes could different does done enough even exactly fine first going good happen
happens keep kind know last least less long look looks lot mean means new next old right second set sets
show shows sure take takes tell tried try trying turn turns two what's where's which's who's work works
working wrong yet possible possibly currently happening happened instead otherwise therefore`) {
		words[w] = true
	}
	return words
}()

// russianQuestionWords are Russian question phrasing that Snowball's
// Russian stop words leave in (its list has как, где, когда, какой).
var russianQuestionWords = func() map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.Fields(`
каков какова каково каковы какое какие каким какую каких какого какому какой-то почему сколько который которая
которое которые которой которого котором нужно нужен нужна нужны надо следует должен должна должно должны
можно ли это эта этот эти делать сделать свой своя своё свое свои своей своего своему своим своих своими`) {
		words[w] = true
	}
	return words
}()

// IsCommonWord says whether a lower-cased word is one of the common
// words ContentWords leaves out: English function words and question
// phrasing, Russian stop words (Snowball's list, as keyword search drops
// them) and question phrasing.
func IsCommonWord(w string) bool {
	if commonWords[w] || russianQuestionWords[w] {
		return true
	}
	return language.HasCyrillic(w) && lexical.IsRussianStopWord(w)
}

// ContentWords are text's words that say what it is about: lower-cased,
// common words left out, each once, in order.
func ContentWords(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '-' && r != '_' && r != '\''
	}) {
		w = strings.Trim(w, "-_'")
		if len(w) < 2 || IsCommonWord(w) || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// WordStem folds a word's inflections onto one form: a Russian word's by
// Snowball, as keyword search does («согласование», «согласования»); an
// English word's coarsely, enough that "clusters" and "cluster",
// "policies" and "policy", "configured", "configuring" and "configure"
// meet. The answerability check reads a question's word as held when a
// packed fragment holds a word of the same stem (coverage, names).
func WordStem(w string) string {
	if language.HasCyrillic(w) {
		return lexical.RussianTerm(w)
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = w[:len(w)-3]
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = w[:len(w)-1]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}
