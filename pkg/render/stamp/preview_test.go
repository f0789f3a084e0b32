package stamp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

var (
	earlier = metav1.Unix(1000, 0)
	now     = metav1.Unix(2000, 0)
)

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestPreview(t *testing.T) {
	long := strings.Repeat("x", 2000)
	// 1023 ASCII bytes then a 3-byte character straddling the 1024-byte cut.
	straddling := strings.Repeat("a", 1023) + "€"
	tests := []struct {
		name        string
		value       any
		wantPreview string
		wantFull    string
	}{
		{name: "string", value: "http://source/petclinic.tar.gz", wantPreview: "http://source/petclinic.tar.gz\n", wantFull: "http://source/petclinic.tar.gz\n"},
		{name: "number", value: int64(42), wantPreview: "42\n", wantFull: "42\n"},
		{
			name:        "map with 4-space indent, keys sorted",
			value:       map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "workload", "image": "img"}}}, "a": true},
			wantPreview: "a: true\nspec:\n    containers:\n        - image: img\n          name: workload\n",
			wantFull:    "a: true\nspec:\n    containers:\n        - image: img\n          name: workload\n",
		},
		{name: "cut at 1024 bytes, digest of all", value: long, wantPreview: long[:1024], wantFull: long + "\n"},
		{name: "cut backs off to a whole character", value: straddling, wantPreview: straddling[:1023], wantFull: straddling + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			preview, digest, err := stamp.Preview(tt.value)
			if err != nil {
				t.Fatalf("Preview() error = %v", err)
			}
			if preview != tt.wantPreview {
				t.Errorf("preview = %q, want %q", preview, tt.wantPreview)
			}
			if !utf8.ValidString(preview) || len(preview) > stamp.PreviewLimit {
				t.Errorf("preview is not valid UTF-8 of at most %d bytes", stamp.PreviewLimit)
			}
			if want := digestOf(tt.wantFull); digest != want {
				t.Errorf("digest = %s, want %s (of the full YAML)", digest, want)
			}
		})
	}
}

func TestStatusOutputs(t *testing.T) {
	urlPreview, urlDigest, _ := stamp.Preview("u1")
	revPreview, revDigest, _ := stamp.Preview("r1")
	_, rev2Digest, _ := stamp.Preview("r2")
	tests := []struct {
		name     string
		values   map[string]any
		previous []v1alpha1.Output
		want     []v1alpha1.Output
	}{
		{
			name:   "first read: now, in url-revision order",
			values: map[string]any{"revision": "r1", "url": "u1"},
			want: []v1alpha1.Output{
				{Name: "url", Preview: urlPreview, Digest: urlDigest, LastTransitionTime: now},
				{Name: "revision", Preview: revPreview, Digest: revDigest, LastTransitionTime: now},
			},
		},
		{
			name:   "unchanged digest keeps lastTransitionTime, changed one moves",
			values: map[string]any{"url": "u1", "revision": "r1"},
			previous: []v1alpha1.Output{
				{Name: "url", Digest: urlDigest, LastTransitionTime: earlier},
				{Name: "revision", Digest: rev2Digest, LastTransitionTime: earlier},
			},
			want: []v1alpha1.Output{
				{Name: "url", Preview: urlPreview, Digest: urlDigest, LastTransitionTime: earlier},
				{Name: "revision", Preview: revPreview, Digest: revDigest, LastTransitionTime: now},
			},
		},
		{
			name:     "same digest under another name is a change",
			values:   map[string]any{"url": "u1"},
			previous: []v1alpha1.Output{{Name: "image", Digest: urlDigest, LastTransitionTime: earlier}},
			want:     []v1alpha1.Output{{Name: "url", Preview: urlPreview, Digest: urlDigest, LastTransitionTime: now}},
		},
		{name: "no values", values: nil, want: []v1alpha1.Output{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := stamp.StatusOutputs(tt.values, tt.previous, now, stamp.PlainDigest)
			if err != nil {
				t.Fatalf("StatusOutputs() error = %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("StatusOutputs() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestOutputValuesRoundTrip(t *testing.T) {
	values := map[string]any{
		"config": map[string]any{"replicas": int64(3), "name": "app", "ports": []any{int64(80), "http"}},
		"url":    "https://example.com/app.git",
	}
	outs, err := stamp.StatusOutputs(values, nil, metav1.Now(), stamp.PlainDigest)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := stamp.OutputValues(outs)
	if !ok {
		t.Fatal("OutputValues could not decode previews of small values")
	}
	if !reflect.DeepEqual(values, got) {
		t.Errorf("values = %#v, want %#v", got, values)
	}

	big := map[string]any{"config": strings.Repeat("x", 2*stamp.PreviewLimit)}
	outs, err = stamp.StatusOutputs(big, nil, metav1.Now(), stamp.PlainDigest)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stamp.OutputValues(outs); ok {
		t.Error("OutputValues decoded a cut preview; want it refused")
	}
}

// TestKeyedDigest: a Secret-derived output's digest is not the plain SHA-256 anyone can
// recompute from a guess; it is the same for the same key and value (so a restart with the
// same key writes nothing), differs under another key, and still moves with the value, which
// keeps the output's lastTransitionTime while it is unchanged.
func TestKeyedDigest(t *testing.T) {
	key := []byte(strings.Repeat("k", 32))
	keyed := stamp.KeyedDigest(key)
	yaml := []byte("hunter2\n")
	tests := []struct {
		name      string
		got, want string
		equal     bool
	}{
		{"not the plain digest", keyed(yaml), stamp.PlainDigest(yaml), false},
		{"stable for a key and value", keyed(yaml), stamp.KeyedDigest(key)(yaml), true},
		{"another key", keyed(yaml), stamp.KeyedDigest([]byte(strings.Repeat("x", 32)))(yaml), false},
		{"another value", keyed(yaml), keyed([]byte("hunter3\n")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if (tt.got == tt.want) != tt.equal {
				t.Errorf("%s vs %s: equal = %v, want %v", tt.got, tt.want, !tt.equal, tt.equal)
			}
		})
	}
	if !strings.HasPrefix(keyed(yaml), "hmac-sha256:") {
		t.Errorf("keyed digest %s, want the hmac-sha256: prefix", keyed(yaml))
	}

	out, err := stamp.StatusOutputs(map[string]any{"config": "hunter2"}, nil, earlier, keyed)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Digest != keyed(yaml) {
		t.Errorf("StatusOutputs digest %s, want %s", out[0].Digest, keyed(yaml))
	}
	again, err := stamp.StatusOutputs(map[string]any{"config": "hunter2"}, out, now, keyed)
	if err != nil {
		t.Fatal(err)
	}
	if !again[0].LastTransitionTime.Equal(&earlier) {
		t.Errorf("an unchanged keyed output moved to %v", again[0].LastTransitionTime)
	}
}
