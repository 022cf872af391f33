// Package ingest turns Markdown documents into chunks for the knowledge
// store. It is pure: no I/O, no Kubernetes.
//
// A document's body is first read as the rendered page shows it
// (hugo.go): Hugo shortcodes resolved as far as a chunker can without the
// site, heading attributes ({#id}) dropped; Markdown without them is
// untouched.
//
// Chunking follows the document's own structure. The hierarchical pass
// walks the heading tree: each top section is a chunk, each subsection a
// chunk that carries its parents' heading path, a subsection too short to
// stand alone is merged into its parent, and text under no heading is kept
// as an orphan chunk. Fenced code, tables, lists and procedures are never
// cut by it. The adaptive pass then splits any chunk over the token
// threshold at the best boundary it has (block, paragraph, sentence, word)
// into parts with a small overlap, each labelled with its part number and
// its parent's id so a route can reassemble the section.
package ingest
