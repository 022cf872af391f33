package ingest

import (
	"slices"
	"strings"
	"testing"
)

func TestFrontMatterACLKeepsValidPrincipalsAsWritten(t *testing.T) {
	for header, want := range map[string][]string{
		"acl: [group:sre, user:alice, public]": {"group:sre", "user:alice", "public"},
		"acl: \"group:sre, user:alice,\"":      {"group:sre", "user:alice"},
		"acl: \"group:sre,\\tuser:jörg\"":      {"group:sre", "user:jörg"},
		"acl: ['group:o\"brien']":              {`group:o"brien`},
	} {
		doc := Document{Source: "runbooks/paging.md", Content: "---\n" + header + "\n---\n# Paging\n\nAcknowledge the page.\n"}
		chunks, err := Chunks(doc, DefaultOptions())
		if err != nil || len(chunks) == 0 || !slices.Equal(chunks[0].ACL, want) {
			t.Errorf("%s: %v; want ACL %q", header, err, want)
		}
	}
}

// An ACL entry that is not a valid principal fails its document, naming
// the document and the entry: it is never mended into the principal it
// resembles (group:\u00a0ops is not group:ops).
func TestFrontMatterACLRefusesInvalidPrincipals(t *testing.T) {
	for header, want := range map[string]string{
		`acl: [group:sre, "group:\u00a0ops"]`:               `runbooks/paging.md: front matter acl: principal "group:\u00a0ops": the name contains U+00A0 (no-break space)`,
		`acl: "group:sre, group:ad\u200bmins"`:              `runbooks/paging.md: front matter acl: principal "group:ad\u200bmins": the name contains U+200B (zero width space)`,
		`acl: ["user:alice\u202e"]`:                         `runbooks/paging.md: front matter acl: principal "user:alice\u202e": the name contains U+202E (right-to-left override)`,
		`acl: ["group:\ufffd"]`:                             "runbooks/paging.md: front matter acl: principal \"group:\ufffd\": the name contains U+FFFD (replacement character)",
		`acl: ["group:sre,ops"]`:                            `runbooks/paging.md: front matter acl: principal "group:sre,ops": the name contains U+002C (comma, the list separator)`,
		`acl: "\u00a0group:ops"`:                            `runbooks/paging.md: front matter acl: principal "\u00a0group:ops": want public, user:<name> or group:<name>`,
		`acl: "group:sre, team:ops"`:                        `runbooks/paging.md: front matter acl: principal "team:ops": want public, user:<name> or group:<name>`,
		"acl: [\"group:" + strings.Repeat("a", 251) + "\"]": "the name is 251 bytes; the limit is 250",
	} {
		doc := Document{Source: "runbooks/paging.md", Principals: []string{"group:staff"}, Content: "---\n" + header + "\n---\n# Paging\n\nAcknowledge the page.\n"}
		chunks, err := Chunks(doc, DefaultOptions())
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: %d chunks, %v; want an error ending %s", header, len(chunks), err, want)
		}
	}
}

// A source's principals apply to documents that name none, and are held
// to the same rule.
func TestSourcePrincipalsMustBeValid(t *testing.T) {
	doc := Document{Source: "runbooks/paging.md", Principals: []string{"group:sre", "group:\u00a0ops"}, Content: "# Paging\n\nAcknowledge the page.\n"}
	_, err := Chunks(doc, DefaultOptions())
	if want := `runbooks/paging.md: the source's principal "group:\u00a0ops": the name contains U+00A0 (no-break space)`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	// A document naming its own principals does not use the source's.
	doc.Content = "---\nacl: [group:sre]\n---\n" + doc.Content
	if chunks, err := Chunks(doc, DefaultOptions()); err != nil || !slices.Equal(chunks[0].ACL, []string{"group:sre"}) {
		t.Errorf("front matter ACL: %v", err)
	}
}

// A document's author may narrow who reads it, never widen it: the
// source's principals (the KnowledgeStore editor's) are the ceiling.
func TestFrontMatterMayOnlyNarrowItsSource(t *testing.T) {
	cases := []struct {
		source []string
		header string
		refuse string // what the error names; empty: accepted
	}{
		{[]string{"group:eng", "group:hr"}, "acl: [group:hr]", ""},
		{[]string{"group:eng"}, "acl: [public]", `front matter grants ["public"], which its source does not`},
		{[]string{"group:eng"}, "acl: [group:eng, user:mallory]", `front matter grants ["user:mallory"], which its source does not`},
		{[]string{"group:eng"}, "acl: [group:Eng]", `front matter grants ["group:Eng"]`},
		{[]string{"public"}, "acl: [group:hr]", ""},
		{nil, "acl: [public]", ""}, // a local run without source principals
	}
	for _, c := range cases {
		doc := Document{Source: "hr/pay.md", Principals: c.source, Content: "---\n" + c.header + "\n---\n# Pay\n\nPay day is the 25th.\n"}
		chunks, err := Chunks(doc, DefaultOptions())
		switch {
		case c.refuse == "" && err != nil:
			t.Errorf("source %q, %s: %v; want it accepted", c.source, c.header, err)
		case c.refuse != "" && (err == nil || !strings.Contains(err.Error(), c.refuse) || !strings.HasPrefix(err.Error(), "hr/pay.md: ")):
			t.Errorf("source %q, %s: %d chunks, %v; want hr/pay.md refused: %s", c.source, c.header, len(chunks), err, c.refuse)
		}
	}
}

// The Russian Kubernetes docs' slips: an indented opening "---" and a
// closing "---1". Each page keeps its title and its ACL, and no header
// line reaches a chunk's text; a "---" thematic break after a body that
// is not YAML stays a break.
func TestFrontMatterSlipsReadAsTheAuthorMeant(t *testing.T) {
	for name, content := range map[string]string{
		"indented opening":    "    ---\ntitle: Руководства\nacl: [group:sre]\n---\n\nВ данном разделе есть руководства.\n",
		"closing with a tail": "---\ntitle: Руководства\nacl: [group:sre]\ncard:\n  weight: 50\n---1\n\nВ данном разделе есть руководства.\n",
	} {
		chunks, err := Chunks(Document{Source: "tutorials/_index.md", Content: content}, DefaultOptions())
		if err != nil || len(chunks) != 1 {
			t.Fatalf("%s: %d chunks, %v", name, len(chunks), err)
		}
		c := chunks[0]
		if c.Title != "Руководства" || !slices.Equal(c.ACL, []string{"group:sre"}) || strings.Contains(c.Text, "title:") || strings.Contains(c.Text, "---") {
			t.Errorf("%s: title %q, ACL %q, text %q", name, c.Title, c.ACL, c.Text)
		}
	}
	notYAML := "---\nThis page starts with a rule.\n---1 is how the next line begins.\n\nMore text.\n"
	chunks, err := Chunks(Document{Source: "rules.md", Content: notYAML}, DefaultOptions())
	if err != nil || len(chunks) == 0 || !strings.Contains(chunks[0].Text, "starts with a rule") {
		t.Errorf("a page that only begins with a rule: %v, %+v", err, chunks)
	}
}
