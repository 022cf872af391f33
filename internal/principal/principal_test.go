package principal

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestValidNames(t *testing.T) {
	for _, name := range []string{"alice", "sre", "o'brien", `o"brien`, "jörg", "運用", "a.b@example.com", "team:ops", strings.Repeat("a", MaxNameBytes)} {
		if err := ValidName(name); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", name, err)
		}
	}
}

func TestInvalidNamesAreRefusedNotMended(t *testing.T) {
	for name, want := range map[string]string{
		"":                                  "is empty",
		strings.Repeat("a", MaxNameBytes+1): "is 251 bytes; the limit is 250",
		"\xff":                              "is not valid UTF-8 (byte 1)",
		"ops\xc3":                           "is not valid UTF-8 (byte 4)",
		"\ufffd":                            "contains U+FFFD (replacement character)",
		"alice\u00a0":                       "contains U+00A0 (no-break space)",
		"\u00a0ops":                         "contains U+00A0 (no-break space)",
		"al ice":                            "contains U+0020 (space)",
		" alice":                            "contains U+0020 (space)",
		"alice\t":                           "contains U+0009 (tab)",
		"ali\u2003ce":                       "contains U+2003 (whitespace)",
		"ad\u200bmins":                      "contains U+200B (zero width space)",
		"admins\u202e":                      "contains U+202E (right-to-left override)",
		"\ufeffadmins":                      "contains U+FEFF (zero width no-break space)",
		"a\x00b":                            "contains U+0000 (null)",
		"a\x1fb":                            "contains U+001F (a control character)",
		"a\u0080b":                          "contains U+0080 (a control character)",
		"a\U000E0001":                       "contains U+E0001 (a format character)",
		"staff,admins":                      "contains U+002C (comma, the list separator)",
	} {
		err := ValidName(name)
		if err == nil || err.Error() != want {
			t.Errorf("ValidName(%q) = %v, want %q", name, err, want)
		}
	}
}

func TestValidPrincipals(t *testing.T) {
	for _, p := range []string{"public", "user:alice", "group:sre", "user:group:sre"} {
		if err := Valid(p); err != nil {
			t.Errorf("Valid(%q) = %v", p, err)
		}
	}
	for p, want := range map[string]string{
		"Public":           "want public, user:<name> or group:<name>",
		"team:sre":         "want public, user:<name> or group:<name>",
		"group:":           "the name is empty",
		"group:\u00a0ops":  "the name contains U+00A0 (no-break space)",
		"user:alice\u200b": "the name contains U+200B (zero width space)",
		"group:\xff":       "the name is not valid UTF-8 (byte 1)",
	} {
		if err := Valid(p); err == nil || err.Error() != want {
			t.Errorf("Valid(%q) = %v, want %q", p, err, want)
		}
	}
}

func TestTrimItemTrimsOnlyASCIISpaceAndTab(t *testing.T) {
	for in, want := range map[string]string{" sre\t": "sre", "\u00a0sre": "\u00a0sre", "sre\u3000": "sre\u3000", "\nsre": "\nsre"} {
		if got := TrimItem(in); got != want {
			t.Errorf("TrimItem(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzValidName: whatever the rule accepts is a name nothing can read as
// another: valid UTF-8, short, no whitespace, control, format, U+FFFD or
// comma; and a principal made of it is valid too.
func FuzzValidName(f *testing.F) {
	for _, seed := range []string{"alice", "alice\u00a0", "\u00a0ops", "\xff", "\ufffd", "ad\u200bmins", "admins\u202e", "\ufeffops", "a,b", "a\x00b", " ", "jörg"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidName(name) != nil {
			return
		}
		if !utf8.ValidString(name) || name == "" || len(name) > MaxNameBytes {
			t.Fatalf("accepted %q", name)
		}
		for _, r := range name {
			if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError || r == ListSeparator {
				t.Fatalf("accepted %q with %U", name, r)
			}
		}
		if TrimItem(name) != name {
			t.Fatalf("accepted %q, which trimming would change", name)
		}
		if err := Valid(GroupPrefix + name); err != nil {
			t.Fatalf("name %q valid but group:%s not: %v", name, name, err)
		}
	})
}
