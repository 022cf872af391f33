package ingest

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A chunk is text a route hands to a model. A document can carry text
// written for that model rather than for a reader: an instruction that
// overrides the route's prompt, a persona, a chat template, a tool call,
// or text hidden from a human reviewer. Such chunks are flagged with the
// technique that was found, so a route can keep, drop or quarantine them.
// The detector is a handful of patterns, not a classifier: it must never
// flag ordinary documentation, and a document that quotes an attack in
// prose may be flagged, which is what its reader should know anyway.

// Techniques of instruction-bearing text, as flag reasons name them.
const (
	TechniqueOverride     = "instruction override"
	TechniquePersona      = "persona prompt"
	TechniqueChatTemplate = "chat template"
	TechniqueToolCall     = "tool call"
	TechniqueHiddenHTML   = "hidden HTML comment"
	TechniqueHiddenChars  = "hidden characters"
	TechniqueExfiltration = "prompt exfiltration"
)

// maxFlagLength bounds a flag reason (it is stored with the chunk).
const maxFlagLength = 400

// maxEvidence bounds the quoted evidence of one technique, in characters.
const maxEvidence = 60

// instructionPattern finds one technique. The regexp runs only on a text
// that holds one of keys, a word in any case or, for a key that is no
// word ("<|"), that very text: most chunks hold none, and one pass over the
// words costs a fraction of the regexps.
type instructionPattern struct {
	technique string
	keys      []string
	re        *regexp.Regexp
}

