package knowledge

import (
	"strings"

	"github.com/ragroute/ragroute/internal/lexical"
)

// analyzerProperty on a generation's collection is the ID of the analyzer
// (lexical.Analyzer.ID) that prepared its keyword-search text: an
// ingestion with another builds a new generation, and a route with
// another refuses to search it. A plain collection property, on Milvus
// and Milvus Lite alike.
const analyzerProperty = "ragroute.analyzer"

// WithAnalyzer makes the store prepare keyword-search text with a: the
// rows it writes and the queries of its BM25 searches, so both meet as
// the same terms. Without one (the zero Analyzer) text goes to Milvus as
// it is.
func (s *Store) WithAnalyzer(a lexical.Analyzer) *Store {
	s.analyzer = a
	return s
}

// AnalyzerID names the store's analyzer, as the generations it builds
// record it.
func (s *Store) AnalyzerID() string { return s.analyzer.ID() }

// lexicalText is a row's text as its keyword-search field holds it:
// analyzed, and cut at a term boundary to the field's limit (lower-casing
// a rare letter takes more bytes; a term past 64 KiB hardly ranks).
func (s *Store) lexicalText(text string, limit int) string {
	analyzed := s.analyzer.Analyze(text)
	if len(analyzed) <= limit {
		return analyzed
	}
	cut := analyzed[:limit]
	if i := strings.LastIndexByte(cut, ' '); i >= 0 {
		return cut[:i]
	}
	return ""
}

// lexicalQuery is what a BM25 search of the served collection searches
// for: the query analyzed as its rows were, or, on a collection of schema
// 4 or older (no lexical fields: its BM25 reads the raw text), the query
// as it is, until the next ingestion rebuilds it.
func (s *Store) lexicalQuery(query string) string {
	s.acl.mu.Lock()
	analyzed := s.acl.lexical
	s.acl.mu.Unlock()
	if !analyzed {
		return query
	}
	return s.analyzer.Analyze(query)
}
