package turn

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

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
