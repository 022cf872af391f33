package ingest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestHeadingTextDropsHugoAttributeBlocks(t *testing.T) {
	for heading, want := range map[string]string{
		"Location {#location}":                                     "Location",
		"Sign the CNCF CLA {#cla}":                                 "Sign the CNCF CLA",
		"`CACHE updates committed?` {#cache .notranslate lang=en}": "`CACHE updates committed?`",
		"`Easy CLA` {.notranslate lang=en}":                        "`Easy CLA`",
		"Title {#a title=\"x y\"}":                                 "Title",
		// Not attribute blocks: kept as written.
		"{#only-an-id}":                        "{#only-an-id}",
		"Templates use {{.app.metadata.name}}": "Templates use {{.app.metadata.name}}",
		"Set {a} and {b}":                      "Set {a} and {b}",
		"Map {}":                               "Map {}",
		"Hash {# not an id}":                   "Hash {# not an id}",
	} {
		if got := HeadingText(heading); got != want {
			t.Errorf("HeadingText(%q) = %q, want %q", heading, got, want)
		}
	}
}

// A heading's {#id} is not in its heading path nor in the chunk's text,
// and a '#' line in fenced code keeps its braces.
func TestHeadingAttributesReachNeitherPathNorText(t *testing.T) {
	doc := Document{Source: "loc.md", Content: "## Location {#location}\n\nWhere the agent runs, in enough words to stand alone as a section.\n\n" +
		"```sh\n# keep {#this}\n```\n\n### Next {#next .x}\n\nAnd what follows it, also in enough words to stand alone as a section.\n"}
	chunks, err := Chunks(doc, Options{MaxTokens: 200, OverlapTokens: 10, FrontMatterKey: "acl", Tokens: DefaultOptions().Tokens})
	if err != nil {
		t.Fatal(err)
	}
	var paths [][]string
	for _, ch := range chunks {
		paths = append(paths, ch.HeadingPath)
		if strings.Contains(ch.Text, "{#location}") || strings.Contains(ch.Text, "{#next") {
			t.Errorf("chunk %v holds a heading id: %q", ch.HeadingPath, ch.Text)
		}
	}
	if want := [][]string{{"Location"}, {"Location", "Next"}}; !slices.EqualFunc(paths, want, slices.Equal) {
		t.Errorf("heading paths %q, want %q", paths, want)
	}
	if !strings.Contains(chunks[0].Text, "## Location\n") || !strings.Contains(chunks[0].Text, "# keep {#this}") {
		t.Errorf("first chunk %q: want its heading line without the id and the code as written", chunks[0].Text)
	}
	_, linePaths, err := LinePaths(doc.Content, "acl")
	if err != nil || !slices.Equal(linePaths[len(linePaths)-2], []string{"Location", "Next"}) {
		t.Errorf("LinePaths: %q, %v; want the headings without ids", linePaths, err)
	}
}

