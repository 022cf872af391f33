package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ragroute/ragroute/internal/principal"
)

// chunker holds the options of one chunking run.
type chunker struct {
	opts   Options
	tokens *lineCounts
	pieces []piece // split's, kept from draft to draft
	bounds bounds
}

// Chunks cuts one document into chunks, each within the store's limits
// (MaxTitleBytes, MaxHeadingBytes, MaxTextBytes). It fails on a front
// matter that cannot be trusted (invalid YAML, principals or kind) or a
// source principal that breaks the principal rule (guessing an ACL would
// risk showing a document to the wrong people), and on a document that
// would make more than MaxChunksPerDocument chunks or whose chunks would
// repeat more than MaxRepeatRatio times its bytes.
func Chunks(doc Document, opts Options) ([]Chunk, error) {
	return ChunksContext(context.Background(), doc, opts)
}

// ChunksContext is Chunks giving up once ctx is done, with an error
// wrapping ctx's: an ingestion gives each document a deadline, so that
// no page, however its text is made, holds the run.
func ChunksContext(ctx context.Context, doc Document, opts Options) ([]Chunk, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	fm, body, err := readerBody(doc.Content, opts.FrontMatterKey)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc.Source, err)
	}
	root, err := parseSections(body, MaxChunksPerDocument)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc.Source, err)
	}
	c := &chunker{opts: opts, tokens: newLineCounts(opts.Tokens, strings.Count(body, "\n")+1), bounds: newBounds(ctx, len(doc.Content))}
	if c.bounds.stopped() {
		return nil, fmt.Errorf("%s: %w", doc.Source, c.bounds.err)
	}

	acl := fm.principals
	if err := withinSource(acl, doc.Principals); err != nil {
		return nil, fmt.Errorf("%s: %w", doc.Source, err)
	}
	if acl == nil {
		// The source's principals were not checked by the front matter's
		// parser, and the CRD's pattern lets Unicode whitespace and format
		// characters through.
		for _, p := range doc.Principals {
			if err := principal.Valid(p); err != nil {
				return nil, fmt.Errorf("%s: the source's principal %q: %w", doc.Source, p, err)
			}
		}
		acl = doc.Principals
	}
	acl = append([]string{}, acl...)
	meta := chunkMeta{
		docID:  stableID(doc.Source),
		source: doc.Source,
		uri:    doc.URI,
		title:  documentTitle(fm, root, doc.Source),
		acl:    acl,
		kind:   fm.kind,
	}
	if meta.uri == "" {
		meta.uri = doc.Source
	}

	// Every draft is cut first, so that the chunks, which are large, are
	// allocated at once.
	drafts := c.hierarchicalPass(root)
	if c.bounds.stopped() {
		return nil, fmt.Errorf("%s: %w", doc.Source, c.bounds.err)
	}
	c.tokens.expect(drafts, c.opts.MaxTokens)
	cuts := make([]cutDraft, len(drafts))
	total := 0
	for i, d := range drafts {
		cuts[i] = c.cut(d)
		if c.bounds.stopped() {
			return nil, fmt.Errorf("%s: %w", doc.Source, c.bounds.err)
		}
		if total += len(cuts[i].parts); total > MaxChunksPerDocument {
			return nil, fmt.Errorf("%s: more than %d chunks, the most one document may make: refused", doc.Source, MaxChunksPerDocument)
		}
	}
	var chunks []Chunk
	if total > 0 {
		chunks = make([]Chunk, 0, total)
	}
	seen := map[string]int{}
	for i, d := range drafts {
		if c.bounds.stopped() {
			return nil, fmt.Errorf("%s: %w", doc.Source, c.bounds.err)
		}
		key := strings.Join(d.path, "\x1f")
		seen[key]++
		chunks = c.finish(chunks, meta, d, cuts[i], seen[key])
	}
	return chunks, nil
}

// chunkMeta is what every chunk of a document shares.
type chunkMeta struct {
	docID, source, uri, title string
	acl                       []string
	kind                      Kind // forced by front matter; "" to detect
}

// cutDraft is a draft's text and the parts the adaptive pass cut it
// into.
type cutDraft struct {
	text  string
	parts []part
}

// cut runs the adaptive pass on a draft.
func (c *chunker) cut(d draft) cutDraft {
	text := d.text()
	tokens := d.tokens // the texts are joined by blank lines
	if !c.tokens.addsUp {
		tokens = c.tokens.count(text)
	}
	if tokens > c.opts.MaxTokens {
		// The draft is split: its lines will be counted again and again.
		c.tokens.forget()
		for _, s := range d.sections {
			c.tokens.remember(s.own, s.lineTokens)
		}
	}
	return cutDraft{text, c.split(text, tokens)}
}