// instructionPatterns are the English patterns, then the Russian ones
// (untrusted_russian.go).
var instructionPatterns = append([]instructionPattern{
	{TechniqueOverride, []string{"ignore", "disregard", "forget", "override", "bypass"}, regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|every|each|the|your|of|these|those|my)\s+){0,3}` +
		`(?:previous|prior|above|earlier|preceding|former|original|system|initial)\s+(?:\w+\s+)?(?:instructions?|prompts?|directions?|rules|guidelines|commands?|messages?|context)\b`)},
	{TechniqueOverride, []string{"ignore", "disregard", "forget"}, regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)+(?:above|before|previously|you\s+(?:were|have\s+been)\s+told)\b`)},
	{TechniqueOverride, []string{"instructions"}, regexp.MustCompile(`(?im)^\W*(?:new|updated|real|actual)\s+(?:system\s+)?instructions\s*:`)},
	{TechniquePersona, []string{"now"}, regexp.MustCompile(`(?i)\byou\s+are\s+now\s+(?:a|an|the|my|in|no\s+longer|dan|free)\b`)},
	{TechniquePersona, []string{"now"}, regexp.MustCompile(`(?i)\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall|should|may)\b`)},
	{TechniquePersona, []string{"pretend"}, regexp.MustCompile(`(?i)\bpretend\s+(?:to\s+be|you\s+are|that\s+you\s+are|you're)\b`)},
	{TechniquePersona, []string{"ai", "assistant", "assistants", "chatbot", "language", "llm", "bot", "dan", "gpt", "chatgpt", "claude"}, regexp.MustCompile(`(?i)\b(?:act|behave|respond|roleplay|role-play)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+|the\s+)?` +
		`(?:\w+\s+)?(?:ai|assistant|chatbot|language\s+model|llm|dan|gpt)\b`)},
	{TechniquePersona, []string{"ai", "assistant", "assistants", "chatbot", "language", "llm", "bot", "dan", "gpt", "chatgpt", "claude"}, regexp.MustCompile(`(?i)\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|assistant|chatbot|language\s+model|llm|bot)\b`)},
	{TechniquePersona, []string{"ai", "assistant", "assistants", "chatbot", "language", "llm", "bot", "dan", "gpt", "chatgpt", "claude"}, regexp.MustCompile(`(?i)\b(?:dear|attention|note\s+to\s+the|hey|hi|hello)\s+(?:ai|assistant|chatbot|language\s+model|llm|gpt|chatgpt|claude)\b`)},
	{TechniqueChatTemplate, []string{"<|"}, regexp.MustCompile(`<\|(?:im_start|im_end|im_sep|system|user|assistant|begin_of_text|start_header_id|end_header_id|eot_id|endoftext)\|>`)},
	{TechniqueChatTemplate, []string{"inst", "sys"}, regexp.MustCompile(`\[/?INST\]|<<\s*/?SYS\s*>>`)},
	{TechniqueChatTemplate, []string{"system", "assistant", "instruction", "instructions"}, regexp.MustCompile(`(?im)^\s*#{1,6}\s*(?:system|assistant|instructions?)\s*:`)},
	{TechniqueChatTemplate, []string{"system", "assistant"}, regexp.MustCompile(`(?im)^\s*\**(?:system|assistant)\**\s*:\s+[^\n]*\b(?:you|your|ignore|disregard)\b`)},
	{TechniqueChatTemplate, []string{"system"}, regexp.MustCompile(`(?im)^\s*(?:new\s+)?system\s+(?:prompt|message)\s*:`)},
	{TechniqueToolCall, []string{"tool_calls", "function_call", "tool_call", "tool_use", "function_calls", "<|tool_call|>"}, regexp.MustCompile(`"(?:tool_calls|function_call)"\s*:|</?(?:tool_call|tool_use|function_calls?)>|<\|tool_call\|>`)},
	{TechniqueToolCall, []string{"function_call"}, regexp.MustCompile(`\bfunction_call\b`)},
	// The route's tools, the agentic harness's included, as a call or a
	// JSON action ({"tool": "finalize", …}) written in a document.
	{TechniqueToolCall, []string{"search_knowledge", "web_search", "search", "save", "finalize"},
		regexp.MustCompile(`\{[^{}]{0,200}"(?:name|function|tool)"\s*:\s*"(?:search_knowledge|web_search|search|save|finalize)"`)},
	// Asking the model for its own prompt: addressed to it ("your"), or
	// the text before the document, word for word.
	{TechniqueExfiltration, []string{"prompt", "instructions"},
		regexp.MustCompile(`(?i)\b(?:show|reveal|print|output|display|repeat|dump|leak|tell\s+me|give\s+me|write\s+out)\s+(?:me\s+|us\s+)?(?:all\s+)?(?:of\s+)?your\s+` +
			`(?:system\s+prompt|prompt|(?:(?:initial|original|hidden|secret|system)\s+)?instructions)\b`)},
	{TechniqueExfiltration, []string{"repeat"},
		regexp.MustCompile(`(?i)\brepeat\s+(?:the\s+)?(?:text|words|messages?|prompt)\s+(?:above|before\s+this)\b|` +
			`\brepeat\s+(?:all|everything)\s+(?:of\s+)?(?:the\s+)?(?:\w+\s+)?(?:above|before\s+this)\s*,?\s+(?:verbatim|word\s+for\s+word)\b`)},
}, russianInstructionPatterns...)

// htmlComment finds HTML comments: text hidden from a reader of the
// rendered page, but not from a model.
var htmlComment = regexp.MustCompile(`(?s)<!--(.*?)-->`)

// addressesModel finds the words of text meant for a model or its answer.
// Documentation is full of comments for its writers (TODOs, notes on
// formatting); those carry none of them and pass.
var addressesModel = regexp.MustCompile(`(?i)\b(?:ai|assistants?|chatbot|llm|language\s+model|gpt|chatgpt|claude|answers?|reply|respond|tell\s+the\s+user|the\s+user|recommend|system\s+prompt|instructions?)\b`)

// minHiddenWords is how many words a comment needs to carry text.
const minHiddenWords = 4

// minInvisible is how many invisible characters carry text: one may be a
// copy-paste accident, a message needs many.
const minInvisible = 4