func TestShortcodesReadAsTheRenderedPage(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"tab markers go, tab names stay as labels, inner text stays",
			"Run:\n\n{{< tabpane text=true >}} {{% tab Intel %}}\n\n```sh\ncurl x\n```\n\n{{% /tab %}} {{% tab \"ARM 64\" %}}\n\ncurl y\n\n{{% /tab %}} {{< /tabpane >}}\n\nDone.\n",
			"Run:\n\nIntel\n\n```sh\ncurl x\n```\n\nARM 64\n\ncurl y\n\n\nDone.\n"},
		{"a header argument is the tab's label",
			"{{% tab header=\"Maven (`pom.xml`)\" lang=Maven %}}\n<dependency/>\n{{% /tab %}}\n",
			"Maven (`pom.xml`)\n<dependency/>\n"},
		{"a site value is marked by its key, in code too",
			"```sh\ncurl -fOL https://example.com/v{{% param vers %}}/otelcol_{{% param vers %}}.tar.gz\n```\n",
			"```sh\ncurl -fOL https://example.com/vvers/otelcol_vers.tar.gz\n```\n"},
		{"an include and a site-rendered table leave nothing, not even their lines",
			"Receivers collect data.\n\n{{% include unmaintained-components-msg.md %}}\n\n{{< collector-component-rows type=\"receiver\" >}}\n",
			"Receivers collect data.\n\n\n"},
		{"a comment hides its inner text",
			"Before.\n\n{{< comment >}}\n\nHow this list was made.\n\n{{< /comment >}}\n\nAfter.\n",
			"Before.\n\n\nAfter.\n"},
		{"an alert keeps its title and its text",
			"{{% alert title=\"Note\" color=\"warning\" %}} Back up first. {{% /alert %}}\n",
			"Note Back up first. \n"},
		{"a marker over several lines is one marker",
			"{{% config_option\nname=\"otel.resource.providers.aws.enabled\"\ndefault=false\n%}} Enables the AWS providers.\n{{% /config_option %}}\n",
			"otel.resource.providers.aws.enabled Enables the AWS providers.\n"},
		{"an escaped marker shows the marker",
			"Write `{{</* tabpane */>}}` to open tabs.\n",
			"Write `{{< tabpane >}}` to open tabs.\n"},
		{"Go templates and broken markers stay as written",
			"Message: {{.app.metadata.name}} and {{ .x }}; {{< not closed\n{{% %}} {{<>}}\n",
			"Message: {{.app.metadata.name}} and {{ .x }}; {{< not closed\n{{% %}} {{<>}}\n"},
		{"a comment never closed hides nothing but its marker",
			"{{< comment >}}\nStill here.\n",
			"Still here.\n"},
	}
	for _, c := range cases {
		if got := resolveShortcodes(c.in); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// The front matter's title is the document's title, the root of every
// chunk's title path, even where the page has no H1 or another one;
// linkTitle, the site navigation's short label, is not.
func TestFrontMatterTitleIsTheDocumentsTitle(t *testing.T) {
	for content, want := range map[string]string{
		"---\ntitle: Install the Collector on macOS\nlinkTitle: macOS\n---\n\nIntro.\n\n## Steps\n\nRun it.\n": "Install the Collector on macOS",
		"---\ntitle: Receivers\n---\n# Receivers overview\n\nText.\n":                                          "Receivers",
		"---\nlinkTitle: Only a label\n---\n# The H1\n\nText.\n":                                               "The H1",
		"---\n---\n\nA partial without a title.\n":                                                             "partial",
	} {
		chunks, err := Chunks(Document{Source: "dir/partial.md", Content: content}, DefaultOptions())
		if err != nil || len(chunks) == 0 {
			t.Fatalf("%q: %v", content, err)
		}
		for _, ch := range chunks {
			if ch.Title != want {
				t.Errorf("%q: chunk %v has title %q, want %q", content, ch.HeadingPath, ch.Title, want)
			}
		}
	}
}

// On the real pages in testdata/hugo (otel-*.md, from the OpenTelemetry
// docs), no shortcode marker or heading id reaches a chunk, and what a
// reader sees does.
func TestOpenTelemetryPagesReadAsRendered(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "hugo", "otel-*.md"))
	if err != nil || len(paths) < 4 {
		t.Fatalf("want the OpenTelemetry fixtures: %v %v", paths, err)
	}
	all := map[string]string{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := Chunks(Document{Source: filepath.Base(path), Content: string(data)}, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		for _, ch := range chunks {
			for _, noise := range []string{"{{<", "{{%", "%}}", ">}}", "{#"} {
				if strings.Contains(ch.Text, noise) || strings.Contains(strings.Join(ch.HeadingPath, "\n"), noise) {
					t.Errorf("%s %v: %q in %q", path, ch.HeadingPath, noise, ch.Text)
				}
			}
			text.WriteString(ch.Title + "\n" + strings.Join(ch.HeadingPath, "\n") + "\n" + ch.Text + "\n")
		}
		all[filepath.Base(path)] = text.String()
	}
	for file, seen := range map[string][]string{
		"otel-collector-install-macos.md":    {"Install the Collector on macOS", "\nIntel\n", "\nARM\n", "download/vvers/otelcol_vers_darwin_arm64.tar.gz"},
		"otel-collector-receivers.md":        {"Receivers collect telemetry data"},
		"otel-contributing-prerequisites.md": {"\nSign the CNCF CLA\n", "## Sign the CNCF CLA\n"},
		"otel-java-agent-getting-started.md": {"otel.javaagent.debug", "Set to `true` to see debug logs."},
	} {
		for _, s := range seen {
			if !strings.Contains(all[file], s) {
				t.Errorf("%s: no %q in its chunks:\n%s", file, s, all[file])
			}
		}
	}
}
