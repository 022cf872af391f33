package ui

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// htmlSinks are the ways a script could turn text into markup or code,
// and the storage that would outlive the tab.
var htmlSinks = regexp.MustCompile(`\b(?:innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|Function\(|setHTML|localStorage\.)`)

func get(t *testing.T, h http.Handler, path string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestPageAndAssetsUnderStrictCSP: the page and each asset come with
// their content type and the strict policy; the policy admits no inline
// script or style and no HTML sinks.
func TestPageAndAssetsUnderStrictCSP(t *testing.T) {
	h := Handler(true)
	for path, contentType := range map[string]string{
		"/":               "text/html; charset=utf-8",
		"/ui/page.js":     "text/javascript; charset=utf-8",
		"/ui/markdown.js": "text/javascript; charset=utf-8",
		"/ui/sse.js":      "text/javascript; charset=utf-8",
		"/ui/page.css":    "text/css; charset=utf-8",
		"/ui/icon.svg":    "image/svg+xml",
		"/ui/identity.js": "text/javascript; charset=utf-8",
		"/ui/turn.js":     "text/javascript; charset=utf-8",
		"/ui/feedback.js": "text/javascript; charset=utf-8",
		"/ui/strings.js":  "text/javascript; charset=utf-8",
	} {
		rec := get(t, h, path)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != contentType {
			t.Errorf("GET %s: %d %q, want 200 %q", path, rec.Code, rec.Header().Get("Content-Type"), contentType)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self';", "style-src 'self';", "connect-src 'self';",
			"frame-ancestors 'none'", "require-trusted-types-for 'script'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: policy %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "data:") {
			t.Errorf("GET %s: policy %q admits inline code or data: URLs", path, csp)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", path)
		}
	}
}

// TestOnlyThePageIsServed: nothing but the embedded files, one address
// for the page, no directory listing, no demo identities (only the
// demo's proxy offers those), no escape from the page folder.
func TestOnlyThePageIsServed(t *testing.T) {
	h := Handler(true)
	for _, path := range []string{"/ui/", "/ui/index.html", "/ui/nope.js", "/ui/demo-identities.json", "/ui/../handler.go",
		"/ui/page", "/favicon.ico", "/handler.go"} {
		if rec := get(t, h, path); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
}

// TestAssetsRevalidate: a browser's revalidation costs no body.
func TestAssetsRevalidate(t *testing.T) {
	h := Handler(true)
	first := get(t, h, "/ui/page.js")
	etag := first.Header().Get("ETag")
	if etag == "" || first.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("no ETag or not revalidated: %v", first.Header())
	}
	if again := get(t, h, "/ui/page.js", "If-None-Match", etag); again.Code != http.StatusNotModified || again.Body.Len() != 0 {
		t.Errorf("revalidation: %d with %d bytes, want 304 and none", again.Code, again.Body.Len())
	}
}

// TestEmbeddedPage: the page is small, self-contained and inert: under
// 100 KB in all, every file it loads is embedded, nothing comes from
// another host, nothing is inline, and no script writes HTML.
func TestEmbeddedPage(t *testing.T) {
	page, err := fs.Sub(files, "page")
	if err != nil {
		t.Fatal(err)
	}
	assets, err := load(files)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, a := range assets {
		total += len(a.body)
	}
	if total >= 100*1024 {
		t.Errorf("the page weighs %d bytes, want < 100 KB", total)
	}
	t.Logf("page weight: %d bytes in %d files", total, len(assets))
	entries, _ := fs.ReadDir(page, ".")
	if len(entries) != len(assets) {
		t.Errorf("%d files in page/, %d served: a file of a kind not served", len(entries), len(assets))
	}

	html := string(assets["index.html"].body)
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]+</script>`), // inline script
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`), // inline handlers
		regexp.MustCompile(`(?:src|href)="(?:https?:)?//`),
	} {
		if bad.MatchString(html) {
			t.Errorf("index.html has %s", bad)
		}
	}
	refs := regexp.MustCompile(`(?:src|href)="ui/([^"]+)"`).FindAllStringSubmatch(html, -1)
	for name, a := range assets {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		refs = append(refs, regexp.MustCompile(`from '\./([^']+)'`).FindAllStringSubmatch(string(a.body), -1)...)
		if sink := htmlSinks.FindString(string(a.body)); sink != "" {
			t.Errorf("%s uses %s", name, sink)
		}
	}
	if len(refs) < 5 {
		t.Fatalf("found %d references to the page's files; the pattern is out of date", len(refs))
	}
	for _, ref := range refs {
		if _, ok := assets[ref[1]]; !ok {
			t.Errorf("the page loads %s, which is not embedded", ref[1])
		}
	}
}

