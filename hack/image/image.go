package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's platform: the only one ragroute's pods run on today.
const (
	imageOS   = "linux"
	imageArch = "amd64"
)

// spec is everything the image is made of; nothing else reaches it.
type spec struct {
	binary     []byte
	entrypoint string
	name       imageName
	labels     map[string]string
	caCerts    []byte
	created    time.Time
}

// buildImage assembles the one-layer OCI image of s.
func buildImage(s spec) (v1.Image, error) {
	entries, err := rootfsEntries(s.binary, s.entrypoint, s.caCerts)
	if err != nil {
		return nil, err
	}
	raw, err := layerTar(entries, s.created)
	if err != nil {
		return nil, err
	}
	gz, err := gzipBytes(raw)
	if err != nil {
		return nil, err
	}
	// The layer is compressed here, once: ggcr would gzip again on each read.
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(gz)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	created := v1.Time{Time: s.created}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   created,
			CreatedBy: "hack/image: " + s.entrypoint + " and the distroless static nonroot files",
		},
	})
	if err != nil {
		return nil, fmt.Errorf("adding the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = imageOS, imageArch, created
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", nonrootID, nonrootID),
		WorkingDir: "/",
		Entrypoint: []string{s.entrypoint},
		// As in distroless static.
		Env: []string{
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
		},
		Labels: s.labels,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return img, nil
}

// gzipBytes compresses with an empty gzip header (no name, no time), so the
// bytes depend on the input alone.
func gzipBytes(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return buf.Bytes(), nil
}
