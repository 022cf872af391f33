package ingest

import "strings"

// draft is a chunk of the hierarchical pass, before splitting.
type draft struct {
	path     []string
	typ      ChunkType
	sections []*section // the section, then those merged into it
	// tokens is the sum of the sections' counts: the count of text() when
	// counts add up across whitespace.
	tokens int
}

// text is the draft's sections' own texts, between blank lines.
func (d draft) text() string {
	if len(d.sections) == 1 {
		return d.sections[0].own
	}
	texts := make([]string, len(d.sections))
	for i, s := range d.sections {
		texts[i] = s.own
	}
	return strings.Join(texts, "\n\n")
}

// hierarchicalPass turns the heading tree into drafts, in document order.
func (c *chunker) hierarchicalPass(root *section) []draft {
	var drafts []draft
	if root.hasBody() {
		drafts = append(drafts, draft{typ: TypeOrphan, sections: []*section{root}, tokens: c.own(root)})
	}
	for _, top := range root.kids {
		drafts = c.walk(top, TypeSection, drafts)
	}
	return drafts
}

// walk emits s's draft (with its short subsections merged in), then its
// other subsections' drafts.
func (c *chunker) walk(s *section, typ ChunkType, drafts []draft) []draft {
	if c.bounds.stopped() {
		return drafts
	}
	d := draft{path: s.path, typ: typ, sections: []*section{s}, tokens: c.own(s)}
	var standalone []*section
	for _, kid := range s.kids {
		if c.mergeable(kid) {
			d.sections = append(d.sections, kid)
			d.tokens += c.own(kid)
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
	if c.opts.MergeBelowTokens <= 0 {
		return false
	}
	return c.own(s) < c.opts.MergeBelowTokens
}

// own works out a section's own text and its lines' token counts, once:
// a subsection is counted to decide whether it merges, then again as
// part of the draft it ends up in. It returns the section's count.
func (c *chunker) own(s *section) int {
	if !s.counted {
		s.own = s.ownText()
		s.lineTokens, s.tokens = c.tokens.countLines(s.own)
		s.counted = true
	}
	return s.tokens
}
