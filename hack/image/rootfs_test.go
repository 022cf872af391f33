package main

import (
	"archive/tar"
	"sort"
	"strings"
	"testing"
)

func TestLayerHasWhatPodsNeed(t *testing.T) {
	b, _ := write(t, testSpec("the binary"))
	rb := readLayout(t, b)
	type want struct {
		typ      byte
		mode     int64
		uid, gid int
	}
	wants := map[string]want{
		"tmp/":                              {tar.TypeDir, 0o1777, 0, 0},
		"home/nonroot/":                     {tar.TypeDir, 0o700, 65532, 65532},
		"ragroute":                          {tar.TypeReg, 0o755, 0, 0},
		"etc/passwd":                        {tar.TypeReg, 0o644, 0, 0},
		"etc/group":                         {tar.TypeReg, 0o644, 0, 0},
		"etc/ssl/certs/ca-certificates.crt": {tar.TypeReg, 0o644, 0, 0},
	}
	for name, w := range wants {
		f, ok := rb.layer[name]
		if !ok {
			t.Errorf("layer lacks %s", name)
			continue
		}
		if f.hdr.Typeflag != w.typ || f.hdr.Mode != w.mode || f.hdr.Uid != w.uid || f.hdr.Gid != w.gid {
			t.Errorf("%s: type %c mode %o owner %d:%d; want type %c mode %o owner %d:%d",
				name, f.hdr.Typeflag, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid, w.typ, w.mode, w.uid, w.gid)
		}
	}
	if got := string(rb.layer["ragroute"].data); got != "the binary" {
		t.Errorf("/ragroute holds %q", got)
	}
	if got := string(rb.layer["etc/ssl/certs/ca-certificates.crt"].data); got != "certs" {
		t.Errorf("CA bundle holds %q", got)
	}
	if !hasLine(rb.layer["etc/passwd"].data, "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin") ||
		!hasLine(rb.layer["etc/passwd"].data, "root:x:0:0:root:/root:/sbin/nologin") {
		t.Errorf("/etc/passwd:\n%s", rb.layer["etc/passwd"].data)
	}
	if !hasLine(rb.layer["etc/group"].data, "nonroot:x:65532:") || !hasLine(rb.layer["etc/group"].data, "root:x:0:") {
		t.Errorf("/etc/group:\n%s", rb.layer["etc/group"].data)
	}
	if !sort.StringsAreSorted(rb.order) {
		t.Errorf("layer entries not sorted: %q", rb.order)
	}
	for _, name := range rb.order {
		h := rb.layer[name].hdr
		if h.ModTime.Unix() != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: mtime %v, owner names %q:%q; want epoch 0 and none", name, h.ModTime, h.Uname, h.Gname)
		}
		if dir := parent(name); dir != "" {
			if _, ok := rb.layer[dir]; !ok {
				t.Errorf("%s has no entry for its folder %s", name, dir)
			}
		}
	}
}

func TestEntrypointInAFolderGetsTheFolder(t *testing.T) {
	s := testSpec("kubectl")
	s.entrypoint = "/usr/local/bin/kubectl"
	b, _ := write(t, s)
	rb := readLayout(t, b)
	for _, d := range []string{"usr/", "usr/local/", "usr/local/bin/"} {
		if f, ok := rb.layer[d]; !ok || f.hdr.Mode != 0o755 || f.hdr.Typeflag != tar.TypeDir {
			t.Errorf("folder %s missing or not 0755 (%+v)", d, f.hdr)
		}
	}
	if f := rb.layer["usr/local/bin/kubectl"]; f.hdr.Mode != 0o755 || string(f.data) != "kubectl" {
		t.Errorf("kubectl: mode %o, %q", f.hdr.Mode, f.data)
	}
	if got := rb.config.Config.Entrypoint; len(got) != 1 || got[0] != "/usr/local/bin/kubectl" {
		t.Errorf("entrypoint %q", got)
	}
}

func TestEntrypointMayNotReplaceImageFiles(t *testing.T) {
	for _, ep := range []string{"/etc/passwd", "/tmp", "relative", "/"} {
		if _, err := rootfsEntries([]byte("x"), ep, nil); err == nil {
			t.Errorf("entrypoint %q accepted", ep)
		}
	}
}

func hasLine(b []byte, line string) bool {
	for _, l := range strings.Split(string(b), "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// parent is the tar name of the folder holding name, "" at the top.
func parent(name string) string {
	name = strings.TrimSuffix(name, "/")
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return ""
	}
	return name[:i+1]
}
