package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// The ids distroless uses; the chart's pods run as nonroot.
const (
	nonrootID   = 65532
	nonrootHome = "/home/nonroot"
)

const passwd = `root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
`

const group = `root:x:0:
nonroot:x:65532:
`

// nsswitch makes Go's resolver read /etc/hosts (which the kubelet writes)
// before DNS, as glibc would.
const nsswitch = `hosts: files dns
`

// entry is one file or folder of the layer.
type entry struct {
	path     string // absolute, cleaned
	dir      bool
	mode     int64 // permission bits, sticky included (tar's c_ISVTX)
	uid, gid int
	data     []byte
}

// rootfsEntries lists the layer's files: what a distroless static nonroot
// image has, plus the binary at entrypoint.
func rootfsEntries(binary []byte, entrypoint string, caCerts []byte) ([]entry, error) {
	if !path.IsAbs(entrypoint) || entrypoint == "/" {
		return nil, fmt.Errorf("entrypoint %q: want an absolute file path", entrypoint)
	}
	fixed := []entry{
		{path: "/etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "/etc/group", mode: 0o644, data: []byte(group)},
		{path: "/etc/nsswitch.conf", mode: 0o644, data: []byte(nsswitch)},
		{path: "/etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caCerts},
		{path: "/root", dir: true, mode: 0o700},
		{path: nonrootHome, dir: true, mode: 0o700, uid: nonrootID, gid: nonrootID},
		{path: "/tmp", dir: true, mode: 0o1777},
	}
	byPath := map[string]entry{}
	for _, e := range fixed {
		byPath[e.path] = e
	}
	if _, taken := byPath[entrypoint]; taken || strings.HasPrefix(entrypoint, "/etc/") {
		return nil, fmt.Errorf("entrypoint %q clashes with the image's own files", entrypoint)
	}
	byPath[entrypoint] = entry{path: entrypoint, mode: 0o755, data: binary}
	// Every parent folder gets its own entry, root-owned 0755, so that the
	// result does not depend on how a runtime invents missing ones.
	for p := range byPath {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = entry{path: d, dir: true, mode: 0o755}
			}
		}
	}
	out := make([]entry, 0, len(byPath))
	for _, e := range byPath {
		out = append(out, e)
	}
	// Sorted by path, so a folder always precedes what it holds.
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// layerTar writes entries as an uncompressed tar with fixed metadata: the
// same entries give the same bytes on any host.
func layerTar(entries []entry, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    strings.TrimPrefix(e.path, "/"),
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: mtime,
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
			h.Name += "/"
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.path, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", e.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("closing the layer: %w", err)
	}
	return buf.Bytes(), nil
}
