package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// chunker holds the options of one chunking run.
type chunker struct {
	opts Options
}

// Chunks cuts one document into chunks. It fails only on a front matter
// that cannot be trusted (invalid YAML, principals or kind): guessing an
// ACL would risk showing a document to the wrong people.
func Chunks(doc Document, opts Options) ([]Chunk, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	fm, body, _, err := splitFrontMatter(doc.Content, opts.FrontMatterKey)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc.Source, err)
	}
	c := &chunker{opts: opts}
	root := parseSections(body)

	acl := fm.principals
	if acl == nil {
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

	var chunks []Chunk
	seen := map[string]int{}
	for _, d := range c.hierarchicalPass(root) {
		key := strings.Join(d.path, "\x1f")
		seen[key]++
		chunks = append(chunks, c.finish(meta, d, seen[key])...)
	}
	return chunks, nil
}

// chunkMeta is what every chunk of a document shares.
type chunkMeta struct {
	docID, source, uri, title string
	acl                       []string
	kind                      Kind // forced by front matter; "" to detect
}

// finish runs the adaptive pass on a draft and fills in every field.
// occurrence tells apart sections with the same heading path in one file.
func (c *chunker) finish(meta chunkMeta, d draft, occurrence int) []Chunk {
	text := d.text()
	kind := meta.kind
	if kind == "" {
		kind = detectKind(d.path, text)
	}
	baseID := stableID(meta.source, strings.Join(d.path, "\x1f"), fmt.Sprint(occurrence))
	parts := c.split(text)
	chunks := make([]Chunk, len(parts))
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
			Tokens:      c.opts.Tokens.Count(part),
			ImageURLs:   imageURLs(part),
			ACL:         meta.acl,
			Text:        part,
		}
		if len(parts) > 1 {
			ch.ID = stableID(baseID, fmt.Sprint(i+1))
			ch.ParentID = baseID
		}
		ch.ContentHash = contentHash(ch)
		chunks[i] = ch
	}
	return chunks
}

// documentTitle: the front matter's title, else the first top-level
// heading, else the file name.
func documentTitle(fm frontMatter, root *section, source string) string {
	if fm.title != "" {
		return fm.title
	}
	for _, s := range root.kids {
		if s.level == 1 && s.heading != "" {
			return s.heading
		}
	}
	return strings.TrimSuffix(path.Base(source), path.Ext(source))
}

// stableID derives an id from parts that identify a chunk across runs.
func stableID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// contentHash covers every field written to the store except vectors, so
// an unchanged hash means nothing needs rewriting.
func contentHash(ch Chunk) string {
	h := sha256.New()
	for _, field := range []string{ch.Source, ch.URI, ch.Title, strings.Join(ch.HeadingPath, "\x1f"), string(ch.Type),
		string(ch.Kind), fmt.Sprint(ch.PartIndex, "/", ch.PartCount), ch.ParentID,
		strings.Join(ch.ImageURLs, "\x1f"), strings.Join(ch.ACL, "\x1f"), ch.Text} {
		h.Write([]byte(field))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

var (
	markdownImage = regexp.MustCompile(`!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	htmlImage     = regexp.MustCompile(`(?i)<img\b[^>]*\bsrc\s*=\s*["']([^"']+)["']`)
)

// imageURLs lists the images a text references, in order, once each. The
// images are never fetched: clients load them when they render.
func imageURLs(text string) []string {
	urls := []string{}
	seen := map[string]bool{}
	for _, re := range []*regexp.Regexp{markdownImage, htmlImage} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				urls = append(urls, m[1])
			}
		}
	}
	return urls
}
