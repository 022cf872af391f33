package main

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testSpec(binary string) spec {
	n, _ := normalizeName("ragroute/ragroute:test")
	return spec{
		binary:     []byte(binary),
		entrypoint: "/ragroute",
		name:       n,
		labels:     defaultLabels(n),
		caCerts:    []byte("certs"),
		created:    time.Unix(0, 0).UTC(),
	}
}

func write(t *testing.T, s spec) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	d, err := writeImage(&buf, s)
	if err != nil {
		t.Fatalf("writeImage: %v", err)
	}
	return buf.Bytes(), d
}

func TestSameInputsSameDigest(t *testing.T) {
	a, da := write(t, testSpec("binary one"))
	b, db := write(t, testSpec("binary one"))
	if da != db || !bytes.Equal(a, b) {
		t.Fatalf("two builds of the same inputs differ: %s vs %s (tarballs equal: %v)", da, db, bytes.Equal(a, b))
	}
	if !strings.HasPrefix(da, "sha256:") || len(da) != len("sha256:")+64 {
		t.Fatalf("digest %q is not a sha256 digest", da)
	}
	if got := readLayout(t, a).index.Manifests[0].Digest.String(); got != da {
		t.Fatalf("printed digest %s, index.json says %s", da, got)
	}
}

func TestEachInputChangesTheDigest(t *testing.T) {
	_, base := write(t, testSpec("binary one"))
	changes := map[string]func(*spec){
		"binary":     func(s *spec) { s.binary = []byte("binary two") },
		"entrypoint": func(s *spec) { s.entrypoint = "/bin/ragroute" },
		"label":      func(s *spec) { s.labels["org.opencontainers.image.version"] = "other" },
		"ca certs":   func(s *spec) { s.caCerts = []byte("other certs") },
		"time":       func(s *spec) { s.created = time.Unix(1700000000, 0).UTC() },
	}
	for name, change := range changes {
		s := testSpec("binary one")
		change(&s)
		if _, d := write(t, s); d == base {
			t.Errorf("changing the %s kept digest %s", name, d)
		}
	}
}

func TestNameIsQualifiedInIndex(t *testing.T) {
	cases := map[string]string{
		"ragroute/ragroute:0.1.0":        "docker.io/ragroute/ragroute:0.1.0",
		"ragroute/kubectl:dev":           "docker.io/ragroute/kubectl:dev",
		"busybox":                        "docker.io/library/busybox:latest",
		"registry.acme.com/x/ragroute:1": "registry.acme.com/x/ragroute:1",
		"localhost:5000/ragroute:1":      "localhost:5000/ragroute:1",
	}
	for in, want := range cases {
		n, err := normalizeName(in)
		if err != nil || n.full != want {
			t.Errorf("normalizeName(%q) = %q, %v; want %q", in, n.full, err, want)
		}
	}
	for _, bad := range []string{"ragroute/ragroute@sha256:" + strings.Repeat("a", 64), "Ragroute/UPPER:1", ""} {
		if _, err := normalizeName(bad); err == nil {
			t.Errorf("normalizeName(%q) accepted", bad)
		}
	}
	b, _ := write(t, testSpec("x"))
	ann := readLayout(t, b).index.Manifests[0].Annotations
	for _, k := range []string{annotationContainerdName, annotationRefName} {
		if ann[k] != "docker.io/ragroute/ragroute:test" {
			t.Errorf("index.json annotation %s = %q", k, ann[k])
		}
	}
}

func TestCLIPrintsDigestAndSourceDateEpoch(t *testing.T) {
	b, out := buildCLI(t, "--name", "ragroute/ragroute:1")
	rb := readLayout(t, b)
	fields := strings.Fields(out)
	if len(fields) != 3 || fields[1] != "docker.io/ragroute/ragroute:1" || fields[2] != rb.index.Manifests[0].Digest.String() {
		t.Fatalf("printed %q; want path, name and the manifest digest %s", out, rb.index.Manifests[0].Digest)
	}
	if !rb.config.Created.Equal(time.Unix(0, 0)) {
		t.Fatalf("created %v without SOURCE_DATE_EPOCH, want epoch 0", rb.config.Created.Time)
	}
	if _, err := sourceDateEpoch("yesterday"); err == nil {
		t.Fatal("SOURCE_DATE_EPOCH=yesterday accepted")
	}
	if got, _ := sourceDateEpoch("1700000000"); !got.Equal(time.Unix(1700000000, 0)) {
		t.Fatalf("SOURCE_DATE_EPOCH=1700000000 gave %v", got)
	}
}

func TestCLIRefusesWhatCannotRunWithoutLibc(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{script: "not an ELF executable"}
	// The host's shell is a dynamic binary on Debian; skip that case where it is not.
	if f, err := elf.Open("/bin/sh"); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				cases["/bin/sh"] = "dynamically linked"
			}
		}
		f.Close()
	}
	for bin, want := range cases {
		args := []string{"--binary", bin, "--name", "x/y:1", "--out", filepath.Join(dir, "out.tar")}
		err := run(args, func(string) string { return "" }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--binary %s: %v, want an error saying %q", bin, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.tar")); !os.IsNotExist(err) {
		t.Errorf("a refused binary left an output: %v", err)
	}
}
