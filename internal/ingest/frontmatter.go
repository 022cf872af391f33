package ingest

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ragroute/ragroute/internal/principal"
)

// frontMatter is what a document's YAML header may set.
type frontMatter struct {
	title string
	// principals is nil when the header names none.
	principals []string
	kind       Kind
}

// splitFrontMatter separates a leading YAML header (between "---" lines)
// from the body. A header that never closes is not a header: the "---" is
// then a thematic break and stays in the body. skipped is the number of
// lines the header took. Two slips real pages make are read as the author
// meant: an opening "---" indented by blanks, and a closing "---" with
// something after it ("---1"), taken only when no line closes the header
// properly and what it closes reads as a YAML mapping.
func splitFrontMatter(content, aclKey string) (fm frontMatter, body string, skipped int, err error) {
	content = strings.TrimPrefix(content, "\ufeff")
	lines := strings.SplitAfter(content, "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "---" {
		return frontMatter{}, content, 0, nil
	}
	closer := slices.IndexFunc(lines[1:], func(line string) bool {
		end := strings.TrimRight(line, "\r\n")
		return end == "---" || end == "..."
	}) + 1
	if closer == 0 {
		if closer = sloppyCloser(lines); closer < 0 {
			return frontMatter{}, content, 0, nil
		}
	}
	fm, err = parseFrontMatter(strings.Join(lines[1:closer], ""), aclKey)
	if err != nil {
		return frontMatter{}, "", 0, err
	}
	return fm, strings.Join(lines[closer+1:], ""), closer + 1, nil
}

// sloppyCloser is the index of the first line after the opening one that
// starts with "---" and more, when the lines between read as a YAML
// mapping; -1 when there is none.
func sloppyCloser(lines []string) int {
	for i := 1; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "---") {
			continue
		}
		var fields map[string]any
		if err := yaml.Unmarshal([]byte(strings.Join(lines[1:i], "")), &fields); err != nil || len(fields) == 0 {
			return -1
		}
		return i
	}
	return -1
}

func parseFrontMatter(header, aclKey string) (frontMatter, error) {
	var fields map[string]any
	if err := yaml.Unmarshal([]byte(header), &fields); err != nil {
		return frontMatter{}, fmt.Errorf("front matter is not valid YAML: %w", err)
	}
	var fm frontMatter
	if title, ok := fields["title"]; ok {
		fm.title = strings.TrimSpace(fmt.Sprint(title))
	}
	if kind, ok := fields["kind"]; ok {
		switch k := Kind(fmt.Sprint(kind)); k {
		case KindProse, KindScreen:
			fm.kind = k
		default:
			return frontMatter{}, fmt.Errorf("front matter kind %q: want %q or %q", k, KindProse, KindScreen)
		}
	}
	if acl, ok := fields[aclKey]; ok {
		principals, err := parsePrincipals(acl)
		if err != nil {
			return frontMatter{}, fmt.Errorf("front matter %s: %w", aclKey, err)
		}
		fm.principals = principals
	}
	return fm, nil
}

// parsePrincipals accepts a YAML list or a comma-separated string. Items
// lose the ASCII spaces and tabs around them, empty ones are skipped, and
// every other item must keep the principal rule as it stands: one that
// does not fails the document rather than being mended into a principal
// it resembles.
func parsePrincipals(value any) ([]string, error) {
	var raw []string
	switch v := value.(type) {
	case string:
		raw = strings.Split(v, string(principal.ListSeparator))
	case []any:
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("principal %v is not a string", item)
			}
			raw = append(raw, s)
		}
	default:
		return nil, fmt.Errorf("want a list of principals, got %T", value)
	}
	principals := []string{}
	for _, p := range raw {
		p = principal.TrimItem(p)
		if p == "" {
			continue
		}
		if err := principal.Valid(p); err != nil {
			return nil, fmt.Errorf("principal %q: %w", p, err)
		}
		principals = append(principals, p)
	}
	return principals, nil
}

// withinSource refuses a front matter that grants a principal its source
// does not: the source's principals, set by whoever edits the
// KnowledgeStore, are the most a document may grant, so a document's
// author can narrow who reads it but never widen it. A source that grants
// public grants everyone, so any list is narrower. Without source
// principals (a local run) the front matter is the only ACL.
func withinSource(granted, source []string) error {
	if len(source) == 0 || slices.Contains(source, principal.Public) {
		return nil
	}
	var beyond []string
	for _, p := range granted {
		if !slices.Contains(source, p) {
			beyond = append(beyond, p)
		}
	}
	if len(beyond) > 0 {
		return fmt.Errorf("front matter grants %q, which its source does not: a document may only narrow its source's principals %q "+
			"(put it in a source of its own to grant others)", beyond, source)
	}
	return nil
}
