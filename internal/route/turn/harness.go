package turn

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/ragroute/ragroute/internal/route/retrieval"
)

// The agentic harness's rules (mode: agentic). They are code around the
// model, not prompt: the model may ask for anything, and the harness
// answers each call accepted or rejected with the reason. The harness
// never reads the fragments nor judges the answer; it counts searches,
// fragments and open parts.
const (
	// agenticMaxRounds bounds the rounds of a turn; after the last one
	// the harness finalizes on its own.
	agenticMaxRounds = 5
	// agenticMinSearches is how many searches a round must make before
	// the model may save and start a new one.
	agenticMinSearches = 5
	// agenticSearchBlockedAt is the share of the context window a round
	// may fill before search is blocked (only save and finalize remain).
	agenticSearchBlockedAt = 0.75
	// agenticMaxStepsPerRound bounds the model calls of one round, so a
	// model that never saves nor finalizes cannot loop forever.
	agenticMaxStepsPerRound = 12
	// agenticMaxRejectedInARow ends a round whose model keeps making
	// calls the harness rejects (a small model repeating one search):
	// each costs a model call and leads nowhere.
	agenticMaxRejectedInARow = 3
	// agenticMaxSearches bounds the searches of a turn, which holds one
	// admission slot throughout: without it 5 rounds of 12 steps of 4
	// calls could run 240. Eight a round on average; a save needs five.
	agenticMaxSearches = 40
)

// harness is one agentic turn's bookkeeping.
type harness struct {
	// question is the turn's question, self-contained (condensed from
	// the conversation when it is a follow-up).
	question  string
	maxRounds int
	protocol  *harnessProtocol
	round     int
	// searches counts this round's accepted searches; turnSearches the
	// turn's.
	searches, turnSearches int
	// queries holds the searchKey of every query of the turn; tried the
	// accepted ones as written, in order.
	queries map[string]bool
	tried   []string
	// rejectedInARow counts the round's rejected calls since its last
	// accepted one.
	rejectedInARow int
	// roundStart is the round's window before its first search, and
	// searchShare a search's part of the room between it and the line
	// that blocks search: the room over the searches a save needs.
	roundStart, searchShare int
	// shownNow holds the harness ids shown in this round; shown those
	// shown in any round (the only ids save and finalize accept);
	// foundBySearch those this round's searches found, shown or not, by
	// search, each in its search's order.
	shownNow, shown map[string]bool
	foundBySearch   [][]string
	// ids gives each fragment (by its index id) a short id, F1, F2, …,
	// stable for the whole turn; known is the reverse.
	ids   map[string]string
	known map[string]retrieval.Fragment
	saved []savedEntry
	// The model's notes from its last save.
	closed, open []string
	next         string
}

// savedEntry is a fragment the model kept, by harness id.
type savedEntry struct {
	id, note string
}

// shownFragment is a search result as the model sees it.
type shownFragment struct {
	id string
	retrieval.Fragment
}

func newHarness(maxRounds int, protocol *harnessProtocol) *harness {
	return &harness{maxRounds: maxRounds, protocol: protocol, queries: map[string]bool{}, shownNow: map[string]bool{}, shown: map[string]bool{},
		ids: map[string]string{}, known: map[string]retrieval.Fragment{}}
}

// startRound begins the next round: a clean window, no searches yet, and
// nothing shown in it.
func (h *harness) startRound() {
	h.round++
	h.searches, h.rejectedInARow = 0, 0
	h.shownNow, h.foundBySearch = map[string]bool{}, nil
}

func (h *harness) lastRound() bool { return h.round >= h.maxRounds }

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

