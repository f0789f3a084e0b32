// Package install tests the way into a cluster (DESIGN §13): the image, the release manifest,
// the controller run as its Deployment runs it.
package install

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/surveyor-dev/surveyor/hack/image"
)

// The image is built by ko for both platforms and pushed to a registry on loopback, pulled
// back and read: each platform's config runs the static controller binary as the non-root
// user, there is no shell or anything else to run, and a second build gives the same digest.
// $SURVEYOR_IMAGE_PLATFORMS (comma-separated) narrows the platforms: make test builds
// linux/amd64 alone, as cross-compiling the controller for arm64 takes minutes on a cold Go
// cache; go test ./tests/install, make image and make release build both.
func TestImage(t *testing.T) {
	want := image.Platforms
	if env := os.Getenv("SURVEYOR_IMAGE_PLATFORMS"); env != "" {
		want = strings.Split(env, ",")
		slices.Sort(want)
		t.Logf("building %v of the image's %v ($SURVEYOR_IMAGE_PLATFORMS)", want, image.Platforms)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	repo := strings.TrimPrefix(reg.URL, "http://") + "/surveyor"

	start := time.Now()
	ref, err := image.Build(ctx, image.Options{Repo: repo, Dir: "../..", Log: testLog{t}, Platforms: want})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built and pushed %s in %s", ref, time.Since(start).Round(time.Second))
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(r, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range manifest.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, d.Platform.String(), img)
	}
	slices.Sort(platforms)
	if !slices.Equal(platforms, want) {
		t.Errorf("platforms %v, want %v", platforms, want)
	}

	again, err := image.Build(ctx, image.Options{Repo: repo, Dir: "../..", Log: testLog{t}, Platforms: want})
	if err != nil {
		t.Fatal(err)
	}
	if again != ref {
		t.Errorf("a second build gave %s, the first %s: the image is not reproducible", again, ref)
	}
}

// checkImage checks one platform's image: its config, and that its files are the base's and
// the static binary alone.
func checkImage(t *testing.T, platform string, img v1.Image) {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Entrypoint; !slices.Equal(got, []string{image.Entrypoint}) {
		t.Errorf("%s: entrypoint %v, want [%s]", platform, got, image.Entrypoint)
	}
	if cfg.Config.User != image.User {
		t.Errorf("%s: user %q, want %s (non-root)", platform, cfg.Config.User, image.User)
	}
	if cfg.OS+"/"+cfg.Architecture != platform {
		t.Errorf("%s: config says %s/%s", platform, cfg.OS, cfg.Architecture)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	var files []string
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			t.Fatal(err)
		}
		size += n
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeSymlink {
				continue
			}
			files = append(files, "/"+strings.TrimPrefix(h.Name, "/"))
			if "/"+strings.TrimPrefix(h.Name, "/") == image.Entrypoint {
				checkStatic(t, platform, tr)
			}
		}
		rc.Close()
	}
	slices.Sort(files)
	// ko adds /var/run/ko (the kodata directory) when it has files; it has none here.
	want := []string{"/etc/group", "/etc/passwd", image.Entrypoint}
	if !slices.Equal(files, want) {
		t.Errorf("%s: files %v, want %v (no shell, nothing else to run)", platform, files, want)
	}
	t.Logf("%s: %d layers, %.1f MB compressed", platform, len(layers), float64(size)/1e6)
}

// checkStatic checks that the binary asks for no dynamic loader.
func checkStatic(t *testing.T, platform string, r io.Reader) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "surveyor")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, r); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	bin, err := elf.Open(f.Name())
	if err != nil {
		t.Fatalf("%s: the entrypoint is no ELF binary: %v", platform, err)
	}
	progs := bin.Progs // read by Open; only their headers are looked at
	if err := bin.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s: the binary is dynamically linked", platform)
		}
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
