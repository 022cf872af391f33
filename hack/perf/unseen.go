package main

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// The unseen phases ask questions no earlier phase asked, so that a route's
// grounding check finds few of their fragments' vectors already kept: the
// re-asked phases flatter a route whose check caches what it embedded.
// The pool is made from the corpus itself (each section heading turned
// into a question) and the unanswerable questions, the same for every
// system and every run.

// unseenSeed orders the pool; fixed, so every run asks the same questions
// in the same order.
const unseenSeed = 41

// corpusPage is one Markdown file of the corpus.
type corpusPage struct {
	Path     string // relative to the corpus, slash-separated
	Markdown string
}

// readCorpus reads the corpus' Markdown files in lexical order. SOURCE.md
// is the corpus' provenance, not documentation (test/eval/README.md).
func readCorpus(dir string) ([]corpusPage, error) {
	var pages []corpusPage
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || d.Name() == "SOURCE.md" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		pages = append(pages, corpusPage{Path: filepath.ToSlash(rel), Markdown: string(data)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("corpus %s: no Markdown files", dir)
	}
	return pages, nil
}

// unseenPool is the questions of the unseen phases: one per distinct
// section heading (## and ###) of the pages, and the unanswerable
// questions, less any question in asked, shuffled with a fixed seed.
func unseenPool(pages []corpusPage, unanswerable, asked []string) unseenQuestions {
	excluded := map[string]bool{}
	for _, q := range asked {
		excluded[normalize(q)] = true
	}
	var pool unseenQuestions
	add := func(q string) bool {
		key := normalize(q)
		if excluded[key] {
			return false
		}
		excluded[key] = true
		pool.Questions = append(pool.Questions, q)
		return true
	}
	seenHeadings := map[string]bool{}
	for _, page := range pages {
		title, headings := pageHeadings(page.Markdown)
		if vagueTitles[normalize(title)] {
			title = titleFromPath(page.Path)
		}
		for _, h := range headings {
			key := normalize(h)
			if seenHeadings[key] || isGeneric(h) || letterWords(h) < 2 {
				continue
			}
			seenHeadings[key] = true
			if add(headingQuestion(title, h, len(seenHeadings))) {
				pool.FromHeadings++
			}
		}
	}
	for _, q := range unanswerable {
		if add(q) {
			pool.Unanswerable++
		}
	}
	rand.New(rand.NewPCG(unseenSeed, unseenSeed)).Shuffle(len(pool.Questions), func(i, j int) {
		pool.Questions[i], pool.Questions[j] = pool.Questions[j], pool.Questions[i]
	})
	pool.Size = len(pool.Questions)
	return pool
}

// unseenQuestions is the pool, and where its questions came from.
type unseenQuestions struct {
	Questions    []string `json:"-"`
	Size         int      `json:"questions"`
	FromHeadings int      `json:"fromHeadings"`
	Unanswerable int      `json:"unanswerable"`
}

// pageHeadings returns a page's title (its front matter's title, or its
// first #) and its ## and ### headings, cleaned of markup, in order; front
// matter and fenced code (where # starts a comment) are skipped.
func pageHeadings(markdown string) (title string, headings []string) {
	lines := strings.Split(strings.ReplaceAll(markdown, "\r\n", "\n"), "\n")
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			line := strings.TrimSpace(lines[i])
			if line == "---" {
				lines = lines[i+1:]
				break
			}
			if t, ok := strings.CutPrefix(line, "title:"); ok && title == "" {
				title = cleanHeading(strings.Trim(strings.TrimSpace(t), `"'`))
			}
		}
	}
	fence := ""
	for _, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.Trim(trimmed, fence[:1])) == "" {
				fence = ""
			}
			continue
		}
		if marker := fenceMarker(trimmed); marker != "" {
			fence = marker
			continue
		}
		level := len(line) - len(strings.TrimLeft(line, "#"))
		if level == 0 || level > 3 || !strings.HasPrefix(line[level:], " ") {
			continue
		}
		text := cleanHeading(line[level:])
		switch {
		case text == "":
		case level == 1:
			if title == "" {
				title = text
			}
		default:
			headings = append(headings, text)
		}
	}
	return title, headings
}

// fenceMarker is the run of backticks or tildes that opens a fenced code
// block, or "".
func fenceMarker(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

var (
	shortcode   = regexp.MustCompile(`\{\{[<%].*?[%>]\}\}`)        // Hugo shortcodes
	attributes  = regexp.MustCompile(`\s*\{[:#.][^}]*\}`)          // {#anchor}, {: .class}
	image       = regexp.MustCompile(`!\[[^\]]*\]\([^)]*\)`)       // dropped: an image says nothing
	link        = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)      // its text kept
	htmlTag     = regexp.MustCompile(`</?[A-Za-z][^>]*>`)          // <a name=…>, not "<1.31"
	emoji       = regexp.MustCompile(`(^|\s):[a-z0-9_+-]+:(\s|$)`) // :warning:
	strong      = regexp.MustCompile(`\*\*|__`)                    // **bold**
	emphasis    = regexp.MustCompile(`(^|\s)[*_]|[*_](\s|$)`)      // _em_, not snake_case
	closingHash = regexp.MustCompile(`\s+#+\s*$`)
	stepNumber  = regexp.MustCompile(`^(\d+\.|\d+\)|[A-Za-z]\))\s+`) // "3. Access Argo CD", "A) Use kubectl"
	spaces      = regexp.MustCompile(`\s+`)
)

