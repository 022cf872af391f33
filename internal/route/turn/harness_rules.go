package turn

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The harness's rules on each call: whether a search may run, and
// whether a save or a finalize is accepted, with the reason when not.

// searchKey is what makes two queries the same search: the text as
// retrieval.NormaliseQuery folds it (Unicode form, case, spacing), then
// word order, repeats, punctuation at the edges of words and common words
// aside: a model that reorders its words searches for the same thing. Words
// are split at spaces only, so symbols and combining marks stay in them:
// "C++ SDK install" and "C# SDK install" differ, and a Devanagari vowel
// sign is part of its word. A query of common words only is kept whole.
func searchKey(q string) string {
	var words, all []string
	for _, w := range strings.Fields(retrieval.NormaliseQuery(q)) {
		if w = strings.TrimFunc(w, func(r rune) bool { return unicode.IsPunct(r) && r != '#' }); w == "" {
			continue
		}
		all = append(all, w)
		if !retrieval.IsCommonWord(w) {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		words = all
	}
	slices.Sort(words)
	return strings.Join(slices.Compact(words), " ")
}

// checkSearch is why a search may not run, or "" when it may.
func (h *harness) checkSearch(query string, blocked bool) string {
	switch key := searchKey(query); {
	case blocked:
		return fmt.Sprintf("search is blocked: this round's window is %.0f%% full; call save or finalize", agenticSearchBlockedAt*100)
	case key == "":
		return "the query is empty"
	case len(query) > agenticMaxArgBytes:
		return fmt.Sprintf("the query is %d bytes; at most %d: search for one thing at a time", len(query), agenticMaxArgBytes)
	case h.queries[key]:
		return "this query repeats an earlier search of this turn (" + h.triedList() + "); search for another part of the question, or finalize"
	case h.turnSearches >= agenticMaxSearches:
		return fmt.Sprintf("this turn has made its %d searches; call save or finalize", agenticMaxSearches)
	}
	return ""
}

// saveArgs are the arguments of save.
type saveArgs struct {
	Fragments []struct {
		ID   string `json:"id"`
		Note string `json:"note"`
	} `json:"fragments"`
	Closed []string `json:"closed"`
	Open   []string `json:"open"`
	Next   string   `json:"next"`
}

// save keeps the named fragments and the model's notes, or says why not.
func (h *harness) save(args saveArgs) string {
	if h.searches < agenticMinSearches {
		return fmt.Sprintf("save needs at least %d searches in this round; %d made", agenticMinSearches, h.searches)
	}
	if reason := checkReport(args.Closed, args.Open); reason != "" {
		return reason
	}
	ids := make([]string, len(args.Fragments))
	for i, f := range args.Fragments {
		ids[i] = f.ID
		if len(f.Note) > agenticMaxArgBytes {
			return fmt.Sprintf("the note on %s is %d bytes; at most %d", f.ID, len(f.Note), agenticMaxArgBytes)
		}
	}
	if _, reason := h.checkIDs(ids, "save"); reason != "" {
		return reason
	}
	for _, f := range args.Fragments {
		note := strings.TrimSpace(f.Note)
		for _, id := range splitIDs(f.ID) {
			if j := slices.IndexFunc(h.saved, func(s savedEntry) bool { return s.id == id }); j >= 0 {
				h.saved[j].note = note
			} else {
				h.saved = append(h.saved, savedEntry{id: id, note: note})
			}
		}
	}
	h.closed, h.open, h.next = args.Closed, args.Open, strings.TrimSpace(args.Next)
	return ""
}

// finalizeArgs are the arguments of finalize.
type finalizeArgs struct {
	Fragments []string `json:"fragments"`
	Closed    []string `json:"closed"`
	Open      []string `json:"open"`
}

// finalize says why the model may not finalize yet, or "": it must rank
// fragments it was shown and report the parts closed and open; while half
// or more of them are open it must go on, unless this is the last round.
func (h *harness) finalize(args finalizeArgs) string {
	if _, reason := h.checkIDs(args.Fragments, "finalize"); reason != "" {
		return reason
	}
	if reason := checkReport(args.Closed, args.Open); reason != "" {
		return reason
	}
	parts := len(args.Closed) + len(args.Open)
	if !h.lastRound() && 2*len(args.Open) >= parts {
		return fmt.Sprintf("%d of %d parts of the question are still open: search more, or save and go on in a new round", len(args.Open), parts)
	}
	return ""
}

// Bounds of a call's arguments: a query or a note longer than this is
// refused, not cut (a cut query would search for something else).
const (
	agenticMaxArgBytes = 500
	agenticMaxParts    = 12
)

// checkReport says why a report of the question's parts is unusable: none
// at all, too many, or an item too long.
func checkReport(closed, open []string) string {
	switch {
	case len(closed)+len(open) == 0:
		return "name the question's parts: those closed (answered) and those open"
	case len(closed)+len(open) > agenticMaxParts:
		return fmt.Sprintf("%d parts named; at most %d", len(closed)+len(open), agenticMaxParts)
	}
	for _, p := range append(slices.Clone(closed), open...) {
		if len(p) > agenticMaxArgBytes {
			return fmt.Sprintf("a part is %d bytes; at most %d", len(p), agenticMaxArgBytes)
		}
	}
	return ""
}

// checkIDs reads the fragment ids of a save or finalize, each as F<n>
// whatever its spelling ("f1", "[F1]", "F1, F2"), and says why they are
// refused: none given, or one the model was never shown, with the ids it
// may use.
func (h *harness) checkIDs(ids []string, tool string) ([]string, string) {
	var known, unknown []string
	for _, raw := range ids {
		for _, id := range splitIDs(raw) {
			if h.shown[id] {
				known = append(known, id)
			} else {
				unknown = append(unknown, id)
			}
		}
	}
	switch {
	case len(unknown) > 0:
		return nil, fmt.Sprintf("unknown fragment ids %s; the ids you were shown: %s", strings.Join(unknown, ", "), h.shownList())
	case len(known) == 0:
		return nil, fmt.Sprintf("%s needs at least one fragment id you were shown (%s)", tool, h.shownList())
	}
	return known, ""
}

// splitIDs reads one id argument: brackets, quotes and case aside, and
// several ids in one string split.
func splitIDs(raw string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) }) {
		if id := strings.ToUpper(strings.Trim(f, "[]()\"'`*")); id != "" {
			out = append(out, id)
		}
	}
	return out
}
