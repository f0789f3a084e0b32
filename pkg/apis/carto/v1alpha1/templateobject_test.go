package v1alpha1

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestTemplateObjectRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		raw  string
	}{
		{
			name: "arbitrary fields and tags",
			raw: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"$(workload.metadata.name)$","labels":{"a":"b"}},` +
				`"data":{"url":"$(source.url)$"},"x":[1,2.50,{"y":null}],"replicas":"$(params.replicas)$"}`,
		},
		{
			name: "whitespace and key order kept",
			raw:  "{ \"kind\": \"Job\",\n  \"apiVersion\": \"batch/v1\", \"spec\": {\"z\": 1, \"a\": 2} }",
		},
		{
			name: "empty object",
			raw:  `{}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj TemplateObject
			if err := json.Unmarshal([]byte(tt.raw), &obj); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			got, err := obj.MarshalJSON()
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			if !bytes.Equal(got, []byte(tt.raw)) {
				t.Errorf("MarshalJSON() = %s, want %s", got, tt.raw)
			}

			// Nested in a spec, encoding/json compacts the raw bytes but changes nothing else.
			spec := TemplateSpec{Template: &obj}
			out, err := json.Marshal(spec)
			if err != nil {
				t.Fatalf("marshal spec: %v", err)
			}
			var back TemplateSpec
			if err := json.Unmarshal(out, &back); err != nil {
				t.Fatalf("unmarshal spec: %v", err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, []byte(tt.raw)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Template.Raw, compact.Bytes()) {
				t.Errorf("spec round trip = %s, want %s", back.Template.Raw, compact.Bytes())
			}

			cp := obj.DeepCopy()
			if len(obj.Raw) > 0 {
				cp.Raw[0] = 'X'
				if obj.Raw[0] == 'X' {
					t.Error("DeepCopy shares Raw with the original")
				}
			}
		})
	}
}

func TestTemplateObjectMetadata(t *testing.T) {
	var obj TemplateObject
	if err := json.Unmarshal([]byte(`{"metadata":{"name":"n","namespace":"ns"}}`), &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Metadata == nil || obj.Metadata.Namespace != "ns" {
		t.Errorf("Metadata = %+v, want namespace ns", obj.Metadata)
	}
}

func TestTemplateObjectRejectsNonObjects(t *testing.T) {
	for _, raw := range []string{`[]`, `"s"`, `1`} {
		var obj TemplateObject
		if err := json.Unmarshal([]byte(raw), &obj); err == nil {
			t.Errorf("Unmarshal(%s) succeeded, want an error", raw)
		}
	}
	var obj TemplateObject
	if err := json.Unmarshal([]byte(`null`), &obj); err != nil || obj.Raw != nil {
		t.Errorf("Unmarshal(null) = %v, Raw %q; want no error and no Raw", err, obj.Raw)
	}
	if got, _ := obj.MarshalJSON(); string(got) != "null" {
		t.Errorf("MarshalJSON() of an empty object = %s, want null", got)
	}
}