// cleanHeading is a heading's text without its Markdown: links become
// their text, code its content, and shortcodes, tags, images, emphasis and
// a leading step number go; trailing punctuation other than "?" goes too.
func cleanHeading(s string) string {
	s = closingHash.ReplaceAllString(strings.TrimSpace(s), "")
	s = shortcode.ReplaceAllString(s, "")
	s = attributes.ReplaceAllString(s, "")
	s = image.ReplaceAllString(s, "")
	s = link.ReplaceAllString(s, "$1")
	s = htmlTag.ReplaceAllString(s, "")
	s = emoji.ReplaceAllString(s, "$1$2")
	s = strings.ReplaceAll(s, "`", "")
	s = strong.ReplaceAllString(s, "")
	s = emphasis.ReplaceAllString(s, "$1$2")
	s = spaces.ReplaceAllString(strings.TrimSpace(s), " ")
	s = stepNumber.ReplaceAllString(s, "")
	return strings.TrimRight(s, ".:;,!- ")
}

// genericHeadings say nothing of their section on their own.
var genericHeadings = map[string]bool{
	"overview": true, "introduction": true, "example": true, "examples": true, "summary": true, "usage": true,
	"prerequisites": true, "requirements": true, "notes": true, "note": true, "background": true, "motivation": true,
	"see also": true, "next steps": true, "getting started": true, "further reading": true, "more information": true,
	"how it works": true, "known issues": true, "example usage": true, "basic usage": true, "table of contents": true,
	"configuration": true, "installation": true, "limitations": true, "troubleshooting": true, "faq": true,
}

func isGeneric(heading string) bool { return genericHeadings[normalize(heading)] }

// vagueTitles do not say which page they head ("Installation" or "FAQ"
// still do).
var vagueTitles = map[string]bool{"": true, "overview": true, "introduction": true, "index": true, "readme": true}

// letterWords counts the words with a letter in them.
func letterWords(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
			n++
		}
	}
	return n
}

// normalize is the form questions and headings are compared in.
func normalize(s string) string {
	return strings.ToLower(spaces.ReplaceAllString(strings.TrimSpace(s), " "))
}

// titleFromPath names a page without a usable title by its file, or by its
// folder where the file's name is vague too:
// "operator-manual/notifications/overview.md" → "notifications"; the
// corpus' own index has no name ("").
func titleFromPath(path string) string {
	dir, file := filepath.Split(strings.TrimSuffix(path, ".md"))
	if vagueTitles[normalize(file)] {
		if dir == "" {
			return ""
		}
		file = filepath.Base(dir)
	}
	return strings.NewReplacer("-", " ", "_", " ").Replace(file)
}

// headingVerbs start a heading that says what to do ("Enable Concurrent
// Processing"): asked as "How do I …?".
var headingVerbs = map[string]bool{
	"add": true, "allow": true, "apply": true, "avoid": true, "change": true, "configure": true, "connect": true,
	"create": true, "customize": true, "debug": true, "define": true, "delete": true, "deploy": true, "disable": true,
	"edit": true, "enable": true, "exclude": true, "expose": true, "generate": true, "ignore": true, "include": true,
	"install": true, "limit": true, "manage": true, "migrate": true, "monitor": true, "mount": true, "override": true,
	"prevent": true, "provide": true, "reconfigure": true, "register": true, "remove": true, "replace": true,
	"restrict": true, "rotate": true, "run": true, "set": true, "skip": true, "specify": true, "sync": true,
	"update": true, "upgrade": true, "use": true,
}

// nounQuestions phrase a heading that names a thing; varied so that the
// questions do not all start alike.
var nounQuestions = []string{
	"How does %[2]s work in %[1]s?",
	"What should I know about %[2]s (%[1]s)?",
	"Can you explain %[2]s, from %[1]s?",
}

// nounQuestionsAlone phrase a heading that already names its page.
var nounQuestionsAlone = []string{
	"How does %s work?",
	"What should I know about %s?",
	"Can you explain %s?",
}

// headingQuestion asks about a heading of the page titled title, phrased
// by the heading's shape: a question stays as it is (a short one, "How do
// I fix the issue?", says its page); "Enable X" becomes "How do I enable
// X in <title>?"; "Using X" "How do I go about using X in <title>?";
// anything else ("Use case: …" included) one of nounQuestions, picked by
// variant. Only the first word is lowercased: the rest holds names and
// identifiers. A title the heading already names is not repeated.
func headingQuestion(title, heading string, variant int) string {
	if strings.HasSuffix(heading, "?") {
		if letterWords(heading) >= 7 || title == "" {
			return heading
		}
		return title + ": " + heading
	}
	where := " in " + title
	if title == "" || strings.Contains(normalize(heading), normalize(title)) {
		where = ""
	}
	first, rest, _ := strings.Cut(heading, " ")
	lowered := strings.ToLower(first)
	if rest != "" {
		lowered += " " + rest
	}
	second, _, _ := strings.Cut(rest, " ")
	switch second = strings.ToLower(strings.TrimRight(second, ":,")); {
	case second == "case" || second == "cases": // "Use case", a noun
	case headingVerbs[strings.ToLower(first)]:
		return fmt.Sprintf("How do I %s%s?", lowered, where)
	case isGerund(first):
		return fmt.Sprintf("How do I go about %s%s?", lowered, where)
	}
	if where == "" {
		return fmt.Sprintf(nounQuestionsAlone[variant%len(nounQuestionsAlone)], heading)
	}
	return fmt.Sprintf(nounQuestions[variant%len(nounQuestions)], title, heading)
}

// notGerunds end in "ing" and are no verb's.
var notGerunds = map[string]bool{"string": true, "thing": true, "spring": true, "during": true, "nothing": true,
	"something": true, "anything": true, "everything": true, "ceiling": true}

// isGerund: "Using", "Configuring"; not "String" or "Ring".
func isGerund(word string) bool {
	lower := strings.ToLower(word)
	return len(lower) >= 5 && strings.HasSuffix(lower, "ing") && !notGerunds[lower] &&
		strings.IndexFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}
