package answer

import "strings"

// The Markdown forms a client loads or links: "[label](target)",
// "![alt](target)" and a reference definition "[id]: target" (which
// "[label][id]", "![alt][id]" and "[id]" then use), as CommonMark reads
// them: the target may follow a line ending, sit in angle brackets, hold
// balanced parentheses; a label may hold brackets and line endings. So a
// "(" or ":" after any "]" is judged by its target alone, whatever comes
// before the "]" or after the target.

// formState is what a scan of a form found.
type formState int

const (
	// formComplete: the form is there, whole.
	formComplete formState = iota
	// formIncomplete: the text ends before the form is known.
	formIncomplete
	// formNot: the text is not the form.
	formNot
)

// destination is a link or definition target: the URL and where, in the
// scanned text, the form it belongs to ends.
type destination struct {
	dest string
	end  int
}

// judgeMarkdown judges "[label](target)" or "![alt](target)" whole, so a
// removed link leaves its label. Anything else is text: only its "[" or
// "![" is passed; what follows is still judged, and a "(" or ":" after
// the label's "]" by judgeTarget or judgeDefinition.
func (g *LinkGuard) judgeMarkdown(s string, final bool) verdict {
	waiting := holding(s, final)
	open := 1
	if strings.HasPrefix(s, "!") {
		open = 2
	}
	notLink := kept(s, open)
	closing := strings.IndexAny(s[open:], "]\n")
	switch {
	case closing < 0 && waiting:
		return waitForMore
	case closing < 0 || s[open+closing] == '\n':
		return notLink
	}
	label := s[open : open+closing]
	paren := open + closing + 1
	switch {
	case paren == len(s) && waiting:
		return waitForMore
	case paren == len(s) || s[paren] != '(':
		return notLink
	}
	target, state := scanInlineTarget(s[paren:])
	switch {
	case state == formIncomplete && waiting:
		return waitForMore
	case state != formComplete:
		return notLink
	}
	n := paren + target.end
	if g.allowed.Allows(target.dest) {
		return kept(s, n)
	}
	// The label stays readable; a URL in it is judged like any other, and
	// a "<" in it starts no tag with the text after it.
	label = inertLabel(g.strip(label))
	switch {
	case strings.TrimSpace(label) != "":
		return verdict{n: n, text: label, removed: true, label: true}
	case open == 2:
		return replaced(n, imageRemoved)
	}
	return replaced(n, linkRemoved)
}

// inertLabel is a removed link's label made unable to start a form with
// the text after it: a "]:" at its end would take that text as a
// definition's target, a "<" as a tag.
func inertLabel(label string) string {
	body := strings.TrimRight(label, " \t\r\n")
	if strings.HasSuffix(body, "]:") {
		label = body[:len(body)-1] + " :" + label[len(body):]
	}
	return escapeTagStarts(label)
}

// escapeTagStarts escapes each "<" of a label, set apart from a word or
// URL before it as the guard sets its replacements apart.
func escapeTagStarts(label string) string {
	var b strings.Builder
	for i := 0; i < len(label); i++ {
		if label[i] != '<' {
			b.WriteByte(label[i])
			continue
		}
		if i > 0 && label[i-1] > ' ' {
			b.WriteByte(' ')
		}
		b.WriteString(escapedTagStart)
	}
	return b.String()
}

// judgeTarget judges "(target" after a "]" that judgeMarkdown let
// through: a target not allowed is replaced, the label before it stays.
func (g *LinkGuard) judgeTarget(s string, final bool) verdict {
	target, state := scanTargetAfter(s, !holding(s, final))
	switch {
	case state == formIncomplete:
		return waitForMore
	case state != formComplete:
		return kept(s, 1)
	case g.allowed.Allows(target.dest):
		return kept(s, target.end)
	case target.end == len(s) && holding(s, final):
		return waitForMore // a ")" may follow, to go with the target
	}
	// A space keeps the replacement from reading as a target or a
	// reference after the "]".
	return replaced(withClosing(s, target), " "+linkRemoved)
}

// judgeDefinition judges ": target" after a "]", the form of a reference
// definition. Its target is judged when it may name another site than
// the client's own; a relative one passes, so "[S1]: Expense policy"
// stays as written.
func (g *LinkGuard) judgeDefinition(s string, final bool) verdict {
	target, state := scanTargetAfter(s, !holding(s, final))
	switch {
	case state == formIncomplete:
		return waitForMore
	case state != formComplete:
		return kept(s, 1)
	case g.allowed.Allows(target.dest):
		return kept(s, target.end)
	case !mayNameAnotherSite(target.dest):
		// A client that does not read a definition here reads the target
		// as text: a form in it is judged as any other.
		if inner := linkStart(s[1:target.end], s[0]); inner >= 0 {
			return kept(s, 1+inner)
		}
		return kept(s, target.end)
	}
	return replaced(target.end, ": "+linkRemoved)
}

