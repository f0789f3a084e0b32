package render

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestRedact: a message quoting a Secret-derived value, in any of the spellings an API
// server's rejection uses, keeps its words and loses the value; a value too short to cut out
// alone takes the whole message with it.
func TestRedact(t *testing.T) {
	const pw = `hunter2 "quoted" <b>`
	tests := []struct {
		name  string
		msg   string
		texts []string
		want  string
	}{
		{"as is", "value " + pw + " is bad", []string{pw}, "value <redacted> is bad"},
		{"go-quoted", fmt.Sprintf("Invalid value: %q: bad", pw), []string{pw}, `Invalid value: "<redacted>": bad`},
		{"in a JSON document, quoted", fmt.Sprintf("Invalid value: %q", `{"pw":"hunter2 \"quoted\" <b>"}`), []string{pw},
			`Invalid value: "{\"pw\":\"<redacted>\"}"`},
		{"JSON with HTML escapes", `{"pw":"hunter2 \"quoted\" \u003cb\u003e"}`, []string{pw}, `{"pw":"<redacted>"}`},
		{"base64", "data: " + base64.StdEncoding.EncodeToString([]byte(pw)), []string{pw}, "data: <redacted>"},
		{"longest first", "aaaabbbb and aaaa", []string{"aaaa", "aaaabbbb"}, "<redacted> and <redacted>"},
		{"not quoted", "nothing here", []string{pw}, "nothing here"},
		{"short value quoted", "port 99 is invalid", []string{"99"}, wholeMessageRedacted},
		{"short value absent", "port is invalid", []string{"99"}, "port is invalid"},
		{"empty value", "anything", []string{""}, "anything"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.msg, tt.texts); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.msg, got, tt.want)
			}
		})
	}
}

// TestSecretTexts: the texts of an object are its Secret-derived inputs' leaves, and a
// Secret's data (stored and decoded) and stringData; nothing of an object that is not a
// Secret.
func TestSecretTexts(t *testing.T) {
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"data":       map[string]any{"token": base64.StdEncoding.EncodeToString([]byte("from-data"))},
		"stringData": map[string]any{"other": "from-stringdata"},
	}}
	configMap := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"token": "plain"},
	}}
	inputs := []any{map[string]any{"config": map[string]any{"user": "alice", "port": int64(6543)}, "list": []any{"x1"}}, nil}
	got := strings.Join(SecretTexts(inputs, secret), ",")
	for _, want := range []string{"alice", "6543", "x1", "from-data", base64.StdEncoding.EncodeToString([]byte("from-data")), "from-stringdata"} {
		if !strings.Contains(got, want) {
			t.Errorf("texts %s lack %s", got, want)
		}
	}
	for _, key := range []string{"user", "port", "token"} {
		if strings.Contains(","+got+",", ","+key+",") {
			t.Errorf("texts %s hold the key %s", got, key)
		}
	}
	if got := SecretTexts(nil, configMap); len(got) != 0 {
		t.Errorf("texts of a ConfigMap stamped from no Secret: %v", got)
	}
}

// TestRedactError: a rejection quoting the value is redacted, and still is the API error it
// was, so the caller still tells a retry from a rejection.
func TestRedactError(t *testing.T) {
	const pw = "hunter2!!"
	retryLater := errors.New("retrying later")
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "app", field.ErrorList{
		field.Invalid(field.NewPath("metadata", "labels"), pw, "a valid label must be ..."),
	})
	err := RedactError(fmt.Errorf("%w: %w", retryLater, invalid), []string{pw})
	if strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), RedactedValue) {
		t.Errorf("error %q, want the value redacted", err)
	}
	if !errors.Is(err, retryLater) || !apierrors.IsInvalid(err) {
		t.Errorf("redacted error %v lost what it was", err)
	}
	plain := errors.New("no value here")
	if got := RedactError(plain, []string{pw}); got != plain {
		t.Errorf("an error quoting nothing became %v", got)
	}
	if RedactError(nil, []string{pw}) != nil {
		t.Error("nil became an error")
	}
}
