package ingest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// adversarialPages are pages of about size bytes that made the shortcode
// reading quadratic: comments never closed (each looked for its closer
// through the rest of the page), openers without a closing delimiter
// (each looked for one to the page's end), markers rendering nothing on
// one long line (each copied the line so far), and one marker of many
// arguments before a named one (each looked for the "=").
func adversarialPages(size int) map[string]string {
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	return map[string]string{
		"unclosed comments":     fill("{{< comment >}}\n"),
		"openers not closed":    fill("{{< tab\n"),
		"one line of markers":   fill("a {{< include x >}} "),
		"a late named argument": "{{< x " + fill("a ") + "k=v >}}\n",
	}
}

// BenchmarkShortcodesOnAdversarialPages reads each adversarial page at
// 491 KB (the review's largest) and at the size limit of a document.
func BenchmarkShortcodesOnAdversarialPages(b *testing.B) {
	for _, size := range []int{491 << 10, MaxDocumentBytes} {
		for name, page := range adversarialPages(size) {
			b.Run(fmt.Sprintf("%s/%dKB", name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(page)))
				b.ReportAllocs()
				for b.Loop() {
					resolveShortcodes(page)
				}
			})
		}
	}
}

// Reading shortcodes allocates in proportion to the page on the pages
// that made it quadratic: a fixed multiple of the page's length, at 16 KB
// and at 256 KB alike (the output, and a few small values per marker).
// Before, it allocated 1,500 times a 16 KB page of unclosed comments.
func TestShortcodeReadingAllocatesLinearly(t *testing.T) {
	for _, size := range []int{16 << 10, 256 << 10} {
		for name, page := range adversarialPages(size) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			resolveShortcodes(page)
			runtime.ReadMemStats(&after)
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 8*uint64(len(page)) {
				t.Errorf("%s, %d bytes: %d bytes allocated, over 8 times the page", name, len(page), allocated)
			}
		}
	}
}

// Reading shortcodes examines each byte of the page a bounded number of
// times on the pages that made it quadratic: its searches examine a
// fixed multiple of the page's length, at 16 KB and at 256 KB alike.
func TestShortcodeReadingScansLinearly(t *testing.T) {
	for _, size := range []int{16 << 10, 256 << 10} {
		for name, page := range adversarialPages(size) {
			r := newShortcodeReader(page)
			r.resolve()
			if r.scanned > 8*len(page) {
				t.Errorf("%s, %d bytes: %d bytes examined, over 8 times the page", name, len(page), r.scanned)
			}
		}
	}
}
