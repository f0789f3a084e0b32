// Package image builds the controller's image without Docker or a registry on the network:
// ko (pinned in hack/tools, built from the module proxy) builds ./cmd/surveyor for
// linux/amd64 and linux/arm64 onto a distroless-style base made here (no shell, no package
// manager: /etc/passwd and /etc/group naming the non-root user 65532, its home, /tmp), served
// to ko from a registry started in process on loopback. Every timestamp is the epoch and the
// Go build is -trimpath, so the same source gives the same digest.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/surveyor-dev/surveyor/hack/tools"
)

// Platforms are the image's platforms: what make image and make release build.
var Platforms = []string{"linux/amd64", "linux/arm64"}

// User is the user the image runs as: distroless's nonroot.
const User = "65532"

// Entrypoint is where ko puts the binary.
const Entrypoint = "/ko-app/surveyor"

// DefaultRepo is where released images are pushed, and what config/manager names.
const DefaultRepo = "ghcr.io/surveyor-dev/surveyor"

// Options say where the image goes.
type Options struct {
	// Repo is the repository the image is pushed to (KO_DOCKER_REPO), e.g.
	// ghcr.io/surveyor-dev/surveyor; empty writes Layout instead.
	Repo string
	// Layout is the directory of the OCI image layout written when Repo is empty.
	Layout string
	// Dir is the repository's root; empty is the working directory.
	Dir string
	// Log receives ko's progress.
	Log io.Writer
	// Platforms, when set, builds only these of Platforms (make test's TestImage builds
	// the machine's own, as cross-compiling for arm64 costs minutes on a cold Go cache).
	Platforms []string
}

// Build builds the image from the repository root and returns its reference by digest:
// Repo@sha256:..., or with a Layout, the digest alone.
func Build(ctx context.Context, opts Options) (string, error) {
	platforms := Platforms
	if len(opts.Platforms) > 0 {
		for _, p := range opts.Platforms {
			if !slices.Contains(Platforms, p) {
				return "", fmt.Errorf("platform %s is not one of the image's %v", p, Platforms)
			}
		}
		platforms = opts.Platforms
	}
	ko, err := tools.Path("ko", opts.Log)
	if err != nil {
		return "", err
	}
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	base := host + "/surveyor/base"
	if err := pushBase(ctx, base, platforms); err != nil {
		return "", fmt.Errorf("making the base image: %w", err)
	}
	tmp, err := os.MkdirTemp("", "surveyor-image")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// ko's configuration: the base, and a build stripped of paths and symbols.
	config := fmt.Sprintf("defaultBaseImage: %s\nbuilds:\n- id: surveyor\n  main: ./cmd/surveyor\n  env: [CGO_ENABLED=0]\n  flags: [-trimpath]\n  ldflags: [-s, -w]\n", base)
	if err := os.WriteFile(filepath.Join(tmp, ".ko.yaml"), []byte(config), 0o644); err != nil {
		return "", err
	}
	// ko writes a layout here; what it annotates (the base's address, on a random port) is
	// then taken out, so that the digest depends on the source alone.
	built := filepath.Join(tmp, "layout")
	cmd := exec.CommandContext(ctx, ko, "build", "./cmd/surveyor", "--bare", "--sbom=none",
		"--platform="+strings.Join(platforms, ","), "--push=false", "--oci-layout-path="+built)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), "KO_DOCKER_REPO="+host+"/surveyor", "KO_CONFIG_PATH="+tmp, "SOURCE_DATE_EPOCH=0", "KO_DATA_DATE_EPOCH=0")
	cmd.Stdout, cmd.Stderr = opts.Log, opts.Log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ko build: %w", err)
	}
	idx, err := stable(built)
	if err != nil {
		return "", err
	}
	digest, err := idx.Digest()
	if err != nil {
		return "", err
	}
	if opts.Repo != "" {
		tag, err := name.NewTag(opts.Repo + ":latest")
		if err != nil {
			return "", err
		}
		if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return "", fmt.Errorf("pushing to %s: %w", opts.Repo, err)
		}
		return opts.Repo + "@" + digest.String(), nil
	}
	dir := filepath.Join(opts.Dir, opts.Layout)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return "", err
	}
	if err := p.AppendIndex(idx); err != nil {
		return "", err
	}
	return digest.String(), nil
}

// stable is the index ko wrote in the layout at dir, less the annotations naming its base.
func stable(dir string) (v1.ImageIndex, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("ko wrote %d manifests, want one", len(m.Manifests))
	}
	// For one platform ko writes that platform's image, for several an index of them; the
	// result is an index either way.
	var images []v1.Image
	var platforms []*v1.Platform
	if m.Manifests[0].MediaType.IsImage() {
		img, err := top.Image(m.Manifests[0].Digest)
		if err != nil {
			return nil, err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		images = append(images, img)
		platforms = append(platforms, &v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant})
	} else {
		built, err := top.ImageIndex(m.Manifests[0].Digest)
		if err != nil {
			return nil, err
		}
		if m, err = built.IndexManifest(); err != nil {
			return nil, err
		}
		for _, d := range m.Manifests {
			img, err := built.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			images = append(images, img)
			platforms = append(platforms, d.Platform)
		}
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for i, img := range images {
		// The same layers and config, in a manifest without annotations.
		layers, err := img.Layers()
		if err != nil {
			return nil, err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		plain, err := mutate.AppendLayers(ociImage(), layers...)
		if err != nil {
			return nil, err
		}
		if plain, err = mutate.ConfigFile(plain, cfg); err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: plain, Descriptor: v1.Descriptor{Platform: platforms[i]}})
	}
	return idx, nil
}

// pushBase pushes the base image, an index of one image per platform, to ref.
func pushBase(ctx context.Context, ref string, platforms []string) error {
	layer, err := baseLayer()
	if err != nil {
		return err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		platform, err := v1.ParsePlatform(p)
		if err != nil {
			return err
		}
		img, err := mutate.AppendLayers(ociImage(), layer)
		if err != nil {
			return err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return err
		}
		cfg = cfg.DeepCopy()
		cfg.OS, cfg.Architecture, cfg.Variant = platform.OS, platform.Architecture, platform.Variant
		cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
		cfg.Config.User = User
		cfg.Config.Env = []string{"PATH=/ko-app", "HOME=/home/nonroot"}
		if img, err = mutate.ConfigFile(img, cfg); err != nil {
			return err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: platform}})
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	return remote.WriteIndex(r, idx, remote.WithContext(ctx))
}

// baseLayer is the base's one layer: the files a non-root Go binary expects, and nothing
// to run (no shell, no libc).
func baseLayer() (v1.Layer, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	for _, e := range []struct {
		name, body string
		mode       int64
		uid        int
	}{
		{"etc/", "", 0o755, 0},
		{"etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n", 0o644, 0},
		{"etc/group", "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n", 0o644, 0},
		{"home/", "", 0o755, 0},
		{"home/nonroot/", "", 0o700, 65532},
		{"tmp/", "", 0o1777, 0},
	} {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: epoch, Format: tar.FormatPAX}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.body))
		}
		if err := w.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, e.body); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, tarball.WithMediaType(types.OCILayer))
}

// ociImage is an empty image with OCI media types.
func ociImage() v1.Image {
	return mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.OCIConfigJSON), types.OCIManifestSchema1)
}
