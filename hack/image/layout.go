package main

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations of index.json's manifest entry, both the full name.
// containerd's importer takes io.containerd.image.name verbatim; ctr 1.6
// also takes a full reference in ref.name, but a bare tag there becomes
// import-<date>:<tag> (the OCI grammar allows either).
const (
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
)

// blob is one content-addressed file of the layout.
type blob struct {
	digest v1.Hash
	data   []byte
}

// writeImage builds s and writes it to w as an OCI image layout tarball; it
// returns the manifest's digest, the image's identity in a registry or
// containerd.
func writeImage(w io.Writer, s spec) (string, error) {
	img, err := buildImage(s)
	if err != nil {
		return "", err
	}
	blobs, desc, err := imageBlobs(img)
	if err != nil {
		return "", err
	}
	desc.Platform = &v1.Platform{OS: imageOS, Architecture: imageArch}
	desc.Annotations = map[string]string{
		annotationContainerdName: s.name.full,
		annotationRefName:        s.name.full,
	}
	index, err := json.Marshal(v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests:     []v1.Descriptor{desc},
	})
	if err != nil {
		return "", fmt.Errorf("index.json: %w", err)
	}
	if err := writeLayoutTar(w, index, blobs, s.created); err != nil {
		return "", err
	}
	return desc.Digest.String(), nil
}

// imageBlobs returns the manifest, config and layer blobs of img and the
// manifest's descriptor.
func imageBlobs(img v1.Image) ([]blob, v1.Descriptor, error) {
	manifest, err := img.RawManifest()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("manifest: %w", err)
	}
	mDigest, err := img.Digest()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("manifest digest: %w", err)
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("config: %w", err)
	}
	cDigest, err := img.ConfigName()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("config digest: %w", err)
	}
	blobs := []blob{{mDigest, manifest}, {cDigest, config}}
	layers, err := img.Layers()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("layers: %w", err)
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, v1.Descriptor{}, fmt.Errorf("layer digest: %w", err)
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, v1.Descriptor{}, fmt.Errorf("layer %s: %w", d, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, v1.Descriptor{}, fmt.Errorf("layer %s: %w", d, err)
		}
		blobs = append(blobs, blob{d, data})
	}
	desc := v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: int64(len(manifest)), Digest: mDigest}
	return blobs, desc, nil
}

// writeLayoutTar writes the layout's files in a fixed order with fixed
// metadata: oci-layout, index.json, then the blobs by digest.
func writeLayoutTar(w io.Writer, index []byte, blobs []blob, mtime time.Time) error {
	sort.Slice(blobs, func(i, j int) bool { return blobs[i].digest.String() < blobs[j].digest.String() })
	tw := tar.NewWriter(w)
	file := func(name string, data []byte) error {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: mtime}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("layout %s: %w", name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("layout %s: %w", name, err)
		}
		return nil
	}
	dir := func(name string) error {
		h := &tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: mtime}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("layout %s: %w", name, err)
		}
		return nil
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", index); err != nil {
		return err
	}
	if err := dir("blobs/"); err != nil {
		return err
	}
	if err := dir("blobs/sha256/"); err != nil {
		return err
	}
	seen := map[v1.Hash]bool{}
	for _, b := range blobs {
		if b.digest.Algorithm != "sha256" {
			return fmt.Errorf("blob %s: only sha256 is written", b.digest)
		}
		if seen[b.digest] {
			continue
		}
		seen[b.digest] = true
		if err := file("blobs/sha256/"+b.digest.Hex, b.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("closing the layout: %w", err)
	}
	return nil
}
