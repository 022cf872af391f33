package ingest

import "strings"

// draft is a chunk of the hierarchical pass, before splitting.
type draft struct {
	path  []string
	typ   ChunkType
	texts []string
}

func (d draft) text() string { return strings.Join(d.texts, "\n\n") }

// hierarchicalPass turns the heading tree into drafts, in document order.
func (c *chunker) hierarchicalPass(root *section) []draft {
	var drafts []draft
	if root.hasBody() {
		drafts = append(drafts, draft{typ: TypeOrphan, texts: []string{root.ownText()}})
	}
	for _, top := range root.kids {
		drafts = c.walk(top, TypeSection, drafts)
	}
	return drafts
}

// walk emits s's draft (with its short subsections merged in), then its
// other subsections' drafts.
func (c *chunker) walk(s *section, typ ChunkType, drafts []draft) []draft {
	d := draft{path: s.path, typ: typ, texts: []string{s.ownText()}}
	var standalone []*section
	for _, kid := range s.kids {
		if c.mergeable(kid) {
			d.texts = append(d.texts, kid.ownText())
			d.typ = TypeMerged
			// A merged subsection's own subsections still stand alone.
			standalone = append(standalone, kid.kids...)
			continue
		}
		standalone = append(standalone, kid)
	}
	// A heading with nothing of its own lives on in its subsections' paths.
	if d.typ == TypeMerged || s.hasBody() || len(s.kids) == 0 {
		drafts = append(drafts, d)
	}
	for _, kid := range standalone {
		drafts = c.walk(kid, TypeSubsection, drafts)
	}
	return drafts
}

// mergeable: a subsection reads better with its parent when its own text
// is short.
func (c *chunker) mergeable(s *section) bool {
	return c.opts.MergeBelowTokens > 0 && c.opts.Tokens.Count(s.ownText()) < c.opts.MergeBelowTokens
}