// show records an accepted search and returns its fragments that were
// not shown in this round yet, under their harness ids. A fragment shown
// in an earlier round may come again: the model may have dropped it
// wrongly. fit gives a fragment as it fits the window (cut, perhaps), and
// false for one that does not fit: it is left unshown.
func (h *harness) show(query string, fragments []retrieval.Fragment, fit func(shownFragment) (shownFragment, bool)) []shownFragment {
	h.queries[searchKey(query)] = true
	h.tried = append(h.tried, query)
	h.searches++
	h.turnSearches++
	var out []shownFragment
	found := make([]string, 0, len(fragments))
	defer func() { h.foundBySearch = append(h.foundBySearch, found) }()
	for _, f := range fragments {
		id, ok := h.ids[f.ID]
		if !ok {
			id = fmt.Sprintf("F%d", len(h.ids)+1)
			h.ids[f.ID], h.known[id] = id, f
		}
		found = append(found, id)
		// A saved fragment is in the round's window already.
		if h.shownNow[id] || h.isSaved(id) {
			continue
		}
		s, ok := fit(shownFragment{id: id, Fragment: f})
		if !ok {
			continue
		}
		h.shownNow[id], h.shown[id] = true, true
		out = append(out, s)
	}
	return out
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

// shownList names the ids the model was shown, in order, or says none.
func (h *harness) shownList() string {
	ids := slices.Collect(maps.Keys(h.shown))
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(idNumber(a), idNumber(b)) })
	if len(ids) == 0 {
		return "none yet: search first"
	}
	return strings.Join(ids, ", ")
}

func idNumber(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "F"))
	return n
}

// triedList quotes the turn's searches so far.
func (h *harness) triedList() string {
	quoted := make([]string, len(h.tried))
	for i, q := range h.tried {
		quoted[i] = strconv.Quote(q)
	}
	return "searched so far: " + strings.Join(quoted, ", ")
}

func (h *harness) isSaved(id string) bool {
	return slices.ContainsFunc(h.saved, func(s savedEntry) bool { return s.id == id })
}

// found says whether the research has anything to answer from: saved
// fragments, or fragments this round's searches found.
func (h *harness) found() bool {
	return len(h.saved) > 0 || slices.ContainsFunc(h.foundBySearch, func(ids []string) bool { return len(ids) > 0 })
}

// ranked is the fragments of ids the harness knows, in the model's order,
// each once, at most limit (0: no limit).
func (h *harness) ranked(ids []string, limit int) ([]retrieval.Fragment, []string) {
	var out []retrieval.Fragment
	var kept []string
	var all []string
	for _, raw := range ids {
		all = append(all, splitIDs(raw)...)
	}
	for _, id := range all {
		f := h.known[id]
		if f.ID == "" || slices.Contains(kept, id) || (limit > 0 && len(out) == limit) {
			continue
		}
		out, kept = append(out, f), append(kept, id)
	}
	return out, kept
}

// forced is the set the harness finalizes with on its own: the saved
// fragments in the order saved, then what the round's searches found,
// shown or not (the answer packs under its own budget, and a small window
// must not leave it less than a single-round search would give it), each
// search's best first, then each one's second, and so on: the searches of
// a question's parts ask different things, and their scores are not on
// one scale, so ranking them together would leave a part out.
func (h *harness) forced(limit int) ([]retrieval.Fragment, []string) {
	var ids []string
	for _, s := range h.saved {
		ids = append(ids, s.id)
	}
	for rank := 0; ; rank++ {
		more := false
		for _, found := range h.foundBySearch {
			if rank < len(found) {
				ids, more = append(ids, found[rank]), true
			}
		}
		if !more {
			break
		}
	}
	return h.ranked(ids, limit)
}

// memory is what the model saved, as memory.saved reports it.
func (h *harness) memory() MemorySaved {
	m := MemorySaved{Round: h.round, Closed: h.closed, Open: h.open, Next: h.next}
	for _, s := range h.saved {
		f := h.known[s.id]
		m.Fragments = append(m.Fragments, SavedFragment{ID: s.id, Note: s.note, Title: f.Title, SourceURI: f.SourceURI})
	}
	return m
}
