package adversarial

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"slices"
	"strings"

	"github.com/ragroute/ragroute/internal/knowledge"
)

// Names a header may carry: each is a valid principal name (no Unicode
// space, control, format character or comma), crafted to look like, to
// contain, or to break out of another.
var headerNames = []string{
	"ops", "Ops", "OPS", "op", "opsx", "ops-admin", "xops",
	`x"||true||"`, `"`, `ops"`, `\`, `ops\`, `a\b`, `a\\b`, `a\"b`,
	"]", "ops]", "%", "ops%", "||", "*", "ops*", `"])||true||(["`,
	"caf\u00e9", "cafe\u0301", // NFC and NFD
	"\u043eps",           // Cyrillic o
	"\uff4f\uff50\uff53", // fullwidth ops
	"alice", "Alice", "bob",
	"public", "group:ops", "user:alice", "group:", "user:",
}

// Names only an ACL carries: invalid in a header (the route answers 401),
// so nothing may grant them.
var aclOnlyNames = []string{
	`x" || true || "`, "ops\u00a0", "\u00a0ops", "ops\u200b", "ops ", "op s",
}

// corpusRow is a row the harness ingests with its marker's ACL.
type corpusRow struct {
	Row    knowledge.Row
	Marker string
}

// vocabulary every row shares, so every query matches many rows.
const vocabulary = "Deploy pipeline rollout notes: sync waves order the release, the pipeline deploys the rollout, and the notes record the release."

// queries are few so that cache entries are shared across requests.
var queries = []string{
	"How does the deploy pipeline rollout work?",
	"sync waves release notes",
	"What do the release notes record?",
	"pipeline deploys",
}

// markerOf is row n's marker: SECRETMARK-<n>- never contains another.
func markerOf(n int) string { return fmt.Sprintf("SECRETMARK-%d-", n) }

// buildCorpus builds the rows and the map marker → ACL.
func buildCorpus(seed int64) ([]corpusRow, map[string][]string) {
	rng := rand.New(rand.NewSource(seed))
	var pool []string
	for _, n := range headerNames {
		pool = append(pool, "group:"+n)
	}
	for _, n := range []string{"ops", "OPS", "alice", "bob", "caf\u00e9", "cafe\u0301", `x"||true||"`, `\`, "public", "group:ops", "*"} {
		pool = append(pool, "user:"+n)
	}
	for _, n := range aclOnlyNames {
		pool = append(pool, "group:"+n, "user:"+n)
	}
	pool = append(pool, "Public", "PUBLIC", "public ", "*", "group:*", "user:*", "group", "user", "group:ops,opsx", `group:ops"`, "group:ops\x00")

	var acls [][]string
	for _, p := range pool {
		acls = append(acls, []string{p})
	}
	for i := 0; i < 40; i++ {
		k := 2 + rng.Intn(3)
		var acl []string
		for j := 0; j < k; j++ {
			acl = append(acl, pool[rng.Intn(len(pool))])
		}
		acls = append(acls, acl)
	}
	for i := 0; i < 4; i++ {
		acls = append(acls, []string{"public"})
	}

	var rows []corpusRow
	acl := map[string][]string{}
	add := func(r knowledge.Row, n int, a []string) {
		m := markerOf(n)
		r.ACL = a
		r.Text = m + " " + vocabulary + fmt.Sprintf(" Team %d keeps %s private to %q.", n, m, strings.Join(a, " | "))
		r.ContentHash = contentHash(r)
		rows = append(rows, corpusRow{Row: r, Marker: m})
		acl[m] = a
	}
	n := 0
	for _, a := range acls {
		n++
		add(knowledge.Row{
			ID: fmt.Sprintf("adv-%04d", n), DocID: fmt.Sprintf("doc-%04d", n), Source: fmt.Sprintf("adv/%04d.md", n),
			Title: "Deploy notes", HeadingPath: []string{"Deploy notes", fmt.Sprintf("Team %d", n)},
			ChunkType: "section", Kind: "prose", PartIndex: 0, PartCount: 1,
		}, n, a)
	}
	// Sections split into parts whose ACLs differ: reassembling a section
	// must not bring in a part the caller may not read.
	for s, parts := range [][]string{{"group:ops", "group:OPS", "group:opsx"}, {"public", "group:ops-admin", `group:x"||true||"`}, {"user:alice", "group:alice", "group:Alice"}} {
		parent := fmt.Sprintf("adv-parent-%d", s)
		for i, p := range parts {
			n++
			add(knowledge.Row{
				ID: fmt.Sprintf("adv-%04d", n), DocID: fmt.Sprintf("doc-parent-%d", s), Source: fmt.Sprintf("adv/parent-%d.md", s),
				Title: "Deploy notes", HeadingPath: []string{"Deploy notes", fmt.Sprintf("Split %d", s)},
				ChunkType: "section", Kind: "prose", PartIndex: int64(i), PartCount: int64(len(parts)), ParentID: parent,
			}, n, []string{p})
		}
	}
	return rows, acl
}

// contentHash covers the row's text and ACL, as ingestion's does: a
// narrowed ACL is a changed row.
func contentHash(r knowledge.Row) string {
	sum := sha256.Sum256([]byte(r.Text + "\x00" + strings.Join(r.ACL, "\x1f")))
	return hex.EncodeToString(sum[:16])
}

// narrow is corpus after an edit of its front matter: of every row that
// someone can read, a third lose all their readers but one principal that
// no header can name, a third lose all but their first principal, and one
// in ten is deleted; the rest stay. It returns the rows and the new map
// marker → ACL (deleted rows' markers map to no reader).
func narrow(corpus []corpusRow, seed int64) ([]corpusRow, map[string][]string) {
	rng := rand.New(rand.NewSource(seed + 1))
	var out []corpusRow
	acl := map[string][]string{}
	for _, c := range corpus {
		r := c.Row
		switch n := rng.Intn(10); {
		case n == 0:
			acl[c.Marker] = []string{}
			continue
		case n <= 3:
			r.ACL = []string{"group:" + aclOnlyNames[0]}
		case n <= 6:
			r.ACL = r.ACL[:1]
		}
		r.ACL = slices.Clone(r.ACL)
		r.ContentHash = contentHash(r)
		acl[c.Marker] = r.ACL
		out = append(out, corpusRow{Row: r, Marker: c.Marker})
	}
	return out, acl
}