// FlagReason says why text reads as instructions to a model: each
// technique found, with a short quote of the evidence, joined by "; ".
// It is empty for ordinary documentation.
func FlagReason(text string) string {
	var reasons []string
	seen := map[string]bool{}
	add := func(technique, evidence string) {
		if seen[technique] {
			return
		}
		seen[technique] = true
		reasons = append(reasons, fmt.Sprintf("%s: %q", technique, shorten(evidence)))
	}
	candidates := candidatePatterns(text)
	for i, p := range instructionPatterns {
		if seen[p.technique] || candidates&(1<<i) == 0 {
			continue
		}
		if m := p.re.FindStringSubmatch(text); m != nil {
			add(p.technique, m[len(m)-1]) // a pattern's group, when it has one, is its evidence
		}
	}
	if strings.Contains(text, "<!--") {
		for _, m := range htmlComment.FindAllStringSubmatch(text, -1) {
			if len(strings.FieldsFunc(m[1], isWordBreak)) >= minHiddenWords &&
				(addressesModel.MatchString(m[1]) || addressesModelInRussian.MatchString(m[1])) {
				add(TechniqueHiddenHTML, strings.TrimSpace(m[1]))
				break
			}
		}
	}
	if n, what := invisibleCharacters(text); n > 0 {
		add(TechniqueHiddenChars, fmt.Sprintf("%d %s", n, what))
	}
	reason := strings.Join(reasons, "; ")
	if len(reason) > maxFlagLength {
		reason = truncateUTF8(reason, maxFlagLength-len("…")) + "…"
	}
	return reason
}

// patternKeys maps each word key to the patterns (bits of the
// instructionPatterns index) it lets run; literalKeys the other keys.
var patternKeys, literalKeys = indexKeys()

func indexKeys() (map[string]uint64, map[string]uint64) {
	if len(instructionPatterns) > 64 {
		panic("instructionPatterns: more patterns than bits")
	}
	words, literals := map[string]uint64{}, map[string]uint64{}
	for i, p := range instructionPatterns {
		for _, k := range p.keys {
			if isKeyWord(k) {
				words[k] |= 1 << i
			} else {
				literals[k] |= 1 << i
			}
		}
	}
	return words, literals
}

// isKeyWord: a key candidatePatterns finds as a word, in lower case: ASCII
// letters, digits and _, or Cyrillic letters.
func isKeyWord(k string) bool {
	if strings.Trim(k, "abcdefghijklmnopqrstuvwxyz0123456789_") == "" {
		return true
	}
	for _, r := range k {
		if !unicode.Is(unicode.Cyrillic, r) || !unicode.IsLower(r) {
			return false
		}
	}
	return true
}

// maxKeyLength bounds the words looked up: no key is longer.
const maxKeyLength = 32

// candidatePatterns are the patterns whose keys text holds, as bits. Its
// words are runs of ASCII letters, digits and _, and runs of Cyrillic
// letters (ё read as е), each lower-cased: a Cyrillic letter ends an
// ASCII word as any other character does, as the English patterns' \b
// reads it.
func candidatePatterns(text string) uint64 {
	var bits uint64
	for k, b := range literalKeys {
		if strings.Contains(text, k) {
			bits |= b
		}
	}
	var ascii, cyrillic keyWord
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			bits |= cyrillic.end()
			switch {
			case 'A' <= c && c <= 'Z':
				ascii.add(c + 'a' - 'A')
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
				ascii.add(c)
			default:
				bits |= ascii.end()
			}
			i++
			continue
		}
		bits |= ascii.end()
		r, size := utf8.DecodeRuneInString(text[i:])
		if lower, ok := foldCyrillic(r); ok {
			cyrillic.addRune(lower)
		} else {
			bits |= cyrillic.end()
		}
		i += size
	}
	return bits | ascii.end() | cyrillic.end()
}

