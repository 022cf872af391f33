package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed page
var files embed.FS

// ContentSecurityPolicy admits only the page's own script, style and API.
// Images may come from any http(s) URL, because fragments name images by
// URL and the sources panel shows them. Trusted Types with no policy make
// Chromium refuse every HTML-parsing sink (innerHTML, document.write…),
// so model or fragment text can only ever become text.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' https: http:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// contentTypes are the only kinds of file the page is made of; a file of
// another kind is not served, so nothing is left to sniffing.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// asset is one embedded file, ready to serve.
type asset struct {
	name, contentType, etag string
	body                    []byte
}

// Handler serves the page at / and its assets under /ui/; anything else
// it is given answers 404. With feedback, each answer has thumbs up and
// down (POST /v1/turns/{id}/feedback); without, the page is marked
// data-feedback="off" and shows none.
func Handler(feedback bool) http.Handler {
	assets, err := load(files)
	if err != nil {
		panic(err) // the embedded tree is fixed at build time; TestEmbeddedPage reads it
	}
	if !feedback {
		assets["index.html"] = withoutFeedback(assets["index.html"])
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		// Revalidated on every load (cheap with the ETag), so a rolled
		// route never runs yesterday's script against today's API.
		h.Set("Cache-Control", "no-cache")
		name := ""
		switch {
		case r.URL.Path == "/":
			name = "index.html"
		case strings.HasPrefix(r.URL.Path, "/ui/"):
			name = strings.TrimPrefix(r.URL.Path, "/ui/")
			if name == "index.html" {
				name = "" // one address for the page: /
			}
		}
		a, ok := assets[name]
		if !ok {
			http.Error(w, "404 page not found", http.StatusNotFound)
			return
		}
		h.Set("Content-Type", a.contentType)
		h.Set("ETag", a.etag)
		http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
	})
}

// withoutFeedback is the page marked to show no thumbs.
func withoutFeedback(a asset) asset {
	a.body = bytes.Replace(a.body, []byte("<body>"), []byte(`<body data-feedback="off">`), 1)
	sum := sha256.Sum256(a.body)
	a.etag = `"` + hex.EncodeToString(sum[:8]) + `"`
	return a
}

// load reads the page's files, keyed by their name under page/.
func load(fsys fs.FS) (map[string]asset, error) {
	page, err := fs.Sub(fsys, "page")
	if err != nil {
		return nil, fmt.Errorf("the embedded page: %w", err)
	}
	entries, err := fs.ReadDir(page, ".")
	if err != nil {
		return nil, fmt.Errorf("the embedded page: %w", err)
	}
	assets := map[string]asset{}
	for _, e := range entries {
		contentType, ok := contentTypes[path.Ext(e.Name())]
		if e.IsDir() || !ok {
			continue
		}
		body, err := fs.ReadFile(page, e.Name())
		if err != nil {
			return nil, fmt.Errorf("the embedded page: %w", err)
		}
		sum := sha256.Sum256(body)
		assets[e.Name()] = asset{name: e.Name(), contentType: contentType, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, body: body}
	}
	return assets, nil
}
