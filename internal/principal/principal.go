// Package principal is the one rule for the user and group names that
// identities carry and ACLs grant. A route checks the names a request
// claims with it, ingestion the names a document's front matter grants,
// so both sides agree on what a name is and an ACL entry matches exactly
// the asker it names.
//
// A name is never normalised: a name that breaks the rule is refused, not
// mended into another name (trimming "alice\u00a0" to "alice" would let
// whoever can set the first pass as the second). A name must be valid
// UTF-8, non-empty, at most MaxNameBytes bytes, and hold no Unicode
// whitespace, no control (Cc) or format (Cf) character, no U+FFFD and no
// comma (the separator of name lists). Names are compared byte for byte:
// no case folding, no Unicode normalisation.
//
// It imports nothing else of ragroute, so the route and ingestion can both
// use it.
package principal

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The forms of a principal.
const (
	Public      = "public"
	UserPrefix  = "user:"
	GroupPrefix = "group:"
)

// MaxBytes bounds a whole principal, as the knowledge store stores it.
const MaxBytes = 256

// MaxNameBytes bounds a name so that its longest principal, group:<name>,
// fits MaxBytes.
const MaxNameBytes = MaxBytes - len(GroupPrefix)

// ListSeparator separates the names of a list (a groups header, a groups
// claim, a front-matter ACL string); no name may contain it.
const ListSeparator = ','

// ValidName says why name cannot be a user or group name, or nil. The
// error reads as a predicate of the name ("contains U+00A0 (no-break
// space)") for the caller to prefix with what it checked.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("is empty")
	}
	if len(name) > MaxNameBytes {
		return fmt.Errorf("is %d bytes; the limit is %d", len(name), MaxNameBytes)
	}
	for i, r := range name {
		if r == utf8.RuneError {
			// A decoding error, or a literal U+FFFD: either way a byte
			// sequence that another decoder may read as another name.
			if _, size := utf8.DecodeRuneInString(name[i:]); size == 1 {
				return fmt.Errorf("is not valid UTF-8 (byte %d)", i+1)
			}
			return fmt.Errorf("contains %s", describe(r))
		}
		if r == ListSeparator || unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return fmt.Errorf("contains %s", describe(r))
		}
	}
	return nil
}

// Valid says why p is not public, user:<name> or group:<name> with a
// valid name, or nil.
func Valid(p string) error {
	if p == Public {
		return nil
	}
	name, ok := strings.CutPrefix(p, UserPrefix)
	if !ok {
		name, ok = strings.CutPrefix(p, GroupPrefix)
	}
	if !ok {
		return fmt.Errorf("want %s, %s<name> or %s<name>", Public, UserPrefix, GroupPrefix)
	}
	if err := ValidName(name); err != nil {
		return fmt.Errorf("the name %w", err)
	}
	return nil
}

// TrimItem removes the ASCII spaces and tabs around an item of a list, as
// in "staff, sre": the one liberty the rule takes, because those two are
// what people and proxies put after a comma. Any other character around
// an item stays and makes the item invalid.
func TrimItem(item string) string {
	return strings.Trim(item, " \t")
}

// describe names a refused character for an error message, by code point
// and, for the usual suspects, by name.
func describe(r rune) string {
	if name := runeName(r); name != "" {
		return fmt.Sprintf("U+%04X (%s)", r, name)
	}
	switch {
	case unicode.IsSpace(r):
		return fmt.Sprintf("U+%04X (whitespace)", r)
	case unicode.IsControl(r):
		return fmt.Sprintf("U+%04X (a control character)", r)
	default:
		return fmt.Sprintf("U+%04X (a format character)", r)
	}
}

// runeName is the Unicode name of a character most likely to be smuggled
// into a name, so that an error says what it found; "" for the others.
func runeName(r rune) string {
	switch r {
	case 0x0000:
		return "null"
	case 0x0009:
		return "tab"
	case 0x000A:
		return "line feed"
	case 0x000D:
		return "carriage return"
	case 0x0020:
		return "space"
	case 0x002C:
		return "comma, the list separator"
	case 0x0085:
		return "next line"
	case 0x00A0:
		return "no-break space"
	case 0x00AD:
		return "soft hyphen"
	case 0x1680:
		return "ogham space mark"
	case 0x180E:
		return "mongolian vowel separator"
	case 0x2007:
		return "figure space"
	case 0x2009:
		return "thin space"
	case 0x200A:
		return "hair space"
	case 0x200B:
		return "zero width space"
	case 0x200C:
		return "zero width non-joiner"
	case 0x200D:
		return "zero width joiner"
	case 0x200E:
		return "left-to-right mark"
	case 0x200F:
		return "right-to-left mark"
	case 0x2028:
		return "line separator"
	case 0x2029:
		return "paragraph separator"
	case 0x202A:
		return "left-to-right embedding"
	case 0x202B:
		return "right-to-left embedding"
	case 0x202C:
		return "pop directional formatting"
	case 0x202D:
		return "left-to-right override"
	case 0x202E:
		return "right-to-left override"
	case 0x202F:
		return "narrow no-break space"
	case 0x205F:
		return "medium mathematical space"
	case 0x2060:
		return "word joiner"
	case 0x2066:
		return "left-to-right isolate"
	case 0x2067:
		return "right-to-left isolate"
	case 0x2068:
		return "first strong isolate"
	case 0x2069:
		return "pop directional isolate"
	case 0x3000:
		return "ideographic space"
	case 0xFEFF:
		return "zero width no-break space"
	case 0xFFFD:
		return "replacement character"
	}
	return ""
}