// mayNameAnotherSite says whether a target may resolve to another site
// than the page's: it has a scheme ("https:", "javascript:"), starts with
// two slashes or backslashes, or holds an entity or escape that may spell
// either. It is judged past an opening "<" and blanks: a client reads
// "<https://host>" as the URL inside, whether or not the guard read the
// brackets as one target (a form inside makes it read on as plain text),
// and a browser drops the blanks and controls before a URL.
func mayNameAnotherSite(dest string) bool {
	dest = strings.TrimLeftFunc(dest, func(r rune) bool { return r == '<' || r <= ' ' })
	// "&lt;" spells nothing a URL's site is made of (and the guard writes it).
	if strings.ContainsAny(strings.ReplaceAll(dest, escapedTagStart, ""), "&\\") {
		return true
	}
	if len(dest) >= 2 && (dest[0] == '/' || dest[0] == '\\') && (dest[1] == '/' || dest[1] == '\\') {
		return true
	}
	colon := strings.IndexByte(dest, ':')
	if colon <= 0 || colon == len(dest)-1 || !isASCIILetter(dest[0]) {
		return false
	}
	for i := 1; i < colon; i++ {
		if c := dest[i]; !isASCIILetter(c) && !isASCIIDigit(c) && c != '+' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// firstTarget is the target of the first link or image in text.
func firstTarget(text string) (string, bool) {
	for i := 1; i < len(text); i++ {
		if text[i] == '(' && text[i-1] == ']' {
			if target, state := scanInlineTarget(text[i:]); state == formComplete {
				return target.dest, true
			}
		}
	}
	return "", false
}

// scanInlineTarget reads "(target)" or "(target "title")" at the start of
// s, for a link judged whole: the form ends at the ")" after the target,
// before any blank line.
func scanInlineTarget(s string) (destination, formState) {
	target, state := scanTargetAfter(s, false)
	if state != formComplete {
		return destination{}, state
	}
	rest := s[target.end:]
	closing := strings.IndexByte(rest, ')')
	switch {
	case hasBlankLine(rest[:max(closing, 0)]) || (closing < 0 && hasBlankLine(rest)):
		return destination{}, formNot
	case closing < 0:
		return destination{}, formIncomplete
	}
	return destination{dest: target.dest, end: target.end + closing + 1}, formComplete
}

// scanTargetAfter reads the target after the "(" or ":" s starts with:
// blanks and one line ending may come first; end is just past the
// target. cut: s goes no further (the answer's end, or the hold's), so a
// target not yet ended is read as far as it goes.
func scanTargetAfter(s string, cut bool) (destination, formState) {
	start := skipBlanks(s, 1)
	switch {
	case start == len(s) && cut:
		return destination{}, formNot
	case start == len(s):
		return destination{}, formIncomplete
	case s[start] == '\n':
		return destination{}, formNot
	}
	dest, end, state := scanDestination(s, start)
	if state == formIncomplete && cut {
		if dest, end, state = scanPlainDestination(s, start); state == formIncomplete {
			dest, end, state = s[start:], len(s), formComplete
		}
	}
	return destination{dest: dest, end: end}, state
}

// withClosing is target's end past a ")" right after it, so a target
// replaced after a "]" takes its parenthesis along.
func withClosing(s string, target destination) int {
	if target.end < len(s) && s[target.end] == ')' {
		return target.end + 1
	}
	return target.end
}

// scanDestination reads the target at s[start]: "<…>" on one line, or
// non-blank text whose parentheses balance, up to a blank or an
// unmatched ")". end is just past it. A "<" that opens no "<…>" is read
// as the start of the text: the guard may yet escape it.
func scanDestination(s string, start int) (dest string, end int, state formState) {
	if s[start] == '<' {
		// A form inside ends it too: its replacement may take a line
		// ending away, or bring a ">"; so does a "<" the guard escaped.
		closing := strings.IndexAny(s[start+1:], ">\n")
		inner := linkStart(s[start+1:], '<')
		if escaped := strings.Index(s[start+1:], escapedTagStart); escaped >= 0 && (inner < 0 || escaped < inner) {
			inner = escaped
		}
		switch {
		case inner >= 0 && (closing < 0 || inner < closing):
		case closing < 0:
			return "", 0, formIncomplete
		case s[start+1+closing] == '>':
			return s[start+1 : start+1+closing], start + closing + 2, formComplete
		}
	}
	return scanPlainDestination(s, start)
}

// scanPlainDestination reads the target at s[start] as non-blank text.
func scanPlainDestination(s string, start int) (dest string, end int, state formState) {
	depth := 0
	for i := start; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++ // an escaped byte is part of the target
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			// Other controls stay in the target: a client may take them
			// into it, and a browser drops them before a scheme.
			return s[start:i], i, formComplete
		case c == '(':
			depth++
		case c == ')' && depth == 0:
			return s[start:i], i, formComplete
		case c == ')':
			depth--
		}
	}
	return "", 0, formIncomplete
}

// skipBlanks skips spaces and tabs from s[i], across one line ending.
func skipBlanks(s string, i int) int {
	lineEnds := 0
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\r':
		case '\n':
			if lineEnds++; lineEnds > 1 {
				return i
			}
		default:
			return i
		}
		i++
	}
	return i
}

// hasBlankLine says whether s holds a line of blanks between two line
// endings, which ends any Markdown form.
func hasBlankLine(s string) bool {
	for {
		at := strings.IndexByte(s, '\n')
		if at < 0 {
			return false
		}
		s = s[at+1:]
		if rest := strings.TrimLeft(s, " \t\r"); strings.HasPrefix(rest, "\n") {
			return true
		}
	}
}
