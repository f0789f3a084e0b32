package stamp

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// PreviewLimit is the most bytes of an output's YAML that its status preview shows.
const PreviewLimit = 1024

// Digester turns the full YAML of an output's value into the output's status digest.
type Digester func(yaml []byte) string

// PlainDigest is the digest of an output that is not secret (DESIGN §2): "sha256:" and the
// hex SHA-256 of its YAML. Anyone can check a value they have against it, which is what it is
// for; OutputValues relies on it to recover values from their previews.
func PlainDigest(yaml []byte) string {
	sum := sha256.Sum256(yaml)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// KeyedDigest is the digester of outputs derived from a Secret (DESIGN §12): "hmac-sha256:"
// and the hex HMAC-SHA256 of the YAML under key. A plain hash of a weak password can be found
// by hashing guesses; without the key, which readers of owners cannot get, it cannot. The
// digest still moves exactly when the value does, which is all status and events need.
func KeyedDigest(key []byte) Digester {
	key = bytes.Clone(key)
	return func(yaml []byte) string {
		mac := hmac.New(sha256.New, key)
		mac.Write(yaml)
		return "hmac-sha256:" + hex.EncodeToString(mac.Sum(nil))
	}
}

// Preview returns an output's status preview and digest: the value marshalled as YAML with a
// 4-space indent, cut at PreviewLimit bytes, and the PlainDigest of the full YAML.
// The cut backs off to the last whole UTF-8 character, so a preview is always valid text.
func Preview(value any) (preview, digest string, err error) {
	return previewWith(value, PlainDigest)
}

// previewWith is Preview with the digest made by digest.
func previewWith(value any, digest Digester) (preview, digested string, err error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(4)
	if err := enc.Encode(value); err != nil {
		return "", "", fmt.Errorf("marshalling output as YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", "", fmt.Errorf("marshalling output as YAML: %w", err)
	}
	full := buf.Bytes()
	cut := full
	if len(cut) > PreviewLimit {
		cut = cut[:PreviewLimit]
		for len(cut) > 0 && !utf8.Valid(cut) {
			cut = cut[:len(cut)-1]
		}
	}
	return string(cut), digest(full), nil
}

// outputOrder is the order outputs appear in status; any other name follows, sorted.
var outputOrder = []string{v1alpha1.OutputURL, v1alpha1.OutputRevision, v1alpha1.OutputImage, v1alpha1.OutputConfig}

// StatusOutputs returns the status entries for values read from a stamped object (see
// ReadOutputs), in the order url, revision, image, config, with digests made by digest. An
// output keeps its previous lastTransitionTime while its digest is unchanged; a new or changed
// one gets now.
func StatusOutputs(values map[string]any, previous []v1alpha1.Output, now metav1.Time, digest Digester) ([]v1alpha1.Output, error) {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := rank(a), rank(b)
		if ia != ib {
			return ia - ib
		}
		return cmp.Compare(a, b)
	})
	outputs := make([]v1alpha1.Output, 0, len(names))
	for _, name := range names {
		preview, digested, err := previewWith(values[name], digest)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", name, err)
		}
		out := v1alpha1.Output{Name: name, Preview: preview, Digest: digested, LastTransitionTime: now}
		for _, prev := range previous {
			if prev.Name == name && prev.Digest == digested && !prev.LastTransitionTime.IsZero() {
				out.LastTransitionTime = prev.LastTransitionTime
			}
		}
		outputs = append(outputs, out)
	}
	return outputs, nil
}

func rank(name string) int {
	if i := slices.Index(outputOrder, name); i >= 0 {
		return i
	}
	return len(outputOrder)
}

// OutputValues recovers output values from their status entries, for a resource that
// is no longer stamped (a completed one). It succeeds only when every preview holds
// its whole value, which the digest proves; a cut preview cannot be decoded.
func OutputValues(outputs []v1alpha1.Output) (map[string]any, bool) {
	values := make(map[string]any, len(outputs))
	for _, o := range outputs {
		if o.Digest != PlainDigest([]byte(o.Preview)) {
			return nil, false
		}
		var decoded any
		if err := yaml.Unmarshal([]byte(o.Preview), &decoded); err != nil {
			return nil, false
		}
		v, err := jsonValue(decoded)
		if err != nil {
			return nil, false
		}
		values[o.Name] = v
	}
	return values, true
}
