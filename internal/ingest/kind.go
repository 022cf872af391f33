package ingest

import (
	"regexp"
	"strings"
)

var (
	// screenHeading: headings that name a UI surface.
	screenHeading = regexp.MustCompile(`(?i)\b(screen|page|tab|dialog|modal|panel|menu|button|form|sidebar|toolbar|dashboard|web ?ui|user interface|ui)\b`)
	// screenCue: wording that points at UI elements.
	screenCue = regexp.MustCompile(`(?i)\b(click|clicking|select|tab|button|menu|dropdown|drop-down|checkbox|toggle|field|panel|dialog|sidebar|navigate to|page|screen|icon|ui)\b`)
)

// detectKind calls a chunk a screen description when its headings name a UI
// surface and its text points at UI elements, or when UI cues are dense.
// Front matter `kind:` overrides it.
func detectKind(path []string, text string) Kind {
	cues := len(screenCue.FindAllStringIndex(text, -1))
	words := len(strings.Fields(text))
	if words == 0 {
		return KindProse
	}
	density := float64(cues) / float64(words)
	headingSaysUI := len(path) > 0 && screenHeading.MatchString(strings.Join(path, " "))
	if (headingSaysUI && cues >= 2) || (density >= 0.04 && cues >= 4) {
		return KindScreen
	}
	return KindProse
}
