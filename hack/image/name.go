package main

import (
	"fmt"
	"path"

	"github.com/google/go-containerregistry/pkg/name"
)

// imageName is an image reference in the fully qualified form containerd's
// CRI plugin looks images up by (docker.io/ragroute/ragroute:0.1.0 for a
// pod's ragroute/ragroute:0.1.0).
type imageName struct {
	full       string
	repository string
	tag        string
}

// normalizeName qualifies ref the way the kubelet and containerd do: no
// registry means docker.io, a one-part repository means library/…, no tag
// means latest. A digest is refused: the digest is the tool's output.
func normalizeName(ref string) (imageName, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return imageName{}, fmt.Errorf("image name %q: %w", ref, err)
	}
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		// ggcr says index.docker.io; containerd and the kubelet say docker.io.
		registry = "docker.io"
	}
	repo := registry + "/" + tag.RepositoryStr()
	return imageName{full: repo + ":" + tag.TagStr(), repository: repo, tag: tag.TagStr()}, nil
}

// title is the repository's last element: ragroute, kubectl.
func (n imageName) title() string { return path.Base(n.repository) }