// finish fills in every field of a draft's chunks, cut as cut, and
// appends them to chunks. occurrence tells apart sections with the same
// heading path in one file.
func (c *chunker) finish(chunks []Chunk, meta chunkMeta, d draft, cut cutDraft, occurrence int) []Chunk {
	kind := meta.kind
	if kind == "" {
		kind = detectKind(d.path, cut.text)
	}
	baseID := stableID(meta.source, strings.Join(d.path, "\x1f"), strconv.Itoa(occurrence))
	parts := cut.parts
	for i, part := range parts {
		ch := Chunk{
			ID:          baseID,
			DocID:       meta.docID,
			Source:      meta.source,
			URI:         meta.uri,
			Title:       meta.title,
			HeadingPath: append([]string{}, d.path...),
			Type:        d.typ,
			Kind:        kind,
			PartIndex:   i + 1,
			PartCount:   len(parts),
			Tokens:      part.tokens,
			ImageURLs:   imageURLs(part.text),
			ACL:         meta.acl,
			Text:        part.text,
			Flagged:     FlagReason(part.text),
		}
		if len(parts) > 1 {
			ch.ID = stableID(baseID, strconv.Itoa(i+1))
			ch.ParentID = baseID
		}
		ch.ContentHash = contentHash(ch)
		chunks = append(chunks, ch)
	}
	return chunks
}

// documentTitle: the front matter's title, else the first top-level
// heading, else the file name; cut to MaxTitleBytes. A Hugo page's title
// is the heading its reader sees on the page (most such pages have no H1
// of their own); its linkTitle is only the navigation's short label
// ("macOS" for "Install the Collector on macOS"), too bare to say what a
// chunk is about.
func documentTitle(fm frontMatter, root *section, source string) string {
	if fm.title != "" {
		return cutBytes(fm.title, MaxTitleBytes)
	}
	for _, s := range root.kids {
		if s.level == 1 && s.heading != "" {
			return cutBytes(s.heading, MaxTitleBytes)
		}
	}
	return cutBytes(strings.TrimSuffix(path.Base(source), path.Ext(source)), MaxTitleBytes)
}

// cutBytes is s cut to at most n bytes, between characters.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// stableID derives an id from parts that identify a chunk across runs.
func stableID(parts ...string) string {
	var buf [256]byte // parts joined by zero bytes; on the stack when they fit
	data := buf[:0]
	for i, p := range parts {
		if i > 0 {
			data = append(data, 0)
		}
		data = append(data, p...)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// contentHash covers every field written to the store except vectors, so
// an unchanged hash means nothing needs rewriting. It hashes each field
// (a list's items between \x1f) and a zero byte after it.
func contentHash(ch Chunk) string {
	h := sha256.New()
	var buf [512]byte // what is hashed goes through it: nothing is copied whole
	write := func(s string) {
		for s != "" {
			n := copy(buf[:], s)
			h.Write(buf[:n])
			s = s[n:]
		}
	}
	for _, field := range [...][]string{{ch.Source}, {ch.URI}, {ch.Title}, ch.HeadingPath, {string(ch.Type)},
		{string(ch.Kind)}, {strconv.Itoa(ch.PartIndex) + "/" + strconv.Itoa(ch.PartCount)}, {ch.ParentID},
		ch.ImageURLs, ch.ACL, {ch.Text}} {
		for i, item := range field {
			if i > 0 {
				write("\x1f")
			}
			write(item)
		}
		write("\x00")
	}
	if ch.Flagged != "" {
		// Only when set, so the hashes of unflagged chunks stay as they were.
		write("flagged\x00" + ch.Flagged)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

var (
	markdownImage = regexp.MustCompile(`!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	htmlImage     = regexp.MustCompile(`(?i)<img\b[^>]*\bsrc\s*=\s*["']([^"']+)["']`)
)

// imagePatterns are the image regexps in the order their URLs are listed,
// each with mayMatch, false when the regexp cannot match a text because
// it lacks what every match starts with: most texts have no image, and
// the scan costs much less than the regexp (htmlImage above all).
var imagePatterns = []struct {
	re       *regexp.Regexp
	mayMatch func(string) bool
}{
	{markdownImage, func(text string) bool { return strings.Contains(text, "![") }},
	{htmlImage, hasImgTag},
}

// imageURLs lists the images a text references, in order, once each. The
// images are never fetched: clients load them when they render.
func imageURLs(text string) []string {
	urls := []string{}
	seen := map[string]bool{}
	for _, p := range imagePatterns {
		if !p.mayMatch(text) {
			continue
		}
		for _, m := range p.re.FindAllStringSubmatch(text, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				urls = append(urls, m[1])
			}
		}
	}
	return urls
}

// hasImgTag reports whether text has "<img" in any case (the case folds
// of i, m and g are all ASCII).
func hasImgTag(text string) bool {
	for i := strings.IndexByte(text, '<'); i >= 0 && i+4 <= len(text); {
		if strings.EqualFold(text[i+1:i+4], "img") {
			return true
		}
		next := strings.IndexByte(text[i+1:], '<')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}
