package controller

import "unicode/utf8"

// statusMessageMax bounds a message read from a pod (a failed ingestion's
// log) before it lands in status.
const statusMessageMax = 2000

// truncateMessage keeps a status message readable in `kubectl describe`
// and the object small; "…" marks a cut.
func truncateMessage(s string) string {
	if len(s) > statusMessageMax {
		return cutString(s, statusMessageMax) + "…"
	}
	return s
}

// cutString cuts s to at most n bytes on a rune boundary: a status string
// must stay valid UTF-8.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