// foldCyrillic lower-cases a Cyrillic letter, ё read as е; ok is false
// for any other character. Russian letters take the short way: most
// letters of a Russian chunk are read here.
func foldCyrillic(r rune) (lower rune, ok bool) {
	switch {
	case 'а' <= r && r <= 'я':
		return r, true
	case 'А' <= r && r <= 'Я':
		return r + 'а' - 'А', true
	case r == 'ё' || r == 'Ё':
		return 'е', true
	case unicode.Is(unicode.Cyrillic, r) && unicode.IsLetter(r):
		return unicode.ToLower(r), true
	}
	return r, false
}

// keyWord is a word of a text being read, lower-cased; only its first
// maxKeyLength bytes are kept, a longer word is no key.
type keyWord struct {
	buf [maxKeyLength]byte
	n   int
}

func (w *keyWord) add(c byte) {
	if w.n < len(w.buf) {
		w.buf[w.n] = c
	}
	w.n++
}

func (w *keyWord) addRune(r rune) {
	if w.n+utf8.RuneLen(r) <= len(w.buf) {
		utf8.EncodeRune(w.buf[w.n:], r)
	}
	w.n += utf8.RuneLen(r)
}

// end is the bits of the patterns the word is a key of, and starts the
// next word.
func (w *keyWord) end() uint64 {
	n := w.n
	w.n = 0
	if n == 0 || n > len(w.buf) {
		return 0
	}
	return patternKeys[string(w.buf[:n])]
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isWordBreak(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }

// invisibleCharacters counts the characters that carry text a reader
// cannot see: Unicode tag characters (outside an emoji flag), bidi
// overrides (they reorder what is shown), and, from minInvisible on,
// zero-width and other bidi controls. A zero-width joiner between emoji
// or non-joiner inside a word of a script that needs them is not counted.
func invisibleCharacters(text string) (int, string) {
	if isASCII(text) {
		return 0, ""
	}
	var tags, overrides, zeroWidth int
	var prev rune
	inFlag := false
	for i, r := range text {
		switch {
		case r == 0x1F3F4: // waving black flag: tag characters may follow
			inFlag = true
		case r >= 0xE0000 && r <= 0xE007F:
			if !inFlag {
				tags++
			}
			if r == 0xE007F {
				inFlag = false
			}
		case r == 0x202D || r == 0x202E:
			overrides++
		case r == 0x200C || r == 0x200D:
			next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
			if !legitimateJoiner(prev, next) {
				zeroWidth++
			}
		case r == 0x200B || r == 0x200E || r == 0x200F || (r >= 0x2060 && r <= 0x2064) || r == 0x180E ||
			(r >= 0x202A && r <= 0x202C) || (r >= 0x2066 && r <= 0x2069) || (r == 0xFEFF && i > 0):
			zeroWidth++
		}
		if r < 0xE0000 || r > 0xE007F {
			if r != 0x1F3F4 {
				inFlag = false
			}
		}
		prev = r
	}
	switch {
	case tags > 0:
		return tags, "Unicode tag characters"
	case overrides > 0:
		return overrides, "bidi override characters"
	case zeroWidth >= minInvisible:
		return zeroWidth, "zero-width or bidi control characters"
	}
	return 0, ""
}

// legitimateJoiner: a joiner between two pictographs (emoji sequences) or
// between letters of a script other than Latin (Persian, Indic).
func legitimateJoiner(prev, next rune) bool {
	pictograph := func(r rune) bool { return unicode.Is(unicode.So, r) || r == 0xFE0F }
	letter := func(r rune) bool { return unicode.IsLetter(r) && r > unicode.MaxLatin1 }
	return (pictograph(prev) && pictograph(next)) || (letter(prev) && letter(next))
}

// shorten is evidence as a reason quotes it: one line, invisible
// characters left out, at most maxEvidence characters (not bytes: a
// Russian quote says as much as an English one).
func shorten(s string) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)), " ")
	if utf8.RuneCountInString(s) <= maxEvidence {
		return s
	}
	end := 0
	for range maxEvidence {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
	}
	return s[:end] + "…"
}

// truncateUTF8 cuts s to at most n bytes at a rune boundary.
func truncateUTF8(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:min(n, len(s))]
}
