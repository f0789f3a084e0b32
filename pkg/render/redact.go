package render

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A value read from a Secret appears nowhere in status, events or logs (DESIGN §12), and
// that includes what the API server says when it rejects an object built from one: a 422
// quotes the invalid field's value ("metadata.labels: Invalid value: \"hunter2!\""). Such
// messages are redacted before they become a condition or an error, by cutting out every
// Secret-derived text the object could hold, in every spelling a message could quote it in.

// RedactedValue stands for a Secret-derived value: in a message, and as an output's preview.
const RedactedValue = "<redacted>"

// minRedactedText is the shortest Secret-derived text cut out of a message where it occurs.
// A shorter one ("1", "ab") is a substring of too many words, versions and numbers to cut
// out and leave a message that still reads; a message that holds one is replaced whole by
// wholeMessageRedacted, which is safe if less useful.
const minRedactedText = 4

// wholeMessageRedacted replaces a message that quotes a Secret-derived text too short to cut
// out alone.
const wholeMessageRedacted = "message redacted: the object holds values read from a Secret"

// SecretTexts are the texts of the Secret-derived values in an object: the leaves of the
// Secret-derived inputs it was stamped from (values of producers read from a Secret), and,
// when obj is a Secret, its data (as stored, base64, and decoded) and stringData.
func SecretTexts(inputs []any, obj *unstructured.Unstructured) []string {
	var texts []string
	for _, v := range inputs {
		texts = appendLeaves(texts, v)
	}
	if obj != nil && IsSecret(obj) {
		data, _ := obj.Object["data"].(map[string]any)
		for _, v := range data {
			if s, ok := v.(string); ok {
				texts = append(texts, s)
				if decoded, err := base64.StdEncoding.DecodeString(s); err == nil {
					texts = append(texts, string(decoded))
				}
			}
		}
		stringData, _ := obj.Object["stringData"].(map[string]any)
		for _, v := range stringData {
			texts = appendLeaves(texts, v)
		}
	}
	return texts
}

// appendLeaves appends the texts of v's scalar leaves: a template can place any of them in
// any field, alone or inside a longer string. Map keys are left out: they name the values
// (a Secret's data keys), they are not them.
func appendLeaves(texts []string, v any) []string {
	switch v := v.(type) {
	case nil:
	case string:
		texts = append(texts, v)
	case map[string]any:
		for _, e := range v {
			texts = appendLeaves(texts, e)
		}
	case []any:
		for _, e := range v {
			texts = appendLeaves(texts, e)
		}
	default:
		texts = append(texts, fmt.Sprint(v))
	}
	return texts
}

// spellings are the ways a message can quote text: as is, escaped as a JSON string (with
// and without HTML escaping) or a Go %q string (how Kubernetes' field errors quote values),
// a JSON-escaped text quoted again (a value embedded in a JSON document), and base64 (a
// Secret's data as stored).
func spellings(text string) []string {
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(text) // a string always encodes
	jsonPlain := strings.TrimSuffix(plain.String(), "\n")
	jsonHTML, _ := json.Marshal(text)
	unquote := func(q string) string { return q[1 : len(q)-1] }
	out := []string{
		text, unquote(jsonPlain), unquote(string(jsonHTML)), unquote(strconv.Quote(text)),
		unquote(strconv.Quote(unquote(jsonPlain))), base64.StdEncoding.EncodeToString([]byte(text)),
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Redact returns msg with every spelling of every text replaced by RedactedValue, longest
// first so that no part of a longer one is left behind; or wholeMessageRedacted when msg
// quotes a text shorter than minRedactedText.
func Redact(msg string, texts []string) string {
	var cut []string
	for _, t := range texts {
		if t == "" {
			continue
		}
		for _, s := range spellings(t) {
			if !strings.Contains(msg, s) {
				continue
			}
			if len(s) < minRedactedText {
				return wholeMessageRedacted
			}
			cut = append(cut, s)
		}
	}
	slices.SortFunc(cut, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, s := range cut {
		msg = strings.ReplaceAll(msg, s, RedactedValue)
	}
	return msg
}

// RedactError is err with its message redacted (Redact), or err itself when its message
// quotes none of texts. The original stays reachable with errors.Is and errors.As, so the
// caller still tells a retry from a rejection, but its text is never printed: a reconcile's
// error is logged with Error().
func RedactError(err error, texts []string) error {
	if err == nil {
		return nil
	}
	msg := Redact(err.Error(), texts)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error whose message quoted Secret-derived values.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Unwrap() error { return e.err }
