package knowledge

import (
	"strings"
	"unicode"
)

// aclFilter is the pre-filter that keeps a search to what principals may
// see, AND'ed with the route's own filter when it has one. No principals
// means nothing matches: there is never an unfiltered search.
//
// Principals become string literals (not template parameters: Milvus Lite
// does not parse expression templates), so quoting must make it impossible
// for a principal to end its literal early and widen the filter. A
// principal with control characters is dropped, failing closed.
func aclFilter(principals []string, routeFilter string) string {
	literals := make([]string, 0, len(principals))
	for _, p := range principals {
		if lit, ok := quoteLiteral(p); ok {
			literals = append(literals, lit)
		}
	}
	if len(literals) == 0 {
		return FieldID + ` == ""` // matches no chunk: ids are never empty
	}
	filter := "array_contains_any(" + FieldACL + ", [" + strings.Join(literals, ", ") + "])"
	if routeFilter = strings.TrimSpace(routeFilter); routeFilter != "" {
		filter = "(" + filter + ") and (" + routeFilter + ")"
	}
	return filter
}

// quoteLiteral writes s as a double-quoted expression string literal,
// escaping the backslash and the quote.
func quoteLiteral(s string) (string, bool) {
	if s == "" || len(s) > maxPrincipalBytes {
		return "", false
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return "", false
		case r == '\\' || r == '"':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String(), true
}
