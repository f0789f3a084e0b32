package stamp_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// FuzzStamp interpolates arbitrary template JSON against arbitrary context values.
// Stamp must never panic, must be deterministic (the same error or the same object for
// the same input: status is written only when it changes, so a message that varies
// between reconciles would flap), must return JSON a client can send, and must leave a
// template without tags as it was.
//
// Seeds live in testdata/fuzz/FuzzStamp; run with
//
//	go test -run XXX -fuzz '^FuzzStamp$' -fuzztime 10s ./pkg/render/stamp
func FuzzStamp(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"$(workload.metadata.name)$-cm"},"data":{"url":"$(source.url)$"}}`),
		[]byte(`{"workload":{"metadata":{"name":"app"}},"source":{"url":"https://example.com"}}`))
	f.Add([]byte(`{"spec":{"replicas":"$(params.replicas)$","text":"n=$(params.replicas)$ m=$(params.map)$"}}`),
		[]byte(`{"params":{"replicas":3,"map":{"a":[1,2.5,null,true]}}}`))
	f.Add([]byte(`{"a":"$(workload.spec[)$","b":"$(params.missing)$","c":"$()$","d":"$($)$"}`), []byte(`{}`))
	f.Add([]byte(`{"x":["$(params.list[*].name)$","$( params.list[-1].name )$ $(params.list[?(@.name=='b')].name)$"]}`),
		[]byte(`{"params":{"list":[{"name":"a"},{"name":"b"}]}}`))
	f.Add([]byte(`{"k":"$(params['a.b/c'])$$(params[\"x y\"])$"}`), []byte(`{"params":{"a.b/c":"v","x y":1e300}}`))
	f.Add([]byte(`{"k":"$(params.n)$","deep":{"a":{"b":{"c":"$(params.n)$)$$("}}}}`), []byte(`{"params":{"n":18446744073709551615}}`))

	f.Fuzz(func(t *testing.T, template, contextJSON []byte) {
		ctx := fuzzContext(contextJSON)

		first, err1 := stamp.Stamp(template, ctx)
		second, err2 := stamp.Stamp(template, fuzzContext(contextJSON))
		switch {
		case (err1 == nil) != (err2 == nil):
			t.Fatalf("Stamp is not deterministic: err %v, then %v", err1, err2)
		case err1 != nil:
			if err1.Error() != err2.Error() {
				t.Fatalf("Stamp's error is not deterministic:\n%q\n%q", err1, err2)
			}
			if err1.Error() == "" {
				t.Fatal("Stamp returned an error with an empty message")
			}
			return
		}
		if !reflect.DeepEqual(first.Object, second.Object) {
			t.Fatalf("Stamp is not deterministic:\n%#v\n%#v", first.Object, second.Object)
		}
		raw, err := json.Marshal(first.Object)
		if err != nil {
			t.Fatalf("the stamped object cannot be encoded as JSON: %v", err)
		}
		if !strings.Contains(string(template), "$(") {
			// Stamp trims Go's white space, which is more than JSON's (\f, \v, U+0085, U+00A0);
			// the API server only ever hands it re-encoded JSON, so compare with that trim.
			var want map[string]any
			if err := utiljson.Unmarshal(bytes.TrimSpace(template), &want); err != nil {
				t.Fatalf("Stamp accepted a template that does not decode: %v", err)
			}
			if !reflect.DeepEqual(first.Object, want) {
				t.Fatalf("a template without tags changed:\n got %s\nwant %s", raw, template)
			}
		}
	})
}

// fuzzContext decodes the fuzzed context the way the realizer's inputs look: int64 and
// float64 numbers. Anything but a JSON object gives an empty context.
func fuzzContext(raw []byte) map[string]any {
	var ctx map[string]any
	if err := utiljson.Unmarshal(raw, &ctx); err != nil || ctx == nil {
		return map[string]any{}
	}
	return ctx
}
