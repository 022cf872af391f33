package main

import (
	"bufio"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// unpinnedBaseImages are the Dockerfile's base images that are named by
// tag, not digest, each for the reason docs/security.md gives (finding 11
// of issue 40): a digest can only be looked up from the registry, and
// pinning one belongs with a bot that also moves it when the tag gets
// security fixes. make image needs neither: it writes the distroless files
// itself. A new unpinned base image fails this test until it is pinned
// (image@sha256:...) or listed here and in docs/security.md.
var unpinnedBaseImages = []string{
	"golang:1.26",                      // builder: its Go patch releases are wanted
	"gcr.io/distroless/static:nonroot", // runtime: Debian security updates are wanted
}

func TestDockerfileBaseImagesArePinnedOrListed(t *testing.T) {
	var unpinned []string
	for _, ref := range baseImages(t, "../../Dockerfile") {
		if !strings.Contains(ref, "@sha256:") {
			unpinned = append(unpinned, ref)
		}
	}
	if !reflect.DeepEqual(unpinned, unpinnedBaseImages) {
		t.Errorf("base images named by tag: %q; listed as such (with docs/security.md): %q", unpinned, unpinnedBaseImages)
	}
}

// baseImages are the images the Dockerfile's FROM lines name, with the
// defaults of the ARGs declared before the first FROM expanded; a FROM
// naming an earlier stage is not an image.
func baseImages(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args, stages := map[string]string{}, map[string]bool{}
	var images []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "ARG":
			if len(images) == 0 && len(stages) == 0 {
				k, v, _ := strings.Cut(fields[1], "=")
				args[k] = v
			}
		case "FROM":
			fields = slices.DeleteFunc(fields[1:], func(f string) bool { return strings.HasPrefix(f, "--") }) // --platform
			ref := os.Expand(fields[0], func(k string) string { return args[k] })
			if !stages[ref] {
				images = append(images, ref)
			}
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				stages[fields[2]] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return images
}
