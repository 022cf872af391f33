package tokenize

import (
	"slices"
	"unicode/utf8"
)

// trie is a vocabulary as a double-array trie: the child of state s by
// byte b is state base(s)+b, if that state's label is b. Greedy
// longest-match is then one forward walk over the word, one array access
// per byte: no hashing, no string built, no allocation, and no retrying
// of ever shorter prefixes as a map of pieces needs.
//
// A state is 4 bytes, so that the whole vocabulary (66,000 states, 260
// KB) stays in a core's cache: a walk spends most of its time waiting for
// states.
// That is why a state checks its label, not its parent as double arrays
// usually do: no two states share a base, so base(s)+b labelled b can
// only be a child of s.
type trie struct {
	states []trieState
}

// trieState is base<<10 | final<<9 | label+1. The children of a state are
// at base+b (a leaf's base is 0, whose 256 states have no label); final
// is set when the path to the state spells a vocabulary piece; label+1 is
// 0 for a free state, which no byte matches.
type trieState uint32

const (
	labelBits = 9
	finalBit  = 1 << labelBits
	baseShift = labelBits + 1
)

func (st trieState) base() uint32         { return uint32(st >> baseShift) }
func (st trieState) final() bool          { return st&finalBit != 0 }
func (st trieState) labelled(b byte) bool { return uint32(st&(finalBit-1)) == uint32(b)+1 }

// longestPiece returns the length of the longest prefix of word that is a
// piece under root and ends between two characters (0 when none is).
// ASCII letters are looked up lower-cased.
func longestPiece[W string | []byte](t *trie, root uint32, word W) int {
	best, cur := 0, t.states[root]
	for i := 0; i < len(word); i++ {
		b := lower[word[i]]
		next := t.states[cur.base()+uint32(b)]
		if !next.labelled(b) {
			break
		}
		cur = next
		if cur.final() && (i+1 == len(word) || utf8.RuneStart(word[i+1])) {
			best = i + 1
		}
	}
	return best
}

// scanWord returns where the ASCII word starting at text[i] ends, and
// whether it is a piece that may start a word: then it is one token, and
// most words are. The trie is walked as the word is scanned, so that
// such a word is read once.
func (t *trie) scanWord(text string, i int) (end int, piece bool) {
	cur, walking := t.states[startRoot], true
	for end = i; end < len(text) && asciiClass[text[end]] == classWord; end++ {
		if walking {
			b := lower[text[end]]
			cur = t.states[cur.base()+uint32(b)]
			walking = cur.labelled(b)
		}
	}
	return end, walking && cur.final()
}

// LowerASCII maps an ASCII upper-case letter to lower case and any other
// byte to itself: a table lookup, for the byte loops of the hot paths.
func LowerASCII(b byte) byte { return lower[b] }

// lower is LowerASCII's table.
var lower = func() (table [256]byte) {
	for c := range table {
		table[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			table[c] += 'a' - 'A'
		}
	}
	return table
}()

// newTrie lays out one trie per vocabulary in a double array; the root
// of vocabs[k] is state k. Each state's children go at the lowest free
// base where all their slots are free (first fit), which keeps the array
// nearly full. A state stands for the pieces that share its prefix: a
// run of the sorted vocabulary, so no trie of pointers is needed first.
func newTrie(vocabs ...[]string) *trie {
	l := newLayout()
	type pending struct {
		pieces []string // sorted, all with the same prefix of length depth
		depth  int
		state  uint32
	}
	var queue []pending
	var groups [][]string
	for k, pieces := range vocabs {
		pieces = slices.Clone(pieces)
		slices.Sort(pieces)
		queue = append(queue, pending{slices.Compact(pieces), 0, uint32(k)})
	}
	for q := 0; q < len(queue); q++ {
		p := queue[q]
		if len(p.pieces) > 0 && len(p.pieces[0]) == p.depth {
			p.pieces = p.pieces[1:] // the piece that ends here: already marked final
		}
		groups = groupByByte(groups[:0], p.pieces, p.depth)
		if len(groups) == 0 {
			continue
		}
		labels := make([]byte, len(groups))
		for i, g := range groups {
			labels[i] = g[0][p.depth]
		}
		base := l.fit(labels)
		l.states[p.state] |= trieState(base) << baseShift
		for i, g := range groups {
			kid := uint32(base + int(labels[i]))
			l.take(int(kid), labels[i], len(g[0]) == p.depth+1)
			queue = append(queue, pending{g, p.depth + 1, kid})
		}
	}
	// Any base+255 must lie in the array, so that longestPiece never
	// indexes past it.
	l.grow(len(l.states) + 256)
	if len(l.states) >= 1<<(32-baseShift) {
		panic("tokenize: vocabulary too large for its trie")
	}
	return &trie{states: l.states}
}

// groupByByte appends to groups the runs of sorted pieces, all longer
// than depth, with the same byte at depth.
func groupByByte(groups [][]string, pieces []string, depth int) [][]string {
	for start := 0; start < len(pieces); {
		end := start + 1
		for end < len(pieces) && pieces[end][depth] == pieces[start][depth] {
			end++
		}
		groups = append(groups, pieces[start:end])
		start = end
	}
	return groups
}

// layout is a double array being filled.
type layout struct {
	states []trieState
	// next[i] leads towards the first free state at or after i: i itself
	// when free. Chains are shortened as they are followed (as in
	// union-find), so a search skips the long full runs in one step.
	next   []int
	based  []bool   // based[i]: base i is given out
	cursor [256]int // no base below cursor[b]-b fits children whose first label is b
}

// newLayout reserves states 0 to 255, unlabelled, for leaves to point
// into. The roots are among them.
func newLayout() *layout {
	l := &layout{}
	for i := range 256 {
		l.grow(i + 1)
		l.next[i] = i + 1
	}
	return l
}

func (l *layout) grow(n int) {
	for len(l.states) < n {
		l.next = append(l.next, len(l.states))
		l.states = append(l.states, 0)
		l.based = append(l.based, false)
	}
}

// free returns the first free state at or after i.
func (l *layout) free(i int) int {
	l.grow(i + 1)
	root := i
	for l.next[root] != root {
		root = l.next[root]
		l.grow(root + 1)
	}
	for i != root { // shorten the chain behind us
		i, l.next[i] = l.next[i], root
	}
	return root
}

func (l *layout) take(i int, label byte, final bool) {
	l.grow(i + 1)
	l.states[i] = trieState(label) + 1
	if final {
		l.states[i] |= finalBit
	}
	l.next[i] = i + 1
}

// fit returns the lowest base, past the reserved states and not given
// out yet, at which all labels land on free states. States are never
// freed nor bases given back, so a base that fails the first label fails
// it for good: the search for that label starts past it next time.
func (l *layout) fit(labels []byte) int {
	first := int(labels[0])
	f := l.free(max(256+first, l.cursor[first]))
	for l.based[f-first] {
		f = l.free(f + 1)
	}
	l.cursor[first] = f
	for ; ; f = l.free(f + 1) {
		base := f - first
		l.grow(base + 256)
		if !l.based[base] && l.allFree(base, labels[1:]) {
			l.based[base] = true
			return base
		}
	}
}

// allFree reports whether the states at base+label are all free.
func (l *layout) allFree(base int, labels []byte) bool {
	for _, b := range labels {
		if i := base + int(b); l.next[i] != i {
			return false
		}
	}
	return true
}
