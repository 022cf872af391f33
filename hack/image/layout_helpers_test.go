package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// readBack is an image layout tarball taken apart by the spec, not by the
// code that wrote it.
type readBack struct {
	index    v1.IndexManifest
	manifest v1.Manifest
	config   v1.ConfigFile
	layer    map[string]layerFile // by path, no leading /
	order    []string             // layer entries as written
}

type layerFile struct {
	hdr  tar.Header
	data []byte
}

func readLayout(t *testing.T, b []byte) readBack {
	t.Helper()
	files := untar(t, bytes.NewReader(b))
	var rb readBack
	if got := string(files["oci-layout"].data); got != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("oci-layout = %q", got)
	}
	unmarshal(t, files["index.json"].data, &rb.index)
	if len(rb.index.Manifests) != 1 {
		t.Fatalf("index.json has %d manifests, want 1", len(rb.index.Manifests))
	}
	blob := func(d v1.Hash) []byte {
		f, ok := files["blobs/sha256/"+d.Hex]
		if !ok {
			t.Fatalf("blob %s missing", d)
		}
		got, _, err := v1.SHA256(bytes.NewReader(f.data))
		if err != nil || got != d {
			t.Fatalf("blob %s hashes to %s (%v)", d, got, err)
		}
		return f.data
	}
	unmarshal(t, blob(rb.index.Manifests[0].Digest), &rb.manifest)
	unmarshal(t, blob(rb.manifest.Config.Digest), &rb.config)
	if len(rb.manifest.Layers) != 1 {
		t.Fatalf("manifest has %d layers, want 1", len(rb.manifest.Layers))
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(rb.manifest.Layers[0].Digest)))
	if err != nil {
		t.Fatalf("layer: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("layer: %v", err)
	}
	if d, _, _ := v1.SHA256(bytes.NewReader(raw)); d != rb.config.RootFS.DiffIDs[0] {
		t.Fatalf("layer diff id %s, config says %s", d, rb.config.RootFS.DiffIDs[0])
	}
	rb.layer = map[string]layerFile{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("layer tar: %v", err)
		}
		data, _ := io.ReadAll(tr)
		rb.layer[h.Name] = layerFile{*h, data}
		rb.order = append(rb.order, h.Name)
	}
	return rb
}

func untar(t *testing.T, r io.Reader) map[string]layerFile {
	t.Helper()
	files := map[string]layerFile{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("layout tar: %v", err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("layout tar %s: %v", h.Name, err)
		}
		files[h.Name] = layerFile{*h, data}
	}
}

func unmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%T: %v in %s", v, err, b)
	}
}

// staticBinary builds testdata/whoami, a static linux/amd64 binary, to path.
func staticBinary(t *testing.T, path string) {
	t.Helper()
	build := exec.Command("go", "build", "-trimpath", "-o", path, "./testdata/whoami")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building whoami: %v\n%s", err, out)
	}
}

// buildCLI runs the tool as make image does, on a static binary named
// ragroute, and returns the tarball and what it printed.
func buildCLI(t *testing.T, args ...string) ([]byte, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "ragroute")
	staticBinary(t, bin)
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "image.tar")
	var stdout bytes.Buffer
	all := append([]string{"--binary", bin, "--ca-certs", ca, "--out", out}, args...)
	if err := run(all, func(string) string { return "" }, &stdout); err != nil {
		t.Fatalf("run %q: %v", all, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b, stdout.String()
}