// TestFeedbackOffMarksThePage: a route that takes no feedback serves the
// page marked data-feedback="off" (the script then shows no thumbs), under
// an ETag of its own; one that does serves it unmarked.
func TestFeedbackOffMarksThePage(t *testing.T) {
	on, off := get(t, Handler(true), "/"), get(t, Handler(false), "/")
	if strings.Contains(on.Body.String(), "data-feedback") {
		t.Errorf("feedback on: the page is marked")
	}
	if !strings.Contains(off.Body.String(), `<body data-feedback="off">`) {
		t.Errorf("feedback off: the page is not marked")
	}
	if on.Header().Get("ETag") == off.Header().Get("ETag") {
		t.Errorf("both pages have ETag %s", on.Header().Get("ETag"))
	}
}

// tableKeys are the keys of one language's entries in strings.js.
func tableKeys(t *testing.T, js, language string) map[string]bool {
	t.Helper()
	block := regexp.MustCompile(`(?s)\n  ` + language + `: \{\n(.*?)\n  \},\n`).FindStringSubmatch(js)
	if block == nil {
		t.Fatalf("strings.js has no %s table", language)
	}
	keys := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^    '([\w.]+)':`).FindAllStringSubmatch(block[1], -1) {
		keys[m[1]] = true
	}
	return keys
}

// TestPageStringsAreInTheTable: every word the page shows comes from
// strings.js: each key index.html (data-i18n…) and the scripts (t(…))
// name is in the table, and English and Russian have the same keys.
// (TestBrowserPageLanguage checks the plural forms and the choice of
// language in the browser.)
func TestPageStringsAreInTheTable(t *testing.T) {
	assets, err := load(files)
	if err != nil {
		t.Fatal(err)
	}
	js := string(assets["strings.js"].body)
	en, ru := tableKeys(t, js, "en"), tableKeys(t, js, "ru")
	if len(en) < 50 {
		t.Fatalf("found %d English keys; the pattern is out of date", len(en))
	}
	for k := range en {
		if !ru[k] {
			t.Errorf("%s has no Russian entry", k)
		}
	}
	for k := range ru {
		if !en[k] {
			t.Errorf("%s has no English entry", k)
		}
	}
	used := map[string]string{}
	for _, m := range regexp.MustCompile(`data-i18n(?:-[a-z-]+)?="([^"]*)"`).FindAllStringSubmatch(string(assets["index.html"].body), -1) {
		used[m[1]] = "index.html"
	}
	// t('key', …) and t(cond ? 'key' : 'other', …).
	call := regexp.MustCompile(`\bt\(\s*(?:[^'()?]+\?\s*)?'([\w.]+)'(?:\s*:\s*'([\w.]+)')?`)
	for name, a := range assets {
		if !strings.HasSuffix(name, ".js") || name == "strings.js" {
			continue
		}
		for _, m := range call.FindAllStringSubmatch(string(a.body), -1) {
			for _, k := range m[1:] {
				if k != "" {
					used[k] = name
				}
			}
		}
	}
	if len(used) < 50 {
		t.Fatalf("found %d keys in use; the pattern is out of date", len(used))
	}
	for k, where := range used {
		if !en[k] {
			t.Errorf("%s names %q, which strings.js lacks", where, k)
		}
	}
	for k := range en {
		if _, ok := used[k]; !ok {
			t.Errorf("strings.js has %q, which nothing uses", k)
		}
	}
}
